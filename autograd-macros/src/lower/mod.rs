//! Phase 3: the body lowered to A-normal form ([`crate::ir`]), with every unsupported construct
//! reported at its span.
//!
//! Each expression that depends on a differentiated parameter ("active") is flattened to one op a
//! binding; every other expression is kept as written, renamed ([`crate::rename`]), and bound to a
//! constant. Reassignment makes a new version of a variable; a loop's reassigned variables are
//! carried from one iteration to the next; a branch's reassigned variables flow out of it.
//!
//! Before:
//! ```text
//! let y = (x * w + b).exp();
//! ```
//! After:
//! ```text
//! let __t1 = mul(x, w);  let __t2 = add(__t1, b);  let __y = exp(__t2);
//! ```

// Every lowering function reports its errors itself and returns `None` after one; `Some(None)` is a
// construct lowered without a value (a statement, or a loop).
#![allow(
    clippy::option_option,
    reason = "`None`: an error was reported; `Some(None)`: lowered, with no value"
)]

mod control;
mod expr;
mod jumps;
mod place;
mod reject;
mod returns;
mod stmt;

use reject::{
    check_attributes, control_flow_error, control_flow_span, has_assignment, is_value_free_macro,
    unsupported,
};

use crate::ast::Function;
use crate::ctxt::Errors;
use crate::ir::{
    Arm, Body, Branch, Carried, Head, Loop, Origin, ScopeId, ScopeKind, Seg, Stmt, Value, Var,
    VarId,
};
use crate::names::{DERIVED_PREFIXES, OWN, hygiene};
use crate::rename::{self, Use, key};
use crate::rules::is_rule_method;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Block, Expr, Ident, Pat, Type, UnOp};

/// How a name of the body is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binding {
    /// To a variable (`mutable` if declared `let mut`).
    Var(VarId, bool),
    /// To something the macro keeps as written: a pattern binding of a `match` arm or `if let`, or
    /// a loop index. Its uses are not renamed.
    Verbatim,
    /// To a value whose definition was reported as an error: its uses report nothing more.
    Poisoned,
}

/// The stem of the names derived from a variable issued as `ident` (`x` for `__x`).
fn stem_of(ident: &Ident) -> String {
    ident.to_string().trim_start_matches('_').to_string()
}

/// Every identifier in `tokens`.
fn idents_of(tokens: TokenStream) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for t in tokens {
        match t {
            proc_macro2::TokenTree::Ident(i) => {
                out.insert(key(&i));
            }
            proc_macro2::TokenTree::Group(g) => out.extend(idents_of(g.stream())),
            _ => {}
        }
    }
    out
}

/// Lowers the body of `f`. Returns `None` if nothing could be lowered (errors are reported).
pub fn lower(f: &Function, errors: &mut Errors) -> Option<Body> {
    let mut l = Lower {
        errors,
        vars: Vec::new(),
        scopes: vec![(ScopeKind::Top, None)],
        scope: 0,
        env: vec![HashMap::new()],
        pending: None,
        taken: HashMap::new(),
        issued: std::collections::HashSet::new(),
        items: Vec::new(),
        loops: 0,
        branches: 0,
        temps: 0,
        stmts: Vec::new(),
        local_fns: Vec::new(),
        param_kinds: f.params.iter().map(|p| p.kind).collect(),
        borrowed_from: HashMap::new(),
        element_borrows: HashMap::new(),
        tuple_output: match &f.output {
            Type::Tuple(t) if t.elems.len() >= 2 => Some(t.elems.len()),
            _ => None,
        },
        aux: Vec::new(),
        returnable: true,
        returning: false,
        ended: false,
        conts: Vec::new(),
        written: idents_of(f.item.block.to_token_stream()),
        rewritten: 0,
    };
    for (i, p) in f.params.iter().enumerate() {
        // The parameter keeps its name; the names derived from it take a stem of their own.
        let stem = if p.receiver {
            // `__self`, one of the expansion's own names.
            "self".to_string()
        } else {
            stem_of(&l.fresh_ident(&key(&p.name)))
        };
        let v = l.vars.len();
        l.vars.push(Var {
            ident: p.name.clone(),
            stem,
            active: p.wrt,
            home: 0,
            origin: Origin::Param(i),
            reference: false,
            temp: false,
        });
        // A method's receiver is written `self` in the body and bound to `__self`.
        let name = if p.receiver {
            "self".to_string()
        } else {
            key(&p.name)
        };
        l.env[0].insert(name, Binding::Var(v, false));
    }
    let block = &f.item.block;
    if !check_attributes(block, l.errors) {
        return None;
    }
    let tail = l.lower_block_stmts(&block.stmts, true);
    let result = match tail {
        Some(Some(v)) => v,
        Some(None) => {
            if l.errors.is_empty() {
                let span = block
                    .stmts
                    .last()
                    .map_or_else(|| block.brace_token.span.join(), Spanned::span);
                l.errors.error(
                    span,
                    "a #[differentiable] function must end with the value it returns (a tail expression without `;`)",
                );
            }
            return None;
        }
        None => return None,
    };
    let result_span = block
        .stmts
        .last()
        .map_or_else(Span::call_site, Spanned::span);
    Some(Body {
        vars: l.vars,
        scopes: l.scopes,
        items: l.items,
        stmts: l.stmts,
        result,
        aux: l.aux,
        result_span,
        element_borrows: l.element_borrows,
    })
}

struct Lower<'e> {
    errors: &'e mut Errors,
    vars: Vec<Var>,
    scopes: Vec<(ScopeKind, Option<ScopeId>)>,
    scope: ScopeId,
    /// Lexical frames, innermost last.
    env: Vec<HashMap<String, Binding>>,
    /// While a tuple `let` binds its pattern: the frame depth it binds in, and the names bound so
    /// far, which enter the frame together once every element is evaluated (Rust evaluates
    /// `(b, a)` before binding `(a, b)`).
    pending: Option<(usize, Vec<(String, Binding)>)>,
    /// How many generated identifiers use each base name.
    taken: HashMap<String, usize>,
    /// Every identifier given to a variable, so that a numbered one (`__y_2`, for a second `y`)
    /// is never one already given (to a local named `y_2`).
    issued: std::collections::HashSet<String>,
    items: Vec<TokenStream>,
    loops: usize,
    branches: usize,
    temps: usize,
    /// The statement list being built.
    stmts: Vec<Stmt>,
    /// The functions defined inside the body (never differentiated).
    local_fns: Vec<String>,
    /// What each parameter's type is.
    param_kinds: Vec<crate::ast::Kind>,
    /// The variable each borrowed constant (`let xt = &xs[t];`) borrows from.
    borrowed_from: HashMap<VarId, VarId>,
    /// See [`Body::element_borrows`](crate::ir::Body::element_borrows).
    element_borrows: HashMap<VarId, (VarId, VarId)>,
    /// The number of elements of a tuple output (`-> (f32, Tensor![..])`).
    tuple_output: Option<usize>,
    /// A tuple output's elements after the first.
    aux: Vec<VarId>,
    /// Whether the next block lowered may end the function with `return` (the function's body,
    /// an arm of a returning branch, a continuation); each block takes it.
    returnable: bool,
    /// Whether the next branch lowered is a returning one (see [`returns`]); taken by it.
    returning: bool,
    /// Set when the statement just lowered ended the function (a `return`, or a returning
    /// branch, whose arms went on with the continuations).
    ended: bool,
    /// The continuations of the returning branches being lowered, outermost first.
    conts: Vec<returns::Cont>,
    /// Every identifier the function's body writes, so that the flags of a loop that jumps
    /// (see [`jumps`]) are named by none of them.
    written: std::collections::HashSet<String>,
    /// The loops rewritten so far (numbers their flags).
    rewritten: usize,
}

/// Everything a loop body's lowering changes, to lower it again with other assumptions.
struct Snapshot {
    vars: usize,
    scopes: usize,
    errors: usize,
    taken: HashMap<String, usize>,
    issued: std::collections::HashSet<String>,
    items: usize,
    loops: usize,
    branches: usize,
    temps: usize,
    env: Vec<HashMap<String, Binding>>,
    stmts: usize,
    pending: Option<(usize, Vec<(String, Binding)>)>,
}

impl Lower<'_> {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            vars: self.vars.len(),
            scopes: self.scopes.len(),
            errors: self.errors.len(),
            taken: self.taken.clone(),
            issued: self.issued.clone(),
            items: self.items.len(),
            loops: self.loops,
            branches: self.branches,
            temps: self.temps,
            env: self.env.clone(),
            pending: self.pending.clone(),
            stmts: self.stmts.len(),
        }
    }

    fn restore(&mut self, s: &Snapshot) {
        self.vars.truncate(s.vars);
        self.scopes.truncate(s.scopes);
        self.errors.truncate(s.errors);
        self.taken.clone_from(&s.taken);
        self.issued.clone_from(&s.issued);
        self.items.truncate(s.items);
        self.loops = s.loops;
        self.branches = s.branches;
        self.temps = s.temps;
        self.env.clone_from(&s.env);
        self.pending.clone_from(&s.pending);
        self.stmts.truncate(s.stmts);
    }

    /// `__base`, then `__base_2`, `__base_3`, ... A base that generated code binds itself
    /// (`out`: `__out`, the place a pullback writes its output into) or that starts like the names
    /// it derives from a variable's (`__saved_x`, `__pb_x`, `__ct_x`, ...) becomes `v_base`, which
    /// is neither.
    fn fresh_ident(&mut self, base: &str) -> Ident {
        let base = base.trim_start_matches('_');
        let base = if base.is_empty() { "v" } else { base };
        let base = if OWN.contains(&base) || DERIVED_PREFIXES.iter().any(|p| base.starts_with(p)) {
            format!("v_{base}")
        } else {
            base.to_string()
        };
        let base = base.as_str();
        loop {
            let n = self.taken.entry(base.to_string()).or_insert(0);
            *n += 1;
            let ident = if *n == 1 {
                format_ident!("__{}", base, span = hygiene())
            } else {
                format_ident!("__{}_{}", base, *n, span = hygiene())
            };
            if self.issued.insert(ident.to_string()) {
                return ident;
            }
        }
    }

    fn new_var(&mut self, base: &str, active: bool, origin: Origin) -> VarId {
        let ident = self.fresh_ident(base);
        self.vars.push(Var {
            stem: stem_of(&ident),
            ident,
            active,
            home: self.scope,
            origin,
            reference: false,
            temp: false,
        });
        self.vars.len() - 1
    }

    fn temp(&mut self, active: bool) -> VarId {
        self.temps += 1;
        let base = if active {
            format!("t{}", self.temps)
        } else {
            format!("c{}", self.temps)
        };
        let v = self.new_var(&base, active, Origin::Local);
        self.vars[v].temp = true;
        v
    }

    fn new_scope(&mut self, kind: ScopeKind) -> ScopeId {
        self.scopes.push((kind, Some(self.scope)));
        self.scopes.len() - 1
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.env.iter().rev().find_map(|f| f.get(name).copied())
    }

    /// Rebinds `name` in the frame that holds it.
    fn rebind(&mut self, name: &str, var: VarId) {
        for f in self.env.iter_mut().rev() {
            if let Some(b) = f.get_mut(name) {
                if let Binding::Var(v, _) = b {
                    *v = var;
                }
                return;
            }
        }
    }

    /// The identifier a variable is read through in the forward sweep.
    fn forward_ident(&self, v: VarId) -> Ident {
        match self.vars[v].origin {
            Origin::LoopIn { state } => self.vars[state].ident.clone(),
            _ => self.vars[v].ident.clone(),
        }
    }

    fn lookup_fn(&self) -> impl Fn(&Ident) -> Option<Ident> + '_ {
        |id: &Ident| match self.lookup(&key(id)) {
            Some(Binding::Var(v, _)) => Some(self.forward_ident(v)),
            _ => None,
        }
    }

    fn rename(&self, e: &Expr) -> (TokenStream, Vec<Use>) {
        rename::rename_expr(e, &self.lookup_fn())
    }

    fn uses_active(&self, uses: &[Use]) -> bool {
        uses.iter().any(|u| {
            !u.detached
                && matches!(self.lookup(&u.name), Some(Binding::Var(v, _)) if self.vars[v].active)
        })
    }

    /// Whether `e` reads a differentiated value (outside `detach(..)`).
    fn is_active(&self, e: &Expr) -> bool {
        self.uses_active(&self.rename(e).1)
    }

    /// Whether `e` assigns to a variable of the body (then it is lowered even if inactive, since
    /// generated code binds no variable `mut`).
    fn assigns_var(&self, e: &Expr) -> bool {
        assigned_names(e)
            .iter()
            .any(|n| matches!(self.lookup(n), Some(Binding::Var(..))))
    }

    fn push(&mut self, s: Stmt) {
        self.stmts.push(s);
    }

    /// Binds an inactive expression, kept as written, to a constant.
    fn bind_inert(&mut self, e: &Expr, ty: Option<Type>) -> VarId {
        let (tokens, _) = self.rename(e);
        let v = self.temp(false);
        self.push(Stmt::Let {
            var: v,
            ty,
            value: Value::Inert(tokens),
        });
        v
    }

    fn bind(&mut self, value: Value, active: bool) -> VarId {
        let v = self.temp(active);
        self.push(Stmt::Let {
            var: v,
            ty: None,
            value,
        });
        v
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        e => e,
    }
}

/// The operators whose value is a `bool`: comparisons and the logical `&&`, `||`.
fn is_comparison_op(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq(_)
            | BinOp::Ne(_)
            | BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::And(_)
            | BinOp::Or(_)
    )
}

/// Whether `e` is a comparison (its value is a `bool` or a mask: no gradient flows through it).
fn is_comparison_expr(e: &Expr) -> bool {
    match strip(e) {
        Expr::Binary(b) => is_comparison_op(&b.op),
        Expr::MethodCall(m) => is_comparison(&m.method.to_string()),
        _ => false,
    }
}

/// The comparison methods (`x.lt(&y)`, `x.gt_scalar(0.0)`): their masks carry no gradient.
fn is_comparison(name: &str) -> bool {
    let base = name.strip_suffix("_scalar").unwrap_or(name);
    matches!(base, "lt" | "le" | "gt" | "ge" | "eq" | "ne")
}

fn is_zero(e: &Expr) -> bool {
    matches!(strip(e), Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "0")
}

/// Whether a tail expression gives the block a value (loops and `while` give `()`).
fn yields_value(e: &Expr) -> bool {
    !matches!(
        e,
        Expr::ForLoop(_)
            | Expr::While(_)
            | Expr::If(syn::ExprIf {
                else_branch: None,
                ..
            })
    )
}

/// `+=` and friends: the method of the operator and the operator.
fn compound_op(op: &BinOp) -> Option<(&'static str, &'static str)> {
    match op {
        BinOp::AddAssign(_) => Some(("add", "+")),
        BinOp::SubAssign(_) => Some(("sub", "-")),
        BinOp::MulAssign(_) => Some(("mul", "*")),
        BinOp::DivAssign(_) => Some(("div", "/")),
        _ => None,
    }
}

/// The variable `e` assigns, if it is `name = ..` or `name += ..` (`-=`, `*=`, `/=`).
fn assigned_name(e: &Expr) -> Option<String> {
    let target = match e {
        Expr::Assign(a) => &*a.left,
        Expr::Binary(b) if compound_op(&b.op).is_some() => &*b.left,
        _ => return None,
    };
    match strip(target) {
        Expr::Path(p) => p.path.get_ident().map(key),
        _ => None,
    }
}

/// The names assigned (`x = ..`, `x += ..`) anywhere in `e`.
fn assigned_names(e: &Expr) -> Vec<String> {
    struct Find(Vec<String>);
    impl VisitMut for Find {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Some(name) = assigned_name(e) {
                self.0.push(name);
            }
            if !matches!(e, Expr::Closure(_)) {
                syn::visit_mut::visit_expr_mut(self, e);
            }
        }
    }
    let mut f = Find(Vec::new());
    f.visit_expr_mut(&mut e.clone());
    f.0
}

/// The names that `b` assigns (`n = ..`, `n += ..`) while they refer to a binding outside `b`:
/// not to a `let` of `b` before the assignment, in the same block or one enclosing it, nor to a
/// pattern's binding (a loop index, a `match` arm's, a closure's). Scopes are followed as Rust
/// does: `{ let s = 1.0; } s = s.tanh();` assigns the outer `s`.
fn outer_assigned_names(b: &Block) -> Vec<String> {
    struct Find {
        /// Names bound inside `b` so far, innermost scope last.
        scopes: Vec<Vec<String>>,
        found: Vec<String>,
    }
    impl Find {
        fn bound(&self, n: &str) -> bool {
            self.scopes.iter().any(|s| s.iter().any(|m| m == n))
        }
        fn bind(&mut self, pat: &Pat) {
            let names = rename::pat_bindings(pat)
                .iter()
                .map(key)
                .collect::<Vec<_>>();
            self.scopes.last_mut().expect("a scope").extend(names);
        }
    }
    impl VisitMut for Find {
        fn visit_block_mut(&mut self, b: &mut Block) {
            self.scopes.push(Vec::new());
            for s in &mut b.stmts {
                match s {
                    syn::Stmt::Local(l) => {
                        if let Some(init) = &mut l.init {
                            self.visit_expr_mut(&mut init.expr);
                            if let Some((_, d)) = &mut init.diverge {
                                self.visit_expr_mut(d);
                            }
                        }
                        let pat = l.pat.clone();
                        self.bind(&pat);
                    }
                    syn::Stmt::Item(_) => {}
                    _ => syn::visit_mut::visit_stmt_mut(self, s),
                }
            }
            self.scopes.pop();
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Some(name) = assigned_name(e)
                && !self.bound(&name)
                && !self.found.contains(&name)
            {
                self.found.push(name);
            }
            match e {
                // A closure's assignments are rejected elsewhere; its parameters shadow.
                Expr::Closure(_) => {}
                Expr::ForLoop(f) => {
                    self.visit_expr_mut(&mut f.expr);
                    self.scopes.push(Vec::new());
                    let pat = (*f.pat).clone();
                    self.bind(&pat);
                    self.visit_block_mut(&mut f.body);
                    self.scopes.pop();
                }
                Expr::If(i) if matches!(&*i.cond, Expr::Let(_)) => {
                    let Expr::Let(l) = &mut *i.cond else {
                        unreachable!("matched above")
                    };
                    self.visit_expr_mut(&mut l.expr);
                    self.scopes.push(Vec::new());
                    let pat = (*l.pat).clone();
                    self.bind(&pat);
                    self.visit_block_mut(&mut i.then_branch);
                    self.scopes.pop();
                    if let Some((_, e)) = &mut i.else_branch {
                        self.visit_expr_mut(e);
                    }
                }
                _ => syn::visit_mut::visit_expr_mut(self, e),
            }
        }
        fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
            self.scopes.push(Vec::new());
            let pat = a.pat.clone();
            self.bind(&pat);
            if let Some((_, g)) = &mut a.guard {
                self.visit_expr_mut(g);
            }
            self.visit_expr_mut(&mut a.body);
            self.scopes.pop();
        }
    }
    let mut f = Find {
        scopes: vec![Vec::new()],
        found: Vec::new(),
    };
    f.visit_block_mut(&mut b.clone());
    f.found
}

/// Every identifier in `tokens`, through groups.
fn token_idents(tokens: &TokenStream) -> Vec<Ident> {
    let mut out = Vec::new();
    for t in tokens.clone() {
        match t {
            proc_macro2::TokenTree::Ident(id) => out.push(id),
            proc_macro2::TokenTree::Group(g) => out.extend(token_idents(&g.stream())),
            _ => {}
        }
    }
    out
}

/// The operands of a chain of `&&` (a let-chain's parts), in order.
fn flatten_and<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match e {
        Expr::Binary(b) if matches!(b.op, BinOp::And(_)) => {
            flatten_and(&b.left, out);
            flatten_and(&b.right, out);
        }
        Expr::Group(g) => flatten_and(&g.expr, out),
        e => out.push(e),
    }
}
