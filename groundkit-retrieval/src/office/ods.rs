//! OpenDocument spreadsheets (ODS): each table of `content.xml` laid out as a workbook's sheet
//! is (`sheet`): a line per row, cells separated by ` | `, in blocks of rows under the header.
//!
//! The XML is read here, streamed, not by a spreadsheet library: a row or a cell may say it
//! repeats (`table:number-rows-repeated`, `table:number-columns-repeated`, up to a million
//! times), and those repeats are counted, never laid out, until a cell holds text. A repeated
//! empty cell or row costs nothing; a repeated one holding text counts once per repeat against
//! the workbook's cells and text, and a cell holding text past [`MAX_COLUMNS`] fails the file,
//! before anything is laid out. A cell's text is what its paragraphs show (its displayed
//! value), its annotations left out.

use quick_xml::events::{BytesStart, Event};

use super::archive::{Archive, malformed};
use super::sheet::{Budget, MAX_COLUMNS, Row, push_blocks, too_wide};
use super::xml::{Events, attribute, push_reference};
use super::{Extracted, Malformed, UnitText};

/// The table being read.
struct Table {
    name: String,
    rows: Vec<Row>,
    /// The number (0-based) of the next row.
    next_row: u64,
}

/// The row being read: how often it repeats, and its cells holding text.
struct OpenRow {
    repeat: u64,
    cells: Vec<(u32, String)>,
    /// The column (0-based) of the next cell.
    next_column: u64,
}

/// The cell being read: how often it repeats, and its text so far.
struct OpenCell {
    repeat: u64,
    /// Its paragraphs, each followed by a space.
    text: String,
}

/// Reads a spreadsheet table by table, in document order.
pub(super) fn ods(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let xml = Archive::open(bytes, format)?.required("content.xml")?;
    let mut events = Events::new(&xml, format)?;
    let mut out = UnitText::new(format);
    let mut budget = Budget::new();
    let mut table: Option<Table> = None;
    let mut row: Option<OpenRow> = None;
    let mut cell: Option<OpenCell> = None;
    // Open annotations inside the cell: their text is not the cell's.
    let mut in_annotation = 0usize;
    loop {
        match events.next()? {
            Event::Start(e) => match e.local_name().as_ref() {
                "table" if table.is_none() => {
                    table = Some(Table {
                        name: attribute(&e, "table:name").unwrap_or_default(),
                        rows: Vec::new(),
                        next_row: 0,
                    });
                }
                "table-row" if cell.is_none() => row = Some(open_row(&e)),
                "table-cell" | "covered-table-cell" if cell.is_none() => {
                    cell = Some(OpenCell {
                        repeat: repeats(&e, "table:number-columns-repeated"),
                        text: String::new(),
                    });
                }
                "annotation" => in_annotation += 1,
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "table-row" if cell.is_none() => {
                    if let Some(table) = table.as_mut() {
                        let repeat = repeats(&e, "table:number-rows-repeated");
                        table.next_row = table.next_row.saturating_add(repeat);
                    }
                }
                "table-cell" | "covered-table-cell" if cell.is_none() => {
                    if let Some(row) = row.as_mut() {
                        let repeat = repeats(&e, "table:number-columns-repeated");
                        row.next_column = row.next_column.saturating_add(repeat);
                    }
                }
                "s" | "tab" | "line-break" if in_annotation == 0 => {
                    if let Some(cell) = cell.as_mut() {
                        cell.text.push(' ');
                    }
                }
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                "annotation" => in_annotation = in_annotation.saturating_sub(1),
                "p" | "h" if in_annotation == 0 => {
                    if let Some(cell) = cell.as_mut() {
                        cell.text.push(' ');
                    }
                }
                "table-cell" | "covered-table-cell" => {
                    if let (Some(done), Some(row)) = (cell.take(), row.as_mut()) {
                        close_cell(done, row, format)?;
                    }
                }
                "table-row" if cell.is_none() => {
                    if let (Some(done), Some(table)) = (row.take(), table.as_mut()) {
                        close_row(done, table, &mut budget, format)?;
                    }
                }
                "table" if cell.is_none() => {
                    if let Some(done) = table.take() {
                        push_blocks(&mut out, &done.name, &done.rows)?;
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_annotation == 0 => {
                if let Some(cell) = cell.as_mut() {
                    cell.text.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) if in_annotation == 0 => {
                if let Some(cell) = cell.as_mut() {
                    push_reference(&mut cell.text, &r, format)?;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out.finish())
}

/// How often an element repeats, by its attribute `name` (1 when it does not say, or says 0).
fn repeats(element: &BytesStart<'_>, name: &str) -> u64 {
    attribute(element, name)
        .and_then(|value| value.trim().parse::<u64>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1)
}

fn open_row(element: &BytesStart<'_>) -> OpenRow {
    OpenRow {
        repeat: repeats(element, "table:number-rows-repeated"),
        cells: Vec::new(),
        next_column: 0,
    }
}

/// Ends a cell: its text, when it has any, in each column it repeats over.
fn close_cell(cell: OpenCell, row: &mut OpenRow, format: &'static str) -> Result<(), Malformed> {
    let first = row.next_column;
    row.next_column = first.saturating_add(cell.repeat);
    let text = cell.text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Ok(());
    }
    if row.next_column > u64::from(MAX_COLUMNS) {
        return Err(too_wide(format));
    }
    for column in first..row.next_column {
        row.cells.push((column as u32, text.clone()));
    }
    Ok(())
}

/// Ends a row: when it holds text, its cells taken from `budget` once per repeat (all of them
/// before any is laid out), then the row laid out that many times.
fn close_row(
    row: OpenRow,
    table: &mut Table,
    budget: &mut Budget,
    format: &'static str,
) -> Result<(), Malformed> {
    let first = table.next_row;
    table.next_row = first.saturating_add(row.repeat);
    if row.cells.is_empty() {
        return Ok(());
    }
    let repeat = usize::try_from(row.repeat).unwrap_or(usize::MAX);
    let bytes: usize = row.cells.iter().map(|(_, text)| text.len()).sum();
    budget.take_many(
        row.cells.len().saturating_mul(repeat),
        bytes.saturating_mul(repeat),
        format,
    )?;
    for number in first..table.next_row {
        let number = u32::try_from(number)
            .map_err(|_| malformed(format, "a sheet has more rows than it can number".into()))?;
        table.rows.push((number, row.cells.clone()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(repeat: u64) -> OpenRow {
        OpenRow {
            repeat,
            cells: Vec::new(),
            next_column: 0,
        }
    }

    fn cell(repeat: u64, text: &str) -> OpenCell {
        OpenCell {
            repeat,
            text: text.to_owned(),
        }
    }

    #[test]
    fn repeated_empty_cells_move_the_column_and_repeated_text_fills_each_column() {
        let mut open = row(1);
        close_cell(cell(3, "  "), &mut open, "ODS").expect("empty");
        close_cell(cell(2, " two\n words "), &mut open, "ODS").expect("text");
        assert_eq!(
            open.cells,
            [(3, "two words".to_owned()), (4, "two words".to_owned())]
        );
        let mut wide = row(1);
        let err = close_cell(cell(16_384, "x"), &mut wide, "ODS").expect_err("too wide");
        assert!(
            err.reason.contains("wider than 1024 columns"),
            "{}",
            err.reason
        );
    }

    #[test]
    fn a_row_repeated_past_the_cell_budget_fails_before_it_is_laid_out() {
        let mut table = Table {
            name: "S".into(),
            rows: Vec::new(),
            next_row: 0,
        };
        let mut budget = Budget::new();
        let mut open = row(1_048_576);
        open.cells.push((0, "x".into()));
        let err = close_row(open, &mut table, &mut budget, "ODS").expect_err("too many");
        assert!(
            err.reason.contains("more than 1000000 cells"),
            "{}",
            err.reason
        );
        assert!(table.rows.is_empty());
    }
}
