#!/usr/bin/env python3
"""JAX and PyTorch on the differentiable simulation of `examples/11-simulation.rs`.

Never run by CI or the tests. The same flight: a projectile launched at v0 = [12, 9] m/s from
the origin, gravity [0, -9.81], quadratic drag 0.05 (a = g - 0.05 |v| v), explicit Euler steps
of 1 ms (v first, then p with the new v), f64; the loss is |p|^2 after N steps; the gradient is
d loss / d v0. For N = 1,000, 10,000 and 100,000 steps:

  * JAX, `jax.jit(jax.grad(loss))` with the steps in `lax.scan` (reverse mode stores every
    step's residuals), and with `jax.checkpoint` around blocks of about sqrt(N) steps (an outer
    scan over blocks whose inner scan is rematerialized: only the blocks' boundaries are kept).
    Memory: XLA's own plan of the compiled gradient (`compiled.memory_analysis()`: its temporary
    buffers, the residuals among them). Time: the median of 7 calls after a warm-up, each
    waiting for its result; the first call (tracing and compilation) excluded.
  * PyTorch, eager autograd (`torch.autograd.grad`), one thread. Memory: the bytes of the
    tensors autograd saves for the backward pass, counted by `saved_tensors_hooks` (the graph's
    nodes themselves are not counted). Time: the median of 7 forward + backward passes.

Every system's gradient is printed to compare with the example's (they agree to about 1e-9
relative). The example prints this library's rows: `cargo run --release --example 11-simulation`.

Usage (from the repository root; see bench.py for the virtual environment):

    /tmp/bench-venv/bin/python benchmarks/peers/python/simulation.py
"""
import math
import os
import statistics
import time

os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)
os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

jax.config.update("jax_enable_x64", True)
torch.set_num_threads(1)
torch.set_num_interop_threads(1)

DT = 1e-3
DRAG = 0.05
V0 = [12.0, 9.0]


def jax_step(state, _):
    p, v = state
    speed = jnp.sqrt(jnp.sum(v * v))
    v = v + (jnp.array([0.0, -9.81]) - v * speed * DRAG) * DT
    p = p + v * DT
    return (p, v), None


def jax_loss(v0, steps):
    (p, _), _ = jax.lax.scan(jax_step, (jnp.zeros(2), v0), None, length=steps)
    return jnp.sum(p * p)


def jax_loss_checkpointed(v0, steps, every):
    blocks, rest = divmod(steps, every)

    @jax.checkpoint
    def block(state, _):
        state, _ = jax.lax.scan(jax_step, state, None, length=every)
        return state, None

    state, _ = jax.lax.scan(block, (jnp.zeros(2), v0), None, length=blocks)
    state, _ = jax.lax.scan(jax_step, state, None, length=rest)
    return jnp.sum(state[0] * state[0])


def median_ms(f, repeats=7):
    f()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def jax_row(name, loss):
    grad = jax.jit(jax.grad(loss))
    v0 = jnp.array(V0)
    compiled = grad.lower(v0).compile()
    analysis = compiled.memory_analysis()
    temp = analysis.temp_size_in_bytes if analysis is not None else float("nan")
    ms = median_ms(lambda: grad(v0).block_until_ready())
    return name, temp, ms, [float(g) for g in grad(v0)]


def torch_row(steps):
    saved = [0, 0]  # bytes now, peak

    def pack(t):
        saved[0] += t.numel() * t.element_size()
        saved[1] = max(saved[1], saved[0])
        return t

    def run():
        saved[0] = 0
        v0 = torch.tensor(V0, dtype=torch.float64, requires_grad=True)
        g = torch.tensor([0.0, -9.81], dtype=torch.float64)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            p = torch.zeros(2, dtype=torch.float64)
            v = v0
            for _ in range(steps):
                speed = torch.sqrt(torch.sum(v * v))
                v = v + (g - v * speed * DRAG) * DT
                p = p + v * DT
            loss = torch.sum(p * p)
        (grad,) = torch.autograd.grad(loss, v0)
        return grad

    ms = median_ms(run, repeats=3 if steps >= 100_000 else 7)
    saved[1] = 0
    grad = run()
    return "PyTorch eager", saved[1], ms, grad.tolist()


def main():
    print(f"jax {jax.__version__}, torch {torch.__version__}, one core")
    for steps in (1_000, 10_000, 100_000):
        every = round(math.sqrt(steps))
        print(f"{steps} steps (checkpoints every {every} steps):")
        rows = [
            jax_row("JAX lax.scan", lambda v0: jax_loss(v0, steps)),
            jax_row(
                "JAX lax.scan + checkpoint",
                lambda v0: jax_loss_checkpointed(v0, steps, every),
            ),
            torch_row(steps),
        ]
        for name, memory, ms, grad in rows:
            print(
                f"  {name:<26} memory {memory / 1024:>10.1f} KiB, {ms:>9.2f} ms, "
                f"gradient [{grad[0]:.6f}, {grad[1]:.6f}]"
            )


if __name__ == "__main__":
    main()
