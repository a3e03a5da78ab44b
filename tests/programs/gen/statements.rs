//! The generator's statements: `let`, assignments, tuples, `if`, `match`, loops (with `break`,
//! `continue` and `#[checkpoint]`), returns.

use super::{E, Form, Gen, Ty, Var, is_name, mentions};
use std::fmt::Write as _;

impl Gen {
    /// `count` statements, the budget allowing.
    pub(super) fn statements(&mut self, count: usize) {
        for _ in 0..count {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.statement();
        }
    }

    pub(super) fn block(&mut self, count: usize) {
        self.scopes.push(Vec::new());
        self.indent += 1;
        self.statements(count);
        self.indent -= 1;
        self.scopes.pop();
    }

    /// A block ending in a value of `ty`: `{ statements; value }` written from `{` to `}`.
    pub(super) fn value_block(&mut self, ty: Ty, count: usize) -> String {
        self.scopes.push(Vec::new());
        self.indent += 1;
        let start = self.out.len();
        self.values += 1;
        self.statements(count);
        self.values -= 1;
        let tail = self.bounded(ty);
        self.line(&tail);
        self.indent -= 1;
        self.scopes.pop();
        self.out.split_off(start)
    }

    pub(super) fn statement(&mut self) {
        let mutable = !self.mutable_locals().is_empty();
        match self.rng.below(20) {
            5 | 6 if mutable => self.assign(),
            7 | 8 if mutable => self.compound(),
            9 => self.tuple_let(),
            10 if self.rng.chance(50) => self.tuple_let(),
            10 => self.destructure_call(),
            11 => {
                self.line("{");
                self.block(2);
                self.line("}");
            }
            12 | 13 => self.if_statement(),
            14 => self.value_if(),
            15 => self.value_match(),
            16..=18 if self.loops < 2 => self.for_loop(),
            _ => self.let_statement(),
        }
    }

    pub(super) fn let_statement(&mut self) {
        let ty = self.value_ty();
        let rhs = self.bounded(ty);
        let name = self.name();
        let mutable = self.rng.chance(45);
        let annotation = if self.rng.chance(20) {
            format!(": {}", ty.rust())
        } else {
            String::new()
        };
        let m = if mutable { "mut " } else { "" };
        self.line(&format!("let {m}{name}{annotation} = {rhs};"));
        self.bind(&name, ty, mutable);
    }

    pub(super) fn assign(&mut self) {
        let targets = self.mutable_locals();
        let t = self.rng.pick(&targets).clone();
        let rhs = self.bounded(t.ty);
        self.line(&format!("{} = {rhs};", t.name));
    }

    /// `+=`, `-=` or `*=`; a tensor's right-hand side does not read the target (it is borrowed
    /// mutably).
    pub(super) fn compound(&mut self) {
        let targets = self.mutable_locals();
        let t = self.rng.pick(&targets).clone();
        let op = *self.rng.pick(&["+=", "-=", "*="]);
        for _ in 0..6 {
            let ty = match t.ty {
                Ty::S => Ty::S,
                Ty::M if self.rng.chance(50) => Ty::V,
                other if self.rng.chance(25) => {
                    let _ = other;
                    Ty::S
                }
                other => other,
            };
            let rhs = if op == "*=" || self.rng.chance(60) {
                let b = self.bounded(ty);
                if ty == Ty::S { b } else { format!("&({b})") }
            } else {
                let e = self.atom(ty);
                if ty == Ty::S { e.text } else { e.arg() }
            };
            if t.ty == Ty::S || !mentions(&rhs, &t.name) {
                self.line(&format!("{} {op} {rhs};", t.name));
                return;
            }
        }
        let rhs = self.bounded(t.ty);
        self.line(&format!("{} = {rhs};", t.name));
    }

    /// A tuple `let`, often rebinding names its elements read (`let (a, b) = (b, a);`), sometimes
    /// nested.
    pub(super) fn tuple_let(&mut self) {
        let arity = 2 + usize::from(self.rng.chance(30));
        let nested = arity == 3 && self.rng.chance(50);
        // The pattern's names: distinct, and often names in scope.
        let mut names: Vec<String> = Vec::new();
        while names.len() < arity {
            let n = self.name();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let own: Vec<Var> = self.scopes.last().expect("a scope").clone();
        let swap_candidates: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| v.ty.value() && !v.param)
            .filter(|v| v.ty == Ty::S || own.iter().any(|o| o.name == v.name))
            .collect();
        let mut elements: Vec<(String, Ty)> = Vec::new();
        for k in 0..arity {
            let mut chosen = None;
            for _ in 0..8 {
                // A bare name of the pattern (a swap): a scalar, or a local of this block (moved,
                // and its binding shadowed by the pattern's own).
                let bare = swap_candidates
                    .iter()
                    .filter(|v| names.contains(&v.name) && v.name != names[k])
                    .cloned()
                    .collect::<Vec<_>>();
                let candidate = if !bare.is_empty() && self.rng.chance(45) {
                    let v = self.rng.pick(&bare).clone();
                    // A name moved twice would not compile: each at most once.
                    if elements.iter().any(|(t, _)| *t == v.name) {
                        continue;
                    }
                    (v.name, v.ty)
                } else {
                    let ty = self.value_ty();
                    let e = self.bounded(ty);
                    // No element reads a tensor an earlier one moved.
                    if elements
                        .iter()
                        .any(|(t, ty)| ty.tensor() && is_name(t) && mentions(&e, t))
                    {
                        continue;
                    }
                    (e, ty)
                };
                if self.avoid_swap && names.iter().any(|n| mentions(&candidate.0, n)) {
                    continue;
                }
                chosen = Some(candidate);
                break;
            }
            let element = chosen.unwrap_or_else(|| {
                let ty = self.value_ty();
                // Reads only parameters and literals when it must avoid the pattern's names.
                let s = self.literal();
                if ty == Ty::S {
                    (format!("{}.tanh()", s.opnd()), Ty::S)
                } else {
                    let v = self
                        .visible()
                        .into_iter()
                        .find(|v| v.param && v.ty == Ty::V && !names.contains(&v.name));
                    match v {
                        Some(v) => (format!("({} * {}).tanh()", v.name, s.text), Ty::V),
                        None => (format!("{}.tanh()", s.opnd()), Ty::S),
                    }
                }
            });
            elements.push(element);
        }
        let mutable: Vec<bool> = (0..arity).map(|_| self.rng.chance(25)).collect();
        let pat = |k: usize| format!("{}{}", if mutable[k] { "mut " } else { "" }, names[k]);
        let (pattern, values) = if nested {
            (
                format!("({}, ({}, {}))", pat(0), pat(1), pat(2)),
                format!(
                    "({}, ({}, {}))",
                    elements[0].0, elements[1].0, elements[2].0
                ),
            )
        } else {
            let ps: Vec<String> = (0..arity).map(pat).collect();
            let vs: Vec<&str> = elements.iter().map(|e| e.0.as_str()).collect();
            (
                format!("({})", ps.join(", ")),
                format!("({})", vs.join(", ")),
            )
        };
        self.line(&format!("let {pattern} = {values};"));
        for k in 0..arity {
            self.bind(&names[k], elements[k].1, mutable[k]);
        }
    }

    /// `if`, `else if`, `else`; where the function may return early, the first arm sometimes
    /// ends with `return` (the others fall through, so what follows stays reachable).
    pub(super) fn if_statement(&mut self) {
        let cond = self.condition();
        self.line(&format!("if {cond} {{"));
        if self.returns && self.loops == 0 && self.values == 0 && self.rng.chance(30) {
            self.scopes.push(Vec::new());
            self.indent += 1;
            self.statements(1);
            let value = self.return_value();
            self.line(&format!("return {value};"));
            self.indent -= 1;
            self.scopes.pop();
        } else {
            self.block(2);
        }
        match self.rng.below(3) {
            0 => self.line("}"),
            1 => {
                let cond = self.condition();
                self.line(&format!("}} else if {cond} {{"));
                self.block(1);
                self.line("} else {");
                self.block(1);
                self.line("}");
            }
            _ => {
                self.line("} else {");
                self.block(2);
                self.line("}");
            }
        }
    }

    pub(super) fn value_if(&mut self) {
        let ty = self.value_ty();
        let cond = self.condition();
        let then = self.value_block(ty, 1);
        let otherwise = self.value_block(ty, 1);
        let name = self.name();
        let mutable = self.rng.chance(40);
        let m = if mutable { "mut " } else { "" };
        self.line(&format!("let {m}{name} = if {cond} {{"));
        self.out.push_str(&then);
        self.line("} else {");
        self.out.push_str(&otherwise);
        self.line("};");
        self.bind(&name, ty, mutable);
    }

    pub(super) fn value_match(&mut self) {
        let ty = self.value_ty();
        let name = self.name();
        let bools = self.of(Ty::Bool);
        let ns = self.of(Ty::Usize);
        let (subject, arms): (String, Vec<&str>) = if !ns.is_empty() && self.rng.chance(60) {
            (self.rng.pick(&ns).name.clone(), vec!["0", "1", "_"])
        } else if !bools.is_empty() {
            (self.rng.pick(&bools).name.clone(), vec!["true", "false"])
        } else {
            let s = self.receiver_scalar(1);
            (format!("{} > 0.0", s.opnd()), vec!["true", "false"])
        };
        let mut text = String::new();
        self.indent += 1;
        let pad = "    ".repeat(self.indent);
        for arm in arms {
            let count = usize::from(self.rng.chance(50));
            let body = self.value_block(ty, count);
            let _ = write!(text, "{pad}{arm} => {{\n{body}{pad}}}\n");
        }
        self.indent -= 1;
        self.line(&format!("let {name} = match {subject} {{"));
        self.out.push_str(&text);
        self.line("};");
        self.bind(&name, ty, false);
    }

    /// The head of a loop over `0..n`, written: `n` a literal, a local (a count known only
    /// when the loop runs), or a `while` loop that counts its iterations in a fresh name, which
    /// it returns. Decided by the count drawn, so that the random stream is as before.
    fn range_head(&mut self, counter: &str) -> Option<String> {
        let n = *self.rng.pick(&[1, 2, 2, 3, 3, 3, 0]);
        // About every other loop (nested in any construct) is checkpointed, in blocks of 1 to 3,
        // half of them bisected (decided by the length of the text so far, with no draw of its
        // own, so that the programs are otherwise as before).
        let written = self.out.len();
        let checkpoint = written.is_multiple_of(2).then(|| {
            let bisect = if (written / 2).is_multiple_of(2) {
                "bisect, "
            } else {
                ""
            };
            format!("#[checkpoint({bisect}every = {})]", 1 + written / 2 % 3)
        });
        match n {
            2 => {
                // Declared before the loop: a name no value in scope has.
                let mut count = self.name();
                while self.scopes.iter().flatten().any(|v| v.name == count) {
                    count = self.name();
                }
                self.line(&format!("let {count}: usize = {n};"));
                if let Some(c) = &checkpoint {
                    self.line(c);
                }
                self.line(&format!("for {counter} in 0..{count} {{"));
                None
            }
            3 => {
                // Counts its iterations in a name no value in scope has, at the top of the body
                // (which may shadow any name), and binds the index from it.
                let mut c = self.name();
                while self.scopes.iter().flatten().any(|v| v.name == c) || c == counter {
                    c = self.name();
                }
                self.line(&format!("let mut {c}: usize = 0;"));
                if let Some(c) = &checkpoint {
                    self.line(c);
                }
                if written.is_multiple_of(3) {
                    // The same as a `loop` that breaks (decided as above).
                    self.line("loop {");
                    self.line(&format!("    if {c} >= {n} {{ break; }}"));
                } else {
                    self.line(&format!("while {c} < {n} {{"));
                }
                Some(c)
            }
            _ => {
                if let Some(c) = &checkpoint {
                    self.line(c);
                }
                self.line(&format!("for {counter} in 0..{n} {{"));
                None
            }
        }
    }

    /// Some iterations skipped, or the loop left early, by its index `counter` (decided by the
    /// length of the text so far, with no draw of its own); only while the index's name is still
    /// the index (the body may have shadowed it).
    fn jump(&mut self, counter: &str) {
        let index_in_scope = self
            .scopes
            .iter()
            .flatten()
            .rev()
            .find(|v| v.name == counter)
            .is_some_and(|v| v.counter);
        if index_in_scope {
            match self.out.len() % 5 {
                0 => self.line(&format!("if {counter} == 1 {{ continue; }}")),
                1 => self.line(&format!("if {counter} >= 1 {{ break; }}")),
                _ => {}
            }
        }
    }

    pub(super) fn for_loop(&mut self) {
        // A loop carries values: make sure one is in scope.
        if self.mutable_locals().is_empty() {
            let ty = self.value_ty();
            let rhs = self.bounded(ty);
            let name = self.name();
            self.line(&format!("let mut {name} = {rhs};"));
            self.bind(&name, ty, true);
        }
        let counter = if self.rng.chance(10) {
            "_".to_string()
        } else {
            self.name()
        };
        let mut while_counter = None;
        // Over a model's array of layers (its elements, sometimes enumerated or zipped), or
        // over `0..n`.
        let elements = if self.has(Ty::Model) && self.rng.chance(35) {
            let m = self.model().expect("a model");
            let mut names = vec![self.name()];
            while names.len() < 2 {
                let n = self.name();
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            let (e, other) = (names[0].clone(), names[1].clone());
            let (head, layers, index) = match self.rng.below(4) {
                0 => (format!("{e} in {m}.layers.iter()"), vec![e], None),
                1 => (format!("{e} in &{m}.layers"), vec![e], None),
                2 => (
                    format!("({other}, {e}) in {m}.layers.iter().enumerate()"),
                    vec![e],
                    Some(other),
                ),
                _ => (
                    format!("({e}, {other}) in {m}.layers.iter().zip(&{m}.layers)"),
                    vec![e, other],
                    None,
                ),
            };
            self.line(&format!("for {head} {{"));
            Some((layers, index))
        } else {
            while_counter = self.range_head(&counter);
            None
        };
        self.scopes.push(Vec::new());
        let counter = match &elements {
            Some((_, index)) => index.clone().unwrap_or_else(|| "_".to_string()),
            None => counter,
        };
        if counter != "_" {
            self.scopes.last_mut().expect("a scope").push(Var {
                name: counter.clone(),
                ty: Ty::Usize,
                mutable: false,
                param: false,
                counter: true,
            });
        }
        self.indent += 1;
        if let Some(c) = &while_counter {
            self.line(&format!("{c} += 1;"));
            if counter != "_" {
                self.line(&format!("let {counter} = {c} - 1;"));
            }
        }
        self.loops += 1;
        if let Some((layers, _)) = elements {
            for layer in &layers {
                self.bind(layer, Ty::Layer, false);
            }
            // The body reads each element: a layer's forward.
            for layer in &layers {
                let a = self.expr(Ty::V, 1);
                let mut name = self.name();
                while layers.contains(&name) {
                    name = self.name();
                }
                self.line(&format!("let {name} = {layer}.forward({});", a.arg()));
                self.bind(&name, Ty::V, false);
            }
        }
        let count = 2 + self.rng.below(2);
        self.statements(count);
        self.jump(&counter);
        // The body's last statement updates a carried value.
        let targets = self.mutable_locals();
        if !targets.is_empty() {
            let t = self.rng.pick(&targets).clone();
            let rhs = self.bounded(t.ty);
            self.line(&format!("{} = {rhs};", t.name));
        }
        self.loops -= 1;
        self.indent -= 1;
        self.scopes.pop();
        self.line("}");
    }

    /// The value of an early `return`: the tail's terms, and every local in scope that was
    /// assigned (so that no assignment goes unread on this path).
    pub(super) fn return_value(&mut self) -> String {
        let mut value = self.scalar_tail();
        for v in self.mutable_locals() {
            let term = match v.ty {
                Ty::S => v.name.clone(),
                _ => format!("{}.sum().item()", v.name),
            };
            if !value.contains(&term) {
                value.push_str(" + ");
                value.push_str(&term);
            }
        }
        value
    }

    /// `let (a, b) = m.layers[k].pair(..);` or `let (s, v) = hdr_split(..);`: a call of a
    /// differentiable method or function with a tuple output, destructured, its arguments often
    /// reading the names the pattern rebinds; sometimes an element is `_`.
    pub(super) fn destructure_call(&mut self) {
        let mut names = vec![self.name()];
        while names.len() < 2 {
            let n = self.name();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let ignored = if self.rng.chance(20) {
            Some(self.rng.below(2))
        } else {
            None
        };
        let model = self.model().filter(|_| self.rng.chance(60));
        let (call, tys) = if let Some(m) = model {
            let i = self.index();
            let x = self.expr(Ty::V, 1);
            (format!("{m}.layers[{i}].pair({})", x.arg()), [Ty::V, Ty::V])
        } else {
            let (x, a) = (self.expr(Ty::V, 1), self.expr(Ty::S, 1));
            (
                format!("hdr_split({}, {})", x.arg(), a.text),
                [Ty::S, Ty::V],
            )
        };
        let mut pattern = Vec::new();
        let mut bound = Vec::new();
        for k in 0..2 {
            if ignored == Some(k) {
                pattern.push("_".to_string());
                continue;
            }
            let mutable = self.rng.chance(25);
            let m = if mutable { "mut " } else { "" };
            pattern.push(format!("{m}{}", names[k]));
            bound.push((names[k].clone(), tys[k], mutable));
        }
        self.line(&format!("let ({}) = {call};", pattern.join(", ")));
        for (name, ty, mutable) in bound {
            self.bind(&name, ty, mutable);
        }
    }

    /// The function's tail: a scalar reading the latest bindings.
    pub(super) fn scalar_tail(&mut self) -> String {
        let visible: Vec<Var> = self
            .visible()
            .into_iter()
            .filter(|v| v.ty.value())
            .collect();
        let mut terms = Vec::new();
        for v in visible.iter().rev().take(4) {
            let e = E::new(
                v.name.clone(),
                v.ty,
                if v.param && v.ty.tensor() {
                    Form::Ref
                } else {
                    Form::Place
                },
            );
            terms.push(match v.ty {
                Ty::S => e.text,
                Ty::V => format!("{}.sum().item()", e.recv()),
                _ => format!("{}.sum().item() * 0.5", e.recv()),
            });
        }
        if terms.is_empty() {
            let v = self.atom(Ty::V);
            terms.push(format!("{}.sum().item()", v.recv()));
        }
        terms.join(" + ")
    }
}
