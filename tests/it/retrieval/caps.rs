//! The caps on office archives and workbooks that the hostile fixtures do not reach, each one
//! past its limit in a file made here: an archive of 10,001 entries, a workbook of more than
//! 1,000,000 cells, a sheet wider than 1,024 columns. Each fails its file alone, with its
//! reason, and the rest of the ingest is read; an archive of exactly 10,000 entries reads.

use super::Fixture;
use super::formats::{copy_fixture, top_hit_verified};

/// CRC-32 (IEEE), as zip records it.
fn crc32(bytes: &[u8]) -> u32 {
    let table: Vec<u32> = (0..256u32)
        .map(|n| {
            (0..8).fold(n, |c, _| {
                if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                }
            })
        })
        .collect();
    !bytes.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// A zip archive of `entries`, stored (not compressed), as the format's appendix lays it out.
fn stored_zip(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for (name, data) in entries {
        let (crc, len, offset) = (crc32(data), data.len() as u32, out.len() as u32);
        let common = |buf: &mut Vec<u8>| {
            for v in [0u16, 0, 0, 0] {
                buf.extend_from_slice(&v.to_le_bytes()); // flags, method, time, date
            }
            for v in [crc, len, len] {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
            buf.extend_from_slice(&0u16.to_le_bytes()); // extra field length
        };
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        common(&mut out);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 0, 20, 0]);
        common(&mut central);
        central.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
        central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let (at, size, count) = (out.len() as u32, central.len() as u32, entries.len() as u16);
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A Word document whose body says `words`, padded with empty entries to `entries` in all.
fn docx_of_entries(words: &str, entries: usize) -> Vec<u8> {
    let body = format!(
        "<w:document xmlns:w=\"w\"><w:body><w:p><w:r><w:t>{words}</w:t></w:r></w:p></w:body></w:document>"
    );
    let mut parts = vec![("word/document.xml".to_owned(), body.into_bytes())];
    parts.extend((1..entries).map(|i| (format!("pad/{i}"), Vec::new())));
    stored_zip(&parts)
}

/// Column `index` (0-based) in a sheet's letters: 0 is A, 1,024 is AMK.
fn column(index: usize) -> String {
    let (mut n, mut letters) = (index + 1, Vec::new());
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    String::from_utf8(letters).expect("ASCII")
}

/// A workbook of one sheet whose rows hold numbers at the (0-based) columns `columns`.
fn xlsx(rows: usize, columns: &[usize]) -> Vec<u8> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let rels = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    let mut sheet = format!("<worksheet xmlns=\"{main}\"><sheetData>");
    for r in 1..=rows {
        sheet.push_str(&format!("<row r=\"{r}\">"));
        for &c in columns {
            sheet.push_str(&format!("<c r=\"{}{r}\"><v>{r}</v></c>", column(c)));
        }
        sheet.push_str("</row>");
    }
    sheet.push_str("</sheetData></worksheet>");
    let package = "http://schemas.openxmlformats.org/package/2006/relationships";
    let relationship = |target: &str, kind: &str| {
        format!(
            "<Relationships xmlns=\"{package}\"><Relationship Id=\"rId1\" \
             Type=\"{rels}/{kind}\" Target=\"{target}\"/></Relationships>"
        )
    };
    let parts = [
        (
            "_rels/.rels",
            relationship("xl/workbook.xml", "officeDocument"),
        ),
        (
            "xl/workbook.xml",
            format!(
                "<workbook xmlns=\"{main}\" xmlns:r=\"{rels}\"><sheets><sheet name=\"Big\" \
                 sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>"
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            relationship("worksheets/sheet1.xml", "worksheet"),
        ),
        ("xl/worksheets/sheet1.xml", sheet),
    ];
    stored_zip(&parts.map(|(name, xml)| (name.to_owned(), xml.into_bytes())))
}

#[test]
fn archives_cells_and_columns_one_past_their_cap_fail_alone_with_their_reason() {
    let fx = Fixture::new();
    copy_fixture(&fx, "report.docx", "report.docx");
    fx.write(
        "at-limit.docx",
        docx_of_entries("tamarisk hedge at the limit", 10_000),
    );
    fx.write(
        "entries.docx",
        docx_of_entries("one entry too many", 10_001),
    );
    // 1,001 rows of 1,000 numbers: 1,001,000 cells, in 1,000 columns.
    let columns: Vec<usize> = (0..1_000).collect();
    fx.write("cells.xlsx", xlsx(1_001, &columns));
    // One row with a number in column A and one in column 1,025 (AMK).
    fx.write("columns.xlsx", xlsx(1, &[0, 1_024]));
    // The widest row accepted: column 1,024 (AMJ).
    fx.write("widest.xlsx", xlsx(1, &[0, 1_023]));
    let summary = fx.ingest_all("c");
    let failed = super::failures(&summary);
    assert_eq!(
        failed,
        [
            (
                "cells.xlsx",
                "does not parse as XLSX: the workbook holds more than 1000000 cells"
            ),
            (
                "columns.xlsx",
                "does not parse as XLSX: a sheet is wider than 1024 columns"
            ),
            (
                "entries.docx",
                "does not parse as DOCX: holds more than 10000 archive entries"
            ),
        ]
    );
    assert_eq!(summary.added, 3);
    top_hit_verified(&fx, "heliotrope", "report.docx");
    top_hit_verified(&fx, "tamarisk hedge", "at-limit.docx");
    let widest = fx.search("c", "1", 10).results;
    assert!(
        widest
            .iter()
            .any(|hit| hit.citation.source == "widest.xlsx")
    );
}
