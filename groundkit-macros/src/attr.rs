//! Parsing `#[tool(...)]`, `#[resource(...)]` and `#[prompt(...)]` arguments into a typed view that keeps each
//! token for its span.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{LitStr, Path};

use crate::ctxt::Ctxt;

/// Which attribute is being expanded: the keys it takes and the noun its messages use.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[tool]`.
    Tool,
    /// `#[resource]`.
    Resource,
    /// `#[prompt]`.
    Prompt,
}

impl Kind {
    /// The attribute's name, which is also the noun of its messages.
    pub const fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
        }
    }

    /// The keys it takes, as listed in the error about an unknown one.
    const fn keys(self) -> &'static str {
        match self {
            Kind::Tool => "read_only, rest, name, title, icon, crate",
            Kind::Resource => "read_only, uri, mime_type, complete, name, title, icon, crate",
            Kind::Prompt => "read_only, complete, name, title, icon, crate",
        }
    }

    fn takes(self, key: &str) -> bool {
        match self {
            Kind::Tool => key == "rest",
            Kind::Resource => key == "uri" || key == "mime_type" || key == "complete",
            Kind::Prompt => key == "complete",
        }
    }
}

/// One `argument = completer` pair of `complete(...)`.
#[derive(Clone)]
pub struct Completer {
    /// The argument (a field of the prompt's arguments, or a URI variable).
    pub argument: syn::Ident,
    /// The completer function.
    pub function: Path,
}

/// The keys of `#[tool(...)]`, `#[resource(...)]` or `#[prompt(...)]`, as written.
#[derive(Default)]
pub struct Attrs {
    /// The arguments as written, for errors about a key that is missing.
    pub args: TokenStream,
    /// Span of the `read_only` flag, when present.
    pub read_only: Option<Span>,
    /// `rest = "METHOD /path"` (tools).
    pub rest: Option<LitStr>,
    /// `uri = "scheme://segments"` (resources).
    pub uri: Option<LitStr>,
    /// `mime_type = "type/subtype"` (resources).
    pub mime_type: Option<LitStr>,
    /// `complete(argument = completer, ...)` (resources and prompts).
    pub complete: Vec<Completer>,
    /// `name = "..."`.
    pub name: Option<LitStr>,
    /// `title = "..."`.
    pub title: Option<LitStr>,
    /// `icon = "https://..."` or `icon = "data:image/..."`.
    pub icon: Option<LitStr>,
    /// `crate = path`.
    pub krate: Option<Path>,
    /// Whether a side-effect key other than `read_only` was written (already reported).
    pub refused_side_effect: bool,
}

/// Side effects people reach for that groundkit refuses, each reported with the reason.
const REFUSED_SIDE_EFFECTS: &[&str] = &[
    "mutating",
    "write",
    "writes",
    "destructive",
    "idempotent",
    "open_world",
    "side_effect",
];

pub fn parse(args: TokenStream, kind: Kind, cx: &Ctxt) -> Attrs {
    let mut attrs = Attrs {
        args: args.clone(),
        ..Attrs::default()
    };
    let parser = syn::meta::parser(|meta| {
        parse_key(&mut attrs, &meta, kind, cx);
        Ok(())
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(err);
    }
    attrs
}

fn parse_key(attrs: &mut Attrs, meta: &ParseNestedMeta<'_>, kind: Kind, cx: &Ctxt) {
    let noun = kind.noun();
    let path = &meta.path;
    let key = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| {
            if path.segments.len() == 1 {
                path.segments[0].ident.to_string()
            } else {
                String::new()
            }
        });
    let duplicate =
        |cx: &Ctxt| cx.error_spanned_by(path, format!("duplicate key `{key}` in #[{noun}]"));
    match key.as_str() {
        "read_only" => {
            if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
                cx.error_spanned_by(path, "`read_only` is a flag and takes no value");
                skip_value(meta);
            }
            if attrs.read_only.replace(path_span(path)).is_some() {
                duplicate(cx);
            }
        }
        "rest" if kind.takes("rest") => string_value(meta, cx, &mut attrs.rest, duplicate),
        "uri" if kind.takes("uri") => string_value(meta, cx, &mut attrs.uri, duplicate),
        "mime_type" if kind.takes("mime_type") => {
            string_value(meta, cx, &mut attrs.mime_type, duplicate)
        }
        "complete" if kind.takes("complete") => parse_completers(attrs, meta, cx),
        "name" => string_value(meta, cx, &mut attrs.name, duplicate),
        "title" => string_value(meta, cx, &mut attrs.title, duplicate),
        "icon" => string_value(meta, cx, &mut attrs.icon, duplicate),
        "crate" => match meta.value().and_then(|value| value.parse::<Path>()) {
            Ok(krate) => {
                if attrs.krate.replace(krate).is_some() {
                    duplicate(cx);
                }
            }
            Err(err) => cx.syn_error(err),
        },
        refused if REFUSED_SIDE_EFFECTS.contains(&refused) => {
            attrs.refused_side_effect = true;
            cx.error_spanned_by(
                path,
                format!(
                    "groundkit {noun}s are read-only: `{refused}` is not a side effect a {noun} may declare; \
                     groundkit serves {noun}s without authentication, so `SideEffect` is sealed to \
                     `ReadOnly` in groundkit-core/src/tool.rs, the one place a new side effect would \
                     have to be added deliberately"
                ),
            );
            skip_value(meta);
        }
        _ => {
            cx.error_spanned_by(
                path,
                format!(
                    "unknown key `{}` in #[{noun}]; expected one of: {}",
                    quote::quote!(#path),
                    kind.keys()
                ),
            );
            skip_value(meta);
        }
    }
}

fn string_value(
    meta: &ParseNestedMeta<'_>,
    cx: &Ctxt,
    slot: &mut Option<LitStr>,
    duplicate: impl Fn(&Ctxt),
) {
    match meta.value().and_then(|value| value.parse::<LitStr>()) {
        Ok(lit) => {
            if slot.replace(lit).is_some() {
                duplicate(cx);
            }
        }
        Err(err) => cx.syn_error(err),
    }
}

/// `complete(argument = path, ...)`: each argument once.
fn parse_completers(attrs: &mut Attrs, meta: &ParseNestedMeta<'_>, cx: &Ctxt) {
    let parsed = meta.parse_nested_meta(|nested| {
        let Some(argument) = nested.path.get_ident().cloned() else {
            cx.error_spanned_by(
                &nested.path,
                "`complete(...)` names an argument, then its completer: `complete(name = completer_fn)`",
            );
            skip_value(&nested);
            return Ok(());
        };
        let function: Path = nested.value()?.parse()?;
        if attrs.complete.iter().any(|c| c.argument == argument) {
            cx.error_spanned_by(
                &argument,
                format!("`{argument}` has two completers; an argument has at most one"),
            );
        }
        attrs.complete.push(Completer { argument, function });
        Ok(())
    });
    if let Err(err) = parsed {
        cx.syn_error(err);
    }
}

/// Consume `= value` or `(...)` after a key that is being reported, so parsing continues.
fn skip_value(meta: &ParseNestedMeta<'_>) {
    if meta.input.peek(syn::Token![=]) {
        let _ = meta.value().and_then(|value| value.parse::<syn::Expr>());
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|nested| {
            skip_value(&nested);
            Ok(())
        });
    }
}

fn path_span(path: &Path) -> Span {
    path.segments
        .first()
        .map(|segment| segment.ident.span())
        .unwrap_or_else(Span::call_site)
}
