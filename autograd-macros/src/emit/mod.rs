#![doc = include_str!("expansion.md")]

mod fallback;
mod forward;
mod items;
mod reverse;

pub use fallback::fallback_module;
pub use items::{custom_vjp_items, differentiable_items, stub_items};

thread_local! {
    /// Whether the generated `f_vjp` and `f_grad` check their output against the function as
    /// written (feature `self-check`). Only the expansions printed in the docs turn it off, to
    /// show the code a user gets by default.
    pub static SELF_CHECK: std::cell::Cell<bool> = const { std::cell::Cell::new(cfg!(feature = "self-check")) };
}

use crate::analyze::Analysis;
use crate::ast::Function;
use crate::ir::{Body, Origin, ScopeId, ScopeKind, Seg, Stmt, Value, VarId};
use crate::names::hygiene;
use proc_macro2::{Span, TokenStream};
use quote::format_ident;
use std::collections::{BTreeSet, HashMap};
use syn::ext::IdentExt;
use syn::{Ident, Path};

/// Something the forward sweep binds and the reverse sweep reads.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Entity {
    /// A variable's value.
    Var(VarId),
    /// What the op that computes a variable saved for its pullbacks (rule and residuals).
    Saved(VarId),
    /// The pullback of the call that computes a variable.
    Pullback(VarId),
    /// The per-iteration storage of a loop.
    Tape(usize),
    /// The record of which arm of a branch ran.
    Record(usize),
}

/// A loop or a branch, as the reverse sweep nests them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Construct {
    /// Loop number.
    Loop(usize),
    /// Branch number.
    Branch(usize),
}

/// What a first reverse pass learns for the second (and for the forward sweep).
#[derive(Default, Clone)]
pub struct Plan {
    /// How many contributions each variable's cotangent receives.
    pub counts: Vec<usize>,
    /// The entities each loop body or branch arm must save for the reverse sweep, by scope.
    pub saved: HashMap<ScopeId, BTreeSet<Entity>>,
    /// The variables defined outside a construct that receive contributions inside it.
    pub targets: HashMap<Construct, BTreeSet<VarId>>,
    /// The entities of the top level that the reverse sweep reads.
    pub top_used: BTreeSet<Entity>,
    /// Contributions into each field path of a parameter's cotangent (`(root, "fc1.weight")`),
    /// outside loops and branches; a path with an index, or a contribution inside a construct,
    /// counts as many (the path is added into, never assigned).
    pub places: HashMap<(VarId, String), usize>,
    /// The parameters whose cotangent receives contributions as a whole (passed to a call).
    pub whole: BTreeSet<VarId>,
}

impl Plan {
    /// Whether the only contribution into `place` can be assigned rather than added: it is the
    /// one contribution into that path, no other contribution goes into a path that contains it
    /// or that it contains, and none into the whole parameter.
    pub fn assignable(&self, place: &(VarId, String)) -> bool {
        let (root, path) = place;
        let nested = |a: &str, b: &str| {
            a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
        };
        self.places.get(place) == Some(&1)
            && !self.whole.contains(root)
            && !self
                .places
                .keys()
                .any(|(r, p)| r == root && p != path && nested(p, path))
    }
}

/// Everything the phases share.
pub struct Cx<'a> {
    /// The function.
    pub f: &'a Function,
    /// Its lowered body.
    pub body: &'a Body,
    /// `::autograd_core`, or the `crate = path` given.
    pub krate: &'a Path,
    /// See [`crate::analyze::useful`] (for the seeding chosen).
    pub useful: Vec<bool>,
    /// The scope of each loop.
    loop_scope: HashMap<usize, ScopeId>,
    /// The scope each branch sits in.
    branch_home: HashMap<usize, ScopeId>,
    /// Each projection's base and steps.
    projections: HashMap<VarId, (VarId, &'a [Seg])>,
    /// The differentiated parameters that projections read into: their cotangent is a zero
    /// value of their type from the start of the reverse sweep, added into in place.
    pub roots: BTreeSet<VarId>,
    /// Whether every element of a tuple output is seeded (see [`Cx::seeding`]).
    pub all_outputs: bool,
    /// The body's analysis.
    pub analysis: &'a Analysis,
    /// Whether the body is long enough to be emitted for compile time (see [`LARGE_OPS`]).
    pub large: bool,
    /// `stack = bytes` from the attribute: the stack the gradient may assume.
    pub stack: Option<&'a syn::Expr>,
}

/// The crate's traits that have `'static` among their supertraits: a type parameter bounded by
/// one of them (by its last path segment) is `'static`.
pub const STATIC_TRAITS: [&str; 5] = ["Float", "Erf", "Shape", "Dim", "Storage"];

/// From this many ops (counted in the source: a loop body once), a function is emitted for compile
/// time rather than for the last nanosecond: every op's forward and pullback is called out of line
/// (`forward_outlined`, `pullback_at_outlined`, `accumulate_outlined`), so the optimizer compiles
/// each distinct op once instead of once per binding, and both sweeps are cut into blocks of
/// [`SEGMENT`] statements. Below it (every model in the examples and benchmarks), ops are inlined.
///
/// Why: rustc's time on a long straight-line function is mostly LLVM's, which grows faster than
/// the function (300 bindings: 5.9 s inlined, 2.4 s out of line for `f_vjp` alone; 1,000: 32 s
/// and 13 s for the whole crate), and the cost of a call per op is small beside ops on tensors.
pub const LARGE_OPS: usize = 64;

/// The statements per block of a large function's sweeps (see [`LARGE_OPS`]). A run of `let`
/// statements nests one scope per binding, and rustc recurses once per scope when it builds debug
/// information (and once per nested block when it parses): a plain function of 3,000 bindings
/// overflows its stack in a debug build. In blocks of 64 the nesting is at most a few hundred deep
/// for 5,000 bindings; the blocks also end the lifetime of the cotangents bound inside them.
pub const SEGMENT: usize = 64;

/// The number of ops and calls in `stmts`, a loop body counted once.
fn count_ops(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| match s {
            Stmt::Let {
                value: Value::Op { .. } | Value::Call { .. },
                ..
            } => 1,
            Stmt::Loop(l) => count_ops(&l.body),
            Stmt::Branch(b) => b.arms.iter().map(|a| count_ops(&a.body)).sum(),
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => 0,
        })
        .sum()
}

impl<'a> Cx<'a> {
    /// Prepares the emission of `body`, analyzed by `analysis`.
    pub fn new(f: &'a Function, body: &'a Body, analysis: &'a Analysis, krate: &'a Path) -> Self {
        Self::seeding(f, body, analysis, krate, true)
    }

    /// Prepares the emission of `body`, seeding every element of a tuple output (`all_outputs`)
    /// or only the first.
    pub fn seeding(
        f: &'a Function,
        body: &'a Body,
        analysis: &'a Analysis,
        krate: &'a Path,
        all_outputs: bool,
    ) -> Self {
        let mut loop_scope = HashMap::new();
        let mut branch_home = HashMap::new();
        for (s, (kind, parent)) in body.scopes.iter().enumerate() {
            match kind {
                ScopeKind::Loop(l) => {
                    loop_scope.insert(*l, s);
                }
                ScopeKind::Arm(b) => {
                    branch_home.insert(*b, parent.unwrap_or(0));
                }
                ScopeKind::Top => {}
            }
        }
        let mut projections = HashMap::new();
        collect_projections(&body.stmts, &mut projections);
        let useful = if all_outputs {
            analysis.useful_all.clone()
        } else {
            analysis.useful_first.clone()
        };
        let mut roots = BTreeSet::new();
        // A method's receiver, and a parameter that is the receiver of a method call: their
        // cotangent is a value added into (lent to the callee, or by the caller).
        for (v, var) in body.vars.iter().enumerate() {
            if let Origin::Param(i) = var.origin
                && var.active
                && useful[v]
                && (f.params[i].receiver || receivers(&body.stmts).contains(&v))
            {
                roots.insert(v);
            }
        }
        for &v in projections.keys() {
            if useful[v] && body.vars[v].active {
                let mut r = v;
                while let Some(&(b, _)) = projections.get(&r) {
                    r = b;
                }
                roots.insert(r);
            }
        }
        Cx {
            f,
            body,
            krate,
            useful,
            loop_scope,
            branch_home,
            projections,
            roots,
            all_outputs,
            analysis,
            large: count_ops(&body.stmts) >= LARGE_OPS,
            stack: None,
        }
    }

    /// Whether loop `l` of run-time length keeps its iterations' values in a vector kept for the
    /// next call (`__private::LoopRecord`, reused from a per-thread store) rather than in a fresh
    /// `Vec`. The store keys its vectors by type, so the record's type must be `'static`, which
    /// the macro can only see from the source: nothing the loop keeps is a reference (a
    /// borrowed constant; a loop's element of a constant parameter is borrowed again instead)
    /// or a callee's pullback,
    /// and every type parameter in scope is bounded by `'static` or by one of
    /// [`STATIC_TRAITS`], with no lifetime parameter on the `impl`. Otherwise the loop allocates
    /// its vector per call.
    pub fn reuses_record(&self, plan: &Plan, l: &crate::ir::Loop) -> bool {
        let impl_generics = self.f.method.iter().map(|m| &m.impl_generics);
        let static_types = core::iter::once(self.f.generics())
            .chain(impl_generics.clone())
            .all(|g| {
                g.type_params().all(|t| {
                    let bounded = |b: &syn::TypeParamBound| match b {
                        syn::TypeParamBound::Lifetime(l) => l.ident == "static",
                        syn::TypeParamBound::Trait(t) => t
                            .path
                            .segments
                            .last()
                            .is_some_and(|s| STATIC_TRAITS.iter().any(|t| s.ident == t)),
                        _ => false,
                    };
                    t.bounds.iter().any(bounded)
                        || g.where_clause.iter().flat_map(|w| &w.predicates).any(|p| {
                            matches!(p, syn::WherePredicate::Type(pt)
                                if matches!(&pt.bounded_ty, syn::Type::Path(tp) if tp.path.is_ident(&t.ident))
                                    && pt.bounds.iter().any(bounded))
                        })
                })
            });
        let impl_lifetimes = impl_generics
            .clone()
            .any(|g| g.lifetimes().next().is_some());
        static_types && !impl_lifetimes && !self.keeps_reference(plan, &l.body, l.scope, &l.carried)
    }

    /// Whether a construct whose body is `stmts` (scope `scope`, carried values `carried`) keeps
    /// a reference for the reverse sweep, in its own scope or in a construct nested in it. A
    /// callee's pullback counts as one: it may borrow the callee's constant arguments (its type
    /// captures their lifetimes), which the macro cannot see from the call.
    fn keeps_reference(
        &self,
        plan: &Plan,
        stmts: &[Stmt],
        scope: ScopeId,
        carried: &[crate::ir::Carried],
    ) -> bool {
        let is_ref = |e: &Entity| match e {
            Entity::Var(v) => self.body.vars[*v].reference,
            Entity::Pullback(_) => true,
            Entity::Saved(_) | Entity::Tape(_) | Entity::Record(_) => false,
        };
        if plan.saved.get(&scope).is_some_and(|s| s.iter().any(is_ref))
            || carried.iter().any(|c| {
                self.body.vars[c.outer_out].reference || self.body.vars[c.inner_in].reference
            })
        {
            return true;
        }
        stmts.iter().any(|s| match s {
            Stmt::Loop(inner) => {
                self.keeps_reference(plan, &inner.body, inner.scope, &inner.carried)
            }
            Stmt::Branch(b) => b
                .arms
                .iter()
                .any(|a| self.keeps_reference(plan, &a.body, a.scope, &[])),
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => false,
        })
    }

    /// The steps of a projection as tokens (`.fc1.weight`, `.blocks[*(&__c3)]`), each index read
    /// through `index` (a reference to it in the sweep being emitted).
    #[allow(
        clippy::unused_self,
        reason = "a method like the other namers of generated code"
    )]
    fn steps(&self, segs: &[Seg], mut index: impl FnMut(VarId) -> TokenStream) -> TokenStream {
        let mut out = TokenStream::new();
        for s in segs {
            match s {
                Seg::Field(m) => out.extend(quote::quote!(.#m)),
                Seg::Index(i) => {
                    let r = index(*i);
                    out.extend(quote::quote!([*(#r)]));
                }
            }
        }
        out
    }

    /// A projection's root parameter and field path (`fc1.weight`), and whether the path goes
    /// through an index (then the path is cut at the first index: `blocks`).
    fn place_key(&self, v: VarId) -> (VarId, String, bool) {
        let mut chain: Vec<&Seg> = Vec::new();
        let mut r = v;
        while let Some((base, segs)) = self.projection(r) {
            chain.splice(0..0, segs.iter());
            r = base;
        }
        let mut path: Vec<String> = Vec::new();
        for s in chain {
            match s {
                Seg::Field(m) => path.push(quote::quote!(#m).to_string()),
                Seg::Index(_) => return (r, path.join("."), true),
            }
        }
        (r, path.join("."), false)
    }

    /// The module of this function's fallbacks (see [`fallback::fallback_module`]):
    /// `__f_callees`, or `__Type_method_callees` for a method.
    fn fallback_module_ident(&self) -> Ident {
        let name = self.f.name().unraw();
        match &self.f.method {
            Some(m) => format_ident!("__{}_{}_callees", m.self_name, name),
            None => format_ident!("__{}_callees", name),
        }
    }

    /// The fallback trait a call of `pullback` imports (`function`: a function's, not a
    /// method's).
    fn fallback_trait(&self, pullback: &Path, function: bool) -> TokenStream {
        let pb = &pullback.segments.last().expect("a name").ident;
        let module = self.fallback_module_ident();
        let sub = fallback::fallback_mod_ident(pb, function);
        quote::quote!(#module::#sub::Fallback)
    }

    /// Whether `v` is the method's receiver.
    fn is_receiver(&self, v: VarId) -> bool {
        matches!(self.body.vars[v].origin, Origin::Param(i) if self.f.params[i].receiver)
    }

    /// The base and steps of projection `v`.
    fn projection(&self, v: VarId) -> Option<(VarId, &'a [Seg])> {
        self.projections.get(&v).copied()
    }

    fn active(&self, v: VarId) -> bool {
        self.body.vars[v].active
    }

    fn needs_ct(&self, v: VarId) -> bool {
        self.useful[v] && self.active(v)
    }

    /// The scope an entity is bound in.
    fn home(&self, e: Entity) -> ScopeId {
        match e {
            Entity::Var(v) | Entity::Saved(v) | Entity::Pullback(v) => self.body.vars[v].home,
            Entity::Tape(l) => self.body.scopes[self.loop_scope[&l]].1.unwrap_or(0),
            Entity::Record(b) => self.branch_home[&b],
        }
    }

    /// Whether scope `s` is `outer` or nested in it.
    fn within(&self, mut s: ScopeId, outer: ScopeId) -> bool {
        loop {
            if s == outer {
                return true;
            }
            match self.body.scopes[s].1 {
                Some(p) => s = p,
                None => return false,
            }
        }
    }

    /// The identifier an entity is bound to.
    fn ident(&self, e: Entity) -> Ident {
        match e {
            Entity::Var(v) => self.body.vars[v].ident.clone(),
            Entity::Saved(v) => self.derived("saved", v),
            Entity::Pullback(v) => self.derived("pb", v),
            Entity::Tape(l) => format_ident!("__tape{}", l, span = hygiene()),
            Entity::Record(b) => format_ident!("__arm{}", b, span = hygiene()),
        }
    }

    /// The identifier `__{prefix}_{stem}` derived from variable `v`'s (see [`crate::names`]).
    fn derived(&self, prefix: &str, v: VarId) -> Ident {
        format_ident!("__{}_{}", prefix, self.body.vars[v].stem, span = hygiene())
    }

    /// The identifier of a variable's cotangent.
    fn ct_ident(&self, v: VarId) -> Ident {
        self.derived("ct", v)
    }

    /// Whether variable `v` is a parameter passed by reference (`Some(true)`) or by value
    /// (`Some(false)`); a local bound to a reference (a projection, a borrowed constant) counts
    /// as a parameter passed by reference.
    fn param_by_ref(&self, v: VarId) -> Option<bool> {
        match self.body.vars[v].origin {
            Origin::Param(i) => Some(self.f.params[i].by_ref),
            _ if self.body.vars[v].reference => Some(true),
            _ => None,
        }
    }

    /// The enum that records which arm of branch `b` ran.
    #[allow(
        clippy::unused_self,
        reason = "a method like the other namers of generated code"
    )]
    fn arms_enum(&self, b: usize) -> Ident {
        format_ident!("__Arms{}", b)
    }
}

/// The receivers of the method calls of a block.
fn receivers(stmts: &[Stmt]) -> Vec<VarId> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Stmt::Let {
                value: Value::Call {
                    method: true, args, ..
                },
                ..
            } => out.push(args[0].0),
            Stmt::Loop(l) => out.extend(receivers(&l.body)),
            Stmt::Branch(b) => {
                for a in &b.arms {
                    out.extend(receivers(&a.body));
                }
            }
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => {}
        }
    }
    out
}

/// Every projection of a block, by the variable it binds.
fn collect_projections<'a>(stmts: &'a [Stmt], out: &mut HashMap<VarId, (VarId, &'a [Seg])>) {
    for s in stmts {
        match s {
            Stmt::Let {
                var,
                value: Value::Project { base, segs },
                ..
            } => {
                out.insert(*var, (*base, segs.as_slice()));
            }
            Stmt::Loop(l) => collect_projections(&l.body, out),
            Stmt::Branch(b) => {
                for a in &b.arms {
                    collect_projections(&a.body, out);
                }
            }
            Stmt::Let { .. } | Stmt::Destructure { .. } | Stmt::Inert(_) => {}
        }
    }
}

/// `tokens` moved to the user's `span`, so that an error in a generated call underlines the
/// user's operator and is the same diagnostic as the one the user's function reports (rustc then
/// prints it once). Paths and punctuation take the user's span as is; identifiers that name local
/// values (`__t1`, a parameter) keep their own hygiene and only move, so that they resolve as
/// before even when the attribute is used inside a `macro_rules!`.
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let is_colon =
        |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
    let mut out = Vec::with_capacity(trees.len());
    for (i, t) in trees.iter().enumerate() {
        out.push(match t {
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), respan(g.stream(), span));
                ng.set_span(span);
                TokenTree::Group(ng)
            }
            TokenTree::Ident(id) => {
                let after_dot = i > 0
                    && matches!(trees.get(i - 1), Some(TokenTree::Punct(p)) if p.as_char() == '.');
                let in_path = after_dot
                    || (i > 0 && is_colon(trees.get(i - 1)))
                    || is_colon(trees.get(i + 1));
                let mut id = id.clone();
                id.set_span(if in_path {
                    span
                } else {
                    id.span().located_at(span)
                });
                TokenTree::Ident(id)
            }
            t => {
                let mut t = t.clone();
                t.set_span(span);
                t
            }
        });
    }
    out.into_iter().collect()
}
