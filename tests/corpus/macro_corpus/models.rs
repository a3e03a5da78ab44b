//! The model types of the model programs, written into the corpus's header with their tape twins.

use super::*;

use std::fmt::Write;

/// The model types of the model programs, declared once in the corpus's header.
pub(super) struct Model {
    /// The struct's name (its tape twin is `T` followed by it).
    pub(super) name: &'static str,
    /// Its declaration, its tape twin's, and their constructors (`random`, `tape`).
    pub(super) decl: &'static str,
    /// Every tensor, in `Params` order: its access path from the model and its shape.
    pub(super) leaves: &'static [(&'static str, &'static [usize])],
    /// Layers a statement calls `forward` on: path (a field, or an array element at a constant
    /// index), input and output sizes.
    pub(super) layers: &'static [(&'static str, usize, usize)],
    /// An array of square layers that loops read (`blocks[i]`): field, length, size, and an array
    /// of tensors of the same length, if any.
    pub(super) array: Option<(&'static str, usize, usize, Option<&'static str>)>,
}

pub(super) const MODELS: &[Model] = &[
    Model {
        name: "Net",
        decl: "#[derive(Clone, Debug)]
struct Net {
    fc1: Lin<3, 4>,
    fc2: Lin<4, 3>,
    gain: Tensor![f64; 3],
}

struct TNet {
    fc1: TLin<3, 4>,
    fc2: TLin<4, 3>,
    gain: Var<f64, Shape![3]>,
}

impl Net {
    fn random(seed: u64, sign: f64) -> Self {
        Net {
            fc1: Lin::random(seed, sign),
            fc2: Lin::random(seed + 2, sign),
            gain: Tensor::rand_uniform(seed + 4, -sign, sign),
        }
    }
    fn tape(&self) -> TNet {
        TNet { fc1: self.fc1.tape(), fc2: self.fc2.tape(), gain: Var::param(self.gain.clone()) }
    }
}
",
        leaves: &[
            ("fc1.weight", &[3, 4]),
            ("fc1.bias", &[4]),
            ("fc2.weight", &[4, 3]),
            ("fc2.bias", &[3]),
            ("gain", &[3]),
        ],
        layers: &[("fc1", 3, 4), ("fc2", 4, 3)],
        array: None,
    },
    Model {
        name: "Stack",
        decl: "#[derive(Clone, Debug)]
struct Stack {
    blocks: [Lin<3, 3>; 3],
    head: Lin<3, 4>,
}

struct TStack {
    blocks: [TLin<3, 3>; 3],
    head: TLin<3, 4>,
}

impl Stack {
    fn random(seed: u64, sign: f64) -> Self {
        Stack {
            blocks: core::array::from_fn(|k| Lin::random(seed + 2 * k as u64, sign)),
            head: Lin::random(seed + 6, sign),
        }
    }
    fn tape(&self) -> TStack {
        TStack { blocks: self.blocks.each_ref().map(Lin::tape), head: self.head.tape() }
    }
}
",
        leaves: &[
            ("blocks[0].weight", &[3, 3]),
            ("blocks[0].bias", &[3]),
            ("blocks[1].weight", &[3, 3]),
            ("blocks[1].bias", &[3]),
            ("blocks[2].weight", &[3, 3]),
            ("blocks[2].bias", &[3]),
            ("head.weight", &[3, 4]),
            ("head.bias", &[4]),
        ],
        layers: &[
            ("blocks[0]", 3, 3),
            ("blocks[1]", 3, 3),
            ("blocks[2]", 3, 3),
            ("head", 3, 4),
        ],
        array: Some(("blocks", 3, 3, None)),
    },
    Model {
        name: "Res",
        decl: "#[derive(Clone, Debug)]
struct Res {
    proj: Lin<4, 3>,
    layers: [Lin<3, 3>; 2],
    norm: [Tensor![f64; 3]; 2],
}

struct TRes {
    proj: TLin<4, 3>,
    layers: [TLin<3, 3>; 2],
    norm: [Var<f64, Shape![3]>; 2],
}

impl Res {
    fn random(seed: u64, sign: f64) -> Self {
        Res {
            proj: Lin::random(seed, sign),
            layers: core::array::from_fn(|k| Lin::random(seed + 2 + 2 * k as u64, sign)),
            norm: core::array::from_fn(|k| Tensor::rand_uniform(seed + 6 + k as u64, -sign, sign)),
        }
    }
    fn tape(&self) -> TRes {
        TRes {
            proj: self.proj.tape(),
            layers: self.layers.each_ref().map(Lin::tape),
            norm: self.norm.each_ref().map(|t| Var::param(t.clone())),
        }
    }
}
",
        leaves: &[
            ("proj.weight", &[4, 3]),
            ("proj.bias", &[3]),
            ("layers[0].weight", &[3, 3]),
            ("layers[0].bias", &[3]),
            ("layers[1].weight", &[3, 3]),
            ("layers[1].bias", &[3]),
            ("norm[0]", &[3]),
            ("norm[1]", &[3]),
        ],
        layers: &[("proj", 4, 3), ("layers[0]", 3, 3), ("layers[1]", 3, 3)],
        array: Some(("layers", 2, 3, Some("norm"))),
    },
];

/// The layer type, its tape twin, and the helpers of the model programs' tests.
pub(super) const LAYER: &str = "/// A dense layer: the layer type of the model programs.
#[derive(Clone, Debug)]
struct Lin<const I: usize, const O: usize> {
    weight: Tensor![f64; I, O],
    bias: Tensor![f64; O],
}

#[differentiable]
impl<const I: usize, const O: usize> Lin<I, O> {
    fn forward<const B: usize>(&self, x: &Tensor![f64; B, I]) -> Tensor![f64; B, O] {
        x.matmul(&self.weight) + &self.bias
    }
}

impl<const I: usize, const O: usize> Lin<I, O> {
    fn random(seed: u64, sign: f64) -> Self {
        Lin {
            weight: Tensor::rand_uniform(seed, -sign, sign),
            bias: Tensor::rand_uniform(seed + 1, -sign, sign),
        }
    }
    /// The same layer on the tape, its tensors leaves.
    fn tape(&self) -> TLin<I, O> {
        TLin { weight: Var::param(self.weight.clone()), bias: Var::param(self.bias.clone()) }
    }
}

impl<const I: usize, const O: usize> Params for Lin<I, O> {
    type Elem = f64;
    const COUNT: usize = 2;
    fn slice(&self, i: usize) -> &[f64] {
        if i == 0 { self.weight.as_slice() } else { self.bias.as_slice() }
    }
    fn slice_mut(&mut self, i: usize) -> &mut [f64] {
        if i == 0 { self.weight.as_mut_slice() } else { self.bias.as_mut_slice() }
    }
    fn dims(&self, i: usize) -> Vec<usize> {
        if i == 0 { vec![I, O] } else { vec![O] }
    }
    fn write_path(i: usize, out: &mut String) {
        out.push_str(if i == 0 { \"weight\" } else { \"bias\" });
    }
    fn zeros_like(&self) -> Self {
        Lin { weight: Tensor::zeros(), bias: Tensor::zeros() }
    }
}

/// [`Lin`] on the tape: the model programs' tape twins run the same body over these.
struct TLin<const I: usize, const O: usize> {
    weight: Var<f64, Shape![I, O]>,
    bias: Var<f64, Shape![O]>,
}

impl<const I: usize, const O: usize> TLin<I, O> {
    fn forward<const B: usize>(&self, x: &Var<f64, Shape![B, I]>) -> Var<f64, Shape![B, O]> {
        x.matmul(&self.weight) + &self.bias
    }
}

/// The generated gradient of every tensor of a model against central differences (the
/// tolerance of [`Tolerance::default`]).
#[track_caller]
fn check_model<M: Params<Elem = f64>>(f: impl Fn(&M) -> f64, model: &M, grad: &M) {
    let tol = Tolerance::default();
    for i in 0..M::COUNT {
        for j in 0..model.slice(i).len() {
            let mut p = model.clone();
            p.slice_mut(i)[j] += tol.eps;
            let up = f(&p);
            p.slice_mut(i)[j] -= 2.0 * tol.eps;
            let down = f(&p);
            let fd = (up - down) / (2.0 * tol.eps);
            let g = grad.slice(i)[j];
            assert!(
                (fd - g).abs() <= tol.atol + tol.rtol * fd.abs(),
                \"{} [{j}]: finite differences {fd}, gradient {g}\",
                M::path(i)
            );
        }
    }
}
";

impl Model {
    /// The declarations: the struct and its twin, `Params` written out, and the twin's
    /// comparison of every leaf's gradient with the generated one.
    pub(super) fn header(&self) -> String {
        let n = self.leaves.len();
        let arms = |f: &dyn Fn(usize, &str, &[usize]) -> String| -> String {
            self.leaves
                .iter()
                .enumerate()
                .map(|(i, (p, s))| format!("            {i} => {},\n", f(i, p, s)))
                .collect()
        };
        let mut out = String::from(self.decl);
        let name = self.name;
        let _ = write!(
            out,
            "
impl Params for {name} {{
    type Elem = f64;
    const COUNT: usize = {n};
    fn slice(&self, i: usize) -> &[f64] {{
        match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }}
    }}
    fn slice_mut(&mut self, i: usize) -> &mut [f64] {{
        match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }}
    }}
    fn dims(&self, i: usize) -> Vec<usize> {{
        match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }}
    }}
    fn write_path(i: usize, out: &mut String) {{
        out.push_str(match i {{
{}            _ => panic!(\"{name} has {n} tensors\"),
        }});
    }}
    fn zeros_like(&self) -> Self {{
        let mut z = self.clone();
        z.fill(0.0);
        z
    }}
}}

impl T{name} {{
    /// Every leaf's gradient against the generated one.
    #[track_caller]
    fn same(&self, g: &{name}) {{
{}    }}
}}

",
            arms(&|_, p, _| format!("self.{p}.as_slice()")),
            arms(&|_, p, _| format!("self.{p}.as_mut_slice()")),
            arms(&|_, _, s| format!("vec![{}]", dims(&s.to_vec()))),
            arms(&|_, p, _| format!("\"{}\"", p.replace('[', ".").replace(']', ""))),
            self.leaves
                .iter()
                .map(|(p, _)| format!("        same(&self.{p}, &g.{p});\n"))
                .collect::<String>(),
        );
        out
    }
}
