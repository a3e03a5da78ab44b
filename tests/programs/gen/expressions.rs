//! The generator's scope and expressions: names, atoms, scalar, vector and matrix expressions,
//! calls and conditions.

use super::{E, Form, Gen, Ty, Var};

impl Gen {
    pub(super) fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Every name in scope, the innermost binding of each, in binding order.
    pub(super) fn visible(&self) -> Vec<Var> {
        let mut vars: Vec<Var> = Vec::new();
        for v in self.scopes.iter().flatten() {
            vars.retain(|w| w.name != v.name);
            vars.push(v.clone());
        }
        vars
    }

    pub(super) fn of(&self, ty: Ty) -> Vec<Var> {
        self.visible().into_iter().filter(|v| v.ty == ty).collect()
    }

    pub(super) fn bind(&mut self, name: &str, ty: Ty, mutable: bool) {
        self.scopes.last_mut().expect("a scope").push(Var {
            name: name.to_string(),
            ty,
            mutable,
            param: false,
            counter: false,
        });
    }

    pub(super) fn name(&mut self) -> String {
        // Often a name in scope (shadowing it, whatever its type; a parameter less often, so
        // that programs keep reading them), else any of the pool.
        let visible = self.visible();
        let (params, locals): (Vec<Var>, Vec<Var>) = visible.into_iter().partition(|v| v.param);
        if !locals.is_empty() && self.rng.chance(40) {
            return self.rng.pick(&locals).name.clone();
        }
        if !params.is_empty() && self.rng.chance(8) {
            return self.rng.pick(&params).name.clone();
        }
        (*self.rng.pick(self.names)).to_string()
    }

    pub(super) fn has(&self, ty: Ty) -> bool {
        !self.of(ty).is_empty()
    }

    /// A model in scope, if any.
    pub(super) fn model(&mut self) -> Option<String> {
        let models = self.of(Ty::Model);
        if models.is_empty() {
            None
        } else {
            Some(self.rng.pick(&models).name.clone())
        }
    }

    /// An index of `layers`: a constant or a loop counter.
    pub(super) fn index(&mut self) -> String {
        let counters: Vec<Var> = self
            .of(Ty::Usize)
            .into_iter()
            .filter(|v| v.counter)
            .collect();
        if !counters.is_empty() && self.rng.chance(50) {
            return self.rng.pick(&counters).name.clone();
        }
        self.rng.below(3).to_string()
    }

    /// A scalar literal.
    pub(super) fn literal(&mut self) -> E {
        let lit = *self
            .rng
            .pick(&["0.5", "0.25", "1.5", "0.75", "2.0", "0.125"]);
        E::new(lit.to_string(), Ty::S, Form::Place)
    }

    /// A value of `ty` without an operator: a name, a model's field, a literal.
    pub(super) fn atom(&mut self, ty: Ty) -> E {
        let vars = self.of(ty);
        let model = self.model();
        if let Some(m) = model.filter(|_| ty != Ty::S && self.rng.chance(30)) {
            return match ty {
                Ty::V => {
                    let path = match self.rng.below(4) {
                        0 => "__i".to_string(),
                        1 => format!("layers[{}].slot", self.index()),
                        2 => format!("layers[{}].__grad", self.index()),
                        _ => "out.slot".to_string(),
                    };
                    E::new(format!("&{m}.{path}"), Ty::V, Form::Ref)
                }
                _ => E::new(format!("&{m}.grad"), Ty::M, Form::Ref),
            };
        }
        if ty == Ty::S {
            let counters = self.of(Ty::Usize);
            if !counters.is_empty() && self.rng.chance(15) {
                let c = self.rng.pick(&counters).name.clone();
                return E::new(format!("({c} as f64 * 0.5)"), Ty::S, Form::Place);
            }
            if vars.is_empty() || self.rng.chance(15) {
                return self.literal();
            }
        }
        if vars.is_empty() {
            // Every tensor in scope shadowed: a constant.
            let text = if ty == Ty::M {
                "<Tensor![f64; 2, 3]>::new([[0.5, -0.25, 0.75], [0.125, 1.0, -0.5]])"
            } else {
                "<Tensor![f64; 3]>::new([0.5, -0.25, 0.75])"
            };
            return E::new(text.to_string(), ty, Form::Owned);
        }
        let v = self.rng.pick(&vars).clone();
        let form = if v.param && v.ty.tensor() {
            Form::Ref
        } else {
            Form::Place
        };
        E::new(v.name, v.ty, form)
    }

    /// A scalar that is not a literal (a literal is no receiver: its float type is ambiguous).
    pub(super) fn receiver_scalar(&mut self, depth: usize) -> E {
        for _ in 0..4 {
            let e = self.expr(Ty::S, depth);
            if e.text.parse::<f64>().is_err() {
                return e;
            }
        }
        let v = self.atom(Ty::V);
        E::new(format!("{}.sum().item()", v.recv()), Ty::S, Form::Owned)
    }

    /// An expression of type `ty`, of at most `depth` nested operations.
    pub(super) fn expr(&mut self, ty: Ty, depth: usize) -> E {
        if depth == 0 || self.rng.chance(25) {
            return self.atom(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::S => self.scalar_expr(d),
            Ty::V => self.vector_expr(d),
            _ => self.matrix_expr(d),
        }
    }

    pub(super) fn scalar_expr(&mut self, d: usize) -> E {
        let owned = |t: String| E::new(t, Ty::S, Form::Owned);
        match self.rng.below(14) {
            0 => {
                let e = self.receiver_scalar(d);
                owned(format!("{}.tanh()", e.recv()))
            }
            1 => {
                let e = self.receiver_scalar(d);
                owned(format!("{}.sin()", e.recv()))
            }
            2 => {
                let e = self.receiver_scalar(d);
                owned(format!("{}.tanh().exp()", e.recv()))
            }
            3..=5 => {
                let (a, b) = (self.expr(Ty::S, d), self.expr(Ty::S, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
            6 => {
                let (a, b) = (self.expr(Ty::S, d), self.atom(Ty::S));
                owned(format!(
                    "{} / (1.0 + {} * {})",
                    a.opnd(),
                    b.opnd(),
                    b.opnd()
                ))
            }
            7 => {
                let a = self.expr(Ty::S, d);
                owned(format!("-{}", a.opnd()))
            }
            8 | 9 => {
                let v = self.expr(Ty::V, d);
                let how =
                    *self
                        .rng
                        .pick(&[".sum()", ".sigmoid().sum()", ".mean()", ".tanh().sum()"]);
                owned(format!("{}{how}.item()", v.recv()))
            }
            10 if self.has(Ty::M) => {
                let m = self.expr(Ty::M, d);
                owned(format!("{}.sum().item() * 0.5", m.recv()))
            }
            11 if self.has(Ty::Model) => {
                let m = self.model().expect("a model");
                let i = self.index();
                let (v, s) = (self.expr(Ty::V, d), self.expr(Ty::S, d));
                owned(format!("{m}.layers[{i}].score({}, {})", v.arg(), s.text))
            }
            12 => {
                let (s, v) = (self.expr(Ty::S, d), self.expr(Ty::V, d));
                owned(format!("hdr_mix({}, {})", s.text, v.arg()))
            }
            13 => self.call(Ty::S, d),
            _ => {
                let (a, b) = (self.expr(Ty::S, d), self.expr(Ty::S, d));
                owned(format!("{} + {}", a.opnd(), b.opnd()))
            }
        }
    }

    pub(super) fn vector_expr(&mut self, d: usize) -> E {
        let owned = |t: String| E::new(t, Ty::V, Form::Owned);
        match self.rng.below(15) {
            0 => {
                let e = self.expr(Ty::V, d);
                let f = *self.rng.pick(&["tanh", "sin", "sigmoid"]);
                owned(format!("{}.{f}()", e.recv()))
            }
            1 => {
                let e = self.expr(Ty::V, d);
                owned(format!("{}.tanh().exp()", e.recv()))
            }
            2..=4 => {
                let (a, b) = (self.expr(Ty::V, d), self.expr(Ty::V, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
            5 => {
                let (a, s) = (self.expr(Ty::V, d), self.expr(Ty::S, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), s.opnd()))
            }
            6 => {
                let (s, a) = (self.expr(Ty::S, d), self.expr(Ty::V, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", s.opnd(), a.opnd()))
            }
            7 => {
                let a = self.expr(Ty::V, d);
                owned(format!("-{}", a.opnd()))
            }
            8 => {
                let (a, b) = (self.expr(Ty::V, d), self.expr(Ty::V, d));
                owned(format!("hdr_cell({}, {})", a.arg(), b.arg()))
            }
            9 | 10 if self.has(Ty::Model) => {
                let m = self.model().expect("a model");
                let a = self.expr(Ty::V, d);
                let layer = match self.rng.below(3) {
                    0 => "out".to_string(),
                    _ => format!("layers[{}]", self.index()),
                };
                owned(format!("{m}.{layer}.forward({})", a.arg()))
            }
            11 if self.has(Ty::Model) => {
                let m = self.model().expect("a model");
                let a = self.expr(Ty::V, d);
                owned(format!("{m}.embed({})", a.arg()))
            }
            12 if self.has(Ty::M) => {
                let m = self.expr(Ty::M, d);
                owned(format!("{}.sum_axis::<0>()", m.recv()))
            }
            13 => self.call(Ty::V, d),
            _ => {
                let (a, b) = (self.expr(Ty::V, d), self.expr(Ty::V, d));
                owned(format!("{} * {} * 0.5", a.opnd(), b.opnd()))
            }
        }
    }

    pub(super) fn matrix_expr(&mut self, d: usize) -> E {
        let owned = |t: String| E::new(t, Ty::M, Form::Owned);
        match self.rng.below(5) {
            0 => {
                let e = self.expr(Ty::M, d);
                let f = *self.rng.pick(&["tanh", "sin", "sigmoid"]);
                owned(format!("{}.{f}()", e.recv()))
            }
            1 => {
                let (a, b) = (self.expr(Ty::M, d), self.expr(Ty::V, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
            2 => {
                let (b, a) = (self.expr(Ty::V, d), self.expr(Ty::M, d));
                owned(format!("{} * {}", b.opnd(), a.opnd()))
            }
            3 => {
                let (a, s) = (self.expr(Ty::M, d), self.expr(Ty::S, d));
                owned(format!("{} * {}", a.opnd(), s.opnd()))
            }
            _ => {
                let (a, b) = (self.expr(Ty::M, d), self.expr(Ty::M, d));
                let op = *self.rng.pick(&["+", "-", "*"]);
                owned(format!("{} {op} {}", a.opnd(), b.opnd()))
            }
        }
    }

    /// A call of the program's helper with output `out`, or a plain expression if it has none.
    pub(super) fn call(&mut self, out: Ty, d: usize) -> E {
        let Some(h) = self.helpers.iter().position(|h| h.out == out) else {
            return self.atom(out);
        };
        let (name, params) = (self.helpers[h].name.clone(), self.helpers[h].params.clone());
        let args: Vec<String> = params
            .iter()
            .map(|&ty| {
                let e = self.expr(ty, d);
                if ty == Ty::S { e.text } else { e.arg() }
            })
            .collect();
        E::new(format!("{name}({})", args.join(", ")), out, Form::Owned)
    }

    /// A bounded value of `ty`: what every binding and assignment stores, so that no value grows
    /// without bound through loops (finite differences stay accurate).
    pub(super) fn bounded(&mut self, ty: Ty) -> String {
        // Mostly one operation deep: the build's time grows with the number of operations.
        let depth = if self.rng.chance(25) { 2 } else { 1 };
        let e = self.expr(ty, depth);
        if ty == Ty::S {
            let e = if e.text.parse::<f64>().is_ok() {
                self.receiver_scalar(1)
            } else {
                e
            };
            return match self.rng.below(4) {
                0 => format!("{}.sin()", e.recv()),
                1 => format!("{}.tanh() * 0.5", e.recv()),
                _ => format!("{}.tanh()", e.recv()),
            };
        }
        match self.rng.below(5) {
            0 => format!("{}.sin()", e.recv()),
            1 => format!("{}.sigmoid()", e.recv()),
            2 => format!("{}.tanh() * 0.5", e.recv()),
            _ => format!("{}.tanh()", e.recv()),
        }
    }

    /// A value type for a new binding.
    pub(super) fn value_ty(&mut self) -> Ty {
        match self.rng.below(10) {
            0..=3 => Ty::S,
            4 if self.has(Ty::M) => Ty::M,
            _ => Ty::V,
        }
    }

    /// A condition the expansion reads without differentiating it.
    pub(super) fn condition(&mut self) -> String {
        for _ in 0..8 {
            match self.rng.below(6) {
                0 | 1 => {
                    let bools = self.of(Ty::Bool);
                    if !bools.is_empty() {
                        let b = self.rng.pick(&bools).name.clone();
                        return if self.rng.chance(30) {
                            format!("!{b}")
                        } else {
                            b
                        };
                    }
                }
                2 | 3 => {
                    let ns = self.of(Ty::Usize);
                    if !ns.is_empty() {
                        let n = self.rng.pick(&ns).name.clone();
                        return match self.rng.below(3) {
                            0 => format!("{n} % 2 == 0"),
                            1 => format!("{n} > 0"),
                            _ => format!("{n} == 1"),
                        };
                    }
                }
                4 => {
                    let s = self.receiver_scalar(1);
                    let cmp = *self.rng.pick(&[">", "<"]);
                    return format!("{} {cmp} 0.1", s.opnd());
                }
                _ => {
                    let v = self.atom(Ty::V);
                    return format!("{}.detach().sum().item() > 0.0", v.recv());
                }
            }
        }
        let v = self.atom(Ty::V);
        format!("{}.sum().item() < 0.2", v.recv())
    }

    pub(super) fn mutable_locals(&self) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| v.mutable && !v.param && v.ty.value())
            .collect()
    }
}
