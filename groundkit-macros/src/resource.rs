//! Every rule a resource declaration must follow, checked together so all violations are
//! reported: the rules it shares with tools ([`valid::common`]), a URI template ([`uri`]), a
//! MIME type, a signature that matches the template (its parameters when it has variables,
//! the context alone when it has none), and completers of its variables only.

use proc_macro2::TokenStream;
use syn::{ItemFn, LitStr, Path, Type};

use crate::ast::Function;
use crate::attr::{self, Attrs, Completer, Kind};
use crate::ctxt::Ctxt;
use crate::uri::{self, Template};
use crate::valid::{self, missing_key_at};

/// A declaration that passed every rule.
pub struct Resource<'a> {
    pub name: String,
    pub title: Option<String>,
    pub icon: Option<String>,
    pub summary: String,
    pub description: String,
    pub mime_type: String,
    pub uri: LitStr,
    pub template: Template,
    pub krate: Path,
    pub context: &'a Type,
    /// The parameter type; `None` for a static resource.
    pub params: Option<&'a Type>,
    pub output: &'a Type,
    pub completers: Vec<Completer>,
    pub call_context: Option<&'a Type>,
}

pub fn check(args: TokenStream, item: &ItemFn) -> syn::Result<Resource<'_>> {
    let cx = Ctxt::new();
    let attrs = attr::parse(args, Kind::Resource, &cx);
    let function = Function::from_item(item, Kind::Resource, &cx);
    let resource = validate(&attrs, &function, &cx);
    cx.check()?;
    Ok(resource.expect("a resource is built whenever no error was recorded"))
}

fn validate<'a>(attrs: &Attrs, function: &Function<'a>, cx: &Ctxt) -> Option<Resource<'a>> {
    valid::require_read_only(attrs, function, Kind::Resource, cx);
    let missing_key_at = missing_key_at(attrs, function);
    let template = match &attrs.uri {
        Some(lit) => uri::parse(lit, cx),
        None => {
            cx.error_spanned_by(
                &missing_key_at,
                "a resource must declare its URI: add `uri = \"scheme://path\"` (a `{var}` segment makes it a template)",
            );
            None
        }
    };
    let mime_type = match &attrs.mime_type {
        Some(lit) if valid_mime_type(&lit.value()) => Some(lit.value()),
        Some(lit) => {
            cx.error_spanned_by(
                lit,
                "a MIME type is `type/subtype`, e.g. `text/plain` or `application/json`",
            );
            None
        }
        None => {
            cx.error_spanned_by(
                &missing_key_at,
                "a resource must declare the MIME type of its content: add `mime_type = \"text/plain\"`",
            );
            None
        }
    };
    let common = valid::common(attrs, function, Kind::Resource, cx);
    let template = template?;
    check_signature(&template, attrs.uri.as_ref()?, function, cx);
    check_completers(&template, &attrs.complete, cx);
    let common = common?;
    Some(Resource {
        name: common.name,
        title: common.title,
        icon: common.icon,
        summary: common.summary,
        description: common.description,
        mime_type: mime_type?,
        uri: attrs.uri.clone()?,
        template,
        krate: common.krate,
        context: function.context?,
        params: function.request,
        output: function.output?,
        completers: attrs.complete.clone(),
        call_context: function.call_context,
    })
}

/// Each completer completes a variable of the URI.
fn check_completers(template: &Template, completers: &[Completer], cx: &Ctxt) {
    let variables = template.variables();
    for completer in completers {
        let argument = completer.argument.to_string();
        if !variables.contains(&argument) {
            let known = if variables.is_empty() {
                "the URI has none".to_owned()
            } else {
                let names: Vec<String> = variables.iter().map(|v| format!("`{v}`")).collect();
                format!("the URI's variables: {}", names.join(", "))
            };
            cx.error_spanned_by(
                &completer.argument,
                format!("`{argument}` is not a variable of the URI, so it has nothing to complete ({known})"),
            );
        }
    }
}

/// A template with variables takes a parameter type; a static URI takes the context alone.
fn check_signature(template: &Template, uri: &LitStr, function: &Function<'_>, cx: &Ctxt) {
    let variables = template.variables();
    match (variables.is_empty(), function.request) {
        (false, None) if !function.takes_request => cx.error_spanned_by(
            uri,
            format!(
                "the URI has variables ({}), so the function takes them: add a parameter type \
                 whose fields are the variables, `(ctx: &Context, params: Params)`",
                variables
                    .iter()
                    .map(|v| format!("`{{{v}}}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        (true, Some(params)) => cx.error_spanned_by(
            params,
            "the URI has no `{var}`, so this is a static resource: it takes its context alone, \
             `(ctx: &Context)`",
        ),
        _ => {}
    }
}

fn valid_mime_type(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
    };
    matches!(essence.split_once('/'), Some((kind, sub)) if token(kind) && token(sub))
}
