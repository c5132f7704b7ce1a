//! Documents and presentations: DOCX and ODT (the body's paragraphs, separated by blank lines),
//! PPTX and ODP (one unit per slide, its paragraphs one a line).

use super::Malformed;
use super::archive::Archive;
use super::xml::{Markup, paragraphs};
use super::{Extracted, UnitText};

const WORDPROCESSING: Markup = Markup {
    paragraphs: &["p"],
    text: &["t"],
    tabs: &["tab"],
    breaks: &["br", "cr"],
    spaces: &[],
    units: &[],
    skipped: &[],
    collapse_whitespace: false,
};

const DRAWING: Markup = Markup {
    paragraphs: &["p"],
    text: &["t"],
    tabs: &[],
    breaks: &["br"],
    spaces: &[],
    units: &[],
    skipped: &[],
    collapse_whitespace: false,
};

const OPEN_DOCUMENT: Markup = Markup {
    paragraphs: &["p", "h"],
    text: &[],
    tabs: &["tab"],
    breaks: &["line-break"],
    spaces: &["s"],
    units: &["page"],
    skipped: &[],
    collapse_whitespace: true,
};

/// A Word document: the paragraphs of `word/document.xml`.
pub(super) fn docx(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let xml = Archive::open(bytes, format)?.required("word/document.xml")?;
    flow(&xml, &WORDPROCESSING, format)
}

/// An OpenDocument text: the paragraphs and headings of `content.xml`.
pub(super) fn odt(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let xml = Archive::open(bytes, format)?.required("content.xml")?;
    flow(&xml, &OPEN_DOCUMENT, format)
}

/// One flow of text: every paragraph, separated by blank lines.
fn flow(xml: &[u8], markup: &Markup, format: &'static str) -> Result<Extracted, Malformed> {
    let units = paragraphs(xml, markup, format)?;
    let text = units.concat().join("\n\n");
    Ok(Extracted { text, units: None })
}

/// A PowerPoint presentation: each `ppt/slides/slideN.xml`, in the order of N.
pub(super) fn pptx(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let mut archive = Archive::open(bytes, format)?;
    let mut slides: Vec<(u32, String)> = archive
        .names()
        .into_iter()
        .filter_map(|name| {
            let number = name
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            Some((number, name))
        })
        .collect();
    slides.sort();
    let mut out = UnitText::new(format);
    for (number, name) in slides {
        let xml = archive.required(&name)?;
        let lines = paragraphs(&xml, &DRAWING, format)?.concat();
        out.push(format!("slide {number}"), &lines.join("\n"))?;
    }
    Ok(out.finish())
}

/// An OpenDocument presentation: each `draw:page` of `content.xml`, in order.
pub(super) fn odp(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let xml = Archive::open(bytes, format)?.required("content.xml")?;
    let mut out = UnitText::new(format);
    for (i, lines) in paragraphs(&xml, &OPEN_DOCUMENT, format)?
        .into_iter()
        .enumerate()
    {
        out.push(format!("slide {}", i + 1), &lines.join("\n"))?;
    }
    Ok(out.finish())
}
