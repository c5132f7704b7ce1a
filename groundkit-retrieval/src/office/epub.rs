//! EPUB books: the XHTML documents of the spine, in reading order, each a unit (scope `section
//! N`, N its place in the spine) of its paragraphs and headings. The package document is the
//! first one `META-INF/container.xml` names. A spine naming one document many times has it
//! parsed once and its text repeated; the book's text is held to 64 MiB like any unit text.

use std::collections::HashMap;

use super::archive::{Archive, malformed};
use super::xml::{Markup, attribute, for_each_element, paragraphs};
use super::{Extracted, Malformed, UnitText};

const XHTML: Markup = Markup {
    paragraphs: &[
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "div",
        "td",
        "th",
        "dt",
        "dd",
        "blockquote",
        "pre",
        "figcaption",
    ],
    text: &[],
    tabs: &[],
    breaks: &["br"],
    spaces: &[],
    units: &[],
    skipped: &["head", "script", "style"],
    collapse_whitespace: true,
};

/// Reads a book's spine.
pub(super) fn sections(bytes: &[u8], format: &'static str) -> Result<Extracted, Malformed> {
    let mut archive = Archive::open(bytes, format)?;
    let container = archive.required("META-INF/container.xml")?;
    let mut package = None;
    for_each_element(&container, format, |name, element| {
        if name == "rootfile" && package.is_none() {
            package = attribute(element, "full-path");
        }
    })?;
    let package = package.ok_or_else(|| malformed(format, "names no package document".into()))?;
    let opf = archive.required(&package)?;
    let mut manifest = HashMap::new();
    let mut spine = Vec::new();
    for_each_element(&opf, format, |name, element| match name {
        "item" => {
            if let (Some(id), Some(href)) = (attribute(element, "id"), attribute(element, "href")) {
                manifest.insert(id, href);
            }
        }
        "itemref" => spine.extend(attribute(element, "idref")),
        _ => {}
    })?;
    let dir = package.rsplit_once('/').map_or("", |(dir, _)| dir);
    let mut out = UnitText::new(format);
    // A spine may name one document many times: it is parsed once, its text counted each time.
    let mut parsed: HashMap<String, String> = HashMap::new();
    for (i, idref) in spine.iter().enumerate() {
        let href = manifest
            .get(idref)
            .ok_or_else(|| malformed(format, format!("the spine names an unknown item {idref}")))?;
        let path = resolve(dir, href);
        let text = match parsed.get(&path) {
            Some(text) => text,
            None => {
                let xhtml = archive.required(&path)?;
                let text = paragraphs(&xhtml, &XHTML, format)?.concat().join("\n\n");
                parsed.entry(path).or_insert(text)
            }
        };
        out.push(format!("section {}", i + 1), text)?;
    }
    Ok(out.finish())
}

/// The archive path of `href`, relative to directory `dir`.
fn resolve(dir: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or(href);
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in href.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn hrefs_resolve_against_the_package_directory() {
        assert_eq!(
            resolve("OEBPS", "text/ch1.xhtml#top"),
            "OEBPS/text/ch1.xhtml"
        );
        assert_eq!(resolve("OEBPS/pkg", "../ch2.xhtml"), "OEBPS/ch2.xhtml");
        assert_eq!(resolve("", "./ch3.xhtml"), "ch3.xhtml");
    }
}
