#!/usr/bin/env python3
"""PyTorch and JAX on the peer-comparison workloads, for a user who wants those numbers.

Never run by CI or the tests. The same three workloads as the Rust comparison
(`cargo run --release --manifest-path benchmarks/peers/Cargo.toml`):

    W1: batch 16,  4   -> 16  -> 3
    W2: batch 64,  64  -> 128 -> 10
    W3: batch 128, 784 -> 256 -> 10

f32; h = relu(x w1 + b1), z = h w2 + b2, loss = mean softmax cross-entropy over the batch; one
step = forward + gradients of w1, b1, w2, b2 (no optimizer update). Weights are He-scaled normals,
inputs standard normals and labels uniform, from a fixed NumPy seed (not bit-identical to the Rust
side's generator: the step time does not depend on the values). Both frameworks get the same
arrays, and their gradients are checked against each other (1e-4 relative) before timing.

Single-threaded CPU:
  * PyTorch: torch.set_num_threads(1), torch.set_num_interop_threads(1), autograd through
    F.cross_entropy (fused log-softmax + NLL), x without requires_grad.
  * JAX: jax.jit(jax.grad(loss, argnums=0)) on the CPU backend; XLA's intra-op pool is limited with
    XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1", set below before
    JAX is imported, and the whole process is pinned to one CPU (sched_setaffinity), since those
    flags alone still let XLA use a second core. The first call (tracing + compilation) is excluded from timing; every timed call
    waits for its result (block_until_ready).

Timing: warm-up, then interleaved samples of several steps each; the median time per step is
reported, with the interquartile range. The machine is usually shared: treat differences under ~20%
as ties.

Usage (from the repository root):

    python3 -m venv /tmp/bench-venv
    /tmp/bench-venv/bin/pip install numpy "jax[cpu]"
    /tmp/bench-venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
    /tmp/bench-venv/bin/python benchmarks/peers/python/bench.py [--quick] [--only torch|jax]

Writes the markdown table to benchmarks/results/python.md (python-quick.md with --quick) and prints
it. A framework that is not installed is skipped with a note.
"""

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

# Pin every thread pool to one thread before any framework is imported.
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# And the process to one CPU: the flags above do not stop XLA's runtime from using a second core
# (measured on 2 cores: W3 in 0.84 ms unpinned, 1.2-1.5 ms pinned, with user time above wall time
# only when unpinned). Threads started later inherit the mask.
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import numpy as np  # noqa: E402

WORKLOADS = [
    ("W1", 16, 4, 16, 3),
    ("W2", 64, 64, 128, 10),
    ("W3", 128, 784, 256, 10),
]
SEED = 1
REL_TOL = 1e-4
FLOOR = 1e-3  # as in the Rust side: elements 1000x below the largest are compared to its scale


def make_data(b, i, h, o):
    """The same arrays for every framework: He-scaled weights, small uniform biases, normal inputs."""
    rng = np.random.default_rng(SEED)
    w1 = (rng.standard_normal((i, h)) * np.sqrt(2.0 / i)).astype(np.float32)
    b1 = rng.uniform(-0.1, 0.1, h).astype(np.float32)
    w2 = (rng.standard_normal((h, o)) * np.sqrt(2.0 / h)).astype(np.float32)
    b2 = rng.uniform(-0.1, 0.1, o).astype(np.float32)
    x = rng.standard_normal((b, i)).astype(np.float32)
    labels = rng.integers(0, o, b).astype(np.int32)
    return (w1, b1, w2, b2), x, labels


def torch_system(params, x, labels):
    """Returns (step, grads): step() runs one gradient step, grads() the last gradients as NumPy."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # can only be set once per process
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    xt = torch.tensor(x)
    lt = torch.tensor(labels, dtype=torch.long)

    def step():
        for p in ps:
            p.grad = None
        w1, b1, w2, b2 = ps
        h = torch.relu(xt @ w1 + b1)
        loss = F.cross_entropy(h @ w2 + b2, lt)
        loss.backward()
        return loss

    def grads():
        return [p.grad.numpy().copy() for p in ps]

    return "PyTorch " + torch.__version__ + " (CPU, 1 thread)", step, grads


def jax_system(params, x, labels):
    import jax
    import jax.numpy as jnp

    def loss(ps, x, labels):
        w1, b1, w2, b2 = ps
        h = jax.nn.relu(x @ w1 + b1)
        logp = jax.nn.log_softmax(h @ w2 + b2)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    grad = jax.jit(jax.grad(loss))
    ps = tuple(jnp.asarray(p) for p in params)
    xj, lj = jnp.asarray(x), jnp.asarray(labels)
    last = [None]

    def step():
        g = grad(ps, xj, lj)
        jax.block_until_ready(g)
        last[0] = g
        return g

    def grads():
        return [np.asarray(g) for g in last[0]]

    step()  # trace and compile outside the timing
    return "JAX " + jax.__version__ + " (jit(grad), CPU)", step, grads


def rel_error(ours, theirs):
    scale = np.abs(ours).max() * FLOOR
    return float((np.abs(ours - theirs) / np.maximum(np.abs(ours), scale)).max())


def time_all(steps, quick):
    warm, sample, rounds_min, rounds_max, budget = (
        (0.05, 0.005, 5, 10, 0.5) if quick else (0.3, 0.005, 30, 400, 8.0)
    )
    iters = []
    for step in steps:
        start, n = time.perf_counter(), 0
        while time.perf_counter() - start < warm or n < 3:
            step()
            n += 1
        per = (time.perf_counter() - start) / n
        iters.append(max(1, int(sample / per)))
    samples = [[] for _ in steps]
    start, rounds = time.perf_counter(), 0
    while rounds < rounds_min or (rounds < rounds_max and time.perf_counter() - start < budget):
        for step, k, out in zip(steps, iters, samples):
            t = time.perf_counter()
            for _ in range(k):
                step()
            out.append((time.perf_counter() - t) / k)
        rounds += 1
    return [
        (statistics.median(s), np.quantile(s, 0.25), np.quantile(s, 0.75), len(s))
        for s in samples
    ]


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fmt(seconds):
    us = seconds * 1e6
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs" if us >= 10 else f"{us:.2f} µs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="short smoke run, numbers not worth quoting")
    ap.add_argument("--only", choices=["torch", "jax"], help="run one framework")
    args = ap.parse_args()

    makers = []
    for key, maker in (("torch", torch_system), ("jax", jax_system)):
        if args.only and args.only != key:
            continue
        try:
            __import__(key)
            makers.append(maker)
        except ImportError:
            print(f"{key} is not installed: skipped", file=sys.stderr)
    if not makers:
        sys.exit("neither torch nor jax is installed")

    rows = {}
    for name, b, i, h, o in WORKLOADS:
        params, x, labels = make_data(b, i, h, o)
        systems = [m(params, x, labels) for m in makers]
        for _, step, _ in systems:
            step()
        ref = systems[0][2]()
        for label, _, grads in systems[1:]:
            for pname, a, c in zip(("w1", "b1", "w2", "b2"), ref, grads()):
                e = rel_error(a, c)
                if not e <= REL_TOL:
                    sys.exit(f"{name}: {label} gradient of {pname} differs: {e:.1e}")
        timings = time_all([s[1] for s in systems], args.quick)
        for (label, _, _), t in zip(systems, timings):
            rows.setdefault(label, {})[name] = t
        print(f"{name} done", file=sys.stderr)

    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# PyTorch and JAX: time per gradient step", ""]
    if args.quick:
        out += ["**Quick smoke run (`--quick`): too few samples to quote.**", ""]
    out += [
        f"Measured {date} on {cpu_model()} "
        f"({os.cpu_count()} logical CPUs visible), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}. **The machine is shared and noisy**: read "
        "differences under ~20% as ties; brackets give the interquartile range. Same workloads "
        "as `benchmarks/results/peers.md`, one thread, median per step. Command: "
        "`python benchmarks/peers/python/bench.py`.",
        "",
        "| system | " + " | ".join(f"{n} (batch {b}, {i} -> {h} -> {o})" for n, b, i, h, o in WORKLOADS) + " |",
        "|---|" + "---:|" * len(WORKLOADS),
    ]
    for label, by in rows.items():
        cells = [f"{fmt(by[n][0])} [{fmt(by[n][1])} – {fmt(by[n][2])}]" for n, *_ in WORKLOADS]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    text = "\n".join(out) + "\n"
    print(text)
    root = os.path.dirname(os.path.abspath(__file__))
    results = os.path.join(root, "..", "..", "results")
    os.makedirs(results, exist_ok=True)
    path = os.path.join(results, "python-quick.md" if args.quick else "python.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.normpath(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
