//! Collects every error of one expansion, so the user sees them all at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// An error collector that must be checked: dropping it unchecked is a bug in this crate.
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Record an error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Record a parse error.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// All errors combined into one, or `Ok` when there were none.
    pub fn check(self) -> syn::Result<()> {
        let mut errors = self.errors.take().expect("Ctxt checked twice").into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
