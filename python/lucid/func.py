"""lucid.func: function transforms, torch.func's names (and upstream Lucid's lucid.func):
grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian, vmap,
functional_call and stack_module_state.

They are built on the engine's reverse mode (lucid.autograd), not on a second tracing
engine as torch.func's are:
- A transform makes its inputs fresh leaves, runs the function with grad enabled and
  asks lucid.autograd.grad for the gradients. An input that already requires grad (an
  outer transform's leaf, a parameter) is used as it is and the gradients are built
  with create_graph, so transforms nest (grad(grad(f)), hessian = jacfwd(jacrev(f)))
  and their results stay differentiable where their inputs were.
- Forward mode (jvp, linearize, jacfwd) is the double-backward trick of
  lucid.autograd.functional: J t is the VJP, at t, of the VJP u -> J^T u, which is
  linear in u. Every built-in VJP is written with ops, so it is differentiable. jacfwd
  builds the same Jacobian as jacrev, a row a VJP.
- vmap runs the function once a slice of the mapped dimension and stacks the results:
  the same values as a vectorised map for any function vmap accepts, at the cost of a
  call a slice (torch's vmap batches the ops instead).
Inputs and outputs may be pytrees: tensors in tuples, lists and dicts, as torch.func's.
"""

import collections

from ._tensor import Tensor
from .autograd.functional import _autograd_grad, _fill_none, _grad_preprocess
from .autograd.grad_mode import enable_grad

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]


# ---------------------------------------------------------------------------------------
# pytrees: tuples, lists, dicts (and namedtuples) of leaves


def _flatten(tree):
    """(leaves, rebuild): the leaves of `tree` in order, and a function that puts a list
    of as many new leaves back into the same structure."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        sizes = [len(p[0]) for p in parts]

        def rebuild(leaves):
            out, at = [], 0
            for (_, sub), size in zip(parts, sizes):
                out.append(sub(leaves[at:at + size]))
                at += size
            if isinstance(tree, list):
                return out
            return type(tree)(*out) if hasattr(tree, "_fields") else type(tree)(out)

        return [leaf for p in parts for leaf in p[0]], rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        inner, sub = _flatten([tree[k] for k in keys])
        return inner, lambda leaves: type(tree)(zip(keys, sub(leaves))) if not isinstance(
            tree, collections.OrderedDict) else collections.OrderedDict(zip(keys, sub(leaves)))
    return [tree], lambda leaves: leaves[0]


def _tensor_leaves(tree, fn_name, what):
    leaves, rebuild = _flatten(tree)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise TypeError(f"{fn_name}: expected {what} to be Tensors (or tuples, lists and dicts of them), "
                            f"but got a {type(leaf).__name__}")
    return leaves, rebuild


def _matching_leaves(expected, tree, fn_name, what_expected, what):
    """The tensor leaves of `tree`, checked to be as many as `expected` and shaped alike."""
    leaves, _ = _tensor_leaves(tree, fn_name, what)
    if len(leaves) != len(expected):
        raise RuntimeError(f"{fn_name}: Expected {what_expected} and {what} to have the same python structure, "
                           f"got {len(expected)} {what_expected} and {len(leaves)} {what}")
    for e, t in zip(expected, leaves):
        if tuple(e.shape) != tuple(t.shape):
            raise RuntimeError(f"{fn_name}: Expected {what_expected} and {what} to have the same shape, got "
                               f"{tuple(e.shape)} and {tuple(t.shape)}")
    return leaves


def _argnums_tuple(argnums, n_args, fn_name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else argnums
    if not isinstance(nums, tuple) or not nums or not all(isinstance(a, int) for a in nums):
        raise RuntimeError(f"{fn_name}: argnums must be an int or a non-empty tuple of ints, got {argnums!r}")
    normal = []
    for a in nums:
        if not -n_args <= a < n_args:
            raise RuntimeError(f"{fn_name}: Got argnums={a}, but only {n_args} positional inputs")
        normal.append(a % n_args)
    if len(set(normal)) != len(normal):
        raise RuntimeError(f"{fn_name}: argnums must be unique, got {argnums!r}")
    return single, tuple(normal)


# ---------------------------------------------------------------------------------------
# the reverse mode underneath


def _zeros_like(t):
    from ._creation import zeros_like

    return zeros_like(t)


def _ones_like(t):
    from ._creation import ones_like

    return ones_like(t)


def _vjp_grads(outputs, inputs, cotangents, create_graph):
    """d<outputs, cotangents>/d inputs, zeros where an input does not reach an output
    (lucid.autograd.functional's pieces)."""
    return list(_fill_none(_autograd_grad(outputs, inputs, cotangents, create_graph), inputs))


def _split_aux(result, has_aux, fn_name):
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(f"{fn_name}(f, ...): output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return result


def _detach_tree(tree):
    leaves, rebuild = _flatten(tree)
    return rebuild([leaf.detach() if isinstance(leaf, Tensor) else leaf for leaf in leaves])


class _Prepared:
    """The positional arguments with those at `argnums` made graph leaves (an input that
    already requires grad is used as it is, so the graph reaches an outer transform):
    `args` to call the function with, `leaves` (flat) to differentiate against,
    `regroup(flat)` to give each such argument's structure back, and `create_graph`,
    whether gradients must keep their graph."""

    def __init__(self, args, argnums, fn_name):
        self.args = list(args)
        self.leaf_groups, self.rebuilds = [], []
        self.create_graph = False
        for a in argnums:
            leaves, rebuild = _tensor_leaves(args[a], fn_name, "the inputs being differentiated")
            self.create_graph = self.create_graph or any(t.requires_grad for t in leaves)
            made = list(_grad_preprocess(leaves, True))  # (an input in a graph stays in it)
            self.args[a] = rebuild(made)
            self.leaf_groups.append(made)
            self.rebuilds.append(rebuild)
        self.leaves = [t for g in self.leaf_groups for t in g]

    def regroup(self, flat):
        out, at = [], 0
        for group, rebuild in zip(self.leaf_groups, self.rebuilds):
            out.append(rebuild(flat[at:at + len(group)]))
            at += len(group)
        return out


# ---------------------------------------------------------------------------------------
# grad, grad_and_value, vjp


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient, value) of func, whose output is a scalar tensor,
    with respect to the positional arguments at argnums ((gradient, (value, aux)) with
    has_aux)."""

    def wrapper(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), "grad_and_value(f)(*args)")
        with enable_grad():
            prep = _Prepared(args, nums, "grad_and_value(f)(*args)")
            output, aux = _split_aux(func(*prep.args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                                   f"got {type(output).__name__}")
            if output.dim() != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                                   f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                                   "jacrev APIs instead?")
            flat = _vjp_grads([output], prep.leaves, [_ones_like(output)], prep.create_graph)
        grads = prep.regroup(flat)
        if not prep.create_graph:
            grads = [_detach_tree(g) for g in grads]
            output = output.detach()
            aux = _detach_tree(aux) if has_aux else aux
        g = grads[0] if single else tuple(grads)
        return (g, (output, aux)) if has_aux else (g, output)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func (whose output is a scalar tensor) with
    respect to the positional arguments at argnums: one gradient for an int, a tuple for a
    tuple of ints, each shaped as its argument ((gradient, aux) with has_aux)."""
    both = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents), with cotangents shaped as the
    output, gives the vector-Jacobian product for each primal, as a tuple."""
    if not primals:
        raise RuntimeError("vjp(f, *primals): expected at least one primal")
    with enable_grad():
        prep = _Prepared(primals, tuple(range(len(primals))), "vjp(f, *primals)")
        output, aux = _split_aux(func(*prep.args), has_aux, "vjp")
        out_leaves, _ = _tensor_leaves(output, "vjp(f, *primals)", "the outputs of f")
    create_graph = prep.create_graph

    def vjp_fn(cotangents):
        cot_leaves = _matching_leaves(out_leaves, cotangents, "vjp_fn(cotangents)", "outputs", "cotangents")
        with enable_grad():
            flat = _vjp_grads(out_leaves, prep.leaves, cot_leaves, create_graph or
                              any(c.requires_grad for c in cot_leaves))
        if not (create_graph or any(c.requires_grad for c in cot_leaves)):
            flat = [g.detach() for g in flat]
        return tuple(prep.regroup(flat))

    shown = output if create_graph else _detach_tree(output)
    if has_aux:
        return shown, vjp_fn, (aux if create_graph else _detach_tree(aux))
    return shown, vjp_fn


# ---------------------------------------------------------------------------------------
# forward mode by double backward: jvp, linearize


def _linear_jvp(out_leaves, prep, keep_graph):
    """The map tangents -> J t (flat lists), from the graph of f's outputs: the VJP
    u -> J^T u, built with its own graph, differentiated at u with cotangent t."""
    with enable_grad():
        dummies = [_zeros_like(o).requires_grad_() for o in out_leaves]
        transposed = _vjp_grads(out_leaves, prep.leaves, dummies, True)  # J^T u, a function of u

    def apply(tangents):
        with enable_grad():
            return _vjp_grads(transposed, dummies, tangents, keep_graph)

    return apply


def _check_tangents(primals, tangents, fn_name):
    p_leaves, _ = _tensor_leaves(primals, fn_name, "primals")
    return _matching_leaves(p_leaves, tangents, fn_name, "primals", "tangents")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents[, aux]): the Jacobian-vector product of func at primals
    (tuples of tensors, or pytrees of them) along tangents, shaped as func's output."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    t_leaves = _check_tangents(tuple(primals), tuple(tangents), "jvp(f, primals, tangents)")
    with enable_grad():
        prep = _Prepared(tuple(primals), tuple(range(len(primals))), "jvp(f, primals, tangents)")
        output, aux = _split_aux(func(*prep.args), has_aux, "jvp")
        out_leaves, rebuild = _tensor_leaves(output, "jvp(f, primals, tangents)", "the outputs of f")
    keep = prep.create_graph or any(t.requires_grad for t in t_leaves)
    flat = _linear_jvp(out_leaves, prep, keep)(t_leaves)
    if not keep:
        flat = [f.detach() for f in flat]
    shown = output if prep.create_graph else _detach_tree(output)
    result = (shown, rebuild(flat))
    return result + ((aux if prep.create_graph else _detach_tree(aux)),) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) gives J tangents at primals, for as many
    tangents as wanted, from one run of func."""
    with enable_grad():
        prep = _Prepared(primals, tuple(range(len(primals))), "linearize(f, *primals)")
        output = func(*prep.args)
        out_leaves, rebuild = _tensor_leaves(output, "linearize(f, *primals)", "the outputs of f")
    apply = _linear_jvp(out_leaves, prep, prep.create_graph)

    def jvp_fn(*tangents):
        t_leaves = _check_tangents(tuple(primals), tangents, "linearize's jvp_fn(*tangents)")
        flat = apply(t_leaves)
        return rebuild(flat if prep.create_graph else [f.detach() for f in flat])

    return (output if prep.create_graph else _detach_tree(output)), jvp_fn


# ---------------------------------------------------------------------------------------
# Jacobians and the Hessian


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _name="jacrev"):
    """A function returning the Jacobian of func with respect to the positional arguments
    at argnums: for each output (pytrees allowed) and each such argument, a tensor of
    shape output.shape + argument.shape, built a row at a time by reverse mode."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"{_name}: chunk_size must be a positive integer or None, got {chunk_size!r}")

    def wrapper(*args, **kwargs):
        fn_name = f"{_name}(f)(*args)"
        single, nums = _argnums_tuple(argnums, len(args), fn_name)
        with enable_grad():
            prep = _Prepared(args, nums, fn_name)
            output, aux = _split_aux(func(*prep.args, **kwargs), has_aux, _name)
            out_leaves, rebuild_out = _tensor_leaves(output, fn_name, "the outputs of f")
            per_output = []
            for o in out_leaves:
                rows = []
                flat_o = o.reshape(-1)
                for k in range(flat_o.numel()):
                    basis = _zeros_like(flat_o)
                    basis[k] = 1
                    rows.append(_vjp_grads([o], prep.leaves, [basis.reshape(o.shape)], prep.create_graph))
                blocks = []
                for j, leaf in enumerate(prep.leaves):
                    shape = tuple(o.shape) + tuple(leaf.shape)
                    blocks.append(_stack([r[j] for r in rows]).reshape(shape) if rows else
                                  leaf.new_zeros(shape))
                per_output.append(prep.regroup(blocks))
        if not prep.create_graph:
            per_output = [[_detach_tree(b) for b in blocks] for blocks in per_output]
        jac = rebuild_out([blocks[0] if single else tuple(blocks) for blocks in per_output])
        if has_aux:
            return jac, (aux if prep.create_graph else _detach_tree(aux))
        return jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian as jacrev gives it (the same tensors; built by reverse mode here, see
    the module's docstring). randomness is vmap's argument, checked."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    return jacrev(func, argnums, has_aux=has_aux, _name="jacfwd")


def hessian(func, argnums=0):
    """The Hessian of func (whose output is a scalar tensor, or any tensor: a Jacobian of
    its Jacobian) with respect to the positional arguments at argnums:
    jacfwd(jacrev(func, argnums), argnums)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------------------------------
# vmap


def _rng_state():
    from ._random import get_rng_state

    return get_rng_state()


def _broadcast_dims(dims, tree, fn_name, what):
    """Flat dims, one per leaf of `tree`, from an int / None (for all) or a pytree prefix."""
    leaves, _ = _flatten(tree)
    if dims is None or isinstance(dims, int):
        return [dims] * len(leaves)
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)):
        if len(dims) != len(tree):
            raise ValueError(f"{fn_name}: {what} is not compatible with the structure of the inputs: "
                             f"{len(dims)} entries for {len(tree)} values")
        return [d for sub_dims, sub in zip(dims, tree) for d in _broadcast_dims(sub_dims, sub, fn_name, what)]
    if isinstance(dims, dict) and isinstance(tree, dict):
        if set(dims) != set(tree):
            raise ValueError(f"{fn_name}: {what} is not compatible with the structure of the inputs: keys "
                             f"{sorted(dims)} against {sorted(tree)}")
        return [d for k in tree for d in _broadcast_dims(dims[k], tree[k], fn_name, what)]
    raise ValueError(f"{fn_name}: {what} must be an int, None, or a structure like the inputs', got {dims!r}")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension in_dims of its inputs (an int, None for an input that is
    not mapped, or a structure like the inputs'), its outputs stacked along out_dims.
    randomness: 'error' (a random op inside raises), 'different' (each slice draws its
    own), 'same' (each slice draws the same numbers). Runs func once a slice."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapper(*args, **kwargs):
        fn_name = "vmap(f, in_dims=..., ...)(<inputs>)"
        if not (in_dims is None or isinstance(in_dims, (int, tuple))):
            raise ValueError(f"{fn_name}: expected `in_dims` to be int or a (potentially nested) tuple matching "
                             f"the structure of inputs, got: {type(in_dims).__name__}.")
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"{fn_name}: in_dims is not compatible with the structure of `inputs`. in_dims has "
                             f"structure of {len(in_dims)} values but inputs has {len(args)}.")
        leaves, rebuild = _flatten(args)
        dims = _broadcast_dims(in_dims, args, fn_name, "in_dims")
        size = None
        for leaf, d in zip(leaves, dims):
            if d is None:
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"{fn_name}: Got in_dim={d} for an input but the input is of type "
                                 f"{type(leaf).__name__}. We cannot vmap over non-Tensor arguments, please use "
                                 "None as the respective in_dim")
            if not -max(leaf.dim(), 1) <= d < max(leaf.dim(), 1) or leaf.dim() == 0:
                raise ValueError(f"{fn_name}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {leaf.dim()} so expected in_dim to satisfy "
                                 f"-{leaf.dim()} <= in_dim < {leaf.dim()}.")
            n = leaf.shape[d]
            if size is not None and n != size:
                raise ValueError(f"{fn_name}: Expected all tensors to have the same size in the mapped dimension, "
                                 f"got sizes {size} and {n} for the mapped dimension")
            size = n
        if size is None:
            raise ValueError(f"{fn_name}: at least one input must be a Tensor mapped over a dimension (in_dims "
                             "not None)")
        start = _rng_state() if randomness != "different" else None
        results = []
        for b in range(size):
            if randomness == "same":
                from ._random import set_rng_state

                set_rng_state(start)
            sliced = [leaf.select(d, b) if d is not None else leaf for leaf, d in zip(leaves, dims)]
            results.append(func(*rebuild(sliced), **kwargs))
            if randomness == "error" and b == 0 and not _rng_state().equal(start):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either "
                                   "use the 'same' or 'different' randomness flags on vmap or perform the "
                                   "randomness operation out of vmap")
        return _stack_outputs(results, out_dims, fn_name)

    return wrapper


def _stack(tensors, dim=0):
    from . import stack

    return stack(tensors, dim=dim)


def _stack_outputs(results, out_dims, fn_name):
    first, rebuild = _flatten(results[0])
    dims = _broadcast_dims(out_dims, results[0], fn_name, "out_dims")
    columns = [_flatten(r)[0] for r in results]
    out = []
    for j, (leaf, d) in enumerate(zip(first, dims)):
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{fn_name}: `{fn_name.split('(')[0]}` must only return Tensors, got type "
                             f"{type(leaf).__name__}. Did you mean to set out_dims= to None for output?")
        if d is None:
            out.append(leaf)
            continue
        if not -(leaf.dim() + 1) <= d <= leaf.dim():
            raise ValueError(f"{fn_name}: Got out_dim={d} for an output of dimensionality {leaf.dim()}: expected "
                             f"-{leaf.dim() + 1} <= out_dim <= {leaf.dim()}")
        out.append(_stack([c[j] for c in columns], dim=d))
    return rebuild(out)


# ---------------------------------------------------------------------------------------
# functional_call


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """module(*args, **kwargs) with its parameters and buffers named in the dict(s) (as
    state_dict names them, "layer.weight") replaced by the tensors given, for this call
    only. tie_weights: a tensor the module holds under several names is replaced under
    all of them. strict: every parameter and buffer must be given, and nothing else."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        dicts = (dicts,)
    if not isinstance(dicts, (tuple, list)) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError("functional_call: Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts).__name__}")
    given = {}
    for d in dicts:
        for name, value in d.items():
            if name in given:
                raise ValueError(f"functional_call got multiple values for keys ['{name}'], which are used by "
                                 "both parameter_and_buffer_dicts")
            given[name] = value
    held = dict(module.named_parameters(remove_duplicate=False))
    held.update(dict(module.named_buffers(remove_duplicate=False)))
    if strict:
        missing = sorted(set(held) - set(given))
        unexpected = sorted(set(given) - set(held))
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
    if tie_weights:
        for name, value in list(given.items()):
            if name in held:
                for other, tensor in held.items():
                    if other not in given and tensor is held[name]:
                        given[other] = value
    swapped = []
    try:
        for name, value in given.items():
            owner, _, leaf = name.rpartition(".")
            sub = module.get_submodule(owner) if owner else module
            store = sub._parameters if leaf in sub._parameters else sub._buffers if leaf in sub._buffers else None
            if store is None:
                raise AttributeError(f"functional_call: {type(sub).__name__} has no parameter or buffer "
                                     f"named '{leaf}' (from '{name}')")
            swapped.append((store, leaf, store[leaf]))
            store[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for store, leaf, original in reversed(swapped):
            store[leaf] = original


def _stacked_leaf(tensors, name):
    requiring = [t.requires_grad for t in tensors]
    if any(requiring) and not all(requiring):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    from . import stack
    stacked = stack([t.detach() for t in tensors])
    return stacked.requires_grad_() if all(requiring) else stacked


def stack_module_state(models):
    """(params, buffers): each of the models' parameters and buffers, by name, stacked along
    a new first dimension, for an ensemble run as vmap(functional_call) over the models.
    The stacked parameters are new leaves that require grad (the models' own are left
    alone). The models must be of one class and all in training or all in eval mode."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        each = [dict(named(m)) for m in models]
        return {name: _stacked_leaf([d[name] for d in each], name) for name in each[0]}
    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())
