//! URI templates of `#[resource(uri = "...")]`, parsed and checked at compile time.
//!
//! The accepted shape is `scheme://segment/segment/...`: a lower-case scheme, then non-empty
//! segments, each a literal of `A-Z a-z 0-9 - . _ ~` or one whole `{var}` (RFC 6570 level 1:
//! simple string expansion, one variable, a Rust field name). Operators (`{+var}`, `{/var}`,
//! ...), several variables in one expression, a variable inside a segment and a variable named
//! twice are refused at the literal. The REST route of the resource follows from the parsed
//! template: `/resources/{scheme}/{segments}`.

use syn::LitStr;

use crate::ctxt::Ctxt;
use crate::valid::is_literal_segment;

/// One segment after `scheme://`.
pub enum Segment {
    Literal(String),
    Var(String),
}

/// A template that passed every rule.
pub struct Template {
    pub scheme: String,
    pub segments: Vec<Segment>,
}

impl Template {
    /// The variables, in order.
    pub fn variables(&self) -> Vec<String> {
        self.segments
            .iter()
            .filter_map(|s| match s {
                Segment::Var(name) => Some(name.clone()),
                Segment::Literal(_) => None,
            })
            .collect()
    }

    /// The REST path serving it: `/resources/{scheme}/{segments}`, variables as `{var}`.
    pub fn rest_path(&self) -> String {
        let mut path = format!("/resources/{}", self.scheme);
        for segment in &self.segments {
            match segment {
                Segment::Literal(literal) => path += &format!("/{literal}"),
                Segment::Var(name) => path += &format!("/{{{name}}}"),
            }
        }
        path
    }
}

const SHAPE: &str = "a resource URI is `scheme://segment/...`, each segment a literal or one whole `{var}`, e.g. `docs://{name}` or `grk://{collection}/status`";

/// Parse `lit`, reporting every problem at it.
pub fn parse(lit: &LitStr, cx: &Ctxt) -> Option<Template> {
    let value = lit.value();
    let Some((scheme, rest)) = value.split_once("://") else {
        cx.error_spanned_by(lit, SHAPE);
        return None;
    };
    let mut ok = true;
    let mut fail = |message: String| {
        cx.error_spanned_by(lit, message);
        ok = false;
    };
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_lowercase())
        && scheme
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c));
    if !scheme_ok {
        fail(format!(
            "the URI scheme `{scheme}` must be a lower-case letter followed by `a-z 0-9 + . -`"
        ));
    }
    let mut segments = Vec::new();
    for segment in rest.split('/') {
        if segment.is_empty() {
            fail(format!("the URI `{value}` has an empty segment; {SHAPE}"));
        } else if let Some(inner) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            match variable(inner) {
                Ok(name)
                    if segments
                        .iter()
                        .any(|s| matches!(s, Segment::Var(n) if *n == name)) =>
                {
                    fail(format!("the URI variable `{{{name}}}` appears twice"));
                }
                Ok(name) => segments.push(Segment::Var(name)),
                Err(message) => fail(message),
            }
        } else if segment.contains(['{', '}']) {
            fail(format!(
                "`{segment}`: a URI variable is a whole segment `{{name}}`; {SHAPE}"
            ));
        } else if !is_literal_segment(segment) {
            fail(format!(
                "malformed URI segment `{segment}`: literal segments use `A-Z a-z 0-9 - . _ ~`"
            ));
        } else {
            segments.push(Segment::Literal(segment.to_owned()));
        }
    }
    ok.then(|| Template {
        scheme: scheme.to_owned(),
        segments,
    })
}

/// The name inside `{...}`, or why it is not a level-1 variable.
fn variable(inner: &str) -> Result<String, String> {
    if let Some(operator) = inner.chars().next().filter(|c| "+#./;?&=,!@|".contains(*c)) {
        return Err(format!(
            "`{{{inner}}}`: the operator `{operator}` is RFC 6570 level 2 or above; a resource URI takes level 1 `{{var}}` only"
        ));
    }
    if inner.contains([',', ':', '*']) {
        return Err(format!(
            "`{{{inner}}}`: one variable per expression, without modifiers (RFC 6570 level 1)"
        ));
    }
    match syn::parse_str::<syn::Ident>(inner) {
        Ok(ident) if !inner.starts_with("r#") => Ok(ident.to_string()),
        _ => Err(format!(
            "`{{{inner}}}`: a URI variable is the name of a field of the parameter type"
        )),
    }
}
