//! Each op of the rule library applied to operands of fitting shapes (`apply1`, `apply2`).

use super::*;

impl Gen {
    /// Unary `op` applied to `e` of shape `s` (which fits it), with its result's shape.
    #[allow(clippy::too_many_lines, reason = "one arm per op")]
    pub(super) fn apply1(&mut self, op: &str, e: &str, s: &Shape) -> (String, Shape) {
        let same = |x: String| (x, s.clone());
        let removed = |k: usize| {
            let mut t = s.clone();
            t.remove(k);
            t
        };
        let kept = |k: usize| {
            let mut t = s.clone();
            t[k] = 1;
            t
        };
        match op {
            "neg" => same(format!("(-({e}))")),
            // Bounded arguments for the growing maps (and `tan`, off its poles), positive ones for
            // the logarithms.
            "exp" | "exp2" | "expm1" | "sinh" | "cosh" | "tan" => {
                same(format!("({e}).tanh().{op}()"))
            }
            "ln" | "log2" | "sqrt" | "recip" => same(format!("(({e}).square() + 1.0).{op}()")),
            "powf" => {
                if self.rng.chance(50) {
                    same(format!("({e}).tanh().powf(3.0)"))
                } else {
                    same(format!("(({e}).square() + 1.0).powf(-0.5)"))
                }
            }
            "powi" => same(format!("({e}).tanh().powi(3)")),
            // Inside each domain: the inverse sines and atanh inside (-1, 1), acosh above 1, log1p
            // above -1 (`atan` and `asinh` take any value).
            "asin" | "acos" | "atanh" => same(format!("(({e}).tanh() * 0.9).{op}()")),
            "acosh" => same(format!("(({e}).square() + 1.5).acosh()")),
            "log1p" => same(format!("({e}).square().log1p()")),
            // Piecewise constant: gradient 0, a jump met with probability about 1e-6 (as a kink).
            "floor" | "ceil" | "round" | "sign" => same(format!("(({e}) * 3.0).{op}()")),
            "clamp" => same(format!("({e}).clamp(-0.5, 0.5)")),
            "gelu" | "gelu_tanh" | "gelu_erf" | "erf" | "erfc" => {
                same(format!("(({e}) * 1.5).{op}()"))
            }
            // A fixed seed fixes the mask, so the function stays smooth for finite differences.
            "dropout" => {
                let seed = self.rng.below(1000);
                same(format!("({e}).dropout(0.25, {seed})"))
            }
            "relu" => same(format!("(({e}) + 0.25).relu()")),
            "maximum_scalar" => same(format!("({e}).maximum_scalar(0.1)")),
            "minimum_scalar" => same(format!("({e}).minimum_scalar(-0.1)")),
            "cast" => same(format!("({e}).cast::<f64>()")),
            "sum" | "mean" | "max" | "min" | "var" | "logsumexp" | "norm" => {
                (format!("({e}).{op}()"), Vec::new())
            }
            "sum_axis" | "mean_axis" | "max_axis" | "min_axis" | "var_axis" | "logsumexp_axis"
            | "norm_axis" => {
                let k = self.axis(s, op == "var_axis" || op == "norm_axis");
                (format!("({e}).{op}::<{k}>()"), removed(k))
            }
            "sum_keepdim" | "mean_keepdim" | "max_keepdim" | "min_keepdim" | "var_keepdim"
            | "logsumexp_keepdim" | "norm_keepdim" => {
                let k = self.axis(s, op == "var_keepdim" || op == "norm_keepdim");
                (format!("({e}).{op}::<{k}>()"), kept(k))
            }
            "softmax" | "log_softmax" => {
                // Times a constant: the plain sum of a softmax is 1 whatever its input.
                let k = self.axis(s, true);
                let c = self.constant(s);
                same(format!("(({e}).{op}::<{k}>() * &{c})"))
            }
            "transpose" => {
                let (a, b) = *self.rng.pick(&[(0, 1), (0, 2), (1, 2)]);
                let mut t = s.clone();
                t.swap(a, b);
                (format!("({e}).transpose::<{a}, {b}>()"), t)
            }
            "t" => (format!("({e}).t()"), vec![s[1], s[0]]),
            "permute" => {
                let p: Vec<usize> = if s.len() == 2 {
                    vec![1, 0]
                } else {
                    self.rng
                        .pick(&[[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
                        .to_vec()
                };
                let t = p.iter().map(|&k| s[k]).collect();
                let p: Vec<String> = p.iter().map(ToString::to_string).collect();
                (format!("({e}).permute::<{}>()", p.join(", ")), t)
            }
            "flip" => {
                let k = self.axis(s, false);
                same(format!("({e}).flip::<{k}>()"))
            }
            "slice" => {
                let ok: Vec<usize> = (0..s.len()).filter(|&k| s[k] > 2).collect();
                let k = *self.rng.pick(&ok);
                let len = 2 + self.rng.below(s[k] - 2);
                let start = self.rng.below(s[k] - len + 1);
                let mut t = s.clone();
                t[k] = len;
                (format!("({e}).slice::<{k}, {start}, {len}>()"), t)
            }
            "pad" => {
                let k = self.axis(s, false);
                let (before, after) = *self.rng.pick(&[(1, 0), (0, 1), (1, 1), (2, 1)]);
                let mut t = s.clone();
                t[k] += before + after;
                let new = t[k];
                (format!("({e}).pad::<{k}, {before}, {after}, {new}>()"), t)
            }
            "gather" => {
                let k = self.axis(s, false);
                // 2 to 4 indices (one would be a fixed `D<1>`).
                let n = 2 + self.rng.below(3);
                let idx: Vec<String> = (0..n).map(|_| self.rng.below(s[k]).to_string()).collect();
                let mut t = s.clone();
                t[k] = n;
                (
                    format!("({e}).gather::<{k}, {n}>(&[{}])", idx.join(", ")),
                    t,
                )
            }
            "reshape" => {
                let n = numel(s);
                let t = if s.len() >= 2 {
                    vec![n]
                } else if n.is_multiple_of(2) && n > 2 {
                    vec![2, n / 2]
                } else {
                    vec![n, 1]
                };
                (format!("({e}).reshape::<Shape![{}]>()", dims(&t)), t)
            }
            "broadcast_to" => {
                let mut t = vec![2];
                t.extend(s);
                (format!("({e}).broadcast_to::<Shape![{}]>()", dims(&t)), t)
            }
            // The pools take (B, C, H, W) or (B, C, L): a reshape to one of those (size-1 batch
            // and channel axes, `One`), the pool, and a reshape back to rank 2.
            "max_pool2d" | "avg_pool2d" => {
                let (k, stride) = (2, 1 + self.rng.below(2));
                let t = vec![(s[0] - k) / stride + 1, (s[1] - k) / stride + 1];
                let (ho, wo) = (t[0], t[1]);
                (
                    format!(
                        "({e}).reshape::<Shape![1, 1, {}]>().{op}::<{k}, {stride}, {ho}, {wo}>().reshape::<Shape![{}]>()",
                        dims(s),
                        dims(&t)
                    ),
                    t,
                )
            }
            "max_pool1d" | "avg_pool1d" => {
                let (k, stride) = (2, 1 + self.rng.below(2));
                let t = vec![s[0], (s[1] - k) / stride + 1];
                let lo = t[1];
                (
                    format!(
                        "({e}).reshape::<Shape![1, {}]>().{op}::<{k}, {stride}, {lo}>().reshape::<Shape![{}]>()",
                        dims(s),
                        dims(&t)
                    ),
                    t,
                )
            }
            "global_avg_pool2d" | "global_avg_pool1d" => {
                // (1, s0, ..) to (1, s0).
                (
                    format!("({e}).reshape::<Shape![1, {}]>().{op}()", dims(s)),
                    vec![1, s[0]],
                )
            }
            "layer_norm" | "batch_norm" => {
                // Times a constant: a normalized line sums to 0 whatever its input.
                let c = self.constant(s);
                same(format!("(({e}).{op}(1e-5) * &{c})"))
            }
            "det" | "log_abs_det" => {
                let a = self.well_conditioned(e, s);
                (format!("({a}).{op}()"), s[..s.len() - 2].to_vec())
            }
            "inv" => {
                let a = self.well_conditioned(e, s);
                same(format!("({a}).inv()"))
            }
            "cholesky" => {
                // Symmetrized, so that the function reads every entry as the symmetric gradient
                // assumes (the factor reads the lower triangle only); positive definite as the
                // perturbation of the identity is small.
                let a = self.well_conditioned(e, s);
                let t = if s.len() == 2 {
                    format!("({a}).t()")
                } else {
                    format!("({a}).transpose::<1, 2>()")
                };
                same(format!("((({a}) + &{t}) * 0.5).cholesky()"))
            }
            "eigvalsh" | "eigvecsh" => {
                // diag(1, .., n) moved by at most 0.1 n in spectral norm (below 1/2 for the
                // corpus's sizes): eigenvalues at least 0.2 apart (the eigenvector gradient divides
                // by the gaps), and each eigenvector near a unit vector, so that its sign (its
                // largest component made positive) does not flip under finite differences.
                let k = self.spread(s);
                let a = format!("(({e}).tanh() * 0.1 + &{k})");
                if op == "eigvalsh" {
                    (format!("({a}).eigvalsh()"), s[..s.len() - 1].to_vec())
                } else {
                    same(format!("({a}).eigvecsh()"))
                }
            }
            "cross_entropy" => {
                let labels: Vec<String> = (0..s[0])
                    .map(|_| format!("{}usize", self.rng.below(s[1])))
                    .collect();
                (
                    format!("({e}).cross_entropy(&[{}])", labels.join(", ")),
                    Vec::new(),
                )
            }
            _ => same(format!("({e}).{op}()")),
        }
    }

    /// Binary `op` on a first operand of shape `sa` and a second of shape `sb`: the expression if
    /// the shapes fit.
    pub(super) fn apply2(
        op: &str,
        (a, sa): (&str, &Shape),
        (b, sb): (&str, &Shape),
    ) -> Option<(String, Shape)> {
        let b_ref = reference(b);
        match op {
            "add" | "sub" | "mul" => {
                let sym = match op {
                    "add" => "+",
                    "sub" => "-",
                    _ => "*",
                };
                Some((format!("(({a}) {sym} ({b}))"), broadcast(sa, sb)?))
            }
            "div" => Some((
                format!("(({a}) / (({b}).square() + 1.0))"),
                broadcast(sa, sb)?,
            )),
            "pow" => Some((
                format!("(({a}).square() + 1.0).pow(&({b}).tanh())"),
                broadcast(sa, sb)?,
            )),
            "maximum" | "minimum" => Some((format!("({a}).{op}({b_ref})"), broadcast(sa, sb)?)),
            "mse" => (sa == sb).then(|| (format!("({a}).mse({b_ref})"), Vec::new())),
            // Away from the origin, where atan2 jumps and hypot has a cone's tip.
            "atan2" | "hypot" => Some((
                format!("({a}).{op}(&(({b}).square() + 0.5))"),
                broadcast(sa, sb)?,
            )),
            // The first operand made well conditioned by the caller (`op_stmt`; a factor for
            // `cholesky_solve`, whose lower triangle is read); the second a vector (N) or columns
            // (N, K) per system.
            "solve" | "cholesky_solve" => (is_square(sa)
                && sb.len() + 1 >= sa.len()
                && sb.len() <= sa.len()
                && sb[..sa.len() - 1] == sa[..sa.len() - 1])
                .then(|| (format!("({a}).{op}({b_ref})"), sb.clone())),
            "matmul" => {
                if sa.len() != 2 || sb.len() != 2 {
                    None
                } else if sb[0] == sa[1] {
                    Some((format!("({a}).matmul({b_ref})"), vec![sa[0], sb[1]]))
                } else if sb[1] == sa[1] {
                    Some((format!("({a}).matmul(&({b}).t())"), vec![sa[0], sb[0]]))
                } else {
                    None
                }
            }
            "concat" => {
                if sa.len() != sb.len() || sa.is_empty() {
                    return None;
                }
                let k = (0..sa.len()).find(|&k| (0..sa.len()).all(|j| j == k || sa[j] == sb[j]))?;
                let mut t = sa.clone();
                t[k] += sb[k];
                (t[k] <= 6).then(|| {
                    (
                        format!("({a}).concat::<{k}, {}, _>({b_ref})", t[k]),
                        t.clone(),
                    )
                })
            }
            "conv1d" => {
                // One channel: the first operand as a signal, the second as the taps.
                let (n, k) = (numel(sa), numel(sb));
                let p = conv_padding(&[(n, k)])?;
                let lo = n + 2 * p - k + 1;
                Some((
                    format!(
                        "({a}).reshape::<Shape![1, 1, {n}]>().conv1d::<1, {p}, 1, 1, {lo}>(&({b}).reshape::<Shape![1, 1, {k}]>()).reshape::<Shape![{lo}]>()"
                    ),
                    vec![lo],
                ))
            }
            "conv2d" => {
                // One channel: each operand as a matrix (its last axis the columns).
                let (h, w) = as_matrix(sa);
                let (kh, kw) = as_matrix(sb);
                let p = conv_padding(&[(h, kh), (w, kw)])?;
                let (ho, wo) = (h + 2 * p - kh + 1, w + 2 * p - kw + 1);
                Some((
                    format!(
                        "({a}).reshape::<Shape![1, 1, {h}, {w}]>().conv2d::<1, {p}, 1, 1, {ho}, {wo}>(&({b}).reshape::<Shape![1, 1, {kh}, {kw}]>()).reshape::<Shape![{ho}, {wo}]>()"
                    ),
                    vec![ho, wo],
                ))
            }
            "conv_transpose2d" => {
                // One channel, stride 1, no padding: each input element stamps the kernel.
                let (h, w) = as_matrix(sa);
                let (kh, kw) = as_matrix(sb);
                let (ho, wo) = (h + kh - 1, w + kw - 1);
                (ho * wo <= 30).then(|| {
                    (
                        format!(
                            "({a}).reshape::<Shape![1, 1, {h}, {w}]>().conv_transpose2d::<1, 0, 1, {ho}, {wo}>(&({b}).reshape::<Shape![1, 1, {kh}, {kw}]>()).reshape::<Shape![{ho}, {wo}]>()"
                        ),
                        vec![ho, wo],
                    )
                })
            }
            _ => None,
        }
    }
}
