"""PyTorch's torch.linalg.det, inv, solve, slogdet, cholesky, eigh, vector_norm and
torch.cholesky_solve on fixed matrices, in float64: the numbers that the tests of
autograd-core/src/ops/{det,inv,solve,log_abs_det,cholesky,cholesky_solve,eigh,norm}.rs copy.

    python3 tests/reference/pytorch_linalg.py > /tmp/reference.txt

Every other input is built from `fill(seed, n)[k] = 0.5 * sin(0.37 k + seed)`, which the Rust tests
compute the same way, so that no input needs copying: a matrix is `fill(seed, ..) + 2 I` (each
row's off-diagonal entries sum to at most 1 < 2 - 0.5, so it is diagonally dominant and well
conditioned), a right-hand side is `fill(seed, ..)`. Each case prints the output and the gradient
of `sum(out * c)` (`c = fill(99, ..)` of the output's shape, so the gradient is the VJP with
cotangent `c`) with respect to every input, as Rust arrays, row-major.
"""
import math

import torch

torch.set_default_dtype(torch.float64)


def fill(seed, *shape):
    n = math.prod(shape)
    return torch.tensor([0.5 * math.sin(0.37 * k + seed) for k in range(n)]).reshape(shape)


def matrix(seed, *shape):
    n = shape[-1]
    return fill(seed, *shape) + 2.0 * torch.eye(n)


def show(name, t):
    # repr: the shortest decimal that reads back as the same double.
    flat = ", ".join(repr(v) for v in t.detach().flatten().tolist())
    print(f"const {name}: [f64; {t.numel()}] = [{flat}];")


def unary(name, f, a_shape, seed, a=None):
    a = (matrix(seed, *a_shape) if a is None else a).requires_grad_()
    out = f(a)
    c = fill(99, *out.shape)
    (out * c).sum().backward()
    show(f"{name}_OUT", out)
    show(f"{name}_GRAD", a.grad)


def solve(name, a_shape, b_shape, seed):
    a = matrix(seed, *a_shape).requires_grad_()
    b = fill(seed + 10, *b_shape).requires_grad_()
    out = torch.linalg.solve(a, b)
    c = fill(99, *out.shape)
    (out * c).sum().backward()
    show(f"{name}_OUT", out)
    show(f"{name}_GRAD_A", a.grad)
    show(f"{name}_GRAD_B", b.grad)


print(f"// torch {torch.__version__}")
unary("DET_3", torch.linalg.det, (3, 3), 1)
unary("DET_2_3", torch.linalg.det, (2, 3, 3), 2)
# A singular matrix of rank 2: the gradient of det is the cofactor matrix. PyTorch's first-order
# backward returns 0 there (it solves with a perturbed LU against det(A) = 0); with
# create_graph=True it takes the SVD path, which gives the cofactors up to rounding.
singular = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 7.0]], requires_grad=True)
(g,) = torch.autograd.grad(torch.linalg.det(singular), singular, create_graph=True)
show("DET_SINGULAR_GRAD", g)
unary("INV_3", torch.linalg.inv, (3, 3), 1)
unary("INV_2_3", torch.linalg.inv, (2, 3, 3), 2)
solve("SOLVE_3_VEC", (3, 3), (3,), 1)
solve("SOLVE_3_MAT", (3, 3), (3, 2), 1)
solve("SOLVE_2_3_VEC", (2, 3, 3), (2, 3), 2)
solve("SOLVE_2_3_MAT", (2, 3, 3), (2, 3, 2), 2)

# slogdet's log|det|; the pivoted matrix needs row exchanges and has a negative determinant.
def log_abs_det(a):
    return torch.linalg.slogdet(a).logabsdet


PIVOTED = torch.tensor([[0.2, 0.3, 2.1], [0.1, 1.9, -0.4], [2.2, -0.3, 0.25]])
unary("LOG_ABS_DET_3", log_abs_det, (3, 3), 1)
unary("LOG_ABS_DET_2_3", log_abs_det, (2, 3, 3), 2)
unary("LOG_ABS_DET_PIVOTED", log_abs_det, (3, 3), None, a=PIVOTED.clone())

# Cholesky of sym(fill(seed)) + 2 I (symmetric, diagonally dominant: positive definite). PyTorch
# reads the lower triangle and returns the symmetric gradient.
def spd(seed, *shape):
    s = fill(seed, *shape)
    return 0.5 * (s + s.mT) + 2.0 * torch.eye(shape[-1])


unary("CHOLESKY_3", torch.linalg.cholesky, (3, 3), None, a=spd(1, 3, 3))
unary("CHOLESKY_2_3", torch.linalg.cholesky, (2, 3, 3), None, a=spd(2, 2, 3, 3))


# cholesky_solve(B, L) with L the factor of spd(seed): X = (L L^T)^{-1} B. The factor has no upper
# triangle, so the gradient with respect to L is printed on its lower triangle (PyTorch's is the
# full -(G X^T + X G^T) L, whose upper part no entry of a factor receives).
def cholesky_solve(name, a_shape, b_shape, seed):
    l = torch.linalg.cholesky(spd(seed, *a_shape)).detach().requires_grad_()
    b = fill(seed + 10, *b_shape).requires_grad_()
    vector = len(b_shape) < len(a_shape)
    out = torch.cholesky_solve(b.unsqueeze(-1) if vector else b, l)
    out = out.squeeze(-1) if vector else out
    c = fill(99, *out.shape)
    (out * c).sum().backward()
    show(f"{name}_OUT", out)
    show(f"{name}_GRAD_L", l.grad.tril())
    show(f"{name}_GRAD_B", b.grad)


cholesky_solve("CHOLESKY_SOLVE_3_VEC", (3, 3), (3,), 1)
cholesky_solve("CHOLESKY_SOLVE_3_MAT", (3, 3), (3, 2), 1)
cholesky_solve("CHOLESKY_SOLVE_2_3_MAT", (2, 3, 3), (2, 3, 2), 2)


# eigh of spd(seed) (symmetric, distinct eigenvalues), read symmetrized as (A + A^T) / 2 as our
# forward does (torch reads the lower triangle; symmetrizing first makes its gradient the symmetric
# one), each eigenvector's sign fixed so that its largest-magnitude component is positive (the
# first such; torch leaves the sign to LAPACK). The sign is a constant factor of the gradient.
def sym(a):
    return 0.5 * (a + a.mT)


def eigvalsh(a):
    return torch.linalg.eigvalsh(sym(a))


def eigvecsh(a):
    v = torch.linalg.eigh(sym(a)).eigenvectors
    big = v.abs().argmax(dim=-2, keepdim=True)
    return v * torch.sign(v.gather(-2, big)).detach()


unary("EIGVALSH_3", eigvalsh, (3, 3), None, a=spd(1, 3, 3))
unary("EIGVECSH_3", eigvecsh, (3, 3), None, a=spd(1, 3, 3))
unary("EIGVALSH_4", eigvalsh, (4, 4), None, a=spd(3, 4, 4))
unary("EIGVECSH_4", eigvecsh, (4, 4), None, a=spd(3, 4, 4))
unary("EIGVECSH_2_3", eigvecsh, (2, 3, 3), None, a=spd(2, 2, 3, 3))
# Not symmetric: the forward reads its symmetric part.
unary("EIGVECSH_4_ASYM", eigvecsh, (4, 4), None, a=fill(4, 4, 4))

# The 2-norm of all elements and along an axis; at x = 0 the gradient is 0.
unary("NORM_3_4", torch.linalg.vector_norm, (3, 4), None, a=fill(5, 3, 4))
unary("NORM_AXIS1_3_4", lambda x: torch.linalg.vector_norm(x, dim=1), (3, 4), None, a=fill(5, 3, 4))
zero = torch.zeros(3, requires_grad=True)
torch.linalg.vector_norm(zero).backward()
show("NORM_ZERO_GRAD", zero.grad)
