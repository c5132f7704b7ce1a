//! Every rule a tool declaration must follow, checked together so all violations are reported;
//! the rules tools and resources share ([`common`]).

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{ItemFn, LitStr, Path, Type};

use crate::ast::Function;
use crate::attr::{self, Attrs, Kind};
use crate::ctxt::Ctxt;

/// A declaration that passed every rule: what expansion needs, nothing optional left.
pub struct Tool<'a> {
    pub name: String,
    pub title: Option<String>,
    pub icon: Option<String>,
    pub summary: String,
    pub description: String,
    pub method: Method,
    pub path: String,
    pub params: Vec<String>,
    pub rest: LitStr,
    pub krate: Path,
    pub context: &'a Type,
    pub request: &'a Type,
    pub output: &'a Type,
    pub call_context: Option<&'a Type>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// Paths the transports serve themselves.
const RESERVED: &[&str] = &["/openapi.json", "/mcp"];

pub fn check(args: TokenStream, item: &ItemFn) -> syn::Result<Tool<'_>> {
    let cx = Ctxt::new();
    let attrs = attr::parse(args, Kind::Tool, &cx);
    let function = Function::from_item(item, Kind::Tool, &cx);
    let tool = validate(&attrs, &function, &cx);
    cx.check()?;
    Ok(tool.expect("a tool is built whenever no error was recorded"))
}

fn validate<'a>(attrs: &Attrs, function: &Function<'a>, cx: &Ctxt) -> Option<Tool<'a>> {
    let missing_key_at = missing_key_at(attrs, function);
    require_read_only(attrs, function, Kind::Tool, cx);
    let route = match &attrs.rest {
        Some(rest) => parse_route(rest, cx),
        None => {
            cx.error_spanned_by(
                &missing_key_at,
                "a tool must declare its REST route: add `rest = \"GET /path/{param}\"` or `rest = \"POST /path\"`",
            );
            None
        }
    };
    let common = common(attrs, function, Kind::Tool, cx);
    let (method, path, params) = route?;
    let common = common?;
    Some(Tool {
        summary: common.summary,
        description: common.description,
        name: common.name,
        title: common.title,
        icon: common.icon,
        method,
        path,
        params,
        rest: attrs.rest.clone()?,
        krate: common.krate,
        context: function.context?,
        request: function.request?,
        output: function.output?,
        call_context: function.call_context,
    })
}

/// What tools and resources declare alike, checked alike.
pub struct Common {
    pub name: String,
    pub title: Option<String>,
    pub icon: Option<String>,
    pub summary: String,
    pub description: String,
    pub krate: Path,
}

/// The one side effect a declaration may have, `read_only`, is written.
pub fn require_read_only(attrs: &Attrs, function: &Function<'_>, kind: Kind, cx: &Ctxt) {
    let noun = kind.noun();
    if attrs.read_only.is_none() && !attrs.refused_side_effect {
        cx.error_spanned_by(
            missing_key_at(attrs, function),
            format!(
                "a {noun} must declare its side effect: add `read_only` to #[{noun}(...)] \
                 (groundkit serves read-only {noun}s only)"
            ),
        );
    }
}

/// The name, title, doc comment and crate path of a declaration.
pub fn common(attrs: &Attrs, function: &Function<'_>, kind: Kind, cx: &Ctxt) -> Option<Common> {
    let noun = kind.noun();
    let name = match &attrs.name {
        Some(lit) => {
            let name = lit.value();
            if !valid_tool_name(&name) {
                cx.error_spanned_by(
                    lit,
                    format!("a {noun} name is 1 to 128 characters from `A-Z a-z 0-9 _ . -`"),
                );
            }
            name
        }
        // `r#match` is the Rust spelling of the name `match`.
        None => function.item.sig.ident.unraw().to_string(),
    };
    if let Some(title) = attrs.title.as_ref().filter(|t| t.value().trim().is_empty()) {
        cx.error_spanned_by(title, format!("a {noun} title cannot be empty"));
    }
    if let Some(icon) = attrs.icon.as_ref().filter(|i| !valid_icon(&i.value())) {
        cx.error_spanned_by(
            icon,
            "an icon is an `https://` URL or a `data:image/...` URI, without spaces \
             (MCP clients load no other)",
        );
    }
    let docs = function.docs.clone();
    if docs.is_none() {
        let message = match kind {
            Kind::Tool => {
                "a tool needs a doc comment: MCP clients show it to the model as the tool's description, \
                 and its first sentence is the summary in OpenAPI"
            }
            Kind::Resource => {
                "a resource needs a doc comment: MCP clients show it as the resource's description, \
                 and its first sentence is the summary in OpenAPI"
            }
            Kind::Prompt => {
                "a prompt needs a doc comment: MCP clients show it as the prompt's description, \
                 and its first sentence is the summary in OpenAPI"
            }
        };
        cx.error_spanned_by(&function.item.sig.ident, message);
    }
    let description = docs?;
    Some(Common {
        summary: summary(&description),
        description,
        name,
        title: attrs.title.as_ref().map(LitStr::value),
        icon: attrs.icon.as_ref().map(LitStr::value),
        krate: attrs
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::groundkit_core)),
    })
}

/// Whether `icon` is a source MCP clients may load: an `https` URL with a host, or an image
/// `data:` URI; no white space in either.
fn valid_icon(icon: &str) -> bool {
    let lower = icon.to_ascii_lowercase();
    let https_host = lower
        .strip_prefix("https://")
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'));
    let image_data = lower
        .strip_prefix("data:image/")
        .is_some_and(|rest| rest.contains(','));
    (https_host || image_data) && !icon.chars().any(char::is_whitespace)
}

/// Where an error about a missing key points: the attribute's arguments. An attribute macro is
/// handed its arguments but not the `tool` path or the brackets around them, so for a bare
/// `#[tool]` the nearest tokens that are not the whole macro call are the function's name, which
/// names the declaration that is incomplete.
pub fn missing_key_at(attrs: &Attrs, function: &Function<'_>) -> TokenStream {
    if attrs.args.is_empty() {
        function.item.sig.ident.to_token_stream()
    } else {
        attrs.args.clone()
    }
}

/// `"METHOD /path/{param}"` into its parts, reporting every problem at the literal.
fn parse_route(lit: &LitStr, cx: &Ctxt) -> Option<(Method, String, Vec<String>)> {
    let value = lit.value();
    let Some((method, path)) = value.split_once(' ') else {
        cx.error_spanned_by(
            lit,
            "a REST route is written `\"METHOD /path\"`, e.g. `\"POST /search\"`",
        );
        return None;
    };
    let method = match method {
        "GET" => Some(Method::Get),
        "POST" => Some(Method::Post),
        other => {
            cx.error_spanned_by(
                lit,
                format!(
                    "unsupported HTTP method `{other}`: a tool route is `GET` (no free text; every \
                     argument a path segment) or `POST` (arguments in a JSON body)"
                ),
            );
            None
        }
    };
    let mut params: Vec<String> = Vec::new();
    let mut path_ok = true;
    let mut fail = |message: String| {
        cx.error_spanned_by(lit, message);
        path_ok = false;
    };
    if !path.starts_with('/') {
        fail(format!("the route path `{path}` must start with `/`"));
    } else if path.contains(['?', '#']) {
        fail("a route path cannot carry a query string or fragment: no groundkit route accepts a query string".to_owned());
    } else if path.len() > 1 {
        for segment in path[1..].split('/') {
            if segment.is_empty() {
                fail(format!("the route path `{path}` has an empty segment"));
            } else if let Some(inner) = segment.strip_prefix('{') {
                match inner.strip_suffix('}') {
                    Some(param) if syn::parse_str::<syn::Ident>(param).is_ok() => {
                        if params.iter().any(|p| p == param) {
                            fail(format!("path parameter `{{{param}}}` appears twice"));
                        }
                        params.push(param.to_owned());
                    }
                    _ => fail(format!(
                        "malformed path segment `{segment}`: a parameter is a whole segment `{{name}}` with a Rust field name inside"
                    )),
                }
            } else if !is_literal_segment(segment) {
                fail(format!(
                    "malformed path segment `{segment}`: literal segments use `A-Z a-z 0-9 - . _ ~`"
                ));
            }
        }
    }
    if RESERVED.contains(&path) {
        fail(format!(
            "`{path}` is served by groundkit itself and cannot be a tool route"
        ));
    }
    Some((method?, path.to_owned(), params)).filter(|_| path_ok)
}

/// Whether `segment` is a literal path segment: `A-Z a-z 0-9 - . _ ~`, nothing to escape.
pub fn is_literal_segment(segment: &str) -> bool {
    segment
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
}

fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// The first sentence of the first paragraph.
fn summary(description: &str) -> String {
    let paragraph = description
        .split("\n\n")
        .next()
        .unwrap_or(description)
        .replace('\n', " ");
    let end = paragraph
        .char_indices()
        .find(|&(i, c)| c == '.' && paragraph[i + 1..].starts_with(char::is_whitespace))
        .map(|(i, _)| i + 1)
        .unwrap_or(paragraph.len());
    paragraph[..end].trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn summary_is_the_first_sentence() {
        assert_eq!(
            summary("Greet someone. Politely.\n\nMore."),
            "Greet someone."
        );
        assert_eq!(
            summary("Search the corpus\nby text. Then rank.\n\nDetails"),
            "Search the corpus by text."
        );
        assert_eq!(summary("No period"), "No period");
    }
}
