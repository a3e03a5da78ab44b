//! `PyTorch`'s strong Wolfe line search (`_strong_wolfe`, `_cubic_interpolate`) and the vector
//! helpers of [`Lbfgs`](super::Lbfgs).

use crate::scalar::Float;

pub(super) fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    a.iter().zip(b).fold(T::ZERO, |s, (&a, &b)| s + a * b)
}

/// The largest magnitude, or NaN if there is one (`PyTorch`'s `abs().max()`, so that a NaN
/// gradient meets no tolerance).
pub(super) fn max_abs<T: Float>(a: &[T]) -> T {
    let mut m = T::ZERO;
    for &v in a {
        let v = v.abs();
        if v.partial_cmp(&m).is_none() {
            return v;
        }
        if v > m {
            m = v;
        }
    }
    m
}

/// Python's `max(a, b)`: `a` unless `b` is larger.
fn py_max<T: Float>(a: T, b: T) -> T {
    if b > a { b } else { a }
}

/// Python's `min(a, b)`: `a` unless `b` is smaller.
fn py_min<T: Float>(a: T, b: T) -> T {
    if b < a { b } else { a }
}

/// `PyTorch`'s `_cubic_interpolate`: the minimizer of the cubic through `(x1, f1)` and
/// `(x2, f2)` with slopes `g1` and `g2`, clamped to `bounds` (by default the interval between
/// the points); their midpoint if the cubic has no minimum.
fn cubic_interpolate<T: Float>(
    (x1, f1, g1): (T, T, T),
    (x2, f2, g2): (T, T, T),
    bounds: Option<(T, T)>,
) -> T {
    let (xmin, xmax) = bounds.unwrap_or(if x1 <= x2 { (x1, x2) } else { (x2, x1) });
    let two = T::from_f64(2.0);
    let d1 = g1 + g2 - T::from_f64(3.0) * (f1 - f2) / (x1 - x2);
    let d2_square = d1 * d1 - g1 * g2;
    if d2_square >= T::ZERO {
        let d2 = d2_square.sqrt();
        let min_pos = if x1 <= x2 {
            x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + two * d2))
        } else {
            x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + two * d2))
        };
        py_min(py_max(min_pos, xmin), xmax)
    } else {
        (xmin + xmax) / two
    }
}

/// `PyTorch`'s `_strong_wolfe`, with its gradients in buffers kept between searches.
#[derive(Clone, Debug)]
pub(super) struct Wolfe<T> {
    g_prev: Vec<T>,
    /// The gradient at the last trial; after a search, at the point it chose.
    g_new: Vec<T>,
    bracket_g: [Vec<T>; 2],
}

impl<T: Float> Wolfe<T> {
    pub(super) fn new(n: usize) -> Self {
        Self {
            g_prev: vec![T::ZERO; n],
            g_new: vec![T::ZERO; n],
            bracket_g: [vec![T::ZERO; n], vec![T::ZERO; n]],
        }
    }

    /// The gradient at the point the last search chose.
    pub(super) fn result(&self) -> &[T] {
        &self.g_new
    }

    /// Searches along `d` from the point where the loss is `f`, the gradient `g` and the
    /// directional derivative `gtd`, trying `t` first and evaluating at most `max_ls` more
    /// times; `obj(t, g_out)` evaluates at `x + t d`. Returns the loss and the step it chose and
    /// the number of evaluations; the gradient there is [`result`](Self::result).
    ///
    /// Line by line `PyTorch`'s: the same tests in the same order, so that the same inputs take
    /// the same branches.
    #[allow(
        clippy::too_many_arguments,
        reason = "PyTorch's signature, argument for argument"
    )]
    #[allow(
        clippy::too_many_lines,
        reason = "PyTorch's `_strong_wolfe` line by line, one function there: kept whole so that \
                  the two read side by side (the bracketing hands the zoom its bracket and state)"
    )]
    pub(super) fn search(
        &mut self,
        obj: &mut impl FnMut(T, &mut [T]) -> T,
        d: &[T],
        mut t: T,
        f: T,
        g: &[T],
        gtd: T,
        tolerance_change: T,
        max_ls: usize,
    ) -> (T, T, usize) {
        let zero = T::ZERO;
        let (c1, c2) = (T::from_f64(1e-4), T::from_f64(0.9));
        let d_norm = max_abs(d);
        let mut f_new = obj(t, &mut self.g_new);
        let mut ls_func_evals = 1;
        let mut gtd_new = dot(&self.g_new, d);

        // Bracket an interval containing a point that satisfies the Wolfe conditions.
        let (mut t_prev, mut f_prev, mut gtd_prev) = (zero, f, gtd);
        self.g_prev.copy_from_slice(g);
        let mut done = false;
        let mut ls_iter = 0;
        let mut bracket = [zero; 2];
        let mut bracket_f = [zero; 2];
        let mut bracket_gtd = [zero; 2];
        // A bracket of one point (`done` at once) or two.
        let mut one_point = false;
        while ls_iter < max_ls {
            if f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev) {
                bracket = [t_prev, t];
                bracket_f = [f_prev, f_new];
                bracket_gtd = [gtd_prev, gtd_new];
                self.bracket_g[0].copy_from_slice(&self.g_prev);
                self.bracket_g[1].copy_from_slice(&self.g_new);
                break;
            }
            if gtd_new.abs() <= -c2 * gtd {
                bracket[0] = t;
                bracket_f[0] = f_new;
                self.bracket_g[0].copy_from_slice(&self.g_new);
                one_point = true;
                done = true;
                break;
            }
            if gtd_new >= zero {
                bracket = [t_prev, t];
                bracket_f = [f_prev, f_new];
                bracket_gtd = [gtd_prev, gtd_new];
                self.bracket_g[0].copy_from_slice(&self.g_prev);
                self.bracket_g[1].copy_from_slice(&self.g_new);
                break;
            }
            // Extrapolate, between 1.01 and 10 times the current step.
            let min_step = t + T::from_f64(0.01) * (t - t_prev);
            let max_step = t * T::from_f64(10.0);
            let tmp = t;
            t = cubic_interpolate(
                (t_prev, f_prev, gtd_prev),
                (t, f_new, gtd_new),
                Some((min_step, max_step)),
            );
            t_prev = tmp;
            f_prev = f_new;
            self.g_prev.copy_from_slice(&self.g_new);
            gtd_prev = gtd_new;
            f_new = obj(t, &mut self.g_new);
            ls_func_evals += 1;
            gtd_new = dot(&self.g_new, d);
            ls_iter += 1;
        }
        if ls_iter == max_ls {
            // Out of evaluations: the bracket is [0, t]. Its slopes stay unset, as in PyTorch,
            // where nothing reads them: the zoom below needs `ls_iter < max_ls`.
            bracket = [zero, t];
            bracket_f = [f, f_new];
            self.bracket_g[0].copy_from_slice(g);
            self.bracket_g[1].copy_from_slice(&self.g_new);
            one_point = false;
        }

        // Zoom: shrink the bracket until a point satisfies the conditions.
        let mut insuf_progress = false;
        let last = usize::from(!one_point);
        let (mut low, mut high) = if bracket_f[0] <= bracket_f[last] {
            (0, 1)
        } else {
            (1, 0)
        };
        while !done && ls_iter < max_ls {
            if (bracket[1] - bracket[0]).abs() * d_norm < tolerance_change {
                break;
            }
            t = cubic_interpolate(
                (bracket[0], bracket_f[0], bracket_gtd[0]),
                (bracket[1], bracket_f[1], bracket_gtd[1]),
                None,
            );
            // Too close to an end of the bracket twice in a row, or outside it: move to 10% of
            // its length inside.
            let (hi, lo) = (
                py_max(bracket[0], bracket[1]),
                py_min(bracket[0], bracket[1]),
            );
            let eps = T::from_f64(0.1) * (hi - lo);
            if py_min(hi - t, t - lo) < eps {
                if insuf_progress || t >= hi || t <= lo {
                    t = if (t - hi).abs() < (t - lo).abs() {
                        hi - eps
                    } else {
                        lo + eps
                    };
                    insuf_progress = false;
                } else {
                    insuf_progress = true;
                }
            } else {
                insuf_progress = false;
            }

            f_new = obj(t, &mut self.g_new);
            ls_func_evals += 1;
            gtd_new = dot(&self.g_new, d);
            ls_iter += 1;

            if f_new > f + c1 * t * gtd || f_new >= bracket_f[low] {
                // Not enough decrease, or not below the lowest point: the new high end.
                bracket[high] = t;
                bracket_f[high] = f_new;
                self.bracket_g[high].copy_from_slice(&self.g_new);
                bracket_gtd[high] = gtd_new;
                (low, high) = if bracket_f[0] <= bracket_f[1] {
                    (0, 1)
                } else {
                    (1, 0)
                };
            } else {
                if gtd_new.abs() <= -c2 * gtd {
                    done = true;
                } else if gtd_new * (bracket[high] - bracket[low]) >= zero {
                    // The old low end becomes the high end.
                    bracket[high] = bracket[low];
                    bracket_f[high] = bracket_f[low];
                    let [a, b] = &mut self.bracket_g;
                    if high == 0 {
                        a.copy_from_slice(b);
                    } else {
                        b.copy_from_slice(a);
                    }
                    bracket_gtd[high] = bracket_gtd[low];
                }
                // The new point becomes the low end.
                bracket[low] = t;
                bracket_f[low] = f_new;
                self.bracket_g[low].copy_from_slice(&self.g_new);
                bracket_gtd[low] = gtd_new;
            }
        }

        let t = bracket[low];
        let f_new = bracket_f[low];
        let [a, b] = &self.bracket_g;
        self.g_new.copy_from_slice(if low == 0 { a } else { b });
        (f_new, t, ls_func_evals)
    }
}
