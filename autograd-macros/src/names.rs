//! The identifiers the expansion introduces, and its rule of hygiene.
//!
//! Every local the generated code binds (a body variable's versions, counters, slots, saved
//! values, closure parameters, the gradient under construction) is an identifier with
//! [`Span::mixed_site`] hygiene, located at the user's code it stands for. Rust resolves a local
//! by its name *and* its hygiene, so no name the user writes, in the body or in a parameter, can
//! refer to one of them or shadow one: a user's `i` and the loop counter are different variables
//! even when spelled alike. The user's own bindings that generated code keeps as written (loop
//! indices, a `match` arm's bindings, parameters) keep their names and their own hygiene.
//!
//! Among themselves, the expansion's identifiers are told apart by construction: a body
//! variable's versions are `__name`, `__name_2`, ... ([`crate::lower`] issues each once), the
//! names derived from a variable's start with a prefix of [`DERIVED_PREFIXES`], and the
//! expansion's fixed locals are the `__` names of [`OWN`]; a variable whose base name would
//! collide with either is issued as `__v_name` instead.

use proc_macro2::{Ident, Span};

/// The expansion's fixed locals, without their leading `__` (see [`own`]).
pub const OWN: &[&str] = &[
    "out",
    "needs",
    "value",
    "grad",
    "acc_self",
    "scratch_self",
    "self",
    "pullback",
    "res",
    "aux",
    "i",
    "slot",
    "cotangent",
    "written",
    "result",
    "updated",
    "ct",
    "end",
    "block",
    "start",
    "b",
    "segments",
    "state",
    "len",
    "half",
    "kept",
    "rest",
];

/// The prefixes of the names the generated code derives from a variable's (`__saved_x` for `__x`)
/// or numbers (`__tape0`, `__value1`).
pub const DERIVED_PREFIXES: &[&str] = &[
    "saved_", "op_", "ct_", "pb_", "gs_", "g_", "tape", "arm", "value", "aux", "cot",
];

/// The hygiene of every identifier the expansion introduces.
pub fn hygiene() -> Span {
    Span::mixed_site()
}

/// The fixed local `__name` of generated code, one of [`OWN`].
pub fn own(name: &str) -> Ident {
    debug_assert!(
        OWN.contains(&name),
        "`__{name}` is not listed among the expansion's own names"
    );
    Ident::new(&format!("__{name}"), hygiene())
}

/// An identifier of the expansion's (see the module's docs), located at `at` for diagnostics.
pub fn fresh(name: &str, at: Span) -> Ident {
    Ident::new(name, hygiene().located_at(at))
}

/// The output's cotangent, the last parameter of `f_vjp` (and of a pullback's closure).
pub fn cotangent() -> Ident {
    Ident::new("cotangent", hygiene())
}
