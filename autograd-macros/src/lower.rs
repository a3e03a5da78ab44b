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

use crate::ast::Function;
use crate::ctxt::Errors;
use crate::ir::{
    Arm, Body, Branch, Carried, Head, Loop, Origin, ScopeId, ScopeKind, Stmt, Value, Var, VarId,
};
use crate::rename::{self, Use, key};
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

/// Lowers the body of `f`. Returns `None` if nothing could be lowered (errors are reported).
pub fn lower(f: &Function, errors: &mut Errors) -> Option<Body> {
    let mut l = Lower {
        errors,
        vars: Vec::new(),
        scopes: vec![(ScopeKind::Top, None)],
        scope: 0,
        env: vec![HashMap::new()],
        taken: HashMap::new(),
        items: Vec::new(),
        loops: 0,
        branches: 0,
        temps: 0,
        stmts: Vec::new(),
        local_fns: Vec::new(),
    };
    for (i, p) in f.params.iter().enumerate() {
        l.taken.insert(key(&p.name), 1);
        let v = l.vars.len();
        l.vars.push(Var {
            ident: p.name.clone(),
            active: p.wrt,
            home: 0,
            origin: Origin::Param(i),
        });
        l.env[0].insert(key(&p.name), Binding::Var(v, false));
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
        result_span,
    })
}

struct Lower<'e> {
    errors: &'e mut Errors,
    vars: Vec<Var>,
    scopes: Vec<(ScopeKind, Option<ScopeId>)>,
    scope: ScopeId,
    /// Lexical frames, innermost last.
    env: Vec<HashMap<String, Binding>>,
    /// How many generated identifiers use each base name.
    taken: HashMap<String, usize>,
    items: Vec<TokenStream>,
    loops: usize,
    branches: usize,
    temps: usize,
    /// The statement list being built.
    stmts: Vec<Stmt>,
    /// The functions defined inside the body (never differentiated).
    local_fns: Vec<String>,
}

/// Everything a loop body's lowering changes, to lower it again with other assumptions.
struct Snapshot {
    vars: usize,
    scopes: usize,
    errors: usize,
    taken: HashMap<String, usize>,
    items: usize,
    loops: usize,
    branches: usize,
    temps: usize,
    env: Vec<HashMap<String, Binding>>,
    stmts: usize,
}

fn unsupported(what: &str, instead: &str) -> String {
    format!("{what} not supported in #[differentiable] functions; {instead}")
}

impl Lower<'_> {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            vars: self.vars.len(),
            scopes: self.scopes.len(),
            errors: self.errors.len(),
            taken: self.taken.clone(),
            items: self.items.len(),
            loops: self.loops,
            branches: self.branches,
            temps: self.temps,
            env: self.env.clone(),
            stmts: self.stmts.len(),
        }
    }

    fn restore(&mut self, s: &Snapshot) {
        self.vars.truncate(s.vars);
        self.scopes.truncate(s.scopes);
        self.errors.truncate(s.errors);
        self.taken.clone_from(&s.taken);
        self.items.truncate(s.items);
        self.loops = s.loops;
        self.branches = s.branches;
        self.temps = s.temps;
        self.env.clone_from(&s.env);
        self.stmts.truncate(s.stmts);
    }

    /// `__base`, then `__base_2`, `__base_3`, ...
    fn fresh_ident(&mut self, base: &str) -> Ident {
        let base = base.trim_start_matches('_');
        let base = if base.is_empty() { "v" } else { base };
        let n = self.taken.entry(base.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            format_ident!("__{}", base)
        } else {
            format_ident!("__{}_{}", base, *n)
        }
    }

    fn new_var(&mut self, base: &str, active: bool, origin: Origin) -> VarId {
        let ident = self.fresh_ident(base);
        self.vars.push(Var {
            ident,
            active,
            home: self.scope,
            origin,
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
        self.new_var(&base, active, Origin::Local)
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

    /// Lowers a block's statements in a new lexical frame; `Some(tail)` unless an error stopped it.
    fn lower_block_stmts(&mut self, stmts: &[syn::Stmt], want_tail: bool) -> Option<Option<VarId>> {
        self.env.push(HashMap::new());
        let mut tail = None;
        let mut ok = true;
        for (i, s) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            match s {
                syn::Stmt::Expr(e, None) if last && want_tail && yields_value(e) => {
                    match self.lower_expr(e) {
                        Some(v) => tail = Some(v),
                        None => ok = false,
                    }
                }
                _ => ok &= self.lower_stmt(s).is_some(),
            }
        }
        self.env.pop();
        ok.then_some(tail)
    }

    fn lower_stmt(&mut self, s: &syn::Stmt) -> Option<()> {
        match s {
            syn::Stmt::Local(l) => self.lower_let(l),
            syn::Stmt::Item(item) => {
                if let syn::Item::Macro(m) = item
                    && let Some(name) = self.mentioned_var(&m.mac.tokens)
                {
                    // A `macro_rules!` defined here sees the body's locals (its hygiene resolves
                    // them at the definition), which the generated code renames and the gradient
                    // cannot follow.
                    self.errors.error(
                        m.mac.path.span(),
                        unsupported(
                            &format!("a `macro_rules!` inside the function that names its variable `{name}` is"),
                            "define the macro outside the function and pass the values it needs as arguments",
                        ),
                    );
                    return None;
                }
                if let syn::Item::Fn(f) = item {
                    self.local_fns.push(key(&f.sig.ident));
                }
                self.items.push(item.to_token_stream());
                Some(())
            }
            syn::Stmt::Macro(m) => {
                self.check_macro(&m.mac)?;
                let (tokens, _) = rename::rename_stmt(s, &self.lookup_fn());
                self.push(Stmt::Inert(tokens));
                Some(())
            }
            syn::Stmt::Expr(e, _) => self.lower_expr_stmt(e),
        }
    }

    fn lower_expr_stmt(&mut self, e: &Expr) -> Option<()> {
        match e {
            Expr::Assign(a) => {
                let mark = self.vars.len();
                let v = self.lower_expr(&a.right)?;
                self.assign(&a.left, v, mark)
            }
            Expr::Binary(b) if compound_op(&b.op).is_some() => self.compound_assign(b),
            Expr::ForLoop(f) if self.is_active(e) || self.assigns_var(e) => self.lower_loop(f),
            Expr::If(i) if self.is_active(e) || self.assigns_var(e) => {
                self.lower_if(i, false).map(drop)
            }
            Expr::Match(m) if self.is_active(e) || self.assigns_var(e) => {
                self.lower_match(m, false).map(drop)
            }
            Expr::Block(b) if b.label.is_none() && (self.is_active(e) || self.assigns_var(e)) => {
                self.lower_block_stmts(&b.block.stmts, false).map(drop)
            }
            _ if self.is_active(e) || self.assigns_var(e) => self.lower_expr(e).map(drop),
            _ => {
                // Computes nothing differentiated: kept as written (a `for` over constants, a
                // call for its effect).
                self.check_inert(e)?;
                let (tokens, _) = self.rename(e);
                let block_like = matches!(
                    e,
                    Expr::If(_)
                        | Expr::Match(_)
                        | Expr::ForLoop(_)
                        | Expr::Block(_)
                        | Expr::Unsafe(_)
                );
                let semi = if block_like { quote!() } else { quote!(;) };
                self.push(Stmt::Inert(quote!(#tokens #semi)));
                Some(())
            }
        }
    }

    /// Constructs rejected even where they compute nothing differentiated (they would change
    /// control flow or need mutation the generated code cannot replay).
    fn check_inert(&mut self, e: &Expr) -> Option<()> {
        struct Find<'a, 'e> {
            errors: &'a mut Errors,
            bad: &'e mut bool,
            macros: Vec<syn::Macro>,
        }
        impl VisitMut for Find<'_, '_> {
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                if let Some(msg) = control_flow_error(e) {
                    self.errors.error(control_flow_span(e), msg);
                    *self.bad = true;
                    return;
                }
                if matches!(e, Expr::Closure(_)) {
                    return;
                }
                syn::visit_mut::visit_expr_mut(self, e);
            }
            fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
                self.macros.push(m.clone());
            }
        }
        let mut bad = false;
        let mut find = Find {
            errors: self.errors,
            bad: &mut bad,
            macros: Vec::new(),
        };
        find.visit_expr_mut(&mut e.clone());
        let macros = find.macros;
        for m in &macros {
            bad |= self.check_macro(m).is_none();
        }
        (!bad).then_some(())
    }

    /// A macro call kept as written must not compute, bind or assign a differentiated value out
    /// of the gradient's sight: one that names a differentiated variable is accepted only if it
    /// is a standard macro that just reads its arguments (printing, formatting, assertions) and
    /// assigns nothing.
    fn check_macro(&mut self, m: &syn::Macro) -> Option<()> {
        let Some(name) = self.mentioned_active(&m.tokens) else {
            return Some(());
        };
        let path = m.path.segments.last().map(|s| s.ident.to_string());
        let reads_only = path
            .as_deref()
            .is_some_and(|p| is_read_only_macro(p) || p == "matches")
            && m.path.segments.len() == 1
            && !has_assignment(&m.tokens);
        if reads_only {
            return Some(());
        }
        self.errors.error(
            m.path.span(),
            unsupported(
                &format!("a macro call that reads the differentiated value `{name}` is"),
                "the macro may compute or bind values the gradient cannot see: write its expansion out with methods, operators and `let`",
            ),
        );
        None
    }

    /// The first name in `tokens` bound to a differentiated variable (macro arguments are
    /// tokens, not expressions: every identifier counts).
    fn mentioned_active(&self, tokens: &TokenStream) -> Option<String> {
        token_idents(tokens).into_iter().find_map(|id| {
            let k = key(&id);
            matches!(self.lookup(&k), Some(Binding::Var(v, _)) if self.vars[v].active).then_some(k)
        })
    }

    /// The first name in `tokens` bound to a variable of the body.
    fn mentioned_var(&self, tokens: &TokenStream) -> Option<String> {
        token_idents(tokens).into_iter().find_map(|id| {
            let k = key(&id);
            matches!(self.lookup(&k), Some(Binding::Var(..) | Binding::Verbatim)).then_some(k)
        })
    }

    fn lower_let(&mut self, l: &syn::Local) -> Option<()> {
        let r = self.lower_let_inner(l);
        if r.is_none() {
            // Later uses of the names would only repeat the error.
            for n in rename::pat_bindings(&l.pat) {
                self.env
                    .last_mut()
                    .expect("a frame")
                    .insert(key(&n), Binding::Poisoned);
            }
        }
        r
    }

    fn lower_let_inner(&mut self, l: &syn::Local) -> Option<()> {
        let Some(init) = &l.init else {
            self.errors.error(
                l.pat.span(),
                unsupported(
                    "`let` without a value is",
                    "bind the value where it is computed: `let x = ...;`",
                ),
            );
            return None;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.errors.error(
                else_token.span,
                unsupported("`let ... else` is", "use `match` or `if let`"),
            );
            return None;
        }
        let (pat, ty) = match &l.pat {
            Pat::Type(pt) => (&*pt.pat, Some((*pt.ty).clone())),
            p => (p, None),
        };
        self.lower_let_pat(pat, ty, &init.expr)
    }

    fn lower_let_pat(&mut self, pat: &Pat, ty: Option<Type>, init: &Expr) -> Option<()> {
        match pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                let mark = self.vars.len();
                let v = if ty.is_some() && !self.is_active(init) && !self.assigns_var(init) {
                    self.bind_inert(init, ty.clone())
                } else {
                    self.lower_expr(init)?
                };
                if v >= mark {
                    self.name_var(v, &pi.ident, ty);
                }
                let name = key(&pi.ident);
                self.env
                    .last_mut()
                    .expect("a frame")
                    .insert(name, Binding::Var(v, pi.mutability.is_some()));
                Some(())
            }
            Pat::Wild(_) => {
                if self.is_active(init) || self.assigns_var(init) {
                    self.lower_expr(init).map(drop)
                } else {
                    let (tokens, _) = self.rename(init);
                    self.push(Stmt::Inert(quote!(let _ = #tokens;)));
                    Some(())
                }
            }
            Pat::Tuple(pt) => match strip(init) {
                Expr::Tuple(et) if et.elems.len() == pt.elems.len() => {
                    let mut ok = true;
                    for (p, e) in pt.elems.iter().zip(&et.elems) {
                        ok &= self.lower_let_pat(p, None, e).is_some();
                    }
                    ok.then_some(())
                }
                _ if !self.is_active(init) => self.destructure(pat, ty, init),
                _ => {
                    self.errors.error(
                        pat.span(),
                        unsupported("destructuring a differentiated value is", "bind the parts one by one, or destructure a tuple of expressions: `let (a, b) = (x * 2.0, y.exp());`"),
                    );
                    None
                }
            },
            _ if !self.is_active(init) => self.destructure(pat, ty, init),
            _ => {
                self.errors.error(
                    pat.span(),
                    unsupported(
                        "this pattern is",
                        "bind the value to a name: `let y = ...;`",
                    ),
                );
                None
            }
        }
    }

    /// `let pat = constant;`: each name of the pattern becomes a constant variable.
    fn destructure(&mut self, pat: &Pat, ty: Option<Type>, init: &Expr) -> Option<()> {
        let (expr, _) = self.rename(init);
        struct Bind<'a, 'e>(&'a mut Lower<'e>, Vec<(String, VarId)>);
        impl VisitMut for Bind<'_, '_> {
            fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
                let v = self.0.new_var(&key(&p.ident), false, Origin::Local);
                self.1.push((key(&p.ident), v));
                let mut id = self.0.vars[v].ident.clone();
                id.set_span(id.span().located_at(p.ident.span()));
                p.ident = id;
                p.mutability = None;
                syn::visit_mut::visit_pat_ident_mut(self, p);
            }
            fn visit_expr_mut(&mut self, _: &mut Expr) {}
        }
        let mut p = pat.clone();
        let mut b = Bind(self, Vec::new());
        b.visit_pat_mut(&mut p);
        let bound = b.1;
        self.push(Stmt::Destructure {
            pat: p.to_token_stream(),
            ty,
            expr,
        });
        for (name, v) in bound {
            self.env
                .last_mut()
                .expect("a frame")
                .insert(name, Binding::Var(v, false));
        }
        Some(())
    }

    /// Gives a freshly computed variable the user's name (`__y` rather than `__t3`), and the
    /// user's type annotation to the statement that binds it.
    fn name_var(&mut self, v: VarId, name: &Ident, ty: Option<Type>) {
        let ident = self.fresh_ident(&key(name));
        self.vars[v].ident = ident;
        if let Some(ty) = ty
            && let Some(Stmt::Let { var, ty: slot, .. }) = self.stmts.last_mut()
            && *var == v
        {
            *slot = Some(ty);
        }
    }

    /// `name = value`: a new version of `name`.
    fn assign(&mut self, target: &Expr, value: VarId, mark: usize) -> Option<()> {
        let name = match strip(target) {
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                p.path.get_ident().cloned().expect("an ident")
            }
            other => {
                self.errors.error(
                    other.span(),
                    unsupported(
                        "assigning to a field, an index or through a reference is",
                        "assign whole variables: `h = ...;`",
                    ),
                );
                return None;
            }
        };
        match self.lookup(&key(&name)) {
            Some(Binding::Var(..)) => {}
            Some(Binding::Poisoned) => return None,
            Some(Binding::Verbatim) => {
                self.errors.error(name.span(), format!("`{name}` is a pattern binding or loop index here; #[differentiable] functions assign only `let mut` variables"));
                return None;
            }
            None => {
                self.errors.error(
                    name.span(),
                    format!("`{name}` is not a variable of this function"),
                );
                return None;
            }
        }
        // The new version must be a value of its own (it may be moved into a loop's state or out
        // of a branch): an existing variable is copied.
        let v = if value >= mark
            && self.vars[value].origin == Origin::Local
            && self.vars[value].home == self.scope
        {
            value
        } else {
            let active = self.vars[value].active;
            self.bind(Value::Copy(value), active)
        };
        self.name_var(v, &name, None);
        self.rebind(&key(&name), v);
        Some(())
    }

    fn compound_assign(&mut self, b: &syn::ExprBinary) -> Option<()> {
        let (method, _) = compound_op(&b.op).expect("a compound assignment");
        let mark = self.vars.len();
        let lhs = self.lower_expr(&b.left)?;
        let rhs = self.lower_expr(&b.right)?;
        let active = self.vars[lhs].active || self.vars[rhs].active;
        let v = if active {
            let span = b.op.span();
            self.bind(
                Value::Op {
                    name: Ident::new(method, span),
                    turbofish: None,
                    args: vec![lhs, rhs],
                    span,
                },
                true,
            )
        } else {
            let (l, _) = self.rename(&b.left);
            let (r, _) = self.rename(&b.right);
            let op = binary_token(method);
            let v = self.temp(false);
            self.push(Stmt::Let {
                var: v,
                ty: None,
                value: Value::Inert(quote!(#l #op #r)),
            });
            v
        };
        self.assign(&b.left, v, mark)
    }

    /// Lowers an expression; returns the variable holding its value.
    fn lower_expr(&mut self, e: &Expr) -> Option<VarId> {
        match e {
            Expr::Paren(p) => return self.lower_expr(&p.expr),
            Expr::Group(g) => return self.lower_expr(&g.expr),
            Expr::Reference(r) if r.mutability.is_none() => return self.lower_expr(&r.expr),
            Expr::Reference(r) => {
                self.errors.error(
                    r.and_token.span,
                    unsupported(
                        "`&mut` is",
                        "compute new values instead of mutating (`h = &h + &x;`)",
                    ),
                );
                return None;
            }
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => return self.lower_expr(&u.expr),
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                match self.lookup(&key(p.path.get_ident().expect("an ident"))) {
                    Some(Binding::Var(v, _)) => return Some(v),
                    Some(Binding::Poisoned) => return None,
                    _ => {}
                }
            }
            _ => {}
        }
        if let Some(msg) = control_flow_error(e) {
            self.errors.error(control_flow_span(e), msg);
            return None;
        }
        if !self.is_active(e) && !self.assigns_var(e) {
            self.check_inert(e)?;
            return Some(self.bind_inert(e, None));
        }
        match e {
            Expr::Binary(b) => self.lower_binary(e, b),
            Expr::Unary(u) => match u.op {
                UnOp::Neg(t) => {
                    let x = self.lower_expr(&u.expr)?;
                    Some(self.op(Ident::new("neg", t.span), None, vec![x]))
                }
                _ => {
                    self.errors.error(
                        u.op.span(),
                        unsupported(
                            "`!` on a differentiated value is",
                            "compare values with `<`/`>` in a condition instead",
                        ),
                    );
                    None
                }
            },
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if is_comparison(&name) {
                    // A comparison gives a mask: read, never differentiated.
                    return Some(self.bind_inert(e, None));
                }
                let recv = self.lower_expr(&m.receiver)?;
                if (name == "clone" || name == "detach")
                    && m.args.is_empty()
                    && m.turbofish.is_none()
                {
                    return Some(if name == "clone" {
                        let active = self.vars[recv].active;
                        self.bind(Value::Copy(recv), active)
                    } else {
                        self.bind(Value::Detach(recv), false)
                    });
                }
                let mut args = vec![recv];
                for a in &m.args {
                    args.push(self.lower_expr(a)?);
                }
                Some(self.op(
                    m.method.clone(),
                    m.turbofish.as_ref().map(ToTokens::to_token_stream),
                    args,
                ))
            }
            Expr::Call(c) => self.lower_call(c),
            Expr::Block(b) if b.label.is_none() => {
                match self.lower_block_stmts(&b.block.stmts, true)? {
                    Some(v) => Some(v),
                    None => {
                        self.errors.error(
                            b.block.brace_token.span.join(),
                            "this block must end with a value",
                        );
                        None
                    }
                }
            }
            Expr::If(i) => self.lower_if(i, true)?,
            Expr::Match(m) => self.lower_match(m, true)?,
            Expr::Assign(a) => {
                let mark = self.vars.len();
                let v = self.lower_expr(&a.right)?;
                self.assign(&a.left, v, mark)?;
                Some(self.bind(Value::Inert(quote!(())), false))
            }
            Expr::ForLoop(f) => {
                self.lower_loop(f)?;
                Some(self.bind(Value::Inert(quote!(())), false))
            }
            Expr::Tuple(t) => {
                self.errors.error(
                    t.paren_token.span.join(),
                    unsupported(
                        "tuples of differentiated values are",
                        "return or bind each value separately",
                    ),
                );
                None
            }
            Expr::Closure(c) => {
                self.errors.error(c.or1_token.span, unsupported("closures are", "write the computation inline, or as a #[differentiable] function and call it"));
                None
            }
            Expr::Macro(m)
                if m.mac
                    .path
                    .get_ident()
                    .is_some_and(|i| is_value_free_macro(&i.to_string()))
                    && !has_assignment(&m.mac.tokens) =>
            {
                // `format!`, `matches!`, ...: reads the value, gives a value with no gradient.
                Some(self.bind_inert(e, None))
            }
            Expr::Macro(m) => {
                self.errors.error(
                    m.mac.path.span(),
                    unsupported(
                        "macro calls on differentiated values are",
                        "write the computation with methods and operators",
                    ),
                );
                None
            }
            Expr::Cast(c) => {
                self.errors.error(
                    c.as_token.span,
                    unsupported(
                        "`as` casts of differentiated values are",
                        "cast constants only, or wrap the value in `detach(..)`",
                    ),
                );
                None
            }
            Expr::Index(i) => {
                self.errors.error(i.bracket_token.span.join(), unsupported("indexing a differentiated value is", "use a differentiable selection method of the rule library, or `detach(..)` the value"));
                None
            }
            Expr::Field(f) => {
                self.errors.error(
                    f.member.span(),
                    unsupported(
                        "field access on differentiated values is",
                        "pass each tensor as its own parameter",
                    ),
                );
                None
            }
            other => {
                self.errors.error(
                    other.span(),
                    unsupported(
                        "this expression is",
                        "see the accepted syntax in the documentation of #[differentiable]",
                    ),
                );
                None
            }
        }
    }

    fn lower_binary(&mut self, e: &Expr, b: &syn::ExprBinary) -> Option<VarId> {
        let method = match b.op {
            BinOp::Add(_) => "add",
            BinOp::Sub(_) => "sub",
            BinOp::Mul(_) => "mul",
            BinOp::Div(_) => "div",
            ref op if is_comparison_op(op) => {
                // A comparison reads values and has no gradient: kept as written.
                return Some(self.bind_inert(e, None));
            }
            _ if compound_op(&b.op).is_some() => {
                self.compound_assign(b)?;
                return Some(self.bind(Value::Inert(quote!(())), false));
            }
            _ => {
                let op = b.op.to_token_stream();
                self.errors.error(
                    b.op.span(),
                    unsupported(
                        &format!("the operator `{op}` is"),
                        "differentiable operators are `+`, `-`, `*`, `/` and unary `-`",
                    ),
                );
                return None;
            }
        };
        let l = self.lower_expr(&b.left)?;
        let r = self.lower_expr(&b.right)?;
        Some(self.op(Ident::new(method, b.op.span()), None, vec![l, r]))
    }

    fn op(&mut self, name: Ident, turbofish: Option<TokenStream>, args: Vec<VarId>) -> VarId {
        let active = args.iter().any(|&a| self.vars[a].active);
        let span = name.span();
        self.bind(
            Value::Op {
                name,
                turbofish,
                args,
                span,
            },
            active,
        )
    }

    fn lower_call(&mut self, c: &syn::ExprCall) -> Option<VarId> {
        let Expr::Path(fp) = &*c.func else {
            self.errors.error(
                c.func.span(),
                unsupported(
                    "calling a computed function is",
                    "call a #[differentiable] function by its name",
                ),
            );
            return None;
        };
        if fp.qself.is_some() {
            self.errors.error(
                c.func.span(),
                unsupported(
                    "calling a `<T as Trait>::` function is",
                    "call a #[differentiable] free function by its path",
                ),
            );
            return None;
        }
        let last = fp.path.segments.last().expect("a path has a segment");
        if last.ident == "detach" && c.args.len() == 1 {
            let x = self.lower_expr(&c.args[0])?;
            return Some(self.bind(Value::Detach(x), false));
        }
        if let Some(msg) = self.not_differentiable_callee(&fp.path) {
            self.errors.error(c.func.span(), msg);
            return None;
        }
        let mut pullback = fp.path.clone();
        let seg = pullback.segments.last_mut().expect("a path has a segment");
        let turbofish = match std::mem::replace(&mut seg.arguments, syn::PathArguments::None) {
            syn::PathArguments::AngleBracketed(a) => Some(a.to_token_stream()),
            _ => None,
        };
        seg.ident = format_ident!("__{}_pullback", seg.ident, span = seg.ident.span());
        let mut args = Vec::new();
        for a in &c.args {
            let by_ref = matches!(strip(a), Expr::Reference(_));
            args.push((self.lower_expr(a)?, by_ref));
        }
        let active = args.iter().any(|&(a, _)| self.vars[a].active);
        let span = last.ident.span();
        Some(self.bind(
            Value::Call {
                pullback,
                turbofish,
                args,
                span,
            },
            active,
        ))
    }

    /// Why a call of `path` on a differentiated value cannot be differentiated, for the callees
    /// that are known not to be `#[differentiable]` functions (a call of any other free function
    /// goes to its generated pullback, which rustc finds or reports missing).
    fn not_differentiable_callee(&self, path: &syn::Path) -> Option<String> {
        let segs: Vec<String> = path.segments.iter().map(|s| key(&s.ident)).collect();
        let last = segs.last().expect("a path has a segment");
        let shown = segs.join("::");
        let uppercase = |s: &str| s.starts_with(|c: char| c.is_uppercase());
        const PRIMITIVES: &[&str] = &[
            "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
            "u128", "usize", "bool", "char", "str",
        ];
        if segs.len() == 1
            && matches!(
                self.lookup(last),
                Some(Binding::Var(..) | Binding::Verbatim)
            )
        {
            return Some(unsupported(
                &format!(
                    "calling the local value `{last}` (a closure or function value) on a differentiated value is"
                ),
                "write the computation inline, or as a #[differentiable] function and call it by its name",
            ));
        }
        if segs.len() == 1 && self.local_fns.contains(last) {
            return Some(unsupported(
                &format!(
                    "calling `{last}`, a function defined inside this one, on a differentiated value is"
                ),
                &format!("move `{last}` out of the function and mark it #[differentiable]"),
            ));
        }
        if segs.len() == 1 && last == "drop" {
            return Some(unsupported(
                "`drop` of a differentiated value is",
                "leave the value to go out of scope (the reverse sweep needs it)",
            ));
        }
        if uppercase(last) {
            return Some(unsupported(
                &format!("wrapping a differentiated value in `{shown}(..)` is"),
                "keep tensors and scalars unwrapped (an `Option`, `Box` or struct of them is not differentiated)",
            ));
        }
        if segs.len() >= 2 {
            let owner = &segs[segs.len() - 2];
            if matches!(
                owner.as_str(),
                "Box"
                    | "Rc"
                    | "Arc"
                    | "Vec"
                    | "Cell"
                    | "RefCell"
                    | "Option"
                    | "Result"
                    | "Some"
                    | "Ok"
                    | "Err"
            ) {
                return Some(unsupported(
                    &format!("wrapping a differentiated value in `{shown}(..)` is"),
                    "keep tensors and scalars unwrapped (an `Option`, `Box` or struct of them is not differentiated)",
                ));
            }
            if uppercase(owner) || PRIMITIVES.contains(&owner.as_str()) {
                return Some(unsupported(
                    &format!(
                        "calling the associated function `{shown}` on a differentiated value is"
                    ),
                    &format!(
                        "call it as a method (`x.{last}(..)`): the methods of the rule library are differentiated"
                    ),
                ));
            }
            if matches!(segs[0].as_str(), "std" | "core" | "alloc") {
                return Some(unsupported(
                    &format!("calling `{shown}` on a differentiated value is"),
                    "functions of the standard library have no differentiation rule: use the methods of the rule library, or wrap the argument in `detach(..)` if no gradient should flow",
                ));
            }
        }
        None
    }

    fn lower_loop(&mut self, f: &syn::ExprForLoop) -> Option<()> {
        if let Some(label) = &f.label {
            self.errors.error(
                label.name.span(),
                unsupported(
                    "loop labels are",
                    "remove the label (`break` and `continue` are not supported either)",
                ),
            );
            return None;
        }
        let index = match &*f.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
            Pat::Wild(_) => None,
            other => {
                self.errors.error(
                    other.span(),
                    "the loop variable must be a name or `_`: `for i in 0..N`",
                );
                return None;
            }
        };
        let count = match strip(&f.expr) {
            Expr::Range(r)
                if matches!(r.limits, syn::RangeLimits::HalfOpen(_))
                    && r.start.as_deref().is_some_and(is_zero)
                    && r.end.is_some() =>
            {
                let end = r.end.as_deref().expect("checked");
                if !rename::rename_expr(end, &self.lookup_fn()).1.is_empty() {
                    self.errors.error(end.span(), "the trip count of a loop in a #[differentiable] function must be a constant: a literal, a `const` or a const generic (`for i in 0..N`)");
                    return None;
                }
                end.to_token_stream()
            }
            other => {
                self.errors.error(
                    other.span(),
                    "#[differentiable] loops run over `0..N` with `N` a literal, a `const` or a const generic (the reverse sweep keeps each iteration's values in an array of `N` slots)",
                );
                return None;
            }
        };
        // The variables the body assigns and that live outside it are carried.
        let mut names: Vec<String> = Vec::new();
        let local = let_names(&f.body);
        for n in assigned_names(&Expr::Block(syn::ExprBlock {
            attrs: vec![],
            label: None,
            block: f.body.clone(),
        })) {
            if !local.contains(&n)
                && !names.contains(&n)
                && matches!(self.lookup(&n), Some(Binding::Var(..)))
            {
                names.push(n);
            }
        }
        let outer_in: Vec<VarId> = names
            .iter()
            .map(|n| match self.lookup(n) {
                Some(Binding::Var(v, _)) => v,
                _ => unreachable!("filtered above"),
            })
            .collect();
        let mut active_in: Vec<bool> = outer_in.iter().map(|&v| self.vars[v].active).collect();
        let snapshot = self.snapshot();
        loop {
            let id = self.loops;
            self.loops += 1;
            let outer_out: Vec<VarId> = names
                .iter()
                .map(|n| self.new_var(n, false, Origin::Local))
                .collect();
            let scope = self.new_scope(ScopeKind::Loop(id));
            let parent = std::mem::replace(&mut self.scope, scope);
            let inner_in: Vec<VarId> = names
                .iter()
                .zip(&outer_out)
                .zip(&active_in)
                .map(|((n, &state), &a)| {
                    self.new_var(&format!("{n}_in"), a, Origin::LoopIn { state })
                })
                .collect();
            let mut frame = HashMap::new();
            if let Some(i) = &index {
                frame.insert(key(i), Binding::Verbatim);
            }
            for (n, &v) in names.iter().zip(&inner_in) {
                frame.insert(n.clone(), Binding::Var(v, true));
            }
            self.env.push(frame);
            let outer_stmts = std::mem::take(&mut self.stmts);
            let ok = self.lower_block_stmts(&f.body.stmts, false).is_some();
            let mut inner_out = Vec::new();
            for (n, &vin) in names.iter().zip(&inner_in) {
                let Some(Binding::Var(v, _)) = self.env.last().and_then(|fr| fr.get(n).copied())
                else {
                    unreachable!("bound above")
                };
                inner_out.push(if v == vin {
                    let active = self.vars[vin].active;
                    self.bind(Value::Copy(vin), active)
                } else {
                    v
                });
            }
            self.env.pop();
            let body = std::mem::replace(&mut self.stmts, outer_stmts);
            self.scope = parent;
            if !ok {
                return None;
            }
            let new_active: Vec<bool> = inner_out
                .iter()
                .zip(&active_in)
                .map(|(&o, &a)| a || self.vars[o].active)
                .collect();
            if new_active != active_in {
                // A carried value became differentiated inside the body: lower it again knowing so.
                active_in = new_active;
                self.restore(&snapshot);
                continue;
            }
            let mut carried = Vec::new();
            for k in 0..names.len() {
                self.vars[outer_out[k]].active = active_in[k];
                carried.push(Carried {
                    outer_in: outer_in[k],
                    inner_in: inner_in[k],
                    inner_out: inner_out[k],
                    outer_out: outer_out[k],
                });
                self.rebind(&names[k], outer_out[k]);
            }
            self.push(Stmt::Loop(Loop {
                id,
                scope,
                index: index.clone(),
                count,
                body,
                carried,
            }));
            return Some(());
        }
    }

    fn lower_if(&mut self, e: &syn::ExprIf, want_value: bool) -> Option<Option<VarId>> {
        let mut conds = Vec::new();
        let mut arms: Vec<(Vec<Ident>, Option<&Block>)> = Vec::new();
        let mut cur = e;
        loop {
            let (cond, names) = self.condition(&cur.cond)?;
            conds.push(cond);
            arms.push((names, Some(&cur.then_branch)));
            match &cur.else_branch {
                None => {
                    arms.push((Vec::new(), None));
                    break;
                }
                Some((_, el)) => match &**el {
                    Expr::If(next) => cur = next,
                    Expr::Block(b) => {
                        arms.push((Vec::new(), Some(&b.block)));
                        break;
                    }
                    other => {
                        self.errors
                            .error(other.span(), "expected a block after `else`");
                        return None;
                    }
                },
            }
        }
        let bodies = arms
            .into_iter()
            .map(|(names, b)| (names, b.map_or(ArmSrc::Empty, ArmSrc::Block)))
            .collect();
        self.lower_branch(Head::If(conds), bodies, want_value, e.if_token.span)
    }

    /// A condition kept as written; an `if let` binds its pattern's names in the arm.
    fn condition(&mut self, cond: &Expr) -> Option<(TokenStream, Vec<Ident>)> {
        self.check_inert(cond)?;
        // A let-chain (`if let A = a && b && let C = c`): each `let` binds names for the parts
        // after it and for the arm.
        let mut parts = Vec::new();
        flatten_and(cond, &mut parts);
        let mut bound: Vec<Ident> = Vec::new();
        let mut out = Vec::new();
        for part in parts {
            let shadowed: Vec<String> = bound.iter().map(key).collect();
            let me: &Lower = self;
            let lookup = |id: &Ident| {
                if shadowed.contains(&key(id)) {
                    None
                } else {
                    me.lookup_fn()(id)
                }
            };
            match strip(part) {
                Expr::Let(l) => {
                    let (pat, _) = rename::rename_pat(&l.pat, &lookup);
                    let (value, uses) = rename::rename_expr(&l.expr, &lookup);
                    out.push(quote!(let #pat = #value));
                    if !rename::pat_bindings(&l.pat).is_empty()
                        && self.uses_active(&uses)
                        && !is_comparison_expr(&l.expr)
                    {
                        self.check_pattern_of(&l.pat, &l.expr, "`if let`")?;
                    }
                    bound.extend(rename::pat_bindings(&l.pat));
                }
                _ => out.push(rename::rename_expr(part, &lookup).0),
            }
        }
        Some((quote!(#(#out)&&*), bound))
    }

    /// A pattern kept as written binds its names to parts of `scrutinee` without the gradient
    /// seeing them: it may bind names only if `scrutinee` reads no differentiated value (a
    /// comparison's `bool` is fine).
    fn check_pattern_of(&mut self, pat: &Pat, scrutinee: &Expr, what: &str) -> Option<()> {
        let names = rename::pat_bindings(pat);
        if names.is_empty() || !self.is_active(scrutinee) || is_comparison_expr(scrutinee) {
            return Some(());
        }
        self.errors.error(
            names[0].span(),
            unsupported(
                &format!(
                    "binding `{}` in {what} to a differentiated value is",
                    names[0]
                ),
                "the gradient cannot flow through a pattern: bind the value with `let` before it (`let v = ...;`) and branch on a comparison or a constant",
            ),
        );
        None
    }

    fn lower_match(&mut self, m: &syn::ExprMatch, want_value: bool) -> Option<Option<VarId>> {
        self.check_inert(&m.expr)?;
        let mut ok = true;
        for arm in &m.arms {
            ok &= self
                .check_pattern_of(&arm.pat, &m.expr, "a `match` arm")
                .is_some();
        }
        if !ok {
            return None;
        }
        let (scrutinee, _) = self.rename(&m.expr);
        let mut pats = Vec::new();
        let mut bodies = Vec::new();
        for arm in &m.arms {
            let (pat, _) = rename::rename_pat(&arm.pat, &self.lookup_fn());
            let names = rename::pat_bindings(&arm.pat);
            let guard = match &arm.guard {
                Some((if_token, g)) => {
                    // The guard sees the pattern's names.
                    let mut frame = HashMap::new();
                    for n in &names {
                        frame.insert(key(n), Binding::Verbatim);
                    }
                    let me: &Lower = self;
                    let lookup = |id: &Ident| {
                        if frame.contains_key(&key(id)) {
                            None
                        } else {
                            me.lookup_fn()(id)
                        }
                    };
                    let (g, _) = rename::rename_expr(g, &lookup);
                    quote!(#if_token #g)
                }
                None => quote!(),
            };
            pats.push(quote!(#pat #guard));
            bodies.push((names, ArmSrc::Expr(&arm.body)));
        }
        self.lower_branch(
            Head::Match(scrutinee, pats),
            bodies,
            want_value,
            m.match_token.span,
        )
    }

    fn lower_branch(
        &mut self,
        head: Head,
        arms: Vec<(Vec<Ident>, ArmSrc<'_>)>,
        want_value: bool,
        span: Span,
    ) -> Option<Option<VarId>> {
        let id = self.branches;
        self.branches += 1;
        let env_before = self.env.clone();
        let mut lowered = Vec::new();
        let mut envs = Vec::new();
        let mut ok = true;
        for (names, src) in &arms {
            let scope = self.new_scope(ScopeKind::Arm(id));
            let parent = std::mem::replace(&mut self.scope, scope);
            let outer_stmts = std::mem::take(&mut self.stmts);
            let mut frame = HashMap::new();
            for n in names {
                frame.insert(key(n), Binding::Verbatim);
            }
            self.env.push(frame);
            let tail = match src {
                ArmSrc::Block(b) => self.lower_block_stmts(&b.stmts, want_value),
                ArmSrc::Expr(Expr::Block(b)) if b.label.is_none() => {
                    self.lower_block_stmts(&b.block.stmts, want_value)
                }
                ArmSrc::Expr(e) if want_value => self.lower_expr(e).map(Some),
                ArmSrc::Expr(e) => self.lower_expr_stmt(e).map(|()| None),
                ArmSrc::Empty => Some(None),
            };
            self.env.pop();
            let body = std::mem::replace(&mut self.stmts, outer_stmts);
            self.scope = parent;
            match tail {
                Some(t) => lowered.push((scope, body, t)),
                None => ok = false,
            }
            envs.push(std::mem::replace(&mut self.env, env_before.clone()));
        }
        if !ok {
            return None;
        }
        // The names an arm reassigned flow out of the branch.
        let mut changed: Vec<String> = Vec::new();
        for (fi, frame) in env_before.iter().enumerate() {
            for (name, b) in frame {
                let is_var = |b: Option<&Binding>| matches!(b, Some(Binding::Var(..)));
                if envs.iter().any(|env| env[fi].get(name) != Some(b))
                    && is_var(Some(b))
                    && envs.iter().all(|env| is_var(env[fi].get(name)))
                    && !changed.contains(name)
                {
                    changed.push(name.clone());
                }
            }
        }
        changed.sort();
        let value = want_value && lowered.iter().all(|(_, _, t)| t.is_some());
        if want_value && !value {
            self.errors.error(span, "every arm of this branch must end with a value (an `if` used as a value needs an `else`)");
            return None;
        }
        let mut final_arms = Vec::new();
        for (k, ((scope, mut body, tail), env)) in lowered.into_iter().zip(&envs).enumerate() {
            let mut results: Vec<VarId> = Vec::new();
            if value {
                results.push(tail.expect("checked"));
            }
            for name in &changed {
                let v = env
                    .iter()
                    .rev()
                    .find_map(|f| f.get(name))
                    .and_then(|b| match b {
                        Binding::Var(v, _) => Some(*v),
                        Binding::Verbatim | Binding::Poisoned => None,
                    });
                // `changed` holds only names bound to variables in every arm.
                results.push(v.unwrap_or(0));
            }
            // A result must be a value of the arm itself, moved out once: anything else is copied.
            let parent = std::mem::replace(&mut self.scope, scope);
            let outer_stmts = std::mem::replace(&mut self.stmts, std::mem::take(&mut body));
            for j in 0..results.len() {
                let r = results[j];
                let own = self.vars[r].home == scope
                    && self.vars[r].origin == Origin::Local
                    && !results[..j].contains(&r);
                if !own {
                    let active = self.vars[r].active;
                    results[j] = self.bind(Value::Copy(r), active);
                }
            }
            let body = std::mem::replace(&mut self.stmts, outer_stmts);
            self.scope = parent;
            let _ = k;
            final_arms.push(Arm {
                scope,
                body,
                results,
            });
        }
        let n_out = usize::from(value) + changed.len();
        let mut outputs = Vec::new();
        for j in 0..n_out {
            let active = final_arms.iter().any(|a| self.vars[a.results[j]].active);
            let base = if value && j == 0 {
                None
            } else {
                Some(changed[j - usize::from(value)].clone())
            };
            let v = match base {
                Some(name) => self.new_var(&name, active, Origin::Local),
                None => self.temp(active),
            };
            outputs.push(v);
        }
        for (j, name) in changed.iter().enumerate() {
            self.rebind(name, outputs[j + usize::from(value)]);
        }
        self.push(Stmt::Branch(Branch {
            id,
            head,
            arms: final_arms,
            outputs: outputs.clone(),
        }));
        Some(value.then(|| outputs[0]))
    }
}

/// An arm's source.
enum ArmSrc<'a> {
    Block(&'a Block),
    Expr(&'a Expr),
    /// The missing `else` of an `if`.
    Empty,
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

fn binary_token(method: &str) -> TokenStream {
    match method {
        "add" => quote!(+),
        "sub" => quote!(-),
        "mul" => quote!(*),
        _ => quote!(/),
    }
}

/// The message for syntax rejected wherever it appears.
fn control_flow_error(e: &Expr) -> Option<String> {
    Some(match e {
        Expr::While(_) => unsupported(
            "`while` loops are",
            "use `for i in 0..N` with `N` a constant",
        ),
        Expr::Loop(_) => unsupported("`loop` is", "use `for i in 0..N` with `N` a constant"),
        Expr::Return(_) => unsupported(
            "`return` is",
            "end the function with its value as a tail expression (use `if`/`else` to choose it)",
        ),
        Expr::Break(_) => unsupported(
            "`break` is",
            "loops run all `N` iterations; choose values with `if`/`else` inside the body",
        ),
        Expr::Continue(_) => unsupported(
            "`continue` is",
            "loops run all `N` iterations; choose values with `if`/`else` inside the body",
        ),
        Expr::Try(_) => unsupported(
            "the `?` operator is",
            "handle errors before calling the function, or use `match`",
        ),
        Expr::Unsafe(_) => unsupported(
            "`unsafe` blocks are",
            "differentiable code calls only safe rules",
        ),
        Expr::Async(_) => unsupported("`async` blocks are", "differentiate synchronous code"),
        Expr::Await(_) => unsupported("`.await` is", "differentiate synchronous code"),
        Expr::Yield(_) => unsupported("`yield` is", "differentiate ordinary code"),
        Expr::TryBlock(_) => unsupported("`try` blocks are", "handle errors with `match`"),
        _ => return None,
    })
}

fn control_flow_span(e: &Expr) -> Span {
    match e {
        Expr::While(w) => w.while_token.span,
        Expr::Loop(l) => l.loop_token.span,
        Expr::Return(r) => r.return_token.span,
        Expr::Break(b) => b.break_token.span,
        Expr::Continue(c) => c.continue_token.span,
        Expr::Try(t) => t.question_token.span,
        Expr::Unsafe(u) => u.unsafe_token.span,
        Expr::Async(a) => a.async_token.span,
        Expr::Await(a) => a.await_token.span,
        e => e.span(),
    }
}

/// The names assigned (`x = ..`, `x += ..`) anywhere in `e`.
fn assigned_names(e: &Expr) -> Vec<String> {
    struct Find(Vec<String>);
    impl VisitMut for Find {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            let target = match e {
                Expr::Assign(a) => Some(&*a.left),
                Expr::Binary(b) if compound_op(&b.op).is_some() => Some(&*b.left),
                _ => None,
            };
            if let Some(Expr::Path(p)) = target.map(strip)
                && let Some(id) = p.path.get_ident()
            {
                self.0.push(key(id));
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

/// The names bound by `let` anywhere in a block.
fn let_names(b: &Block) -> Vec<String> {
    struct Find(Vec<String>);
    impl VisitMut for Find {
        fn visit_local_mut(&mut self, l: &mut syn::Local) {
            self.0.extend(rename::pat_bindings(&l.pat).iter().map(key));
            syn::visit_mut::visit_local_mut(self, l);
        }
    }
    let mut f = Find(Vec::new());
    f.visit_block_mut(&mut b.clone());
    f.0
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

/// Standard macros that only read their arguments: the formatting ones, and `dbg!`.
fn is_read_only_macro(name: &str) -> bool {
    name == "dbg" || rename::is_format_macro_name(name)
}

/// Standard macros whose value never carries a differentiated value (a `String`, a `bool`, `()`
/// or `!`); unlike `dbg!`, which returns its argument.
fn is_value_free_macro(name: &str) -> bool {
    name != "dbg" && (is_read_only_macro(name) || name == "matches")
}

/// Whether `tokens` hold an assignment (`=`, `+=`, ...), as opposed to `==`, `<=`, `>=`, `!=` or
/// `=>`.
///
/// At the top level of a macro's arguments, `name = value` right after a comma is a format
/// string's named argument (`println!("{a}", a = y)`), not an assignment.
fn has_assignment(tokens: &TokenStream) -> bool {
    assignment_in(tokens, true)
}

fn assignment_in(tokens: &TokenStream, top: bool) -> bool {
    let trees: Vec<proc_macro2::TokenTree> = tokens.clone().into_iter().collect();
    let is_comma = |t: &proc_macro2::TokenTree| matches!(t, proc_macro2::TokenTree::Punct(q) if q.as_char() == ',');
    trees.iter().enumerate().any(|(i, t)| match t {
        proc_macro2::TokenTree::Group(g) => assignment_in(&g.stream(), false),
        proc_macro2::TokenTree::Punct(p)
            if top
                && p.as_char() == '='
                && i >= 2
                && matches!(&trees[i - 1], proc_macro2::TokenTree::Ident(_))
                && is_comma(&trees[i - 2]) =>
        {
            false
        }
        proc_macro2::TokenTree::Punct(p) if p.as_char() == '=' => {
            let joined_before = i > 0
                && matches!(&trees[i - 1], proc_macro2::TokenTree::Punct(q)
                    if q.spacing() == proc_macro2::Spacing::Joint && matches!(q.as_char(), '=' | '!' | '<' | '>'));
            let joined_after = p.spacing() == proc_macro2::Spacing::Joint
                && matches!(trees.get(i + 1), Some(proc_macro2::TokenTree::Punct(q)) if matches!(q.as_char(), '=' | '>'));
            !joined_before && !joined_after
        }
        _ => false,
    })
}

/// Conditional compilation inside the body is rejected: the expansion sees every statement, arm
/// and field, configured out or not, so a `#[cfg]` would differentiate code that does not run.
/// Nested items keep theirs (rustc configures them alike in both sweeps).
fn check_attributes(block: &Block, errors: &mut Errors) -> bool {
    struct Find<'e>(&'e mut Errors, bool);
    impl VisitMut for Find<'_> {
        fn visit_attribute_mut(&mut self, a: &mut syn::Attribute) {
            if a.path().is_ident("cfg") || a.path().is_ident("cfg_attr") {
                self.0.error(
                    a.path().span(),
                    unsupported(
                        "`#[cfg]` on a statement, arm or expression of the body is",
                        "put `#[cfg]` on whole functions (one version each), or choose with `if cfg!(..) { .. } else { .. }`",
                    ),
                );
                self.1 = false;
            }
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut find = Find(errors, true);
    find.visit_block_mut(&mut block.clone());
    find.1
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
