//! Frozen parameters: tensors an optimizer leaves untouched, chosen by their dotted paths.
//!
//! Every optimizer ([`Sgd`](super::Sgd), [`Adam`](super::Adam), [`RmsProp`](super::RmsProp),
//! [`Adagrad`](super::Adagrad)) holds a [`Frozen`] set, filled by its builders
//! `.freeze("backbone.*")` (a pattern over [`Params::path`]) and `.freeze_where(|path| ..)` (any
//! predicate). A frozen tensor is skipped whole: its parameters, its moments and its momentum
//! buffers stay as they are, bit for bit, weight decay included, whatever gradient the step is
//! given. The others step exactly as they would under an optimizer of their own.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::nn::Linear;
//! use autograd_core::optim::{Adam, Optimizer};
//!
//! #[derive(Clone, Params)]
//! struct Model {
//!     backbone: Linear<f64, 2, 2>,
//!     head: Linear<f64, 2, 1>,
//! }
//!
//! let mut model = Model {
//!     backbone: Linear { weight: Tensor::new([[1.0, 2.0], [3.0, 4.0]]), bias: Tensor::ones() },
//!     head: Linear { weight: Tensor::new([[1.0], [-1.0]]), bias: Tensor::zeros() },
//! };
//! let mut grad = model.zeros_like();
//! grad.fill(1.0);
//! let mut opt = Adam::adamw(&model, 0.1, 0.1).freeze("backbone.*");
//! let before = model.backbone.clone();
//! opt.step(&mut model, &grad);
//! assert_eq!(model.backbone, before); // not even decayed
//! // Adam's first step: lr against the sign of the gradient.
//! model.head.bias.assert_close(&Tensor::new([-0.1]), 1e-7, 0.0);
//! ```
//!
//! A pattern that matches no parameter would silently freeze nothing (a typo, a renamed field),
//! so `.freeze` panics there and lists the model's paths.
//!
//! **The zero-cost alternative.** When the frozen part is a separate value, leave it out of the
//! differentiated parameters instead: `#[differentiable(wrt(head))]` computes no gradient for the
//! backbone at all, and the optimizer is built over the head alone, so it holds no state for the
//! backbone either. Freezing by path is for a part inside one model (fine-tuning the last block of
//! a loaded network), whose gradient the function computes anyway.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::differentiable;
//! use autograd_core::nn::Linear;
//! use autograd_core::optim::{Optimizer, Sgd};
//!
//! #[derive(Clone, Params)]
//! struct Backbone {
//!     fc: Linear<f64, 3, 4>,
//! }
//!
//! #[derive(Clone, Params)]
//! struct Head {
//!     fc: Linear<f64, 4, 1>,
//! }
//!
//! /// The squared output of the head on the backbone's features; differentiated for the head only.
//! #[differentiable(wrt(head))]
//! fn loss(backbone: &Backbone, head: &Head, x: &Tensor![f64; 2, 3]) -> f64 {
//!     let h = backbone.fc.forward(x).tanh();
//!     head.fc.forward(&h).square().mean().item()
//! }
//!
//! let mut rng = Rng::new(0);
//! let init = autograd_core::nn::Init::XavierUniform;
//! let backbone = Backbone { fc: Linear::new(init, &mut rng) };
//! let mut head = Head { fc: Linear::new(init, &mut rng) };
//! let x = Tensor::new([[1.0, 0.5, -1.0], [0.0, 2.0, 1.0]]);
//! let mut opt = Sgd::new(&head, 0.1); // state for the head only
//! let first = loss(&backbone, &head, &x);
//! for _ in 0..20 {
//!     let (_, grad) = loss_grad(&backbone, &head, &x);
//!     opt.step(&mut head, &grad.head);
//! }
//! assert!(loss(&backbone, &head, &x) < first);
//! ```

#[cfg(feature = "std")]
use crate::params::Params;

/// The set of frozen tensors of a model, by index ([`Params::slice`]'s `i`).
///
/// Empty, and without a heap allocation, until something is frozen; then one flag per tensor.
/// An optimizer asks [`Frozen::contains`] once per tensor and step.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::Frozen;
/// type Model = ((Tensor![f64; 2], f64), [Tensor![f64; 3]; 2]);
/// let mut frozen = Frozen::new();
/// assert!(frozen.is_empty());
/// frozen.add_pattern::<Model>("0.*");
/// assert_eq!(frozen.add_where::<Model>(|path| path == "1.1"), 1);
/// assert_eq!((0..4).map(|i| frozen.contains(i)).collect::<Vec<_>>(), [true, true, false, true]);
/// assert_eq!(frozen.len(), 3);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Frozen {
    /// `mask[i]`: tensor `i` is frozen. Empty (`Vec::new` does not allocate) until a tensor is
    /// frozen, so that an optimizer with nothing frozen costs one length check per tensor.
    /// Without `std`, tensors are chosen by paths, which are strings: nothing can be frozen.
    #[cfg(feature = "std")]
    mask: Vec<bool>,
}

impl Frozen {
    /// Nothing frozen.
    ///
    /// ```
    /// use autograd_core::optim::Frozen;
    /// assert!(Frozen::new().is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            #[cfg(feature = "std")]
            mask: Vec::new(),
        }
    }

    /// Whether tensor `i` is frozen.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Frozen;
    /// let mut frozen = Frozen::new();
    /// frozen.add_pattern::<(f64, Tensor![f64; 2])>("1");
    /// assert!(!frozen.contains(0) && frozen.contains(1));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains(&self, i: usize) -> bool {
        #[cfg(feature = "std")]
        return self.mask.get(i).copied().unwrap_or(false);
        #[cfg(not(feature = "std"))]
        {
            let _ = i;
            false
        }
    }

    /// Whether no tensor is frozen.
    ///
    /// ```
    /// use autograd_core::optim::Frozen;
    /// assert!(Frozen::default().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        #[cfg(feature = "std")]
        return !self.mask.contains(&true);
        #[cfg(not(feature = "std"))]
        true
    }

    /// The number of frozen tensors.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Frozen;
    /// let mut frozen = Frozen::new();
    /// frozen.add_pattern::<[Tensor![f64; 2]; 4]>("*");
    /// assert_eq!(frozen.len(), 4);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        #[cfg(feature = "std")]
        return self.mask.iter().filter(|&&f| f).count();
        #[cfg(not(feature = "std"))]
        0
    }

    /// Freezes every tensor of `P` whose dotted path matches `pattern`, and returns how many it
    /// matched (frozen before or not). Freezing adds up: each call freezes more.
    ///
    /// `*` matches any run of characters, dots included (`*.bias` is every bias, `blocks.*.norm.*`
    /// every norm of every block); every other character matches itself. A pattern also matches
    /// a whole subtree by its prefix: `backbone` freezes `backbone.fc1.weight` as `backbone.*`
    /// does (a prefix counts only up to a dot, so `fc1` does not freeze `fc10.weight`).
    ///
    /// # Panics
    /// If `pattern` matches no tensor of `P`: it would freeze nothing, silently. The message
    /// names the pattern and lists `P`'s paths.
    ///
    /// ```should_panic
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Linear;
    /// use autograd_core::optim::Frozen;
    /// // "matches no parameter of ...; its parameters are: weight, bias"
    /// Frozen::new().add_pattern::<Linear<f64, 2, 2>>("backbone.*");
    /// ```
    #[cfg(feature = "std")]
    #[track_caller]
    pub fn add_pattern<P: Params>(&mut self, pattern: &str) -> usize {
        let n = self.add_where::<P>(|path| matches_path(pattern, path));
        if n == 0 {
            let mut paths = String::new();
            for i in 0..P::COUNT {
                if i > 0 {
                    paths.push_str(", ");
                }
                P::write_path(i, &mut paths);
            }
            panic!(
                "freeze({pattern:?}) matches no parameter of {}; its parameters are: {paths}",
                core::any::type_name::<P>()
            );
        }
        n
    }

    /// Freezes every tensor of `P` whose dotted path `frozen(path)` accepts, and returns how many
    /// it accepted. Unlike [`add_pattern`](Self::add_pattern) it accepts matching nothing (a
    /// predicate may depend on a configuration).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::nn::Linear;
    /// use autograd_core::optim::Frozen;
    /// let mut frozen = Frozen::new();
    /// // The biases of a stack of three layers but the last.
    /// let n = frozen.add_where::<[Linear<f64, 2, 2>; 3]>(|p| p.ends_with("bias") && !p.starts_with('2'));
    /// assert_eq!(n, 2);
    /// assert!(frozen.contains(1) && frozen.contains(3) && !frozen.contains(5));
    /// ```
    #[cfg(feature = "std")]
    pub fn add_where<P: Params>(&mut self, mut frozen: impl FnMut(&str) -> bool) -> usize {
        let mut path = String::new();
        let mut n = 0;
        for i in 0..P::COUNT {
            path.clear();
            P::write_path(i, &mut path);
            if frozen(&path) {
                if self.mask.len() < P::COUNT {
                    self.mask.resize(P::COUNT, false);
                }
                self.mask[i] = true;
                n += 1;
            }
        }
        n
    }
}

#[cfg(feature = "std")]
/// Whether `pattern` matches `path` whole, or one of its prefixes that end before a dot (the
/// path of an enclosing field).
fn matches_path(pattern: &str, path: &str) -> bool {
    glob(pattern.as_bytes(), path.as_bytes())
        || path
            .match_indices('.')
            .any(|(k, _)| glob(pattern.as_bytes(), &path.as_bytes()[..k]))
}

#[cfg(feature = "std")]
/// `*`-only glob matching: the classic greedy scan that, on a mismatch, backtracks to the last
/// star and lets it swallow one more byte (linear in practice, no recursion).
fn glob(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::{Frozen, glob, matches_path};

    #[test]
    fn glob_cases() {
        assert!(glob(b"*", b""));
        assert!(glob(b"*", b"a.b"));
        assert!(glob(b"a.*", b"a.b.c"));
        assert!(!glob(b"a.*", b"ab"));
        assert!(glob(b"*.bias", b"blocks.0.fc.bias"));
        assert!(!glob(b"*.bias", b"blocks.0.fc.weight"));
        assert!(glob(b"blocks.*.norm.*", b"blocks.12.norm.weight"));
        assert!(!glob(b"blocks.*.norm.*", b"blocks.12.fc.weight"));
        assert!(glob(b"a*b*c", b"aXbYbZc"));
        assert!(!glob(b"a*b*c", b"aXbYbZ"));
        assert!(glob(b"fc1.weight", b"fc1.weight"));
        assert!(!glob(b"fc1.weight", b"fc1.weights"));
    }

    #[test]
    fn prefixes_count_up_to_a_dot() {
        assert!(matches_path("backbone", "backbone.fc1.weight"));
        assert!(matches_path("backbone.fc1", "backbone.fc1.weight"));
        assert!(!matches_path("backbone.fc", "backbone.fc1.weight"));
        assert!(!matches_path("fc1", "fc10.weight"));
        assert!(matches_path("fc1*", "fc10.weight"));
    }

    type Model = (
        crate::nn::Linear<f64, 2, 2>,
        [crate::nn::Linear<f64, 2, 2>; 2],
    );

    #[test]
    fn patterns_add_up() {
        let mut frozen = Frozen::new();
        assert_eq!(frozen.add_pattern::<Model>("1.0"), 2);
        assert_eq!(frozen.add_pattern::<Model>("*.bias"), 3);
        let got: Vec<bool> = (0..6).map(|i| frozen.contains(i)).collect();
        assert_eq!(got, [false, true, true, true, false, true]);
        assert_eq!(frozen.len(), 4);
        // Past the model's tensors: not frozen (and no panic).
        assert!(!frozen.contains(6));
    }

    #[test]
    fn nothing_frozen_allocates_nothing() {
        let mut frozen = Frozen::new();
        assert_eq!(frozen.add_where::<Model>(|_| false), 0);
        assert!(frozen.is_empty());
        assert_eq!(frozen.mask.capacity(), 0);
    }

    #[test]
    fn a_pattern_matching_nothing_panics_with_the_paths() {
        let err = std::panic::catch_unwind(|| Frozen::new().add_pattern::<Model>("backbone.*"))
            .unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(
            msg.starts_with("freeze(\"backbone.*\") matches no parameter of (autograd_core::nn::"),
            "{msg}"
        );
        assert!(
            msg.ends_with(
                "; its parameters are: 0.weight, 0.bias, 1.0.weight, 1.0.bias, 1.1.weight, 1.1.bias"
            ),
            "{msg}"
        );
    }
}

/// Freezing in every optimizer: a model whose backbone is frozen keeps it bit for bit through
/// 100 steps (weight decay on, gradients nonzero everywhere), with the backbone's state still
/// zero, while its head steps bit for bit as under an optimizer over the head alone.
#[cfg(all(test, feature = "macros"))]
mod every_optimizer {
    use crate::nn::{Init, Linear};
    use crate::optim::{Adagrad, Adam, Optimizer, RmsProp, Sgd};
    use crate::prelude::*;

    #[derive(Clone, Debug, PartialEq, Params)]
    struct Backbone {
        fc: Linear<f64, 3, 4>,
        scale: Tensor![f64; 4],
    }

    type Head = Linear<f64, 4, 2>;

    #[derive(Clone, Debug, PartialEq, Params)]
    struct Net {
        backbone: Backbone,
        head: Head,
    }

    /// Every element's bits: `==` would call `-0.0` and `0.0` equal.
    fn bits<P: Params<Elem = f64>>(p: &P) -> Vec<u64> {
        (0..P::COUNT)
            .flat_map(|i| p.slice(i).iter().map(|v| v.to_bits()))
            .collect()
    }

    /// Runs 100 steps of `opt` over the whole model and of `alone` over a copy of its head, with
    /// gradients drawn at random for every tensor; returns the optimizer for its state.
    fn hundred_steps<O: Optimizer<Net>, Q: Optimizer<Head>>(
        make: impl FnOnce(&Net) -> O,
        make_alone: impl FnOnce(&Head) -> Q,
    ) -> O {
        let mut rng = Rng::new(7);
        let mut net = Net {
            backbone: Backbone {
                fc: Linear::new(Init::XavierUniform, &mut rng),
                scale: Tensor::new([1.0, -0.5, 2.0, 0.25]),
            },
            head: Linear::new(Init::XavierUniform, &mut rng),
        };
        net.head.bias = Tensor::new([0.5, -0.5]);
        let backbone = net.backbone.clone();
        let mut head = net.head.clone();
        let head0 = net.head.clone();
        let mut opt = make(&net);
        let mut alone = make_alone(&head);
        for step in 0..100u64 {
            let mut grad = net.zeros_like();
            for i in 0..Net::COUNT {
                let n = grad.slice(i).len();
                let g: Tensor<f64, Shape![12]> = Tensor::randn(step * 10 + i as u64);
                grad.slice_mut(i).copy_from_slice(&g.as_slice()[..n]);
            }
            opt.step(&mut net, &grad);
            alone.step(&mut head, &grad.head);
        }
        assert_eq!(bits(&net.backbone), bits(&backbone), "the backbone moved");
        assert_eq!(bits(&net.head), bits(&head), "the head stepped differently");
        // Every element of the head moved.
        let (now, before) = (bits(&net.head), bits(&head0));
        assert!(
            now.iter().zip(&before).all(|(a, b)| a != b),
            "the head stayed"
        );
        opt
    }

    #[test]
    fn adamw() {
        let opt = hundred_steps(
            |m| Adam::adamw(m, 0.01, 0.1).freeze("backbone.*"),
            |h| Adam::adamw(h, 0.01, 0.1),
        );
        let (m, v) = opt.moments();
        assert!(
            bits(&m.backbone)
                .iter()
                .chain(&bits(&v.backbone))
                .all(|&b| b == 0)
        );
        assert_eq!(opt.frozen().len(), 3);
    }

    #[test]
    fn adam_with_l2_decay() {
        hundred_steps(
            |m| Adam::new(m, 0.01).weight_decay(0.1).freeze("backbone"),
            |h| Adam::new(h, 0.01).weight_decay(0.1),
        );
    }

    #[test]
    fn sgd_with_nesterov_momentum() {
        let opt = hundred_steps(
            |m| {
                Sgd::new(m, 0.01)
                    .nesterov(0.9)
                    .weight_decay(0.1)
                    .freeze("backbone.fc.*")
                    .freeze_where(|path| path == "backbone.scale")
            },
            |h| Sgd::new(h, 0.01).nesterov(0.9).weight_decay(0.1),
        );
        assert!(bits(&opt.velocity().backbone).iter().all(|&b| b == 0));
    }

    #[test]
    fn rmsprop_centered_with_momentum() {
        let opt = hundred_steps(
            |m| {
                RmsProp::new(m, 0.01)
                    .momentum(0.9)
                    .centered(true)
                    .weight_decay(0.1)
                    .freeze("backbone.*")
            },
            |h| {
                RmsProp::new(h, 0.01)
                    .momentum(0.9)
                    .centered(true)
                    .weight_decay(0.1)
            },
        );
        let state = [
            opt.square_avg(),
            opt.grad_avg().unwrap(),
            opt.momentum_buffer().unwrap(),
        ];
        for s in state {
            assert!(bits(&s.backbone).iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn adagrad() {
        let opt = hundred_steps(
            |m| {
                Adagrad::new(m, 0.1)
                    .lr_decay(0.01)
                    .weight_decay(0.1)
                    .initial_accumulator_value(0.5)
                    .freeze("backbone.fc")
                    .freeze("*.scale")
            },
            |h| {
                Adagrad::new(h, 0.1)
                    .lr_decay(0.01)
                    .weight_decay(0.1)
                    .initial_accumulator_value(0.5)
            },
        );
        let sum = opt.sum();
        assert!((0..Backbone::COUNT).all(|i| sum.backbone.slice(i).iter().all(|&s| s == 0.5)));
    }
}
