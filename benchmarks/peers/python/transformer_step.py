#!/usr/bin/env python3
"""PyTorch's training step of the `10-transformer` example, for the performance comparison.

Never run by CI or the tests. The same model and step as `examples/10-transformer.rs`: token and
position embeddings (11 tokens, context 16, width 64), two pre-norm TransformerEncoderLayers
(4 heads, MLP 256, exact GELU, causal mask, no dropout), a final LayerNorm and a linear head;
batch 32; the loss is the mean cross-entropy at the 8 positions after the separator; one step is
forward, backward and an AdamW update (lr 3e-3, weight decay 0.01). f32, one thread
(torch.set_num_threads(1)). Timing: 20 warm-up steps, then 15 samples of 20 steps each; prints
the median and the quartiles of the time per step in milliseconds.

    python3 benchmarks/peers/python/transformer_step.py
"""
import statistics
import time

import torch

torch.set_num_threads(1)
torch.set_num_interop_threads(1)
torch.manual_seed(0)

VOCAB, CONTEXT, WIDTH, HEADS, HIDDEN, BATCH, DIGITS = 11, 16, 64, 4, 256, 32, 8


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, WIDTH)
        self.positions = torch.nn.Parameter(0.02 * torch.randn(CONTEXT, WIDTH))
        self.blocks = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(
                WIDTH, HEADS, HIDDEN, dropout=0.0, activation="gelu", norm_first=True,
                batch_first=True,
            )
            for _ in range(2)
        )
        self.norm = torch.nn.LayerNorm(WIDTH)
        self.head = torch.nn.Linear(WIDTH, VOCAB)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(CONTEXT))

    def forward(self, ids):
        h = self.tokens(ids) + self.positions
        for block in self.blocks:
            h = block(h, src_mask=self.mask, is_causal=True)
        return self.head(self.norm(h))


def batch():
    digits = torch.randint(0, 10, (BATCH, DIGITS))
    answer = digits.sort(dim=1).values
    ids = torch.cat([digits, torch.full((BATCH, 1), 10), answer[:, :-1]], dim=1)
    return ids, answer


model = Decoder()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)


def step(ids, answer):
    opt.zero_grad(set_to_none=True)
    logits = model(ids)[:, DIGITS:, :]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), answer.reshape(-1))
    loss.backward()
    opt.step()
    return loss


batches = [batch() for _ in range(20)]
for ids, answer in batches:
    step(ids, answer)
samples = []
for _ in range(15):
    start = time.perf_counter()
    for ids, answer in batches:
        step(ids, answer)
    samples.append((time.perf_counter() - start) / len(batches) * 1e3)
q = statistics.quantiles(samples, n=4)
print(f"PyTorch {torch.__version__}, one thread: {statistics.median(samples):.2f} ms per step "
      f"(quartiles {q[0]:.2f}-{q[2]:.2f})")
