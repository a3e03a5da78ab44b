"""torch.optim.LBFGS in float64 on three full-batch problems: the numbers that the tests of
autograd-core/src/optim/lbfgs.rs copy.

    python3 tests/reference/pytorch_lbfgs.py

Each case calls `step(closure)` a few times and prints, for every call, the iterations and the
function evaluations it made (the differences of LBFGS's `n_iter` and `func_evals` state), the
loss at the parameters it left (evaluated once more outside the optimizer) and those parameters,
as Rust constants. The problems:

- ROSENBROCK: `(1 - x)^2 + 100 (y - x^2)^2` from (-1.5, 2), defaults, `strong_wolfe`.
- ROSENBROCK_10: `sum_i 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2` over 10 coordinates from
  (-1.2, 1, -1.2, 1, ...), defaults, `strong_wolfe`.
- LOGISTIC: the mean logistic loss of 40 points with 3 features, plus `0.005 |w|^2`, over the
  weights `w` (3) and the bias `b`, from zero, defaults, `strong_wolfe`. The data are
  `x[k][j] = 2 sin(0.7 k + 1.3 j + 0.5)` and the label `y[k] = 1` when
  `sin(1.1 k) + x[k][0] - 0.5 x[k][1] > 0`, else 0 (not separable, so the minimum is finite), made
  with Python's `math.sin` (the C library's `sin`, which Rust's `f64::sin` calls too).
- LOGISTIC_FIXED: the same without a line search (`lr` 1, `max_iter` 5).
- ROSENBROCK_FIXED: Rosenbrock without a line search, `lr` 0.01, `max_iter` 10.
"""
import math

import torch

torch.set_default_dtype(torch.float64)


def rosenbrock(p):
    x = p[0]
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


N, F = 40, 3
X = torch.tensor([[2 * math.sin(0.7 * k + 1.3 * j + 0.5) for j in range(F)] for k in range(N)])
Y = torch.tensor(
    [1.0 if math.sin(1.1 * k) + X[k, 0].item() - 0.5 * X[k, 1].item() > 0 else 0.0 for k in range(N)]
)
LAMBDA = 0.01


def logistic(p):
    w, b = p
    z = X @ w + b
    # softplus(z) - y z. Not `clamp(z, min=0) + log1p(exp(-|z|))`: autograd differentiates
    # that at z = 0 (every point at the start, w = b = 0) as 0 - y, where the derivative is 0.5 - y.
    loss = (torch.nn.functional.softplus(z) - Y * z).mean()
    return loss + 0.5 * LAMBDA * (w * w).sum()


def run(name, loss_fn, start, calls, **options):
    params = [torch.tensor(v, requires_grad=True) for v in start]
    opt = torch.optim.LBFGS(params, **options)

    def closure():
        opt.zero_grad()
        loss = loss_fn(params)
        loss.backward()
        return loss

    iters, evals, losses, values = [], [], [], []
    for _ in range(calls):
        state = opt.state[params[0]]
        n0, e0 = state.get("n_iter", 0), state.get("func_evals", 0)
        opt.step(closure)
        state = opt.state[params[0]]
        iters.append(state["n_iter"] - n0)
        evals.append(state["func_evals"] - e0)
        with torch.no_grad():
            losses.append(loss_fn(params).item())
        values.append([v for p in params for v in p.detach().reshape(-1).tolist()])
    n = len(values[0])
    print(f"// {name}: {options}")
    print(f"const {name}_ITERS: [usize; {calls}] = {iters};")
    print(f"const {name}_EVALS: [usize; {calls}] = {evals};")
    print(f"const {name}_LOSS: [f64; {calls}] = [{', '.join(repr(v) for v in losses)}];")
    rows = ",\n    ".join("[" + ", ".join(repr(v) for v in row) + "]" for row in values)
    print(f"const {name}_PARAMS: [[f64; {n}]; {calls}] = [\n    {rows},\n];")


run("ROSENBROCK", rosenbrock, [[-1.5, 2.0]], 4, line_search_fn="strong_wolfe")
run(
    "ROSENBROCK_10",
    rosenbrock,
    [[-1.2 if i % 2 == 0 else 1.0 for i in range(10)]],
    4,
    line_search_fn="strong_wolfe",
)
run("LOGISTIC", logistic, [[0.0] * F, 0.0], 2, line_search_fn="strong_wolfe")
run("LOGISTIC_FIXED", logistic, [[0.0] * F, 0.0], 3, max_iter=5)
run("ROSENBROCK_FIXED", rosenbrock, [[-1.5, 2.0]], 2, lr=0.01, max_iter=10)
