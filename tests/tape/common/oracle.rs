//! An independent reference: reverse mode on scalars, one number per node (micrograd's `Value`),
//! and tensors of such scalars with numpy broadcasting written out index by index.
//!
//! Nothing here uses the crate's rules or kernels, so agreement with the tape is evidence that a
//! tensor op is the batch of scalar ops it claims to be.

#![allow(dead_code, reason = "each test file uses a subset")]

/// One scalar node: its value and up to two (parent, local derivative) edges.
struct Node {
    value: f64,
    edges: Vec<(usize, f64)>,
}

/// An arena of scalar nodes; a node's index is its creation order, which is topological.
#[derive(Default)]
pub struct Scalars {
    nodes: Vec<Node>,
}

impl Scalars {
    fn push(&mut self, value: f64, edges: Vec<(usize, f64)>) -> usize {
        self.nodes.push(Node { value, edges });
        self.nodes.len() - 1
    }
    /// A leaf (or a constant: the oracle computes gradients for every node anyway).
    pub fn constant(&mut self, v: f64) -> usize {
        self.push(v, Vec::new())
    }
    /// Leaves for every element of a slice.
    pub fn leaves(&mut self, v: &[f64]) -> Vec<usize> {
        v.iter().map(|&x| self.constant(x)).collect()
    }
    pub fn value(&self, i: usize) -> f64 {
        self.nodes[i].value
    }
    pub fn add(&mut self, a: usize, b: usize) -> usize {
        let v = self.value(a) + self.value(b);
        self.push(v, vec![(a, 1.0), (b, 1.0)])
    }
    pub fn sub(&mut self, a: usize, b: usize) -> usize {
        let v = self.value(a) - self.value(b);
        self.push(v, vec![(a, 1.0), (b, -1.0)])
    }
    pub fn mul(&mut self, a: usize, b: usize) -> usize {
        let (x, y) = (self.value(a), self.value(b));
        self.push(x * y, vec![(a, y), (b, x)])
    }
    pub fn div(&mut self, a: usize, b: usize) -> usize {
        let (x, y) = (self.value(a), self.value(b));
        self.push(x / y, vec![(a, 1.0 / y), (b, -x / (y * y))])
    }
    pub fn exp(&mut self, a: usize) -> usize {
        let e = self.value(a).exp();
        self.push(e, vec![(a, e)])
    }
    pub fn tanh(&mut self, a: usize) -> usize {
        let t = self.value(a).tanh();
        self.push(t, vec![(a, 1.0 - t * t)])
    }
    pub fn sigmoid(&mut self, a: usize) -> usize {
        let s = 1.0 / (1.0 + (-self.value(a)).exp());
        self.push(s, vec![(a, s * (1.0 - s))])
    }
    /// `max(a, b)`, the derivative split half and half at a tie (the rule library's convention).
    pub fn max(&mut self, a: usize, b: usize) -> usize {
        let (x, y) = (self.value(a), self.value(b));
        let (da, db) = if x > y {
            (1.0, 0.0)
        } else if x < y {
            (0.0, 1.0)
        } else {
            (0.5, 0.5)
        };
        self.push(x.max(y), vec![(a, da), (b, db)])
    }
    pub fn neg(&mut self, a: usize) -> usize {
        let v = -self.value(a);
        self.push(v, vec![(a, -1.0)])
    }
    /// d root / d node for every node, by one reverse pass over the arena.
    pub fn backward(&self, root: usize) -> Vec<f64> {
        let mut g = vec![0.0; self.nodes.len()];
        g[root] = 1.0;
        for i in (0..=root).rev() {
            let gi = g[i];
            for &(p, d) in &self.nodes[i].edges {
                g[p] += gi * d;
            }
        }
        g
    }
}

/// A tensor of scalar nodes with a run-time shape.
#[derive(Clone, Debug)]
pub struct DynT {
    pub shape: Vec<usize>,
    pub ids: Vec<usize>,
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The multi-index of flat index `i` in `shape`, row-major.
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        idx[k] = i % shape[k];
        i /= shape[k];
    }
    idx
}

/// The flat index of multi-index `idx` in `shape`, row-major.
pub fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// numpy's broadcast shape (panics on a mismatch).
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|k| {
            let da = if k + a.len() >= r {
                a[k + a.len() - r]
            } else {
                1
            };
            let db = if k + b.len() >= r {
                b[k + b.len() - r]
            } else {
                1
            };
            assert!(da == db || da == 1 || db == 1, "{a:?} vs {b:?}");
            da.max(db)
        })
        .collect()
}

/// The element of `t` that numpy reads at the output multi-index `out_idx`.
fn read(t: &DynT, out_idx: &[usize]) -> usize {
    let off = out_idx.len() - t.shape.len();
    let idx: Vec<usize> = t
        .shape
        .iter()
        .enumerate()
        .map(|(k, &n)| if n == 1 { 0 } else { out_idx[off + k] })
        .collect();
    t.ids[ravel(&idx, &t.shape)]
}

impl DynT {
    pub fn leaves(s: &mut Scalars, shape: &[usize], values: &[f64]) -> Self {
        assert_eq!(numel(shape), values.len());
        Self {
            shape: shape.to_vec(),
            ids: s.leaves(values),
        }
    }
    pub fn values(&self, s: &Scalars) -> Vec<f64> {
        self.ids.iter().map(|&i| s.value(i)).collect()
    }
    /// An elementwise binary op with numpy broadcasting.
    pub fn zip(
        &self,
        other: &Self,
        s: &mut Scalars,
        f: impl Fn(&mut Scalars, usize, usize) -> usize,
    ) -> Self {
        let shape = broadcast_shape(&self.shape, &other.shape);
        let ids = (0..numel(&shape))
            .map(|o| {
                let idx = unravel(o, &shape);
                let (a, b) = (read(self, &idx), read(other, &idx));
                f(s, a, b)
            })
            .collect();
        Self { shape, ids }
    }
    pub fn map(&self, s: &mut Scalars, f: impl Fn(&mut Scalars, usize) -> usize) -> Self {
        Self {
            shape: self.shape.clone(),
            ids: self.ids.iter().map(|&i| f(s, i)).collect(),
        }
    }
    /// Every element times the constant `k`.
    pub fn scale(&self, s: &mut Scalars, k: f64) -> Self {
        self.map(s, |s, i| {
            let c = s.constant(k);
            s.mul(i, c)
        })
    }
    /// The sum along `axis`, removed (`keep = false`) or kept with size 1.
    pub fn sum_axis(&self, s: &mut Scalars, axis: usize, keep: bool) -> Self {
        let mut out_shape = self.shape.clone();
        out_shape[axis] = 1;
        let mut acc: Vec<Option<usize>> = vec![None; numel(&out_shape)];
        for (i, &id) in self.ids.iter().enumerate() {
            let mut idx = unravel(i, &self.shape);
            idx[axis] = 0;
            let o = ravel(&idx, &out_shape);
            acc[o] = Some(match acc[o] {
                None => id,
                Some(prev) => s.add(prev, id),
            });
        }
        if !keep {
            out_shape.remove(axis);
        }
        Self {
            shape: out_shape,
            ids: acc.into_iter().map(Option::unwrap).collect(),
        }
    }
    /// The sum of all elements, rank 0.
    pub fn sum(&self, s: &mut Scalars) -> Self {
        let mut total = self.ids[0];
        for &id in &self.ids[1..] {
            total = s.add(total, id);
        }
        Self {
            shape: Vec::new(),
            ids: vec![total],
        }
    }
}
