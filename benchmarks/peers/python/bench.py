#!/usr/bin/env python3
"""PyTorch and JAX on the peer-comparison workloads, for a user who wants those numbers.

Never run by CI or the tests. The same five workloads as the Rust comparison
(`cargo run --release --manifest-path benchmarks/peers/Cargo.toml`):

    W1:  batch 16,  4   -> 16  -> 3
    W2:  batch 64,  64  -> 128 -> 10
    W3:  batch 128, 784 -> 256 -> 10
    CNN: batch 32, 1 x 8 x 8 -> conv 3x3 16 -> conv 3x3 32 -> global average pool -> 10
    W4:  one pre-norm transformer block, batch 8, sequence 16, width 64, 4 heads, GELU MLP 256
         (no mask, no dropout); its 8 x 16 outputs read as 64 class scores each

f32; W1-W3: h = relu(x w1 + b1), z = h w2 + b2; CNN: h1 = relu(conv(x, k1) + c1),
h2 = relu(conv(h1, k2) + c2) (both 3x3, stride 1, padding 1, NCHW), z = mean over height and width
of h2, then z w + b; loss = mean softmax cross-entropy over the batch; one step = forward +
gradients of every weight and bias (no optimizer update). Weights are He-scaled normals, biases
small uniforms, inputs standard normals and labels uniform, from a fixed NumPy seed (not
bit-identical to the Rust side's generator: the step time does not depend on the values). Both
frameworks get the same arrays, and their gradients are checked against each other (1e-4
relative) before timing.

Single-threaded CPU:
  * PyTorch: torch.set_num_threads(1), torch.set_num_interop_threads(1), autograd through
    F.cross_entropy (fused log-softmax + NLL), x without requires_grad; the CNN's convolutions are
    F.conv2d with its bias argument.
  * JAX: jax.jit(jax.grad(loss, argnums=0)) on the CPU backend, the CNN's convolutions
    jax.lax.conv_general_dilated (NCHW input, OIHW kernel); XLA's intra-op pool is limited with
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

SEED = 1
REL_TOL = 1e-4
# As on the Rust side (benchmarks/peers/src/main.rs): elements 100x below the largest are compared
# to its scale. With 1e-3, PyTorch and JAX differ by 1.8e-4 on W3 (f32 rounding of long sums).
FLOOR = 1e-2


def make_mlp(b, i, h, o):
    """The same arrays for every framework: He-scaled weights, small uniform biases, normal inputs."""
    rng = np.random.default_rng(SEED)
    w1 = (rng.standard_normal((i, h)) * np.sqrt(2.0 / i)).astype(np.float32)
    b1 = rng.uniform(-0.1, 0.1, h).astype(np.float32)
    w2 = (rng.standard_normal((h, o)) * np.sqrt(2.0 / h)).astype(np.float32)
    b2 = rng.uniform(-0.1, 0.1, o).astype(np.float32)
    x = rng.standard_normal((b, i)).astype(np.float32)
    labels = rng.integers(0, o, b).astype(np.int32)
    return (w1, b1, w2, b2), x, labels


# The CNN workload: batch, input channels and side, the two convolutions' output channels, classes.
CNN = (32, 1, 8, 16, 32, 10)


def make_cnn():
    """He-scaled kernels (fan-in = input channels x 3 x 3) and head, small uniform biases."""
    b, c, side, c1, c2, o = CNN
    rng = np.random.default_rng(SEED)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    k1 = he((c1, c, 3, 3), c * 9)
    b1 = rng.uniform(-0.1, 0.1, c1).astype(np.float32)
    k2 = he((c2, c1, 3, 3), c1 * 9)
    b2 = rng.uniform(-0.1, 0.1, c2).astype(np.float32)
    w = he((c2, o), c2)
    bw = rng.uniform(-0.1, 0.1, o).astype(np.float32)
    x = rng.standard_normal((b, c, side, side)).astype(np.float32)
    labels = rng.integers(0, o, b).astype(np.int32)
    return (k1, b1, k2, b2, w, bw), x, labels


# The W4 workload: batch, sequence, width, heads, MLP width (one pre-norm transformer block).
W4 = (8, 16, 64, 4, 256)
W4_PARAMS = (
    "norm_1.weight", "norm_1.bias", "attention.in_proj_weight", "attention.in_proj_bias",
    "attention.out_proj_weight", "attention.out_proj_bias", "norm_2.weight", "norm_2.bias",
    "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
)


def make_w4():
    """PyTorch's initial scales (Xavier-uniform in-projection, 1/sqrt(fan-in) elsewhere), the
    norms' scales 1 + U(-0.1, 0.1) and every bias U(-0.1, 0.1) so that none is constant; the MLP's
    weights (in, out), the attention's (out, in) as PyTorch keeps them. The labels are one of the
    64 output features per token."""
    b, l, e, _, hid = W4
    rng = np.random.default_rng(SEED)

    def uniform(shape, bound, base=0.0):
        return (base + rng.uniform(-bound, bound, shape)).astype(np.float32)

    xavier = np.sqrt(6.0 / (4 * e))
    params = (
        uniform(e, 0.1, 1.0), uniform(e, 0.1),
        uniform((3 * e, e), xavier), uniform(3 * e, 0.1),
        uniform((e, e), 1 / np.sqrt(e)), uniform(e, 0.1),
        uniform(e, 0.1, 1.0), uniform(e, 0.1),
        uniform((e, hid), np.sqrt(6.0 / e)), uniform(hid, 0.1),
        uniform((hid, e), np.sqrt(6.0 / hid)), uniform(e, 0.1),
    )
    x = rng.standard_normal((b, l, e)).astype(np.float32)
    labels = rng.integers(0, e, b * l).astype(np.int32)
    return params, x, labels


def mlp_label(b, i, h, o):
    return f"batch {b}, {i} -> {h} -> {o}"


# (name, the shape as the Rust table spells it, data, parameter names). The shape string must match
# benchmarks/peers/src/main.rs, whose chart draws these rows when the headers agree.
WORKLOADS = [
    ("W1", mlp_label(16, 4, 16, 3), lambda: make_mlp(16, 4, 16, 3), ("w1", "b1", "w2", "b2")),
    ("W2", mlp_label(64, 64, 128, 10), lambda: make_mlp(64, 64, 128, 10), ("w1", "b1", "w2", "b2")),
    ("W3", mlp_label(128, 784, 256, 10), lambda: make_mlp(128, 784, 256, 10), ("w1", "b1", "w2", "b2")),
    (
        "CNN",
        "batch 32, 1x8x8 -> conv 16 -> conv 32 -> 10",
        make_cnn,
        ("conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc.weight", "fc.bias"),
    ),
    ("W4", "transformer block: batch 8, seq 16, width 64, 4 heads, MLP 256", make_w4, W4_PARAMS),
]


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

    def block(ps):
        # nn.TransformerEncoderLayer(norm_first=True, activation="gelu", dropout=0), written
        # out: F.multi_head_attention_forward is what its self-attention calls.
        n1w, n1b, inw, inb, outw, outb, n2w, n2b, f1w, f1b, f2w, f2b = ps
        b, l, e, heads, _ = W4
        n1 = F.layer_norm(xt, (e,), n1w, n1b).transpose(0, 1)
        attn, _ = F.multi_head_attention_forward(
            n1, n1, n1, e, heads, inw, inb, None, None, False, 0.0, outw, outb,
            training=True, need_weights=False,
        )
        h = xt + attn.transpose(0, 1)
        hidden = F.gelu(F.layer_norm(h, (e,), n2w, n2b) @ f1w + f1b)
        return (h + hidden @ f2w + f2b).reshape(b * l, e)

    def logits(ps):
        if len(ps) == 12:
            return block(ps)
        if len(ps) == 4:
            w1, b1, w2, b2 = ps
            return torch.relu(xt @ w1 + b1) @ w2 + b2
        k1, c1, k2, c2, w, bw = ps
        h1 = torch.relu(F.conv2d(xt, k1, c1, padding=1))
        h2 = torch.relu(F.conv2d(h1, k2, c2, padding=1))
        return h2.mean(dim=(2, 3)) @ w + bw

    def step():
        for p in ps:
            p.grad = None
        loss = F.cross_entropy(logits(ps), lt)
        loss.backward()
        return loss

    def grads():
        return [p.grad.numpy().copy() for p in ps]

    return "PyTorch " + torch.__version__ + " (CPU, 1 thread)", step, grads


def jax_system(params, x, labels):
    import jax
    import jax.numpy as jnp

    def conv(x, k, c):
        y = jax.lax.conv_general_dilated(
            x, k, window_strides=(1, 1), padding=((1, 1), (1, 1)),
            dimension_numbers=("NCHW", "OIHW", "NCHW"),
        )
        return y + c[None, :, None, None]

    def layer_norm(x, w, b):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * w + b

    def block(ps, x):
        n1w, n1b, inw, inb, outw, outb, n2w, n2b, f1w, f1b, f2w, f2b = ps
        b, l, e, heads, _ = W4
        d = e // heads
        qkv = layer_norm(x, n1w, n1b) @ inw.T + inb
        q, k, v = (qkv[..., i * e:(i + 1) * e].reshape(b, l, heads, d).transpose(0, 2, 1, 3)
                   for i in range(3))
        weights = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(d), axis=-1)
        joined = (weights @ v).transpose(0, 2, 1, 3).reshape(b, l, e)
        h = x + joined @ outw.T + outb
        hidden = jax.nn.gelu(layer_norm(h, n2w, n2b) @ f1w + f1b, approximate=False)
        return (h + hidden @ f2w + f2b).reshape(b * l, e)

    def logits(ps, x):
        if len(ps) == 12:
            return block(ps, x)
        if len(ps) == 4:
            w1, b1, w2, b2 = ps
            return jax.nn.relu(x @ w1 + b1) @ w2 + b2
        k1, c1, k2, c2, w, bw = ps
        h2 = jax.nn.relu(conv(jax.nn.relu(conv(x, k1, c1)), k2, c2))
        return h2.mean(axis=(2, 3)) @ w + bw

    def loss(ps, x, labels):
        logp = jax.nn.log_softmax(logits(ps, x))
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


def load_average():
    """The 1, 5 and 15 minute load averages, for how busy the shared machine was."""
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


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
    for name, _, make_data, pnames in WORKLOADS:
        params, x, labels = make_data()
        systems = [m(params, x, labels) for m in makers]
        for _, step, _ in systems:
            step()
        ref = systems[0][2]()
        for label, _, grads in systems[1:]:
            for pname, a, c in zip(pnames, ref, grads()):
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
        f"Python {platform.python_version()}; load average at the end {load_average()}. "
        "**The machine is shared and noisy**: read "
        "differences under ~20% as ties; brackets give the interquartile range. Same workloads "
        "as `benchmarks/results/peers.md`, one thread, median per step. Command: "
        "`python benchmarks/peers/python/bench.py`.",
        "",
        "| system | " + " | ".join(f"{n} ({shape})" for n, shape, *_ in WORKLOADS) + " |",
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
