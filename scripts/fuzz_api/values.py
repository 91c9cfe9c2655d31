"""Random arguments: every value is a Python expression (a string), drawn from the
per-call rng in Ctx. Pools of bad values, generators per kind (tensors, sizes, dims,
dtypes, devices, ...), name-based hints (parameter name -> generator), gen_args."""

from __future__ import annotations

import re


DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
               "float32", "float64", "complex64"]


INTS = [0, 1, 2, 3, 4, 5, -1, -2, -3, 7, 8, 16, 64, 100, 1000, -100, 2**31 - 1, 2**31,
        -2**31, 2**32, 2**62, 2**63 - 1, -2**63, 2**64, 10**12, -10**12, 10**5]
SMALL_INTS = [0, 1, 1, 2, 2, 3, 3, 4, 5, -1, 8]
FLOATS = ["0.0", "0.5", "1.0", "-1.0", "2.5", "1e-12", "nan", "inf", "-inf", "1e308",
          "-1e308", "5e-324", "1e20", "3.0", "-0.0", "0.1", "-7.5", "1e-3"]
STRINGS = ["'cpu'", "'gpu'", "'cuda'", "'cuda:7'", "'gpu:0'", "'gpu:1'", "'tpu'", "'cpu:0'",
           "'cpu:1'", "''", "' '", "'mean'", "'sum'", "'none'", "'bogus'", "'float32'",
           "'\\x00'", "'\\u00e9'", "'a' * 1000", "'nearest'", "'bilinear'", "'zeros'",
           "'reflect'", "'constant'", "'replicate'", "'circular'", "'fro'", "'nuc'",
           "'ij'", "'ii->i'", "'i,i->'", "'ab,bc->ac'", "'...'", "'tanh'", "'relu'",
           "'fan_in'", "'fan_out'", "'linear'", "'bicubic'", "'trilinear'", "'area'",
           "'ckpt.lucid'", "'x.safetensors'", "'max'", "'min'", "'triangular'", "'cos'"]
DEVICES = ["'cpu'", "'gpu'", "'cuda'", "'cuda:7'", "'gpu:1'", "'gpu:-1'", "'tpu'",
           "'cpu:0'", "'cpu:3'", "''", "'meta'", "'mps'", "lucid.device('cpu')", "None",
           "0", "-1", "7", "2**62", "'cuda:99999999999999999999'", "'cpu:-1'"]
DTYPES = [f"lucid.{n}" for n in DTYPE_NAMES]
BAD_DTYPES = ["'float32'", "float", "int", "bool", "complex", "3", "None", "object()",
              "lucid.Tensor", "lucid.dtype(99, 'x', 4, 'f')", "lucid.dtype(-1, 'float32', 4, 'f')",
              "lucid.dtype(2**40, 'y', 1, 'i')"]
MODES = ["'mean'", "'sum'", "'none'", "'batchmean'", "'elementwise_mean'", "'bogus'", "None",
         "'nearest'", "'bilinear'", "'bicubic'", "'linear'", "'trilinear'", "'area'",
         "'nearest-exact'", "'zeros'", "'border'", "'reflection'", "'reflect'",
         "'replicate'", "'circular'", "'constant'", "'tanh'", "'relu'", "'gelu'", "'fan_in'",
         "'fan_out'", "'min'", "'max'", "'rel'", "'abs'", "'triangular'", "'triangular2'",
         "'exp_range'", "'cos'", "'linear'", "'leaky_relu'", "'selu'", "'sigmoid'", "1", "0"]
EQUATIONS = ["'ij,jk->ik'", "'ii->i'", "'i,i->'", "'...ij->...ji'", "'bij,bjk->bik'",
             "'i->'", "'ab,ab->ab'", "'a'", "'->'", "'ij'", "'i,j->ij'", "'..., ...->...'",
             "'Ab,bC->AC'", "'ij,jk,kl->il'", "'\\x00'", "'i' * 100 + '->'", "'...'",
             "'i j -> j i'", "'ij->ijk'"]


NUM_WORKERS = ["0", "-1", "-5", "None", "'2'", "0.5", "-2**63", "False", "0.0"]


def _w(rng, table):
    """Weighted choice: table is [(weight, fn_or_value)]."""
    total = sum(w for w, _ in table)
    x = rng.random() * total
    for w, v in table:
        x -= w
        if x < 0:
            return v(rng) if callable(v) else v
    v = table[-1][1]
    return v(rng) if callable(v) else v


SHAPE_DIMS = [0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8]


def rand_shape(rng):
    r = rng.random()
    if r < 0.05:
        return rng.choice([(64,), (16, 16), (256, 256), (1, 3, 32, 32), (2, 8, 16, 16),
                           (4096,), (1, 1, 300), (2, 3, 8, 8, 8), (128, 128)])
    nd = _w(rng, [(6, 0), (14, 1), (24, 2), (20, 3), (16, 4), (6, 5), (2, 6)])
    return tuple(rng.choice(SHAPE_DIMS) for _ in range(nd))


class Ctx:
    """Per-call state: the rng, a preferred shape and dtype (so tensors in one call are
    often compatible, which gets calls past the first argument check)."""

    def __init__(self, rng):
        self.rng = rng
        self.shape = rand_shape(rng)
        self.dtype = rng.choice(["float32"] * 6 + DTYPE_NAMES)
        self.tensors = []    # (expr, shape, dtype) of tensors made for this call
        self.degree_cap = None  # a bound on an int `n` (programs.py sets it for some targets)


def tensor_expr(ctx, shape=None, dtype=None, values=None, view=None, rg=None):
    rng = ctx.rng
    if shape is None:
        r = rng.random()
        if r < 0.45:
            shape = ctx.shape
        elif r < 0.6 and ctx.shape:
            # broadcast-compatible variants of the call's shape
            s = list(ctx.shape)
            k = rng.randrange(len(s))
            if rng.random() < 0.5:
                s[k] = 1
            else:
                s = s[k:]
            shape = tuple(s)
        else:
            shape = rand_shape(rng)
    if dtype is None:
        dtype = ctx.dtype if rng.random() < 0.5 else rng.choice(DTYPE_NAMES)
    if values is None:
        values = _w(rng, [(40, "randn"), (15, "int"), (10, "idx"), (10, "nan"), (4, "big"),
                          (5, "zero"), (6, "pos"), (4, "bool"), (3, "neg"), (3, "tiny")])
    if view is None:
        view = _w(rng, [(65, None), (10, "t"), (8, "step"), (8, "expand"), (5, "offset"),
                        (4, "param")])
    if rg is None:
        rg = dtype in ("float32", "float64", "float16", "bfloat16", "complex64") and \
            rng.random() < 0.2
    seed = rng.randrange(1 << 30)
    args = [repr(tuple(shape)), repr(dtype), repr(values), repr(view), str(seed)]
    e = "mk(" + ", ".join(args) + (", rg=True" if rg else "") + ")"
    ctx.tensors.append((e, tuple(shape), dtype))
    return e


def index_tensor_expr(ctx):
    rng = ctx.rng
    shape = rand_shape(rng) if rng.random() < 0.6 else ctx.shape
    dtype = _w(rng, [(70, "int64"), (10, "int32"), (8, "bool"), (6, "uint8"), (6, "float32")])
    values = _w(rng, [(70, "idx"), (15, "int"), (10, "big"), (5, "neg")])
    return tensor_expr(ctx, shape, dtype, values, view=rng.choice([None, None, None, "t", "step"]),
                       rg=False)


def int_value(rng):
    return str(_w(rng, [(60, lambda r: r.choice(SMALL_INTS)), (40, lambda r: r.choice(INTS))]))


def float_value(rng):
    return rng.choice(FLOATS)


def ints_seq(rng):
    n = _w(rng, [(5, 0), (25, 1), (30, 2), (20, 3), (12, 4), (5, 5), (3, 6)])
    vals = [int_value(rng) if rng.random() < 0.25 else str(rng.choice(SMALL_INTS))
            for _ in range(n)]
    if rng.random() < 0.5:
        return "(" + ", ".join(vals) + ("," if n == 1 else "") + ")"
    return "[" + ", ".join(vals) + "]"


def dim_value(rng):
    return _w(rng, [(60, lambda r: str(r.choice([0, 1, 2, -1, -2, 3, -3, 4, 5, -5]))),
                    (10, lambda r: str(r.choice(INTS))), (10, "None"),
                    (15, lambda r: ints_seq(r)), (3, "'a'"), (2, "1.5")])


def size_value(rng):
    return _w(rng, [(45, ints_seq), (40, int_value), (5, "None"), (3, "lucid.Size([2, 3])"),
                    (3, "[2, -1]"), (2, "(2.5, 3)"), (2, "'2'")])


def bool_value(rng):
    return rng.choice(["True", "False", "True", "False", "None", "2", "'yes'", "0", "1.0"])


def scalar_value(rng):
    return _w(rng, [(40, float_value), (40, int_value), (5, "True"), (5, "(1+2j)"),
                    (3, "complex('nan')"), (4, "None"), (3, "'1'")])


def string_value(rng):
    return rng.choice(STRINGS)


def misc_value(rng):
    return rng.choice([
        "object()", "(lambda *a, **k: None)", "(lambda *a, **k: 1 / 0)", "(1+2j)",
        "b''", "b'\\x00' * 7", "bytearray(b'\\x01\\x02\\x03\\x04')", "{}", "{'a': 1}",
        "[[1, 2], [3]]", "[None]", "[1, 'a']", "set()", "range(5)", "range(2**62)",
        "lucid.Generator()", "lucid.nn.Linear(3, 4)", "lucid.float32", "Ellipsis",
        "slice(None, None, -1)", "slice(0, 2**62, 2**61)", "slice(None, None, 0)",
        "iter([1, 2])", "(x for x in range(3))", "type", "lucid", "NotImplemented",
        "float('nan')", "[[[]]]", "[]", "()", "lucid.Size([2, 3])", "memoryview(b'abcd')",
    ])


def tensor_list(ctx):
    n = _w(ctx.rng, [(5, 0), (25, 1), (40, 2), (20, 3), (10, 5)])
    items = [tensor_expr(ctx) for _ in range(n)]
    if ctx.rng.random() < 0.1 and items:
        items[ctx.rng.randrange(n)] = any_value(ctx, tensors=False)
    return _bracket(ctx.rng, items)


def _bracket(rng, items):
    if rng.random() < 0.3:
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return "[" + ", ".join(items) + "]"


def index_value(ctx):
    """Subscripts for __getitem__/__setitem__."""
    rng = ctx.rng

    def one(r):
        return _w(r, [(30, lambda rr: str(rr.choice([0, 1, -1, 2, -2, 3, 5, 2**62, -2**63]))),
                      (20, lambda rr: rr.choice(["slice(None)", "slice(1, None)",
                                                 "slice(None, None, 2)", "slice(-1, None, -1)",
                                                 "slice(None, None, 0)", "slice(0, 2**62, 2**61)",
                                                 "slice(-2**63, 2**63)", "slice(2, 1)",
                                                 "slice(1, 3, 7)"])),
                      (8, "None"), (8, "Ellipsis"), (15, lambda rr: index_tensor_expr(ctx)),
                      (8, lambda rr: ints_seq(rr)), (3, "True"), (3, "1.5"), (3, "'a'"),
                      (2, "[[0, 1], [1, 0]]"), (2, "[True, False]")])
    n = _w(rng, [(50, 1), (25, 2), (15, 3), (10, 4)])
    if n == 1:
        return one(rng)
    return "(" + ", ".join(one(rng) for _ in range(n)) + ")"


def optimizer_expr(ctx):
    rng = ctx.rng
    p = tensor_expr(ctx, rand_shape(rng), rng.choice(["float32", "float32", "float64"]),
                    "randn", None, True)
    return rng.choice([f"lucid.optim.SGD([{p}], lr=0.1)",
                       f"lucid.optim.SGD([{p}], lr=0.1, momentum=0.9)",
                       f"lucid.optim.Adam([{p}], lr=0.01)",
                       f"lucid.optim.SGD([{{'params': [{p}]}}, {{'params': [], 'lr': 0.5}}], lr=0.1)"])


def params_expr(ctx):
    rng = ctx.rng

    def ptensor():
        return tensor_expr(ctx, rand_shape(rng) if rng.random() < 0.5 else ctx.shape,
                           rng.choice(["float32"] * 5 + ["float64", "float16", "bfloat16",
                                                         "complex64", "int64"]),
                           _w(rng, [(80, "randn"), (10, "nan"), (10, "zero")]),
                           rng.choice([None, None, None, "t", "param"]),
                           rng.random() < 0.9)
    return _w(rng, [
        (55, lambda r: "[" + ", ".join(ptensor() for _ in range(r.randrange(0, 4))) + "]"),
        (15, lambda r: f"lucid.nn.Linear({r.choice([1, 3, 4])}, {r.choice([1, 2, 5])}).parameters()"),
        (10, lambda r: f"[{{'params': [{ptensor()}], 'lr': {float_value(r)}}}, {{'params': [{ptensor()}]}}]"),
        (5, lambda r: ptensor()),
        (5, "[]"), (5, lambda r: any_value(ctx)), (5, lambda r: f"[{ptensor()}, {ptensor()}]"),
    ])


def lambda_value(ctx):
    rng = ctx.rng
    return rng.choice([
        "(lambda *a, **k: None)", "(lambda *a, **k: 1 / 0)", "(lambda *a, **k: a[0] if a else None)",
        f"(lambda *a, **k: {tensor_expr(ctx)})", "(lambda *a, **k: 0.5)", "(lambda *a, **k: 'x')",
        "(lambda e: 0.9 ** e)", "(lambda *a, **k: float('nan'))", "None", "3", "object()",
    ])


def file_value(ctx):
    rng = ctx.rng
    return rng.choice([
        "io.BytesIO()", "io.BytesIO(b'')", "io.BytesIO(b'\\x80\\x04garbage')",
        f"corrupt_blob({rng.randrange(1 << 30)}, 'save')",
        f"corrupt_blob({rng.randrange(1 << 30)}, 'safetensors')",
        "'ckpt.lucid'", "'x.safetensors'", "'missing_file'", "''", "'.'", "'sub/dir/x'",
        "io.StringIO('abc')", "None", "3", f"corrupt_path({rng.randrange(1 << 30)})",
    ])


def dataset_expr(ctx):
    rng = ctx.rng
    return rng.choice([
        f"lucid.utils.data.TensorDataset({tensor_expr(ctx)}, {tensor_expr(ctx)})",
        f"lucid.utils.data.TensorDataset({tensor_expr(ctx, (5, 3))})",
        "list(range(7))", "[]", "range(2**62)", "None", "3", f"[{tensor_expr(ctx)}]",
    ])


# Name-based hints: (regex, generator). First match wins.
def _hints():
    return [
        (r"^(input|x|self|other|tensor|a|b|y|mat|mat1|mat2|vec|vec1|vec2|target|src|source_t|"
         r"query|key|input1|input2|x1|x2|anchor|positive|negative|log_probs|var|grid|theta|"
         r"batch1|batch2|tensor1|tensor2|end_t|exponent|img|pic|image|grad_output|"
         r"grad_outputs|outputs|inputs_t|out|weight_ih|weight_hh|bias_ih|bias_hh|hx|h_0|c_0|"
         r"running_mean|running_var|offsets|per_sample_weights|pos_weight|condition|"
         r"elements|test_elements|lengths|targets|input_lengths|target_lengths|"
         r"attn_mask|key_padding_mask|mask|values|memory|tgt|src_mask|tgt_mask|"
         r"memory_mask|is_causal_t|in_proj_weight|in_proj_bias|out_proj_weight|"
         r"out_proj_bias|grad|data|tensors_t|output|sequences|sequence|padded_input)$",
         lambda ctx: _w(ctx.rng, [(80, lambda r: tensor_expr(ctx)), (20, lambda r: any_value(ctx))])),
        (r"^(weight|bias)$",
         lambda ctx: _w(ctx.rng, [(70, lambda r: tensor_expr(ctx)), (15, "None"),
                                  (15, lambda r: any_value(ctx))])),
        (r"^(index|indices|idx|dims_t|argmax)$",
         lambda ctx: _w(ctx.rng, [(70, lambda r: index_tensor_expr(ctx)), (30, lambda r: any_value(ctx))])),
        (r"^(tensors|inputs|seq|params_list|xs)$",
         lambda ctx: _w(ctx.rng, [(80, lambda r: tensor_list(ctx)), (20, lambda r: any_value(ctx))])),
        (r"^(dim|dims|axis|axes|dim0|dim1|dim2|start_dim|end_dim|source|destination|"
         r"dimension|shifts|offset|axis0|axis1)$", lambda ctx: dim_value(ctx.rng)),
        (r"(size|shape|sizes|kernel_size|stride|padding|dilation|output_padding|"
         r"output_size|pad|split_size_or_sections|sections|indices_or_sections|repeats|"
         r"split_size|stride_t|storage_offset|normalized_shape|unflattened_size|"
         r"scale_factor|reps|lengths_list)$", lambda ctx: size_value(ctx.rng)),
        (r"^(dtype|out_dtype|default_dtype|type1|type2|from_|to)$",
         lambda ctx: _w(ctx.rng, [(75, lambda r: r.choice(DTYPES)), (25, lambda r: r.choice(BAD_DTYPES))])),
        (r"device", lambda ctx: ctx.rng.choice(DEVICES)),
        (r"^(keepdim|inplace|training|requires_grad|batch_first|bidirectional|"
         r"align_corners|ceil_mode|count_include_pad|return_indices|affine|track_running_stats|"
         r"sorted|largest|unbiased|descending|replacement|pin_memory|shuffle|drop_last|"
         r"non_blocking|copy|upper|elementwise_affine|log_input|full|amsgrad|nesterov|"
         r"maximize|centered|foreach|differentiable|capturable|fused|create_graph|"
         r"retain_graph|allow_unused|is_causal|need_weights|average_attn_weights|"
         r"add_bias_kv|add_zero_attn|norm_first|sparse|scale_grad_by_freq|include_last_offset|"
         r"swap|zero_infinity|log_target|right|equal_nan|enforce_sorted|cycle_momentum|"
         r"three_phase|verbose|antialias|recompute_scale_factor|strict|recurse|"
         r"include_self|unsafe|pin|weights_only|persistent|error_if_nonfinite|"
         r"keep_vars|assign|use_separate_proj_weight|accumulate|return_counts|"
         r"return_inverse|sci_mode|mmap|decoupled_weight_decay|check_undefined_grad|"
         r"strict_t|vectorize|batch_first_t|as_tuple|upper_t|count)$",
         lambda ctx: bool_value(ctx.rng)),
        (r"^(reduction|mode|padding_mode|nonlinearity|approximate|interpolation|"
         r"anneal_strategy|threshold_mode|scale_mode|profile|norm_type_s|activation|"
         r"rounding_mode|side|ord_s|indexing|memory_format|layout|fill_mode|"
         r"distribution|method)$", lambda ctx: ctx.rng.choice(MODES + STRINGS[:10])),
        (r"^(equation|subscripts)$", lambda ctx: ctx.rng.choice(EQUATIONS)),
        (r"^(num_workers)$", lambda ctx: ctx.rng.choice(NUM_WORKERS)),
        (r"generator", lambda ctx: ctx.rng.choice(["lucid.Generator()", "None", "3", "object()",
                                                   "lucid.default_generator"])),
        (r"^(num_\w+|in_\w+|out_\w+|hidden_size|input_size|proj_size|embed_dim|"
         r"num_heads|features|channels|groups|num_layers|d_model|nhead|dim_feedforward|"
         r"num_embeddings|embedding_dim|padding_idx|upscale_factor|downscale_factor|"
         r"kdim|vdim|n|m|k|steps|step_size|T_max|T_0|T_mult|total_iters|max_iter|"
         r"history_size|batch_size|num_samples|epochs|steps_per_epoch|total_steps|"
         r"warmup|warmup_steps|patience|cooldown|last_epoch|blank|ignore_index|"
         r"num_classes|output_size_i|size_average|low|high|end|start|step|"
         r"diagonal|sparsity|seed|nbins|bins|min_length|minlength|p_int|chunks|"
         r"split_size_i|length|max_norm_i|milestones|precision|threshold_i|edgeitems|"
         r"linewidth|rank|world_size|num_replicas|max_eval)$",
         lambda ctx: _w(ctx.rng, [(55, lambda r: str(r.choice(SMALL_INTS + [16, 10, 6]))),
                                  (30, lambda r: int_value(r)), (15, lambda r: any_value(ctx))])),
        (r"^(p|eps|alpha|beta|beta1|beta2|lr|momentum|weight_decay|negative_slope|lambd|"
         r"min|max|min_val|max_val|value|fill_value|threshold|margin|rtol|atol|scale|gamma|"
         r"base|exponent_f|max_norm|norm_type|std|mean|a_f|b_f|gain|delta|beta_f|lr_decay|"
         r"initial_accumulator_value|rho|etas|step_sizes|dampening|lambd_f|t0|tolerance_grad|"
         r"tolerance_change|max_lr|base_lr|eta_min|factor|start_factor|end_factor|"
         r"div_factor|final_div_factor|pct_start|min_lr|power|total|lower|upper_f|"
         r"init|weight_f|posinf|neginf|nan|clip_value|momentum_decay|beta3|betas|"
         r"label_smoothing|dropout|temperature|other_s|mean_f|var_f|tol|initial_lr|"
         r"lr_lambda_f|weights_f|val|softmax_scale|dropout_p|full_value|kappa|"
         r"lambd_s|value_s|rate|neg|multiplier|initial|a|b)$",
         lambda ctx: _w(ctx.rng, [(70, lambda r: scalar_value(r)), (15, lambda r: tensor_expr(ctx)),
                                  (10, lambda r: "(" + float_value(r) + ", " + float_value(r) + ")"),
                                  (5, lambda r: any_value(ctx))])),
        (r"^(closure|fn|func|hook|lr_lambda|transform|target_transform|collate_fn|"
         r"worker_init_fn|scale_fn|functions|lambd_fn|callable|f_call|"
         r"init_fn|parametrization|module_fn|lambda_fn|fn_t)$", lambda ctx: lambda_value(ctx)),
        (r"^(params|parameters)$", lambda ctx: params_expr(ctx)),
        (r"^(optimizer|optim)$", lambda ctx: _w(ctx.rng, [(85, lambda r: optimizer_expr(ctx)),
                                                          (15, lambda r: any_value(ctx))])),
        (r"^(module|mod|model|conv|bn|linear|modules|net)$",
         lambda ctx: ctx.rng.choice(["lucid.nn.Linear(3, 4)", "lucid.nn.Conv2d(3, 2, 3)",
                                     "lucid.nn.BatchNorm2d(2)", "lucid.nn.LSTM(3, 4)",
                                     "lucid.nn.BatchNorm1d(4)", "lucid.nn.Sequential()",
                                     "lucid.nn.Embedding(5, 3)", "None", "3",
                                     f"{tensor_expr(ctx)}", "lucid.nn.GRU(2, 3, 2)",
                                     "[lucid.nn.ReLU(), lucid.nn.Tanh()]"])),
        (r"^(f|path|file|filename|fp|root|filepath|buffer_path|name_path)$",
         lambda ctx: file_value(ctx)),
        (r"^(buffer|data_b|obj|array|ndarray|sequence_data|data_seq|object|pic_np|ext_tensor)$",
         lambda ctx: _w(ctx.rng, [(30, lambda r: misc_value(r)), (30, lambda r: tensor_expr(ctx)),
                                  (20, lambda r: np_value(r)), (20, lambda r: nested_list(r))])),
        (r"^(dataset|datasets)$", lambda ctx: dataset_expr(ctx)),
        (r"^(sampler|batch_sampler)$",
         lambda ctx: ctx.rng.choice(["lucid.utils.data.SequentialSampler(range(5))",
                                     "list(range(4))", "None", "3", "[[0, 1], [2, 9]]",
                                     "lucid.utils.data.RandomSampler(range(3))"])),
        (r"^(weights)$", lambda ctx: _w(ctx.rng, [(60, lambda r: tensor_expr(ctx)),
                                                  (40, lambda r: any_value(ctx))])),
        (r"^(state|new_state|state_dict)$",
         lambda ctx: _w(ctx.rng, [(40, lambda r: tensor_expr(ctx)), (20, "lucid.get_rng_state()"),
                                  (20, lambda r: f"corrupt_state({r.randrange(1 << 30)})"),
                                  (20, lambda r: any_value(ctx))])),
        (r"^(name|prefix|tensor_name|param_name|target_name|key_s)$",
         lambda ctx: ctx.rng.choice(["'weight'", "'bias'", "'w'", "''", "'a.b'", "'0'",
                                     "None", "3", "'running_mean'", "'_x'", "'\\x00'"])),
        (r"^(metadata|extra)$", lambda ctx: ctx.rng.choice(["None", "{'a': 'b'}", "{1: 2}",
                                                            "{'a': 1}", "'x'"])),
    ]


HINTS = None


def value_for(ctx, pname):
    global HINTS
    if HINTS is None:
        HINTS = [(re.compile(p), g) for p, g in _hints()]
    if pname == "n" and ctx.degree_cap:
        return str(ctx.rng.choice([v for v in INTS + SMALL_INTS if v < ctx.degree_cap]))
    if ctx.rng.random() < 0.8:
        for pat, gen in HINTS:
            if pat.search(pname):
                return gen(ctx)
    return any_value(ctx)


def nested_list(rng):
    return rng.choice(["[1, 2, 3]", "[[1.0, 2.0], [3.0, 4.0]]", "[]", "[[]]", "[True, False]",
                       "[1, 2.5, True]", "[[1, 2], [3]]", "[1e308, -1e308, nan]", "[2**63, 1]",
                       "[2**64]", "[[[1]], [[2]]]", "[1+2j, 3]", "5", "3.5", "True",
                       "[-2**63]", "[[1, 2], [3, 'a']]", "(1, (2, 3))", "[range(3)]"])


def np_value(rng):
    return rng.choice(["np.arange(6, dtype=np.float32).reshape(2, 3).T",
                       "np.zeros((2, 0), dtype=np.int16)", "np.ones(3, dtype=np.uint16)",
                       "np.array(['a', 'b'])", "np.array([1, None], dtype=object)",
                       "np.arange(10)[::3]", "np.float64(2.5)", "np.array(3)",
                       "np.ones((2, 2), dtype=np.complex128)",
                       "np.lib.stride_tricks.as_strided(np.zeros(1), (4,), (0,))",
                       "np.ones(4, dtype='>f4')", "np.zeros((3,), dtype=np.uint64)"])


def any_value(ctx, tensors=True):
    rng = ctx.rng
    table = [(15, lambda r: int_value(r)), (8, lambda r: float_value(r)), (6, "None"),
             (4, lambda r: bool_value(r)), (8, lambda r: ints_seq(r)),
             (5, lambda r: string_value(r)), (4, lambda r: r.choice(DTYPES + BAD_DTYPES[:3])),
             (2, lambda r: r.choice(DEVICES)), (4, lambda r: misc_value(r)),
             (2, lambda r: nested_list(r))]
    if tensors:
        table += [(38, lambda r: tensor_expr(ctx)), (3, lambda r: tensor_list(ctx)),
                  (3, lambda r: index_tensor_expr(ctx))]
    return _w(rng, table)


POOL_KWARGS = ["dim", "keepdim", "dtype", "device", "out", "p", "inplace", "alpha", "bogus",
               "requires_grad", "size", "reduction", "generator", "weight", "bias", "eps",
               "value", "min", "max", "axis", "memory_format", "non_blocking", "copy"]


def gen_args(ctx, params, nmax=4):
    """(positional exprs, {name: expr}) for a callable with the given parameters."""
    rng = ctx.rng
    pos, kw = [], {}
    if params is None:
        n = _w(rng, [(10, 0), (30, 1), (30, 2), (20, 3), (10, 4)])
        pos = [any_value(ctx) for _ in range(n)]
        for _ in range(_w(rng, [(60, 0), (30, 1), (10, 2)])):
            kw[rng.choice(POOL_KWARGS)] = value_for(ctx, rng.choice(POOL_KWARGS))
        return pos, kw
    positional = [p for p in params if p[1] in ("pos", "pk")]
    varpos = [p for p in params if p[1] == "varpos"]
    kwonly = [p for p in params if p[1] == "kw"]
    has_varkw = any(p[1] == "varkw" for p in params)
    required = [p for p in positional if not p[2]]
    r = rng.random()
    if r < 0.7:
        npos = len(required) + (rng.randrange(0, len(positional) - len(required) + 1)
                                if len(positional) > len(required) and rng.random() < 0.4 else 0)
    else:
        npos = rng.randrange(0, nmax + 1)
    names = [p[0] for p in positional]
    for i in range(npos):
        if i < len(names):
            pos.append(value_for(ctx, names[i]))
        elif varpos:
            pos.append(value_for(ctx, varpos[0][0]))
        else:
            pos.append(any_value(ctx))
    if varpos and npos <= len(names) and rng.random() < 0.6:
        for _ in range(_w(rng, [(20, 1), (40, 2), (25, 3), (15, 4)])):
            pos.append(value_for(ctx, varpos[0][0]))
    # keyword arguments
    optional = [p for p in positional[len(pos):]] + kwonly
    for p in optional:
        if (not p[2] and p[1] == "kw" and rng.random() < 0.85) or rng.random() < 0.3:
            kw[p[0]] = value_for(ctx, p[0])
    if rng.random() < 0.05 or (has_varkw and rng.random() < 0.3):
        k = rng.choice(POOL_KWARGS)
        kw[k] = value_for(ctx, k)
    if rng.random() < 0.03 and names:
        # a keyword repeating a positional argument
        kw[names[0]] = value_for(ctx, names[0])
    return pos, kw
