//! Renaming inside expressions the macro keeps as written (conditions, constants, statements that
//! compute no differentiated value): each name of a body variable becomes the identifier its
//! current version is bound to in generated code.
//!
//! Before: `if h.sum().item() > limit { .. }` (where `h` was reassigned once).
//! After: `if __h_2.sum().item() > limit { .. }`.
//!
//! Names bound inside the expression (closure parameters, `let`s of inner blocks, match arms)
//! shadow the body's variables and are left alone.

use proc_macro2::{Delimiter, Group, Ident, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Pat};

/// A name resolved to a body variable, and whether it sits inside `detach(..)` (then its value
/// is read but no gradient flows).
pub struct Use {
    /// The name as written.
    pub name: String,
    /// Inside `detach(..)` or `.detach()`.
    pub detached: bool,
}

/// Renames `expr` with `lookup` (a name to its identifier, `None` for names that are not body
/// variables), and lists the names it resolved.
pub fn rename_expr(
    expr: &Expr,
    lookup: &dyn Fn(&Ident) -> Option<Ident>,
) -> (TokenStream, Vec<Use>) {
    let mut e = expr.clone();
    let mut r = Renamer {
        lookup,
        shadow: Vec::new(),
        uses: Vec::new(),
        detached: 0,
    };
    r.visit_expr_mut(&mut e);
    (e.into_token_stream(), r.uses)
}

/// [`rename_expr`] for a statement.
pub fn rename_stmt(
    stmt: &syn::Stmt,
    lookup: &dyn Fn(&Ident) -> Option<Ident>,
) -> (TokenStream, Vec<Use>) {
    let mut s = stmt.clone();
    let mut r = Renamer {
        lookup,
        shadow: Vec::new(),
        uses: Vec::new(),
        detached: 0,
    };
    r.visit_stmt_mut(&mut s);
    (s.into_token_stream(), r.uses)
}

/// [`rename_expr`] for a pattern (its bound names are left alone; paths to constants are not
/// variables).
pub fn rename_pat(pat: &Pat, lookup: &dyn Fn(&Ident) -> Option<Ident>) -> (TokenStream, Vec<Use>) {
    let mut p = pat.clone();
    let mut r = Renamer {
        lookup,
        shadow: Vec::new(),
        uses: Vec::new(),
        detached: 0,
    };
    r.visit_pat_mut(&mut p);
    (p.into_token_stream(), r.uses)
}

/// The key a name is looked up by: `r#type` and `type` name the same variable.
pub fn key(id: &Ident) -> String {
    id.unraw().to_string()
}

/// The names a pattern binds.
pub fn pat_bindings(pat: &Pat) -> Vec<Ident> {
    struct Collect(Vec<Ident>);
    impl VisitMut for Collect {
        fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
            self.0.push(p.ident.clone());
            visit_mut::visit_pat_ident_mut(self, p);
        }
        fn visit_expr_mut(&mut self, _: &mut Expr) {}
    }
    let mut c = Collect(Vec::new());
    c.visit_pat_mut(&mut pat.clone());
    // A lone uppercase-free identifier pattern could also be a unit struct or const; rustc decides,
    // and treating it as a binding only means it is left alone.
    c.0
}

struct Renamer<'a> {
    lookup: &'a dyn Fn(&Ident) -> Option<Ident>,
    /// Names bound inside the expression, innermost last.
    shadow: Vec<Vec<String>>,
    uses: Vec<Use>,
    detached: usize,
}

impl Renamer<'_> {
    fn resolve(&mut self, id: &Ident) -> Option<Ident> {
        let name = key(id);
        if self.shadow.iter().any(|f| f.contains(&name)) {
            return None;
        }
        let new = (self.lookup)(id)?;
        self.uses.push(Use {
            name,
            detached: self.detached > 0,
        });
        // The user's location, the binding's hygiene.
        let mut new = new;
        new.set_span(new.span().located_at(id.span()));
        Some(new)
    }

    fn bind(&mut self, pat: &Pat) {
        let names = pat_bindings(pat).iter().map(key).collect();
        if let Some(top) = self.shadow.last_mut() {
            top.extend::<Vec<String>>(names);
        } else {
            self.shadow.push(names);
        }
    }

    /// Token-level renaming inside a macro call's arguments: identifiers not after `.` (fields,
    /// methods) and not before `!` or `::` (macros, paths).
    fn rename_tokens(&mut self, tokens: TokenStream) -> TokenStream {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut out = Vec::with_capacity(trees.len());
        for (i, t) in trees.iter().enumerate() {
            match t {
                TokenTree::Ident(id) => {
                    let after_dot =
                        i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                    let before_path = matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!' || p.as_char() == ':');
                    match (after_dot || before_path)
                        .then_some(())
                        .map_or_else(|| self.resolve(id), |()| None)
                    {
                        Some(new) => out.push(TokenTree::Ident(new)),
                        None => out.push(t.clone()),
                    }
                }
                TokenTree::Group(g) => {
                    let mut ng = Group::new(g.delimiter(), self.rename_tokens(g.stream()));
                    ng.set_span(g.span());
                    out.push(TokenTree::Group(ng));
                }
                _ => out.push(t.clone()),
            }
        }
        let _ = Delimiter::None;
        out.into_iter().collect()
    }
}

impl Renamer<'_> {
    /// Renames a macro call's arguments. A format string's inline captures (`"{y}"`) name
    /// variables from inside a string, where renaming cannot reach: each capture of a body
    /// variable is passed as a named argument instead (`"{y}", y = __y`).
    fn rename_macro(&mut self, mac: &mut syn::Macro) {
        let captures = if is_format_macro(mac) {
            format_captures(&mac.tokens)
        } else {
            Vec::new()
        };
        let mut tokens = self.rename_tokens(mac.tokens.clone());
        let named = named_arguments(&mac.tokens);
        for name in captures {
            if named.contains(&name) {
                continue;
            }
            let id = Ident::new(&name, proc_macro2::Span::call_site());
            let Some(new) = self.resolve(&id) else {
                continue;
            };
            let id = Ident::new(&name, mac.delimiter.span().join());
            let trailing_comma = matches!(tokens.clone().into_iter().last(), Some(TokenTree::Punct(p)) if p.as_char() == ',');
            if !trailing_comma {
                tokens.extend(quote::quote!(,));
            }
            tokens.extend(quote::quote!(#id = #new));
        }
        mac.tokens = tokens;
    }
}

/// The standard macros that take a format string.
fn is_format_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.len() == 1 && is_format_macro_name(&mac.path.segments[0].ident.to_string())
}

/// The names of the standard macros that take a format string (they only read their arguments).
pub fn is_format_macro_name(name: &str) -> bool {
    matches!(
        name,
        "println"
            | "print"
            | "eprintln"
            | "eprint"
            | "format"
            | "format_args"
            | "write"
            | "writeln"
            | "panic"
            | "assert"
            | "assert_eq"
            | "assert_ne"
            | "debug_assert"
            | "debug_assert_eq"
            | "debug_assert_ne"
            | "unreachable"
            | "todo"
            | "unimplemented"
    )
}

/// The names captured inline by the string literals among `tokens` (`"{y}"`, `"{y:?}"`).
fn format_captures(tokens: &TokenStream) -> Vec<String> {
    let mut names = Vec::new();
    for t in tokens.clone() {
        let TokenTree::Literal(lit) = t else { continue };
        let Ok(syn::Lit::Str(s)) = syn::parse2::<syn::Lit>(TokenTree::Literal(lit).into()) else {
            continue;
        };
        let text = s.value();
        let mut rest = text.as_str();
        while let Some(i) = rest.find('{') {
            rest = &rest[i + 1..];
            if let Some(r) = rest.strip_prefix('{') {
                rest = r; // `{{` is a literal brace
                continue;
            }
            let end = rest.find(['}', ':']).unwrap_or(rest.len());
            let name = rest[..end].trim();
            let is_ident = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            if is_ident && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The names given as `name = value` arguments at the top level of `tokens`.
fn named_arguments(tokens: &TokenStream) -> Vec<String> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    trees
        .windows(2)
        .filter_map(|w| match (&w[0], &w[1]) {
            (TokenTree::Ident(id), TokenTree::Punct(p))
                if p.as_char() == '=' && p.spacing() == proc_macro2::Spacing::Alone =>
            {
                Some(key(id))
            }
            _ => None,
        })
        .collect()
}

fn is_detach_call(e: &Expr) -> bool {
    match e {
        Expr::Call(c) => {
            matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "detach"))
        }
        Expr::MethodCall(m) => m.method == "detach" && m.args.is_empty(),
        _ => false,
    }
}

impl VisitMut for Renamer<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let detach = is_detach_call(e);
        if detach {
            self.detached += 1;
        }
        match e {
            Expr::Path(p) if p.qself.is_none() && p.path.leading_colon.is_none() => {
                if let Some(id) = p.path.get_ident().cloned()
                    && let Some(new) = self.resolve(&id)
                {
                    p.path.segments[0].ident = new;
                }
            }
            Expr::Closure(c) => {
                self.shadow.push(Vec::new());
                for input in &c.inputs {
                    self.bind(input);
                }
                self.visit_expr_mut(&mut c.body);
                self.shadow.pop();
            }
            Expr::Macro(m) => self.rename_macro(&mut m.mac),
            _ => visit_mut::visit_expr_mut(self, e),
        }
        if detach {
            self.detached -= 1;
        }
    }

    fn visit_stmt_macro_mut(&mut self, m: &mut syn::StmtMacro) {
        self.rename_macro(&mut m.mac);
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.shadow.push(Vec::new());
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
                _ => self.visit_stmt_mut(s),
            }
        }
        self.shadow.pop();
    }

    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        self.shadow.push(Vec::new());
        let pat = a.pat.clone();
        self.visit_pat_mut(&mut a.pat);
        self.bind(&pat);
        if let Some((_, g)) = &mut a.guard {
            self.visit_expr_mut(g);
        }
        self.visit_expr_mut(&mut a.body);
        self.shadow.pop();
    }

    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        // A loop kept as written computes nothing differentiated: nothing to checkpoint.
        f.attrs
            .retain(|a| !crate::checkpoint_attr::is_checkpoint(a));
        self.visit_expr_mut(&mut f.expr);
        self.shadow.push(Vec::new());
        let pat = (*f.pat).clone();
        self.bind(&pat);
        self.visit_block_mut(&mut f.body);
        self.shadow.pop();
    }

    fn visit_expr_while_mut(&mut self, w: &mut syn::ExprWhile) {
        w.attrs
            .retain(|a| !crate::checkpoint_attr::is_checkpoint(a));
        visit_mut::visit_expr_while_mut(self, w);
    }

    fn visit_expr_loop_mut(&mut self, l: &mut syn::ExprLoop) {
        l.attrs
            .retain(|a| !crate::checkpoint_attr::is_checkpoint(a));
        visit_mut::visit_expr_loop_mut(self, l);
    }

    fn visit_field_value_mut(&mut self, f: &mut syn::FieldValue) {
        // `S { x }` becomes `S { x: __x }`.
        self.visit_expr_mut(&mut f.expr);
        let same = matches!((&f.member, &f.expr), (syn::Member::Named(m), Expr::Path(p)) if p.path.is_ident(m));
        if f.colon_token.is_none() && !same {
            f.colon_token = Some(syn::token::Colon::default());
        }
    }

    fn visit_pat_ident_mut(&mut self, _: &mut syn::PatIdent) {
        // A binding, not a use.
    }

    fn visit_type_mut(&mut self, _: &mut syn::Type) {
        // Types name no variables.
    }
}
