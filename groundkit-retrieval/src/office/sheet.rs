//! Workbooks (XLSX, and the layout ODS shares through `ods`): each sheet's rows as text, a line per row with its cells separated by
//! ` | `, in blocks of [`ROWS_PER_BLOCK`] rows; each block is a unit that repeats the sheet's
//! first row (its header) above its rows, so a chunk reads on its own.
//!
//! Cells are streamed from the sheet's XML, not laid out by the dimension the sheet declares:
//! a sheet declaring a million rows but holding ten costs ten. A workbook of more than
//! [`MAX_CELLS`] non-empty cells, or whose cells' text (a shared string counted in every cell
//! that uses it) or laid-out text would pass [`MAX_SOURCE_BYTES`], fails.

use std::io::Cursor;

use calamine::{Data, Reader, Xlsx};

use super::Malformed;
use super::archive::{Archive, malformed};
use super::{Extracted, UnitText};
use crate::source_file::MAX_SOURCE_BYTES;

/// Most non-empty cells read from one workbook.
pub const MAX_CELLS: usize = 1_000_000;
/// Rows of a block, the header row not counted.
pub const ROWS_PER_BLOCK: usize = 20;
/// Most columns a row is laid out to.
pub const MAX_COLUMNS: u32 = 1024;

/// One row: its number (0-based) and its cells' text by column.
pub(super) type Row = (u32, Vec<(u32, String)>);

/// What a workbook's cells may still take: a count of cells and bytes of their text (a string a
/// workbook shares among many cells counts once per cell).
pub(super) struct Budget {
    cells: usize,
    bytes: usize,
}

impl Budget {
    pub(super) fn new() -> Self {
        Self {
            cells: MAX_CELLS,
            bytes: MAX_SOURCE_BYTES as usize,
        }
    }

    /// Takes one cell of `len` bytes, or fails when the workbook is past a limit.
    fn take(&mut self, len: usize, format: &'static str) -> Result<(), Malformed> {
        self.take_many(1, len, format)
    }

    /// Takes `cells` cells of `len` bytes in all (a row or a cell a sheet repeats), or fails
    /// when the workbook is past a limit; nothing is laid out before the count is known.
    pub(super) fn take_many(
        &mut self,
        cells: usize,
        len: usize,
        format: &'static str,
    ) -> Result<(), Malformed> {
        self.cells = self.cells.checked_sub(cells).ok_or_else(|| {
            malformed(
                format,
                format!("the workbook holds more than {MAX_CELLS} cells"),
            )
        })?;
        self.bytes = self.bytes.checked_sub(len).ok_or_else(|| {
            malformed(
                format,
                format!(
                    "the workbook's text is larger than {} MiB",
                    MAX_SOURCE_BYTES >> 20
                ),
            )
        })?;
        Ok(())
    }
}

/// Reads a workbook sheet by sheet, in the workbook's order.
pub(super) fn xlsx(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    drop(Archive::open(bytes, format)?);
    let fail = |err: calamine::XlsxError| malformed(format, err.to_string());
    let mut workbook = Xlsx::new(Cursor::new(bytes)).map_err(fail)?;
    let mut out = UnitText::new(format);
    let mut budget = Budget::new();
    for name in workbook.sheet_names() {
        let rows = sheet_rows(&mut workbook, &name, &mut budget, format)?;
        push_blocks(&mut out, &name, &rows)?;
    }
    Ok(out.finish())
}

/// The non-empty rows of sheet `name`, their cells taken from `budget`.
fn sheet_rows(
    workbook: &mut Xlsx<Cursor<&[u8]>>,
    name: &str,
    budget: &mut Budget,
    format: &'static str,
) -> Result<Vec<Row>, Malformed> {
    let fail = |err: calamine::XlsxError| malformed(format, err.to_string());
    let mut reader = workbook.worksheet_cells_reader(name).map_err(fail)?;
    let mut rows: Vec<Row> = Vec::new();
    while let Some(cell) = reader.next_cell().map_err(fail)? {
        let value = Data::from(cell.get_value().clone()).to_string();
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        budget.take(value.len(), format)?;
        let (row, column) = cell.get_position();
        if column >= MAX_COLUMNS {
            return Err(too_wide(format));
        }
        let value = value.replace(['\n', '\r', '\t'], " ");
        match rows.last_mut() {
            Some((last, cells)) if *last == row => cells.push((column, value)),
            _ => rows.push((row, vec![(column, value)])),
        }
    }
    Ok(rows)
}

/// The failure of a sheet with a cell past [`MAX_COLUMNS`].
pub(super) fn too_wide(format: &'static str) -> Malformed {
    malformed(
        format,
        format!("a sheet is wider than {MAX_COLUMNS} columns"),
    )
}

/// Appends a sheet's blocks of rows, each below the header row.
pub(super) fn push_blocks(out: &mut UnitText, sheet: &str, rows: &[Row]) -> Result<(), Malformed> {
    let Some((header, body)) = rows.split_first() else {
        return Ok(());
    };
    let header_line = line(&header.1);
    let first_row = header.0 + 1;
    if body.is_empty() {
        out.push(format!("sheet {sheet}, row {first_row}"), &header_line)?;
    }
    for block in body.chunks(ROWS_PER_BLOCK) {
        let mut text = header_line.clone();
        for (_, cells) in block {
            text.push('\n');
            text.push_str(&line(cells));
        }
        let (from, to) = (block[0].0 + 1, block[block.len() - 1].0 + 1);
        out.push(format!("sheet {sheet}, rows {from}-{to}"), &text)?;
    }
    Ok(())
}

/// A row's cells laid out by column from the first, empty columns kept, ` | ` between cells.
fn line(cells: &[(u32, String)]) -> String {
    let width = cells
        .iter()
        .map(|(column, _)| *column as usize + 1)
        .max()
        .unwrap_or(0);
    let mut columns = vec![""; width];
    for (column, value) in cells {
        columns[*column as usize] = value;
    }
    columns.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::line;

    #[test]
    fn a_row_keeps_its_empty_columns_between_cells() {
        let cells = [
            (0, "a".to_owned()),
            (2, "c".to_owned()),
            (3, "d".to_owned()),
        ];
        assert_eq!(line(&cells), "a |  | c | d");
        assert_eq!(line(&[(1, "b".to_owned())]), " | b");
    }
}
