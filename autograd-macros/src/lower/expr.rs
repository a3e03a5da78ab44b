//! Expressions: operators, method calls (rules of the library) and calls of other differentiable
//! functions, each flattened to one binding an op.

use super::{
    BinOp, Binding, Expr, Ident, Lower, Origin, Spanned, ToTokens, TokenStream, UnOp, Value, VarId,
    compound_op, control_flow_error, control_flow_span, format_ident, has_assignment,
    is_comparison, is_comparison_op, is_rule_method, is_value_free_macro, key, quote, strip,
    unsupported,
};
use syn::ext::IdentExt;

impl Lower<'_> {
    /// Lowers an expression; returns the variable holding its value.
    #[allow(
        clippy::too_many_lines,
        reason = "one match over the expression syntax: the cases of one construct read in one place"
    )]
    pub(super) fn lower_expr(&mut self, e: &Expr) -> Option<VarId> {
        match e {
            Expr::Paren(p) => return self.lower_expr(&p.expr),
            Expr::Group(g) => return self.lower_expr(&g.expr),
            Expr::Reference(r) if r.mutability.is_none() => {
                if let Some(v) = self.try_lower_place(&r.expr) {
                    return v;
                }
                return self.lower_expr(&r.expr);
            }
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
        if let Some(v) = self.try_lower_place(e) {
            // A place read by value (`let p = self.p;`) is a copy, as in Rust, where only a
            // `Copy` field can be read so; the projection itself is a reference into the model.
            return v.map(|v| {
                let active = self.vars[v].active;
                self.bind(Value::Copy(v), active)
            });
        }
        match e {
            Expr::Binary(b) => self.lower_binary(e, b),
            Expr::Unary(u) => {
                if let UnOp::Neg(t) = u.op {
                    let x = self.lower_expr(&u.expr)?;
                    Some(self.op(Ident::new("neg", t.span), None, vec![x]))
                } else {
                    self.errors.error(
                        u.op.span(),
                        unsupported(
                            "`!` on a differentiated value is",
                            "compare values with `<`/`>` in a condition instead",
                        ),
                    );
                    None
                }
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if is_comparison(&name) {
                    // A comparison gives a mask: read, never differentiated.
                    return Some(self.bind_inert(e, None));
                }
                let recv = self.lower_operand(&m.receiver)?;
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
                if !is_rule_method(&name) && self.is_model(recv) {
                    return self.lower_method_call(m, recv);
                }
                if name == "eigh" {
                    // One rule per output: the pair is two rules, called one by one.
                    self.errors.error(
                        m.method.span(),
                        unsupported(
                            "`eigh`, which returns a pair, is",
                            "write `a.eigvalsh()` for the eigenvalues and `a.eigvecsh()` for the eigenvectors",
                        ),
                    );
                    return None;
                }
                let mut args = vec![recv];
                for a in &m.args {
                    args.push(self.lower_operand(a)?);
                }
                Some(self.op(
                    m.method.clone(),
                    m.turbofish.as_ref().map(ToTokens::to_token_stream),
                    args,
                ))
            }
            Expr::Call(c) => self.lower_call(c),
            Expr::Block(b) if b.label.is_none() => {
                if let Some(v) = self.lower_block_stmts(&b.block.stmts, true)? {
                    Some(v)
                } else {
                    self.errors.error(
                        b.block.brace_token.span.join(),
                        "this block must end with a value",
                    );
                    None
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

    /// `recv.forward(args)` on a model (a struct parameter or a projection into one) with a
    /// method that is not a rule of the library: a method of a `#[differentiable] impl`, called
    /// through its generated pullback method.
    pub(super) fn lower_method_call(
        &mut self,
        m: &syn::ExprMethodCall,
        recv: VarId,
    ) -> Option<VarId> {
        let mut args = vec![(recv, true)];
        for a in &m.args {
            let by_ref = matches!(strip(a), Expr::Reference(_));
            args.push((self.lower_operand(a)?, by_ref));
        }
        let active = args.iter().any(|&(a, _)| self.vars[a].active);
        let span = m.method.span();
        let name = format_ident!("__{}_pullback", m.method.unraw(), span = span);
        Some(self.bind(
            Value::Call {
                pullback: syn::Path::from(name),
                method: true,
                via_callee: false,
                turbofish: m.turbofish.as_ref().map(ToTokens::to_token_stream),
                args,
                span,
            },
            active,
        ))
    }

    /// Whether `v` is a model: a parameter whose type is a struct or an array, or a projection.
    pub(super) fn is_model(&self, v: VarId) -> bool {
        match self.vars[v].origin {
            Origin::Param(i) => self.param_kinds[i] == crate::ast::Kind::Model,
            _ => self.vars[v].reference,
        }
    }

    pub(super) fn lower_binary(&mut self, e: &Expr, b: &syn::ExprBinary) -> Option<VarId> {
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
        let l = self.lower_operand(&b.left)?;
        let r = self.lower_operand(&b.right)?;
        Some(self.op(Ident::new(method, b.op.span()), None, vec![l, r]))
    }

    pub(super) fn op(
        &mut self,
        name: Ident,
        turbofish: Option<TokenStream>,
        args: Vec<VarId>,
    ) -> VarId {
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

    pub(super) fn lower_call(&mut self, c: &syn::ExprCall) -> Option<VarId> {
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
            args.push((self.lower_operand(a)?, by_ref));
        }
        let active = args.iter().any(|&(a, _)| self.vars[a].active);
        let span = last.ident.span();
        Some(self.bind(
            Value::Call {
                via_callee: fp.path.segments.len() == 1 && turbofish.is_none(),
                pullback,
                method: false,
                turbofish,
                args,
                span,
            },
            active,
        ))
    }
}
