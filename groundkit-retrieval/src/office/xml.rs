//! The paragraphs of an XML part (a DOCX body, a slide, an OpenDocument body), read within
//! limits.
//!
//! Elements are matched by local name, without their namespace prefix. Nesting deeper than
//! [`MAX_DEPTH`] fails the document, and so does a document type with declarations of its own:
//! none of these formats has one, and refusing it means no entity is ever declared, let alone
//! expanded (the
//! XML reader never expands entities; the five predefined ones and character references are
//! decoded here, and any other fails the document).

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesRef, BytesStart, Event};

use super::Malformed;
use super::archive::malformed;

/// Deepest element nesting accepted.
pub const MAX_DEPTH: usize = 256;

/// Which elements of a format carry its text.
pub(crate) struct Markup {
    /// Elements whose end closes a paragraph.
    pub(crate) paragraphs: &'static [&'static str],
    /// Elements whose text is kept; empty keeps all text inside a paragraph.
    pub(crate) text: &'static [&'static str],
    /// Empty elements that stand for a tab.
    pub(crate) tabs: &'static [&'static str],
    /// Empty elements that stand for a line break.
    pub(crate) breaks: &'static [&'static str],
    /// Empty elements that stand for a space.
    pub(crate) spaces: &'static [&'static str],
    /// Elements whose start begins a new unit (a slide of a presentation); empty: one unit.
    pub(crate) units: &'static [&'static str],
    /// Elements whose text is dropped, with everything inside them (XHTML's `head`, `script`).
    pub(crate) skipped: &'static [&'static str],
    /// Whether runs of whitespace in text collapse to one space (OpenDocument, XHTML).
    pub(crate) collapse_whitespace: bool,
}

/// The paragraphs of `xml`, grouped by unit, each trimmed; empty ones are left out.
pub(crate) fn paragraphs(
    xml: &[u8],
    markup: &Markup,
    format: &'static str,
) -> Result<Vec<Vec<String>>, Malformed> {
    let mut events = Events::new(xml, format)?;
    let mut units: Vec<Vec<String>> = vec![Vec::new()];
    let mut current = String::new();
    // How many of the open elements keep their text, and how many drop it.
    let mut in_text = 0usize;
    let mut in_skipped = 0usize;
    let keep_all = markup.text.is_empty();
    loop {
        let event = events.next()?;
        match event {
            Event::Start(e) => {
                let local = e.local_name();
                let name = local.as_ref();
                if is(markup.units, name) {
                    close(&mut current, &mut units);
                    if !units.last().is_some_and(Vec::is_empty) {
                        units.push(Vec::new());
                    }
                }
                if is(markup.text, name) {
                    in_text += 1;
                }
                if is(markup.skipped, name) {
                    in_skipped += 1;
                }
            }
            Event::Empty(e) => {
                let local = e.local_name();
                let name = local.as_ref();
                if is(markup.tabs, name) {
                    current.push('\t');
                } else if is(markup.breaks, name) {
                    current.push('\n');
                } else if is(markup.spaces, name) {
                    current.push(' ');
                } else if is(markup.paragraphs, name) {
                    close(&mut current, &mut units);
                }
            }
            Event::End(e) => {
                let local = e.local_name();
                let name = local.as_ref();
                if is(markup.text, name) {
                    in_text = in_text.saturating_sub(1);
                }
                if is(markup.skipped, name) {
                    in_skipped = in_skipped.saturating_sub(1);
                }
                if is(markup.paragraphs, name) {
                    close(&mut current, &mut units);
                }
            }
            _ if in_skipped > 0 && !matches!(event, Event::Eof | Event::DocType(_)) => {}
            Event::Text(t) if keep_all || in_text > 0 => {
                push_text(&mut current, &t.xml10_content(), markup.collapse_whitespace);
            }
            Event::CData(t) if keep_all || in_text > 0 => {
                push_text(&mut current, &t.xml10_content(), markup.collapse_whitespace);
            }
            Event::GeneralRef(r) if keep_all || in_text > 0 => {
                push_reference(&mut current, &r, format)?;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    close(&mut current, &mut units);
    if units.last().is_some_and(Vec::is_empty) && units.len() > 1 {
        units.pop();
    }
    Ok(units)
}

/// The events of an XML part, read within [`MAX_DEPTH`] and refusing a document type that
/// declares anything.
pub(crate) struct Events<'a> {
    reader: Reader<&'a [u8]>,
    depth: usize,
    format: &'static str,
}

impl<'a> Events<'a> {
    /// Reads `xml`, which must be UTF-8.
    pub(crate) fn new(xml: &'a [u8], format: &'static str) -> Result<Self, Malformed> {
        let xml =
            std::str::from_utf8(xml).map_err(|_| malformed(format, "XML is not UTF-8".into()))?;
        Ok(Self {
            reader: Reader::from_str(xml),
            depth: 0,
            format,
        })
    }

    /// The next event; [`Event::Eof`] at the end.
    pub(crate) fn next(&mut self) -> Result<Event<'a>, Malformed> {
        let format = self.format;
        let event = self
            .reader
            .read_event()
            .map_err(|err| malformed(format, format!("bad XML: {err}")))?;
        match &event {
            Event::Start(_) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(malformed(
                        format,
                        format!("XML nested deeper than {MAX_DEPTH} elements"),
                    ));
                }
            }
            Event::End(_) => self.depth = self.depth.saturating_sub(1),
            Event::DocType(doctype) if doctype.contains('[') => {
                return Err(malformed(
                    format,
                    "XML declares entities in its document type, which this format never does"
                        .into(),
                ));
            }
            _ => {}
        }
        Ok(event)
    }
}

/// Appends what a reference stands for: a character reference, or one of the five predefined
/// entities; any other fails the document.
pub(crate) fn push_reference(
    current: &mut String,
    reference: &BytesRef<'_>,
    format: &'static str,
) -> Result<(), Malformed> {
    match reference.resolve_char_ref() {
        Ok(Some(c)) => current.push(c),
        Ok(None) => current.push_str(
            resolve_predefined_entity(reference)
                .ok_or_else(|| malformed(format, "XML refers to an undeclared entity".into()))?,
        ),
        Err(err) => {
            return Err(malformed(
                format,
                format!("bad XML character reference: {err}"),
            ));
        }
    }
    Ok(())
}

fn is(names: &[&str], name: &str) -> bool {
    names.contains(&name)
}

fn push_text(current: &mut String, text: &str, collapse: bool) {
    if !collapse {
        current.push_str(text);
        return;
    }
    for c in text.chars() {
        if c.is_whitespace() {
            if !current.ends_with([' ', '\n', '\t']) && !current.is_empty() {
                current.push(' ');
            }
        } else {
            current.push(c);
        }
    }
}

/// Ends the paragraph in progress, keeping it when it holds text.
fn close(current: &mut String, units: &mut [Vec<String>]) {
    let text = current.trim();
    if !text.is_empty()
        && let Some(unit) = units.last_mut()
    {
        unit.push(text.to_owned());
    }
    current.clear();
}

/// Calls `visit` with the local name and attributes of every element of `xml`, in order.
pub(crate) fn for_each_element(
    xml: &[u8],
    format: &'static str,
    mut visit: impl FnMut(&str, &BytesStart<'_>),
) -> Result<(), Malformed> {
    let mut events = Events::new(xml, format)?;
    loop {
        match events.next()? {
            Event::Start(e) | Event::Empty(e) => visit(e.local_name().as_ref(), &e),
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// The value of attribute `name` (matched with its prefix) of an element, if it has one.
pub(crate) fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    let attr = element.try_get_attribute(name).ok()??;
    Some(attr.value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: Markup = Markup {
        paragraphs: &["p"],
        text: &["t"],
        tabs: &["tab"],
        breaks: &["br"],
        spaces: &[],
        units: &[],
        skipped: &[],
        collapse_whitespace: false,
    };

    #[test]
    fn paragraphs_keep_only_text_elements_and_decode_predefined_entities() {
        let xml = br#"<w:body xmlns:w="w"><w:p><w:pPr>ignored</w:pPr><w:r><w:t>Fish &amp; chips</w:t>
            <w:tab/><w:t>&#233;t&#xE9;</w:t></w:r></w:p><w:p/><w:p><w:t>Two</w:t><w:br/><w:t>lines</w:t></w:p></w:body>"#;
        let units = paragraphs(xml, &BODY, "DOCX").expect("parses");
        assert_eq!(units, [vec!["Fish & chips\t\u{e9}t\u{e9}", "Two\nlines"]]);
    }

    #[test]
    fn entity_declarations_and_deep_nesting_fail() {
        let entity = br#"<!DOCTYPE d [<!ENTITY a "aaaa">]><d><p><t>&a;</t></p></d>"#;
        let err = paragraphs(entity, &BODY, "DOCX").expect_err("refused");
        assert!(err.reason.contains("declares entities"), "{}", err.reason);
        let deep = format!(
            "{}{}",
            "<p>".repeat(MAX_DEPTH + 1),
            "</p>".repeat(MAX_DEPTH + 1)
        );
        let err = paragraphs(deep.as_bytes(), &BODY, "DOCX").expect_err("refused");
        assert!(err.reason.contains("nested deeper"), "{}", err.reason);
    }
}
