"""PyTorch's GRUCell, LSTMCell, MultiheadAttention and TransformerEncoderLayer on fixed weights,
in float64: the numbers that tests/tape/recurrent_layers.rs and tests/tape/attention_layers.rs copy.

    python3 tests/reference/pytorch_layers.py > /tmp/reference.txt

Every weight and input is `fill(seed, n)[k] = 0.5 * sin(0.37 k + seed)`, which the Rust tests
compute the same way, so that no weight needs copying. Each case prints the output and the
gradient of `sum(tanh(out) * c)` (`c = fill(99, ..)`) with respect to every weight and input, as
Rust arrays, row-major in PyTorch's own layouts.
"""
import math

import torch

torch.set_default_dtype(torch.float64)


def fill(seed, *shape):
    n = math.prod(shape)
    return torch.tensor([0.5 * math.sin(0.37 * k + seed) for k in range(n)]).reshape(shape)


def show(name, t):
    # repr: the shortest decimal that reads back as the same double.
    flat = ", ".join(repr(v) for v in t.detach().flatten().tolist())
    print(f"const {name}: [f64; {t.numel()}] = [{flat}];")


def weights(module, seed0):
    for i, (name, p) in enumerate(module.named_parameters()):
        with torch.no_grad():
            p.copy_(fill(seed0 + i, *p.shape))


def gru():
    B, I, H = 2, 3, 4
    cell = torch.nn.GRUCell(I, H)
    weights(cell, 1)  # weight_ih 1, weight_hh 2, bias_ih 3, bias_hh 4
    x = fill(5, B, I).requires_grad_()
    h = fill(6, B, H).requires_grad_()
    out = cell(x, h)
    (torch.tanh(out) * fill(99, B, H)).sum().backward()
    show("GRU_OUT", out)
    for name, p in cell.named_parameters():
        show(f"GRU_D_{name.upper()}", p.grad)
    show("GRU_D_X", x.grad)
    show("GRU_D_H", h.grad)


def lstm():
    B, I, H = 2, 3, 4
    cell = torch.nn.LSTMCell(I, H)
    weights(cell, 11)  # weight_ih 11, weight_hh 12, bias_ih 13, bias_hh 14
    x = fill(15, B, I).requires_grad_()
    h = fill(16, B, H).requires_grad_()
    c = fill(17, B, H).requires_grad_()
    h1, c1 = cell(x, (h, c))
    (torch.tanh(h1) * fill(99, B, H)).sum().add((torch.tanh(c1) * fill(98, B, H)).sum()).backward()
    show("LSTM_H", h1)
    show("LSTM_C", c1)
    for name, p in cell.named_parameters():
        show(f"LSTM_D_{name.upper()}", p.grad)
    show("LSTM_D_X", x.grad)
    show("LSTM_D_H", h.grad)
    show("LSTM_D_C", c.grad)


def mha(causal):
    B, L, E, HEADS = 2, 3, 4, 2
    attn = torch.nn.MultiheadAttention(E, HEADS, batch_first=True)
    weights(attn, 21)  # in_proj_weight 21, in_proj_bias 22, out_proj.weight 23, out_proj.bias 24
    x = fill(25, B, L, E).requires_grad_()
    mask = torch.nn.Transformer.generate_square_subsequent_mask(L) if causal else None
    out, _ = attn(x, x, x, attn_mask=mask, is_causal=causal, need_weights=False)
    (torch.tanh(out) * fill(99, B, L, E)).sum().backward()
    tag = "CAUSAL" if causal else "FULL"
    show(f"MHA_{tag}_OUT", out)
    for name, p in attn.named_parameters():
        show(f"MHA_{tag}_D_{name.upper().replace('.', '_')}", p.grad)
    show(f"MHA_{tag}_D_X", x.grad)


def block():
    B, L, E, HEADS, HIDDEN = 2, 3, 4, 2, 6
    layer = torch.nn.TransformerEncoderLayer(
        E, HEADS, HIDDEN, dropout=0.0, activation="gelu", norm_first=True, batch_first=True
    )
    # self_attn.in_proj_weight 31, in_proj_bias 32, out_proj.weight 33, out_proj.bias 34,
    # linear1.weight 35, linear1.bias 36, linear2.weight 37, linear2.bias 38,
    # norm1.weight 39, norm1.bias 40, norm2.weight 41, norm2.bias 42
    weights(layer, 31)
    print("// " + ", ".join(name for name, _ in layer.named_parameters()))
    x = fill(45, B, L, E).requires_grad_()
    mask = torch.nn.Transformer.generate_square_subsequent_mask(L)
    out = layer(x, src_mask=mask, is_causal=True)
    (torch.tanh(out) * fill(99, B, L, E)).sum().backward()
    show("BLOCK_OUT", out)
    for name, p in layer.named_parameters():
        show(f"BLOCK_D_{name.upper().replace('.', '_')}", p.grad)
    show("BLOCK_D_X", x.grad)


if __name__ == "__main__":
    gru()
    lstm()
    mha(False)
    mha(True)
    block()
