//! Jupyter notebooks (`.ipynb`, nbformat 4): each cell's source is a unit, scoped `cell N
//! (kind)`; outputs are not read. The JSON parser refuses nesting deeper than 128 levels.

use serde::Deserialize;

use super::Malformed;
use super::archive::malformed;
use super::{Extracted, UnitText};

#[derive(Deserialize)]
struct Notebook {
    cells: Vec<Cell>,
}

#[derive(Deserialize)]
struct Cell {
    cell_type: String,
    #[serde(default)]
    source: Source,
}

/// A cell's source: one string, or its lines.
#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<String>),
}

impl Default for Source {
    fn default() -> Self {
        Source::Text(String::new())
    }
}

/// Reads a notebook's cells in order; empty cells are left out.
pub(super) fn cells(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let notebook: Notebook =
        serde_json::from_slice(bytes).map_err(|err| malformed(format, err.to_string()))?;
    let mut out = UnitText::new(format);
    for (i, cell) in notebook.cells.iter().enumerate() {
        let source = match &cell.source {
            Source::Text(text) => text.clone(),
            Source::Lines(lines) => lines.concat(),
        };
        out.push(format!("cell {} ({})", i + 1, cell.cell_type), &source)?;
    }
    Ok(out.finish())
}
