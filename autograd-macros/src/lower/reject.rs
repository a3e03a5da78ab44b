//! What cannot be differentiated, each reported at its span with what to write instead: code
//! kept as written that could hide a differentiated value (macros, closures, calls), control flow
//! and attributes.

use super::{
    Binding, Block, Errors, Expr, Lower, Span, Spanned, TokenStream, VisitMut, key, rename,
    token_idents,
};

impl Lower<'_> {
    /// Constructs rejected even where they compute nothing differentiated (they would change
    /// control flow or need mutation the generated code cannot replay).
    pub(super) fn check_inert(&mut self, e: &Expr) -> Option<()> {
        struct Find<'a, 'e> {
            errors: &'a mut Errors,
            bad: &'e mut bool,
            macros: Vec<syn::Macro>,
            /// The loops kept as written around the expression being checked.
            loops: usize,
        }
        impl VisitMut for Find<'_, '_> {
            fn visit_expr_mut(&mut self, e: &mut Expr) {
                // A `while` or a `loop` that computes nothing differentiated is kept as written,
                // as a `for` is (what is inside it is still checked), and so are the jumps
                // inside such loops, which leave them.
                match e {
                    Expr::While(w) if w.label.is_none() => {}
                    Expr::Loop(l) if l.label.is_none() => {}
                    Expr::ForLoop(f) if f.label.is_none() => {}
                    Expr::Break(b) if self.loops > 0 && b.label.is_none() => {
                        syn::visit_mut::visit_expr_mut(self, e);
                        return;
                    }
                    Expr::Continue(c) if self.loops > 0 && c.label.is_none() => return,
                    _ => {
                        if let Some(msg) = control_flow_error(e) {
                            self.errors.error(control_flow_span(e), msg);
                            *self.bad = true;
                            return;
                        }
                        if matches!(e, Expr::Closure(_)) {
                            return;
                        }
                        syn::visit_mut::visit_expr_mut(self, e);
                        return;
                    }
                }
                self.loops += 1;
                syn::visit_mut::visit_expr_mut(self, e);
                self.loops -= 1;
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
            loops: 0,
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
    pub(super) fn check_macro(&mut self, m: &syn::Macro) -> Option<()> {
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
    pub(super) fn mentioned_active(&self, tokens: &TokenStream) -> Option<String> {
        token_idents(tokens).into_iter().find_map(|id| {
            let k = key(&id);
            matches!(self.lookup(&k), Some(Binding::Var(v, _)) if self.vars[v].active).then_some(k)
        })
    }

    /// The first name in `tokens` bound to a variable of the body.
    pub(super) fn mentioned_var(&self, tokens: &TokenStream) -> Option<String> {
        token_idents(tokens).into_iter().find_map(|id| {
            let k = key(&id);
            matches!(self.lookup(&k), Some(Binding::Var(..) | Binding::Verbatim)).then_some(k)
        })
    }

    /// Why a call of `path` on a differentiated value cannot be differentiated, for the callees
    /// that are known not to be `#[differentiable]` functions (a call of any other free function
    /// goes to its generated pullback, which rustc finds or reports missing).
    pub(super) fn not_differentiable_callee(&self, path: &syn::Path) -> Option<String> {
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
}

pub(super) fn unsupported(what: &str, instead: &str) -> String {
    format!("{what} not supported in #[differentiable] functions; {instead}")
}

/// The message for syntax rejected wherever it appears.
pub(super) fn control_flow_error(e: &Expr) -> Option<String> {
    Some(match e {
        Expr::While(_) => unsupported(
            "a `while` loop here is",
            "write it as a statement of the body that assigns what it computes (`while y > 0.0 { y = .. }`)",
        ),
        Expr::Loop(_) => unsupported(
            "a `loop` here is",
            "write it as a statement of the body that assigns what it computes (`loop { y = ..; if done { break; } }`)",
        ),
        Expr::Return(_) => unsupported(
            "`return` inside a loop or an expression is",
            "return from an arm of an `if` or a `match` outside loops, or end the function with its value as a tail expression",
        ),
        Expr::Break(_) => unsupported(
            "`break` here is",
            "write it as a statement of a loop's body or of its `if`, `match` and block arms (`if done { break; }`)",
        ),
        Expr::Continue(_) => unsupported(
            "`continue` here is",
            "write it as a statement of a loop's body or of its `if`, `match` and block arms (`if skip { continue; }`)",
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

pub(super) fn control_flow_span(e: &Expr) -> Span {
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

/// Standard macros that only read their arguments: the formatting ones, and `dbg!`.
pub(super) fn is_read_only_macro(name: &str) -> bool {
    name == "dbg" || rename::is_format_macro_name(name)
}

/// Standard macros whose value never carries a differentiated value (a `String`, a `bool`, `()`
/// or `!`); unlike `dbg!`, which returns its argument.
pub(super) fn is_value_free_macro(name: &str) -> bool {
    name != "dbg" && (is_read_only_macro(name) || name == "matches")
}

/// Whether `tokens` hold an assignment (`=`, `+=`, ...), as opposed to `==`, `<=`, `>=`, `!=` or
/// `=>`.
///
/// At the top level of a macro's arguments, `name = value` right after a comma is a format
/// string's named argument (`println!("{a}", a = y)`), not an assignment.
pub(super) fn has_assignment(tokens: &TokenStream) -> bool {
    assignment_in(tokens, true)
}

pub(super) fn assignment_in(tokens: &TokenStream, top: bool) -> bool {
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
/// Nested items keep theirs (rustc configures them alike in both sweeps). A `#[checkpoint]`
/// anywhere but on a loop is reported here too.
pub(super) fn check_attributes(block: &Block, errors: &mut Errors) -> bool {
    struct Find<'e>(&'e mut Errors, bool);
    impl VisitMut for Find<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            // `#[checkpoint]` belongs on a `for` or `while` loop (read by the lowering).
            match e {
                Expr::ForLoop(f) => f
                    .attrs
                    .retain(|a| !crate::checkpoint_attr::is_checkpoint(a)),
                Expr::While(w) => w
                    .attrs
                    .retain(|a| !crate::checkpoint_attr::is_checkpoint(a)),
                Expr::Loop(l) => l
                    .attrs
                    .retain(|a| !crate::checkpoint_attr::is_checkpoint(a)),
                _ => {}
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
        fn visit_attribute_mut(&mut self, a: &mut syn::Attribute) {
            if crate::checkpoint_attr::is_checkpoint(a) {
                self.0.error(
                    a.path().span(),
                    "`#[checkpoint(every = K)]` goes on a `for`, `while` or `loop` of the body",
                );
                self.1 = false;
            }
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
