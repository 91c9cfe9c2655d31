"""Sequence-model workloads (issue 5): an LSTM and a Transformer-encoder training step,
lucid against torch with the same weights, inputs and thread count."""

import torch

import lucid

from workloads import to_lucid, workload

T, B, FEAT, HID = 64, 32, 256, 256


def _copy_module(lm, tm):
    lm.load_state_dict({k: to_lucid(v) for k, v in tm.state_dict().items()})


def _lstm_setup():
    torch.manual_seed(0)
    tm = torch.nn.LSTM(FEAT, HID, num_layers=2)
    lm = lucid.nn.LSTM(FEAT, HID, num_layers=2)
    _copy_module(lm, tm)
    x = torch.randn(T, B, FEAT)
    return (lm, to_lucid(x)), (tm, x)


def _step(m, model, x):
    """Forward, a scalar loss, backward; gradients are cleared for the next run."""
    out = model(x)[0]
    loss = (out * out).mean()
    loss.backward()
    for p in model.parameters():
        p.grad = None
    return loss


# forward: 2 layers * T * (2 gemms of [B, 4H] x [H or F]); backward about twice that
workload(f"LSTM training step (2 layers, hidden {HID}, seq {T}, batch {B}, input {FEAT})", "training",
         _lstm_setup, _step, flops=3 * 2 * T * 2 * B * 4 * HID * (FEAT + HID))

S, NB, DM, NH, FF = 128, 8, 256, 4, 1024


def _encoder_setup():
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(DM, NH, FF, dropout=0.0, batch_first=True)
    tm = torch.nn.TransformerEncoder(tl, 2, enable_nested_tensor=False)
    ll = lucid.nn.TransformerEncoderLayer(DM, NH, FF, dropout=0.0, batch_first=True)
    lm = lucid.nn.TransformerEncoder(ll, 2)
    _copy_module(lm, tm)
    x = torch.randn(NB, S, DM)
    return (lm, to_lucid(x)), (tm, x)


def _enc_step(m, model, x):
    out = model(x)
    loss = (out * out).mean()
    loss.backward()
    for p in model.parameters():
        p.grad = None
    return loss


# per layer: qkv + out projections 4*D^2, feed-forward 2*D*FF, attention 2*S*D; x3 for backward
workload(f"Transformer encoder training step (2 layers, d_model {DM}, {NH} heads, seq {S}, batch {NB}, ff {FF})",
         "training", _encoder_setup, _enc_step,
         flops=3 * 2 * 2 * NB * S * (4 * DM * DM + 2 * DM * FF + 2 * S * DM))
