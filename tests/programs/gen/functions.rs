//! The generator's functions: parameters, signatures, helper functions and the main function.

use super::{Gen, Helper, Ty, Var};

impl Gen {
    /// The parameters of a function: names (distinct, from the pool) and types.
    pub(super) fn parameters(&mut self, tys: &[Ty]) -> Vec<Var> {
        let mut params: Vec<Var> = Vec::new();
        for &ty in tys {
            let name = loop {
                let n = (*self.rng.pick(self.names)).to_string();
                let reserved = n.starts_with("__") || n == "cotangent";
                if !params.iter().any(|p| p.name == n) && (!reserved || !self.avoid_reserved) {
                    break n;
                }
            };
            params.push(Var {
                name,
                ty,
                mutable: false,
                param: true,
                counter: false,
            });
        }
        params
    }

    pub(super) fn signature(params: &[Var]) -> String {
        params
            .iter()
            .map(|p| match p.ty {
                Ty::S | Ty::Bool | Ty::Usize => format!("{}: {}", p.name, p.ty.rust()),
                _ => format!("{}: &{}", p.name, p.ty.rust()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A helper: 1-2 parameters, a short body, a tensor or scalar output.
    pub(super) fn function(&mut self, name: &str, min: usize, max: usize) -> String {
        let mut tys = vec![Ty::V];
        if self.rng.chance(60) {
            tys.push(if self.rng.chance(50) { Ty::S } else { Ty::V });
        }
        let params = self.parameters(&tys);
        let out = if self.rng.chance(50) { Ty::V } else { Ty::S };
        self.scopes = vec![params.clone()];
        self.out.clear();
        self.indent = 1;
        self.budget = max;
        let count = min + self.rng.below(max - min + 1);
        self.statements(count);
        let tail = self.bounded(out);
        self.line(&tail);
        let body = std::mem::take(&mut self.out);
        self.helpers.push(Helper {
            name: name.to_string(),
            params: tys,
            out,
        });
        format!(
            "#[differentiable]\nfn {name}({}) -> {} {{\n{body}}}\n",
            Self::signature(&params),
            out.rust()
        )
    }

    /// The program's function: its text, parameters (with whether each is differentiated) and
    /// whether it returns `(f64, Tensor![f64; 3])`.
    pub(super) fn main_function(&mut self, name: &str) -> (String, Vec<(Var, bool)>, bool) {
        let mut tys = vec![Ty::V];
        let mut extra = vec![];
        if self.rng.chance(50) {
            extra.push(Ty::V);
        }
        if self.rng.chance(50) {
            extra.push(Ty::S);
        }
        if self.rng.chance(30) {
            extra.push(Ty::M);
        }
        if self.rng.chance(35) {
            extra.push(Ty::Model);
        }
        if self.rng.chance(35) {
            extra.push(Ty::Bool);
        }
        if self.rng.chance(25) {
            extra.push(Ty::Usize);
        }
        // A scalar constant: a parameter left out of `wrt`.
        let constant = self.rng.chance(15);
        if constant {
            extra.push(Ty::S);
        }
        tys.extend(extra);
        // Shuffled, the constant scalar keeping its mark.
        let mut order: Vec<usize> = (0..tys.len()).collect();
        for i in (1..order.len()).rev() {
            let j = self.rng.below(i + 1);
            order.swap(i, j);
        }
        let params = self.parameters(&tys);
        let constant_index = constant.then(|| tys.len() - 1);
        let ordered: Vec<(Var, bool)> = order
            .iter()
            .map(|&k| {
                let differentiated = params[k].ty.value() || params[k].ty == Ty::Model;
                (
                    params[k].clone(),
                    differentiated && Some(k) != constant_index,
                )
            })
            .collect();
        let tuple_out = self.rng.chance(20);
        // An early `return` gives the function's value; a tuple output has none to give.
        self.returns = !tuple_out;
        self.scopes = vec![ordered.iter().map(|(p, _)| p.clone()).collect()];
        self.out.clear();
        self.indent = 1;
        self.budget = 7;
        let count = 4 + self.rng.below(2);
        self.statements(count);
        let tail = self.scalar_tail();
        if tuple_out {
            let aux = self.bounded(Ty::V);
            self.line(&format!("({tail}, {aux})"));
        } else {
            self.line(&tail);
        }
        let body = std::mem::take(&mut self.out);
        let plain: Vec<Var> = ordered.iter().map(|(p, _)| p.clone()).collect();
        let attribute = if constant || self.rng.chance(10) {
            let wrt: Vec<&str> = ordered
                .iter()
                .filter(|(_, d)| *d)
                .map(|(p, _)| p.name.as_str())
                .collect();
            format!("#[differentiable(wrt({}))]", wrt.join(", "))
        } else {
            "#[differentiable]".to_string()
        };
        let out = if tuple_out {
            "(f64, Tensor![f64; 3])"
        } else {
            "f64"
        };
        (
            format!(
                "{attribute}\nfn {name}({}) -> {out} {{\n{body}}}\n",
                Self::signature(&plain)
            ),
            ordered,
            tuple_out,
        )
    }
}
