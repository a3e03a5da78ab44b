//! Error collection: every phase reports into one [`Errors`], and the expansion reports them all
//! together (as serde's `Ctxt` does), next to the user's unchanged function.

use proc_macro2::{Span, TokenStream};
use std::fmt::Display;

/// The errors found so far.
#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `span`.
    pub fn error(&mut self, span: Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records a syn parse error.
    pub fn syn(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    /// Whether nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The number of errors (lowering rolls back to a mark when it lowers a loop body again).
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Forgets the errors after the first `n`.
    pub fn truncate(&mut self, n: usize) {
        self.errors.truncate(n);
    }

    /// One `compile_error!` per error, each at its span.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }

    /// The spans of the errors, for tests.
    #[cfg(test)]
    pub fn spans(&self) -> Vec<Span> {
        self.errors.iter().map(syn::Error::span).collect()
    }

    /// The messages, for tests.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.errors.iter().map(ToString::to_string).collect()
    }
}
