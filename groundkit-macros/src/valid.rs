//! Every rule a tool declaration must follow, checked together so all violations are reported.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{ItemFn, LitStr, Path, Type};

use crate::ast::Function;
use crate::attr::{self, Attrs};
use crate::ctxt::Ctxt;

/// A declaration that passed every rule: what expansion needs, nothing optional left.
pub struct Tool<'a> {
    pub name: String,
    pub title: Option<String>,
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
    let attrs = attr::parse(args, &cx);
    let function = Function::from_item(item, &cx);
    let tool = validate(&attrs, &function, &cx);
    cx.check()?;
    Ok(tool.expect("a tool is built whenever no error was recorded"))
}

fn validate<'a>(attrs: &Attrs, function: &Function<'a>, cx: &Ctxt) -> Option<Tool<'a>> {
    let missing_key_at = missing_key_at(attrs, function);
    if attrs.read_only.is_none() && !attrs.refused_side_effect {
        cx.error_spanned_by(
            &missing_key_at,
            "a tool must declare its side effect: add `read_only` to #[tool(...)] \
             (groundkit serves read-only tools only)",
        );
    }
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
    let name = match &attrs.name {
        Some(lit) => {
            let name = lit.value();
            if !valid_tool_name(&name) {
                cx.error_spanned_by(
                    lit,
                    "a tool name is 1 to 128 characters from `A-Z a-z 0-9 _ . -`",
                );
            }
            name
        }
        // `r#match` is the Rust spelling of the name `match`.
        None => function.item.sig.ident.unraw().to_string(),
    };
    if let Some(title) = attrs.title.as_ref().filter(|t| t.value().trim().is_empty()) {
        cx.error_spanned_by(title, "a tool title cannot be empty");
    }
    let docs = function.docs.clone();
    if docs.is_none() {
        cx.error_spanned_by(
            &function.item.sig.ident,
            "a tool needs a doc comment: MCP clients show it to the model as the tool's description, \
             and its first sentence is the summary in OpenAPI",
        );
    }
    let (method, path, params) = route?;
    let description = docs?;
    Some(Tool {
        summary: summary(&description),
        description,
        name,
        title: attrs.title.as_ref().map(LitStr::value),
        method,
        path,
        params,
        rest: attrs.rest.clone()?,
        krate: attrs
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::groundkit_core)),
        context: function.context?,
        request: function.request?,
        output: function.output?,
    })
}

/// Where an error about a missing key points: the attribute's arguments. An attribute macro is
/// handed its arguments but not the `tool` path or the brackets around them, so for a bare
/// `#[tool]` the nearest tokens that are not the whole macro call are the function's name, which
/// names the declaration that is incomplete.
fn missing_key_at(attrs: &Attrs, function: &Function<'_>) -> TokenStream {
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
            } else if !segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
            {
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
