"""One call as a program: a list of (stage, code) made from the seed and the index
(make_call), and its text (program_text)."""

from __future__ import annotations

import random

from .targets import SELF_TESTS
from .values import (DEVICES, DTYPES, NUM_WORKERS, Ctx, _w, any_value, float_value,
                     gen_args, index_value, int_value, optimizer_expr, params_expr,
                     rand_shape, tensor_expr, value_for)


def call_text(fn_expr, pos, kw):
    parts = list(pos) + [f"{k}={v}" for k, v in kw.items()]
    return f"{fn_expr}({', '.join(parts)})"


def module_input_args(ctx):
    rng = ctx.rng
    n = _w(rng, [(10, 0), (60, 1), (20, 2), (10, 3)])
    ctx.shape = rand_shape(rng) if rng.random() < 0.5 else \
        tuple(rng.choice([1, 2, 3, 4, 5, 8]) for _ in range(rng.choice([2, 3, 4, 5])))
    return [tensor_expr(ctx) if rng.random() < 0.85 else any_value(ctx) for _ in range(n)]


def make_call(targets, seed, index, target=None):
    """The program for call `index` of a run with `seed`: a list of (stage, code).
    The target is the index-th of a seed-shuffled round robin over `targets`, or the
    one named `target` (the program then only depends on seed, index and target)."""
    rng = random.Random(f"{seed}:{index}")
    if target is not None:
        t = next(t for t in targets if t.name == target)
    else:
        order = list(range(len(targets)))
        random.Random(f"order:{seed}").shuffle(order)
        t = targets[order[index % len(targets)]]
    ctx = Ctx(rng)
    # torch.special's orthogonal polynomials cost n steps an element, in torch as in
    # lucid: a degree of 2^32 takes minutes, which is not a hang. Their n stays below 2^20.
    ctx.degree_cap = 1 << 20 if "_polynomial_" in t.name else None
    st = []
    lseed = rng.randrange(1 << 31)
    bw = rng.random() < 0.3
    if t.kind == "selftest":
        st.append(("call", SELF_TESTS[t.expr]))
    elif t.kind in ("func", "class"):
        pos, kw = gen_args(ctx, t.params)
        if t.name == "lucid.utils.data.DataLoader":
            # never a positive num_workers: that forks worker processes (see EXCLUDE notes)
            if "num_workers" in kw:
                kw["num_workers"] = rng.choice(NUM_WORKERS)
            if len(pos) > 5:
                pos[5] = rng.choice(NUM_WORKERS)
        st.append(("call", "_r = " + call_text(t.expr, pos, kw)))
        if t.kind == "class" and rng.random() < 0.5:
            pos2, kw2 = gen_args(ctx, None)
            st.append(("call2", "_r = _use_object(_r, " + ", ".join(pos2) + ")" if pos2
                       else "_r = _use_object(_r)"))
    elif t.kind in ("method",):
        self_e = tensor_expr(ctx)
        pos, kw = gen_args(ctx, t.params)
        if t.expr in ("__getitem__", "__setitem__", "__contains__") and rng.random() < 0.9:
            pos = [index_value(ctx)] + ([value_for(ctx, "value")] if t.expr == "__setitem__" else [])
            if t.expr == "__setitem__" and rng.random() < 0.5:
                pos[1] = tensor_expr(ctx)
        st.append(("build", f"S = {self_e}"))
        st.append(("call", "_r = " + call_text(f"S.{t.expr}", pos, kw)))
    elif t.kind == "getprop":
        st.append(("build", f"S = {tensor_expr(ctx)}"))
        st.append(("call", f"_r = S.{t.expr}"))
    elif t.kind == "setprop":
        st.append(("build", f"S = {tensor_expr(ctx)}"))
        v = value_for(ctx, t.expr) if rng.random() < 0.7 else any_value(ctx)
        st.append(("call", f"S.{t.expr} = {v}\n_r = S"))
    elif t.kind == "nnmod":
        pos, kw = gen_args(ctx, t.params)
        st.append(("call", "_m = " + call_text(t.expr, pos, kw)))
        if rng.random() < 0.3:
            st.append(("call2", f"_m = _m.to({rng.choice(DTYPES + DEVICES[:3])})"))
        ins = module_input_args(ctx)
        st.append(("call2", "_r = _m(" + ", ".join(ins) + ")"))
    elif t.kind == "modmeth":
        m = rng.choice(["lucid.nn.Linear(3, 4)", "lucid.nn.Conv2d(2, 3, 3)",
                        "lucid.nn.BatchNorm1d(4)", "lucid.nn.Sequential(lucid.nn.Linear(2, 2), lucid.nn.ReLU())",
                        "lucid.nn.LSTM(3, 4, 2)", "lucid.nn.Embedding(5, 2)", "lucid.nn.Module()",
                        "lucid.nn.MultiheadAttention(4, 2)", "lucid.nn.LayerNorm(4)"])
        st.append(("build", f"M = {m}"))
        pos, kw = gen_args(ctx, t.params)
        st.append(("call", "_r = " + call_text(f"M.{t.expr}", pos, kw)))
        if rng.random() < 0.5:
            st.append(("call2", f"_r = M({tensor_expr(ctx)})"))
    elif t.kind == "genmeth":
        st.append(("build", "G = lucid.Generator()"))
        pos, kw = gen_args(ctx, t.params)
        st.append(("call", "_r = " + call_text(f"G.{t.expr}", pos, kw)))
        st.append(("call2", f"_r = lucid.rand({rng.choice([1, 3, 100])}, generator=G)"))
    elif t.kind == "optim":
        pos, kw = gen_args(ctx, t.params)
        if pos and rng.random() < 0.8:
            pos[0] = params_expr(ctx)
        st.append(("call", "_o = " + call_text(t.expr, pos, kw)))
        gspecs = "[" + ", ".join(repr(rng.choice(["same", "same", "same", "shape", "dtype",
                                                   "none", "nan"])) for _ in range(3)) + "]"
        st.append(("call2", f"_set_grads(_o, {gspecs}, {rng.randrange(1 << 30)})"))
        closure = rng.choice(["", "", "lambda: _loss(_o)", "lambda: None", "lambda: 3.0",
                              "lambda: 1 / 0", "3"])
        st.append(("call2", f"_r = _o.step({closure})"))
        st.append(("call2", f"_r = _o.step({closure})"))
        if rng.random() < 0.5:
            st.append(("call2", "_o.zero_grad(); _o.load_state_dict(_o.state_dict())"))
    elif t.kind == "sched":
        pos, kw = gen_args(ctx, t.params)
        if rng.random() < 0.85:
            if pos:
                pos[0] = optimizer_expr(ctx)
            else:
                kw["optimizer"] = optimizer_expr(ctx)
        st.append(("call", "_s = " + call_text(t.expr, pos, kw)))
        for _ in range(rng.choice([1, 3, 5])):
            a = rng.choice(["", "", "", int_value(rng), float_value(rng), "None",
                            tensor_expr(ctx)])
            st.append(("call2", f"_s.optimizer.step() if hasattr(_s, 'optimizer') else None; _s.step({a})"))
        st.append(("call2", "_r = _s.get_last_lr() if hasattr(_s, 'get_last_lr') else None; "
                            "_s.load_state_dict(_s.state_dict())"))
    if bw:
        st.append(("backward", "_backward(_r)"))
    return t, [("seed", f"lucid.manual_seed({lseed})")] + st


def program_text(stages):
    lines = []
    for stage, code in stages:
        lines.append(f"# {stage}")
        lines.append(code)
    lines.append("# touch\n_touch(_r)")
    return "\n".join(lines)
