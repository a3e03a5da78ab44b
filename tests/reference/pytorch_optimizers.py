"""PyTorch's RMSprop and Adagrad for a few steps in float64: the numbers that the tests of
autograd-core/src/optim/rmsprop.rs and adagrad.rs copy.

    python3 tests/reference/pytorch_optimizers.py

Every case starts from w = [1, -2, 0.5] and takes 5 steps with the gradient `2 w - c`,
`c = [0.5, -1, 0.25]` (a quadratic bowl, set by hand as `.grad` so that the Rust test computes the
same gradient with the same operations), and prints the parameters after each step as a Rust
array. `foreach=False`: the single-tensor loop, whose formulas the Rust ports follow.
"""
import torch

torch.set_default_dtype(torch.float64)

C = torch.tensor([0.5, -1.0, 0.25])
STEPS = 5


def run(name, make):
    w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = make([w])
    rows = []
    for _ in range(STEPS):
        with torch.no_grad():
            w.grad = 2 * w - C
        opt.step()
        rows.append("[" + ", ".join(repr(v) for v in w.detach().tolist()) + "]")
    print(f"const {name}: [[f64; 3]; {STEPS}] = [\n    " + ",\n    ".join(rows) + ",\n];")


run("RMSPROP", lambda p: torch.optim.RMSprop(p, lr=0.01, foreach=False))
run("RMSPROP_MOMENTUM", lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9, foreach=False))
run("RMSPROP_CENTERED", lambda p: torch.optim.RMSprop(p, lr=0.01, centered=True, foreach=False))
run(
    "RMSPROP_ALL",
    lambda p: torch.optim.RMSprop(
        p, lr=0.05, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5, centered=True,
        foreach=False,
    ),
)
run("ADAGRAD", lambda p: torch.optim.Adagrad(p, lr=0.1, foreach=False))
run(
    "ADAGRAD_ALL",
    lambda p: torch.optim.Adagrad(
        p, lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6,
        foreach=False,
    ),
)
