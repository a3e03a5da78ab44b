//! L-BFGS for full-batch problems: a port of `torch.optim.LBFGS`, with its strong Wolfe line
//! search (`line_search_fn="strong_wolfe"`, its `_strong_wolfe` and `_cubic_interpolate`) or its
//! fixed step, the same defaults and the same stopping rules, so that it takes the same
//! iterations and evaluations as `PyTorch` on the same problem.
//!
//! One [`Lbfgs::step`] is one `PyTorch` `step(closure)`: up to `max_iter` iterations and about
//! `max_eval` evaluations of the loss and its gradient. Each iteration builds a direction from
//! the last `history_size` pairs `s = x_{k+1} - x_k`, `y = g_{k+1} - g_k` with `y.s > 1e-10`
//! (the two-loop recursion, `H0 = (y.s / y.y) I` from the newest pair; the first direction is
//! `-g`), then moves along it:
//!
//! - with the strong Wolfe line search, to a step `t` (first tried at `lr`, or at
//!   `min(1, 1 / |g|_1) lr` on the very first iteration) with `f(x + t d) <= f + c1 t g.d` and
//!   `|g(x + t d).d| <= c2 |g.d|` (`c1` = 1e-4, `c2` = 0.9), found by bracketing and cubic
//!   interpolation in at most the evaluations left;
//! - without one, by that first `t` exactly, evaluating the new point only if another iteration
//!   follows.
//!
//! It stops when the gradient's largest element is at most `tolerance_grad`, the directional
//! derivative `g.d` is above `-tolerance_change`, a step changes no parameter by more than
//! `tolerance_change`, the loss changes by less than `tolerance_change`, or after `max_iter`
//! iterations or `max_eval` evaluations ([`LbfgsStop`]). The history, the last direction and
//! step are kept between calls, as `PyTorch` keeps them, so that calling `step` again continues
//! the same run.
//!
//! ```
//! use autograd_core::prelude::*;
//! use autograd_core::optim::{Lbfgs, LineSearch};
//! // Rosenbrock's function, with its gradient by hand.
//! let rosenbrock = |p: &Tensor![f64; 2]| {
//!     let [x, y] = p.to_array();
//!     let f = (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2);
//!     let g = [-2.0 * (1.0 - x) - 400.0 * x * (y - x * x), 200.0 * (y - x * x)];
//!     (f, Tensor::new(g))
//! };
//! let mut p = Tensor::new([-1.5, 2.0]);
//! let mut opt = Lbfgs::new(&p).line_search(LineSearch::StrongWolfe).max_iter(100).max_eval(200);
//! let report = opt.step(&mut p, rosenbrock);
//! // 41 iterations, 51 evaluations, and the loss stops changing by 1e-9 (`tolerance_change`).
//! assert!(report.loss < 1e-9, "{report:?}");
//! p.assert_close(&Tensor::new([1.0, 1.0]), 1e-5, 0.0);
//! ```

use std::collections::VecDeque;

mod line_search;

use line_search::{Wolfe, dot, max_abs};

use crate::params::Params;
use crate::scalar::Float;

/// How [`Lbfgs`] chooses the length of each step along its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LineSearch {
    /// No line search (`PyTorch`'s default, `line_search_fn=None`): a step of `lr` (or
    /// `min(1, 1 / |g|_1) lr` on the first iteration). It may diverge on a badly scaled problem.
    #[default]
    FixedStep,
    /// `PyTorch`'s strong Wolfe line search (`line_search_fn="strong_wolfe"`), with
    /// `c1` = 1e-4 and `c2` = 0.9: what a deterministic full-batch problem wants.
    StrongWolfe,
}

/// Why an [`Lbfgs::step`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LbfgsStop {
    /// The gradient's largest magnitude is at most `tolerance_grad` (at the start of the call,
    /// then without an iteration, or after an iteration).
    GradientTolerance,
    /// The directional derivative `g.d` is above `-tolerance_change`: the new direction does not
    /// descend (usually: converged as far as floating point goes). The iteration that found it
    /// did not move.
    NoDescent,
    /// The last step `t d` changed no parameter by more than `tolerance_change`.
    StepTolerance,
    /// The loss changed by less than `tolerance_change` in the last iteration.
    LossTolerance,
    /// `max_iter` iterations.
    MaxIter,
    /// At least `max_eval` evaluations (the line search stops at the evaluations left, so this
    /// is `max_eval` exactly unless a fixed step or the line search's first trial went past).
    MaxEval,
}

/// What one [`Lbfgs::step`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LbfgsReport<T> {
    /// The iterations of this call (`PyTorch`'s `n_iter` counts them too): each computed a
    /// direction, and all but one that stopped with [`LbfgsStop::NoDescent`] moved.
    pub iterations: usize,
    /// The evaluations of the loss and its gradient in this call, the first included.
    pub evaluations: usize,
    /// The loss at the parameters the call started from (what `PyTorch`'s `step` returns).
    pub initial_loss: T,
    /// The loss at the parameters the call left. One exception, `PyTorch`'s: without a line
    /// search, the last of `max_iter` iterations moves without evaluating, and this is the loss
    /// before that move.
    pub loss: T,
    /// Why it returned.
    pub stop: LbfgsStop,
}

/// The L-BFGS optimizer: see the [module](self) docs for the algorithm.
///
/// It evaluates the loss several times per step, so rather than [`Optimizer`](super::Optimizer)
/// its [`step`](Self::step) takes a function from the parameters to the loss and its gradient.
/// The parameters are flattened through [`Params::slice`] in tensor order; the history is
/// `2 history_size` vectors of the parameters' length, on the heap.
///
/// ```
/// use autograd_core::prelude::*;
/// use autograd_core::optim::{Lbfgs, LbfgsStop, LineSearch};
/// // A quadratic bowl over a tuple of parameters: sum (p - c)^2, minimum at c.
/// let c = (Tensor::new([1.0f64, -2.0]), 3.0f64);
/// let f = |p: &(Tensor![f64; 2], f64)| {
///     let d = (&p.0 - &c.0, p.1 - c.1);
///     (d.0.square().sum().item() + d.1 * d.1, (&d.0 * 2.0, 2.0 * d.1))
/// };
/// let mut p = (Tensor::zeros(), 0.0);
/// let mut opt = Lbfgs::new(&p).line_search(LineSearch::StrongWolfe);
/// let report = opt.step(&mut p, f);
/// assert_eq!(report.stop, LbfgsStop::GradientTolerance);
/// p.0.assert_close(&c.0, 1e-9, 0.0);
/// assert!((p.1 - c.1).abs() < 1e-9);
/// ```
#[derive(Clone, Debug)]
pub struct Lbfgs<P: Params> {
    lr: P::Elem,
    max_iter: usize,
    /// `None`: `max_iter * 5 / 4`, computed at each step so that it follows `max_iter`.
    max_eval: Option<usize>,
    tolerance_grad: P::Elem,
    tolerance_change: P::Elem,
    history_size: usize,
    line_search: LineSearch,
    /// The total iterations and evaluations over every call (`PyTorch`'s `n_iter` and
    /// `func_evals`); the first iteration ever starts from `-g`.
    n_iter: u64,
    func_evals: u64,
    /// The last direction and step length.
    d: Vec<P::Elem>,
    t: P::Elem,
    /// `y` (gradient differences, `PyTorch`'s `old_dirs`), `s` (steps, `old_stps`) and `1 / y.s`,
    /// oldest first.
    old_dirs: VecDeque<Vec<P::Elem>>,
    old_stps: VecDeque<Vec<P::Elem>>,
    ro: VecDeque<P::Elem>,
    h_diag: P::Elem,
    /// The gradient at the start of the last iteration (empty before the first).
    prev_flat_grad: Vec<P::Elem>,
    /// Scratch, kept so that a step allocates only what the history and the function do.
    flat_grad: Vec<P::Elem>,
    y: Vec<P::Elem>,
    s: Vec<P::Elem>,
    x_init: Vec<P::Elem>,
    al: Vec<P::Elem>,
    wolfe: Wolfe<P::Elem>,
}

impl<P: Params> Lbfgs<P> {
    /// L-BFGS for parameters shaped like `params`, with `PyTorch`'s defaults: `lr` 1, `max_iter`
    /// 20, `max_eval` `max_iter * 5 / 4`, `tolerance_grad` 1e-7, `tolerance_change` 1e-9,
    /// `history_size` 100, and no line search ([`LineSearch::FixedStep`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Lbfgs;
    /// let opt = Lbfgs::new(&Tensor::new([1.0f64, 2.0]));
    /// assert_eq!((opt.lr(), opt.iterations()), (1.0, 0));
    /// ```
    pub fn new(params: &P) -> Self {
        let n = params.numel();
        let zero = P::Elem::ZERO;
        Self {
            lr: P::Elem::ONE,
            max_iter: 20,
            max_eval: None,
            tolerance_grad: P::Elem::from_f64(1e-7),
            tolerance_change: P::Elem::from_f64(1e-9),
            history_size: 100,
            line_search: LineSearch::FixedStep,
            n_iter: 0,
            func_evals: 0,
            d: vec![zero; n],
            t: zero,
            old_dirs: VecDeque::new(),
            old_stps: VecDeque::new(),
            ro: VecDeque::new(),
            h_diag: P::Elem::ONE,
            prev_flat_grad: Vec::new(),
            flat_grad: vec![zero; n],
            y: vec![zero; n],
            s: vec![zero; n],
            x_init: vec![zero; n],
            al: Vec::new(),
            wolfe: Wolfe::new(n),
        }
    }

    /// With learning rate `lr`: the first step length tried (see the [module](self) docs).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Lbfgs;
    /// let opt = Lbfgs::new(&1.0f64).with_lr(0.5);
    /// assert_eq!(opt.lr(), 0.5);
    /// ```
    #[must_use]
    pub fn with_lr(mut self, lr: P::Elem) -> Self {
        self.lr = lr;
        self
    }

    /// With at most `n` iterations per [`step`](Self::step) (and, unless set, `n * 5 / 4`
    /// evaluations).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LbfgsStop};
    /// let mut x = 3.0f64;
    /// let mut opt = Lbfgs::new(&x).with_lr(0.1).max_iter(4);
    /// let report = opt.step(&mut x, |x| (x * x, 2.0 * x));
    /// assert_eq!((report.iterations, report.stop), (4, LbfgsStop::MaxIter));
    /// // Without a line search the last iteration's point is not evaluated: 1 + 3 evaluations.
    /// assert_eq!(report.evaluations, 4);
    /// ```
    #[must_use]
    pub fn max_iter(mut self, n: usize) -> Self {
        self.max_iter = n;
        self
    }

    /// With at most about `n` evaluations per [`step`](Self::step) (see [`LbfgsStop::MaxEval`]).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LbfgsStop};
    /// let mut x = 3.0f64;
    /// let mut opt = Lbfgs::new(&x).with_lr(0.1).max_eval(3);
    /// let report = opt.step(&mut x, |x| (x * x, 2.0 * x));
    /// assert_eq!((report.evaluations, report.stop), (3, LbfgsStop::MaxEval));
    /// ```
    #[must_use]
    pub fn max_eval(mut self, n: usize) -> Self {
        self.max_eval = Some(n);
        self
    }

    /// With the gradient tolerance: a step stops when no element of the gradient exceeds `tol`
    /// in magnitude.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LbfgsStop};
    /// let mut x = 1e-3f64;
    /// let mut opt = Lbfgs::new(&x).tolerance_grad(1e-2);
    /// let report = opt.step(&mut x, |x| (x * x, 2.0 * x));
    /// assert_eq!((report.iterations, report.stop), (0, LbfgsStop::GradientTolerance));
    /// ```
    #[must_use]
    pub fn tolerance_grad(mut self, tol: P::Elem) -> Self {
        self.tolerance_grad = tol;
        self
    }

    /// With the change tolerance on the loss, the step and the directional derivative (and on
    /// the line search's bracket).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LbfgsStop};
    /// let mut x = 1.0f64;
    /// let mut opt = Lbfgs::new(&x).with_lr(0.01).tolerance_change(1.0);
    /// // The first step moves x by 0.01 * min(1, 1 / 2) * 2: less than 1.
    /// let report = opt.step(&mut x, |x| (x * x, 2.0 * x));
    /// assert_eq!((report.iterations, report.stop), (1, LbfgsStop::StepTolerance));
    /// ```
    #[must_use]
    pub fn tolerance_change(mut self, tol: P::Elem) -> Self {
        self.tolerance_change = tol;
        self
    }

    /// With the last `n` pairs of steps and gradient changes remembered.
    ///
    /// # Panics
    /// If `n` is 0 (`PyTorch` fails at the second iteration then).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LineSearch};
    /// let mut x = Tensor::new([1.0f64, 2.0, 3.0]);
    /// // A diagonal quadratic, scales 1, 10, 100.
    /// let f = |x: &Tensor![f64; 3]| {
    ///     let s = Tensor::new([1.0, 10.0, 100.0]);
    ///     ((&s * &x.square()).sum().item(), &(&s * x) * 2.0)
    /// };
    /// let mut opt = Lbfgs::new(&x).history_size(2).line_search(LineSearch::StrongWolfe);
    /// let report = opt.step(&mut x, f);
    /// assert!(report.loss < 1e-9, "{report:?}");
    /// ```
    #[must_use]
    #[track_caller]
    pub fn history_size(mut self, n: usize) -> Self {
        assert!(n > 0, "L-BFGS needs a history of at least 1 pair");
        self.history_size = n;
        self
    }

    /// With the line search `ls`.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LineSearch};
    /// let mut x = 3.0f64;
    /// // A fixed step of 1 from the first iteration's 1/6 overshoots x^4; the line search does not.
    /// let mut opt = Lbfgs::new(&x).line_search(LineSearch::StrongWolfe);
    /// let report = opt.step(&mut x, |x| (x.powi(4), 4.0 * x.powi(3)));
    /// assert!(report.loss < 1e-8, "{report:?}");
    /// ```
    #[must_use]
    pub fn line_search(mut self, ls: LineSearch) -> Self {
        self.line_search = ls;
        self
    }

    /// The learning rate, as [`Optimizer::lr`](super::Optimizer::lr) gives it for the other
    /// optimizers.
    ///
    /// ```
    /// use autograd_core::optim::Lbfgs;
    /// assert_eq!(Lbfgs::new(&0.0f64).lr(), 1.0);
    /// ```
    pub fn lr(&self) -> P::Elem {
        self.lr
    }

    /// Sets the learning rate of the following steps; the history is kept.
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::Lbfgs;
    /// let mut opt = Lbfgs::new(&1.0f64);
    /// opt.set_lr(0.25);
    /// assert_eq!(opt.lr(), 0.25);
    /// ```
    pub fn set_lr(&mut self, lr: P::Elem) {
        self.lr = lr;
    }

    /// The iterations of every step so far.
    ///
    /// ```
    /// use autograd_core::optim::Lbfgs;
    /// let mut x = 3.0f64;
    /// let mut opt = Lbfgs::new(&x).with_lr(0.1).max_iter(4);
    /// opt.step(&mut x, |x| (x * x, 2.0 * x));
    /// opt.step(&mut x, |x| (x * x, 2.0 * x));
    /// assert_eq!((opt.iterations(), opt.evaluations()), (8, 8));
    /// ```
    pub fn iterations(&self) -> u64 {
        self.n_iter
    }

    /// The evaluations of every step so far (see [`iterations`](Self::iterations)).
    pub fn evaluations(&self) -> u64 {
        self.func_evals
    }

    /// Minimizes `f` from `params` for up to `max_iter` iterations, leaving the result in
    /// `params`; `f(p)` returns the loss at `p` and its gradient (a `#[differentiable]`
    /// function's `_grad`, with its gradient struct's field, fits:
    /// `|m| { let (l, g) = loss_grad(m, &x); (l, g.model) }`).
    ///
    /// ```
    /// use autograd_core::prelude::*;
    /// use autograd_core::optim::{Lbfgs, LbfgsStop, LineSearch};
    /// let mut x = 3.0f64;
    /// let mut opt = Lbfgs::new(&x).line_search(LineSearch::StrongWolfe);
    /// let report = opt.step(&mut x, |x| ((x - 1.0).powi(2), 2.0 * (x - 1.0)));
    /// // From 3, the first iteration's step is scaled by 1 / |g|_1: t = 1/4 along -g = -4, to 2
    /// // (1 evaluation, accepted by the line search). The second is the Newton step, exact on a
    /// // quadratic: to 1, where the gradient is 0.
    /// assert_eq!(x, 1.0);
    /// assert_eq!(report.initial_loss, 4.0);
    /// assert_eq!((report.iterations, report.evaluations), (2, 3));
    /// assert_eq!(report.stop, LbfgsStop::GradientTolerance);
    /// ```
    pub fn step(
        &mut self,
        params: &mut P,
        mut f: impl FnMut(&P) -> (P::Elem, P),
    ) -> LbfgsReport<P::Elem> {
        type T<P> = <P as Params>::Elem;
        let zero = T::<P>::ZERO;
        let one = T::<P>::ONE;
        let max_eval = self.max_eval.unwrap_or(self.max_iter * 5 / 4);
        let (tol_grad, tol_change) = (self.tolerance_grad, self.tolerance_change);

        let (orig_loss, grad) = f(params);
        flatten(&grad, &mut self.flat_grad);
        let mut loss = orig_loss;
        let mut current_evals = 1;
        self.func_evals += 1;
        let mut report = LbfgsReport {
            iterations: 0,
            evaluations: 1,
            initial_loss: orig_loss,
            loss,
            stop: LbfgsStop::GradientTolerance,
        };
        if max_abs(&self.flat_grad) <= tol_grad {
            return report;
        }

        let mut n_iter = 0;
        let stop = loop {
            if n_iter >= self.max_iter {
                break LbfgsStop::MaxIter;
            }
            n_iter += 1;
            self.n_iter += 1;

            // The direction.
            if self.n_iter == 1 {
                for (d, &g) in self.d.iter_mut().zip(&self.flat_grad) {
                    *d = -g;
                }
                self.old_dirs.clear();
                self.old_stps.clear();
                self.ro.clear();
                self.h_diag = one;
            } else {
                self.push_pair();
                self.two_loop();
            }

            if self.prev_flat_grad.len() == self.flat_grad.len() {
                self.prev_flat_grad.copy_from_slice(&self.flat_grad);
            } else {
                self.prev_flat_grad.clone_from(&self.flat_grad);
            }
            let prev_loss = loss;

            // The step length: the first iteration ever is scaled by the gradient's size.
            self.t = if self.n_iter == 1 {
                let s = one / self.flat_grad.iter().fold(zero, |a, g| a + g.abs());
                // Python's `min(1.0, s)`: 1 unless s is smaller.
                (if s < one { s } else { one }) * self.lr
            } else {
                self.lr
            };

            let gtd = dot(&self.flat_grad, &self.d);
            if gtd > -tol_change {
                break LbfgsStop::NoDescent;
            }

            let (l, ls_func_evals, opt_cond) = self.search_line(
                params,
                &mut f,
                loss,
                gtd,
                max_eval.saturating_sub(current_evals),
                n_iter != self.max_iter,
            );
            loss = l;
            current_evals += ls_func_evals;
            self.func_evals += ls_func_evals as u64;

            if n_iter == self.max_iter {
                break LbfgsStop::MaxIter;
            }
            if current_evals >= max_eval {
                break LbfgsStop::MaxEval;
            }
            if opt_cond {
                break LbfgsStop::GradientTolerance;
            }
            let t = self.t;
            if self.d.iter().fold(zero, |m, &d| {
                let a = (d * t).abs();
                if a > m { a } else { m }
            }) <= tol_change
            {
                break LbfgsStop::StepTolerance;
            }
            if (loss - prev_loss).abs() < tol_change {
                break LbfgsStop::LossTolerance;
            }
        };
        report.iterations = n_iter;
        report.evaluations = current_evals;
        report.loss = loss;
        report.stop = stop;
        report
    }

    /// Moves `params` along the direction `d` from the point where the loss is `loss` and the
    /// directional derivative `gtd`: by the line search, with at most `budget` evaluations, or by
    /// the fixed step `t`, evaluating the new point only if `evaluate` (another iteration may
    /// follow). Returns the new loss, the evaluations made and whether the new gradient (left in
    /// `flat_grad`) is within `tolerance_grad`.
    fn search_line(
        &mut self,
        params: &mut P,
        f: &mut impl FnMut(&P) -> (P::Elem, P),
        mut loss: P::Elem,
        gtd: P::Elem,
        budget: usize,
        evaluate: bool,
    ) -> (P::Elem, usize, bool) {
        type T<P> = <P as Params>::Elem;
        let (tol_grad, tol_change) = (self.tolerance_grad, self.tolerance_change);
        let mut ls_func_evals = 0;
        let mut opt_cond = false;
        match self.line_search {
            LineSearch::StrongWolfe => {
                flatten(params, &mut self.x_init);
                let (x_init, d) = (&self.x_init, &self.d);
                let mut obj = |t: T<P>, g_out: &mut [T<P>]| {
                    set_params(params, x_init, t, d);
                    let (l, g) = f(params);
                    flatten(&g, g_out);
                    l
                };
                let (l, t, evals) = self.wolfe.search(
                    &mut obj,
                    d,
                    self.t,
                    loss,
                    &self.flat_grad,
                    gtd,
                    tol_change,
                    budget,
                );
                loss = l;
                self.t = t;
                ls_func_evals = evals;
                self.flat_grad.copy_from_slice(self.wolfe.result());
                set_params(params, &self.x_init, self.t, &self.d);
                opt_cond = max_abs(&self.flat_grad) <= tol_grad;
            }
            LineSearch::FixedStep => {
                add_scaled(params, self.t, &self.d);
                // PyTorch evaluates the new point only if another iteration may follow.
                if evaluate {
                    let (l, g) = f(params);
                    loss = l;
                    flatten(&g, &mut self.flat_grad);
                    opt_cond = max_abs(&self.flat_grad) <= tol_grad;
                    ls_func_evals = 1;
                }
            }
        }
        (loss, ls_func_evals, opt_cond)
    }

    /// Stores the newest pair, `y = g - g_prev` and `s = t d`, if `y.s > 1e-10` (the curvature
    /// condition, which keeps the approximation positive definite), dropping the oldest pair of a
    /// full history.
    /// (The unwraps pop a full history, which holds `history_size >= 1` pairs.)
    fn push_pair(&mut self) {
        let zero = <P::Elem as Float>::ZERO;
        let one = <P::Elem as Float>::ONE;
        for ((y, &g), &gp) in self
            .y
            .iter_mut()
            .zip(&self.flat_grad)
            .zip(&self.prev_flat_grad)
        {
            *y = g - gp;
        }
        for (s, &d) in self.s.iter_mut().zip(&self.d) {
            *s = d * self.t;
        }
        let ys = dot(&self.y, &self.s);
        if ys > <P::Elem as Float>::from_f64(1e-10) {
            // Full: the oldest pair's buffers become the next scratch, so that a full
            // history allocates nothing.
            let (y_next, s_next) = if self.old_dirs.len() == self.history_size {
                self.ro.pop_front();
                (
                    self.old_dirs.pop_front().unwrap(),
                    self.old_stps.pop_front().unwrap(),
                )
            } else {
                (vec![zero; self.d.len()], vec![zero; self.d.len()])
            };
            self.h_diag = ys / dot(&self.y, &self.y);
            self.old_dirs
                .push_back(core::mem::replace(&mut self.y, y_next));
            self.old_stps
                .push_back(core::mem::replace(&mut self.s, s_next));
            self.ro.push_back(one / ys);
        }
    }

    /// The direction from the gradient and the history, in `d`, by the two-loop recursion:
    /// `q = -g`, then `r = H0 q`, then the corrections.
    fn two_loop(&mut self) {
        let zero = <P::Elem as Float>::ZERO;
        let num_old = self.old_dirs.len();
        self.al.resize(num_old, zero);
        for (d, &g) in self.d.iter_mut().zip(&self.flat_grad) {
            *d = -g;
        }
        for i in (0..num_old).rev() {
            self.al[i] = dot(&self.old_stps[i], &self.d) * self.ro[i];
            let a = -self.al[i];
            for (q, &y) in self.d.iter_mut().zip(&self.old_dirs[i]) {
                *q += a * y;
            }
        }
        for q in &mut self.d {
            *q *= self.h_diag;
        }
        for i in 0..num_old {
            let be_i = dot(&self.old_dirs[i], &self.d) * self.ro[i];
            let a = self.al[i] - be_i;
            for (r, &s) in self.d.iter_mut().zip(&self.old_stps[i]) {
                *r += a * s;
            }
        }
    }
}

/// Copies every element of `p`, tensor after tensor, into `out` (of length `p.numel()`).
fn flatten<P: Params>(p: &P, out: &mut [P::Elem]) {
    let mut k = 0;
    for i in 0..P::COUNT {
        let s = p.slice(i);
        out[k..k + s.len()].copy_from_slice(s);
        k += s.len();
    }
}

/// `p = x + t d`, elementwise over the flattened parameters: the bits `PyTorch`'s
/// `p.copy_(x); p.add_(d, alpha=t)` leaves.
fn set_params<P: Params>(p: &mut P, x: &[P::Elem], t: P::Elem, d: &[P::Elem]) {
    let mut k = 0;
    for i in 0..P::COUNT {
        for v in p.slice_mut(i) {
            *v = x[k] + t * d[k];
            k += 1;
        }
    }
}

/// `p += t d` over the flattened parameters.
fn add_scaled<P: Params>(p: &mut P, t: P::Elem, d: &[P::Elem]) {
    let mut k = 0;
    for i in 0..P::COUNT {
        for v in p.slice_mut(i) {
            *v += t * d[k];
            k += 1;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unreadable_literal)]
mod tests;
