//! Parsing `#[tool(...)]` arguments into a typed view that keeps each token for its span.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{LitStr, Path};

use crate::ctxt::Ctxt;

/// The keys of `#[tool(...)]`, as written.
#[derive(Default)]
pub struct Attrs {
    /// The arguments as written, for errors about a key that is missing.
    pub args: TokenStream,
    /// Span of the `read_only` flag, when present.
    pub read_only: Option<Span>,
    /// `rest = "METHOD /path"`.
    pub rest: Option<LitStr>,
    /// `name = "..."`.
    pub name: Option<LitStr>,
    /// `title = "..."`.
    pub title: Option<LitStr>,
    /// `crate = path`.
    pub krate: Option<Path>,
    /// Whether a side-effect key other than `read_only` was written (already reported).
    pub refused_side_effect: bool,
}

const KEYS: &str = "read_only, rest, name, title, crate";

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

pub fn parse(args: TokenStream, cx: &Ctxt) -> Attrs {
    let mut attrs = Attrs {
        args: args.clone(),
        ..Attrs::default()
    };
    let parser = syn::meta::parser(|meta| {
        parse_key(&mut attrs, &meta, cx);
        Ok(())
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(err);
    }
    attrs
}

fn parse_key(attrs: &mut Attrs, meta: &ParseNestedMeta<'_>, cx: &Ctxt) {
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
        |cx: &Ctxt| cx.error_spanned_by(path, format!("duplicate key `{key}` in #[tool]"));
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
        "rest" => string_value(meta, cx, &mut attrs.rest, duplicate),
        "name" => string_value(meta, cx, &mut attrs.name, duplicate),
        "title" => string_value(meta, cx, &mut attrs.title, duplicate),
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
                    "groundkit tools are read-only: `{refused}` is not a side effect a tool may declare; \
                     groundkit serves tools without authentication, so `SideEffect` is sealed to \
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
                    "unknown key `{}` in #[tool]; expected one of: {KEYS}",
                    quote::quote!(#path)
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
