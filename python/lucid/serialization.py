"""Saving and loading tensors.

lucid.save / lucid.load write and read checkpoints of any picklable object that holds
tensors: a tensor, a state dict, optimizer state, a whole module, nested dicts, lists
and tuples. lucid.save_safetensors / lucid.load_safetensors write and read the
safetensors format (python/lucid/_safetensors.py describes it).

The checkpoint format: PyTorch's
--------------------------------
lucid.save writes the zip layout that torch.save writes by default, so that
torch.load(path) reads lucid's checkpoints (with its default weights_only=True) and
lucid.load reads PyTorch's: a checkpoint moves between the two frameworks both ways.
Every record is stored uncompressed with a CRC-32, so damage anywhere in a record is
detected when it is loaded:

    archive/data.pkl          the saved object, pickled (protocol 2 unless asked); a tensor
                              in it is torch._utils._rebuild_tensor_v2(storage, offset,
                              size, stride, requires_grad, OrderedDict()), a Parameter
                              torch._utils._rebuild_parameter(tensor, requires_grad,
                              OrderedDict()), and each storage the pickle persistent id
                              ("storage", torch.FloatStorage (its dtype), key, location
                              ("cpu", "cuda:0"), number of elements). dtypes, devices and
                              Sizes are torch.float16, torch.device(...), torch.Size(...)
    archive/.format_version   "1";   archive/.storage_alignment   "64"
    archive/byteorder         "little" (lucid, like torch.load, cannot swap bytes)
    archive/data/<key>        the bytes of storage <key>, starting on a 64-byte boundary
                              of the file, so that load(mmap=True) can use them in place
    archive/version           "3" (the zip layout's version, as torch.save writes it)
    archive/.data/serialization_id   40 digits (from the records' CRCs: no randomness)

Tensors that view the same memory share one storage and load as views of one buffer
again; a storage holds only the span of the memory its tensors reach (torch.save writes
the whole memory). A tensor keeps its dtype, shape, strides, device, requires_grad and
Parameter-ness; like PyTorch, not its .grad or its graph. lucid writes data.pkl itself
with PyTorch's names (python/lucid/_torch_format.py: it never imports torch).

Files of lucid's earlier format (version 1, python/lucid/_checkpoint_v1.py) still load.

weights_only=True (the default) unpickles with an allow-list (Note [weights-only
unpickling] in python/lucid/_unpickle.py), which add_safe_globals / safe_globals extend,
as torch.serialization's do.

Writes to a path are atomic: the new file is complete and on disk before it replaces
the old one, and a failure at any point leaves the old one as it was.
"""

from __future__ import annotations

import os
import pickle

from . import _checkpoint_io as IO
from . import _dtype as D
from . import _safetensors as S
from . import _torch_format as T
from . import gpu
from ._checkpoint_v1 import HEADER as _V1_HEADER
from ._checkpoint_v1 import open_v1
from ._creation import empty, frombuffer
from ._device import device as Device
from ._tensor import Tensor
from ._unpickle import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals, unpickle
from ._unpickle import unsafe_globals as _unsafe_globals

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "save_safetensors", "load_safetensors",
           "load_safetensors_metadata", "save_safetensors_to_bytes", "load_safetensors_from_bytes"]


# ---- lucid.save ----------------------------------------------------------------------------

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves `obj` (tensors, state dicts, nested containers of tensors and plain values,
    any picklable object) to `f`: a path (written atomically) or a binary file object
    open for writing, in PyTorch's checkpoint layout (described at the top of this
    module). torch.load's weights-only unpickler reads pickle protocol 2 only.

    torch.save's other arguments are taken: pickle_module (None or the standard pickle
    module: lucid pickles with its own subclass of pickle.Pickler), and the layout flags,
    which change nothing (the file is always the zip layout, which every torch since 1.6
    and lucid load, with the byte order recorded)."""
    _standard_pickle("save", pickle_module)
    if (isinstance(pickle_protocol, bool) or not isinstance(pickle_protocol, int)
            or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL):
        raise ValueError(f"lucid.save: pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL} "
                         f"(protocols 0 and 1 cannot carry the tensors' persistent ids), but got "
                         f"{pickle_protocol!r}")
    if not IO.is_path(f) and not hasattr(f, "write"):
        raise TypeError(f"lucid.save: f must be a path (str or os.PathLike) or a binary file object with "
                        f"write(), but got {type(f).__name__}")
    # Everything that can fail on the object's account (pickling it) happens before the
    # destination is touched.
    payload, spans = T.pickle_for_torch(obj, pickle_protocol)
    if IO.is_path(f):
        with IO.atomic_write(f) as out:
            T.write_archive(out, payload, spans)
    else:
        T.write_archive(f, payload, spans)


# ---- lucid.load ----------------------------------------------------------------------------

def _standard_pickle(name, pickle_module):
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(f"lucid.{name}: pickle_module must be None or the standard pickle module (lucid pickles "
                         f"with its own pickle.Pickler / Unpickler), but got {pickle_module!r}")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Loads an object saved by lucid.save or torch.save from `f`, a path or a binary
    file object. Tensors load as lucid tensors.

    map_location: where tensors go. None: back to the device each was saved from. A
    device ("cpu", "gpu:0", "cuda:0", lucid.device): all of them there. A dict such as
    {"cuda:1": "cpu"}: saved locations remapped, others unchanged. A callable
    (tensor, location): called once per stored storage with its contents as a 1-d CPU
    tensor and the location the file names ("cpu", "cuda:0"; "gpu:0" in lucid's
    version-1 files); it returns that tensor wherever it should go, or None for the
    saved location.

    weights_only=True (the default; None means the same) unpickles only tensors,
    containers, numbers, strings, dtypes, devices, Sizes and the globals allowed with
    lucid.serialization.add_safe_globals / safe_globals, and refuses every other global,
    so a file from anywhere can be loaded without running its code. weights_only=False
    unpickles anything, which runs whatever code the file names: use it only for files
    you trust.

    mmap=True maps a file at a path into memory (copy-on-write: changing a tensor never
    changes the file) and uses the stored tensor bytes in place, loading pages as they
    are touched. The tensor bytes' CRC is then not checked (that would read them all).

    pickle_module (None or the standard pickle module) and pickle_load_args are torch's;
    of the latter only `encoding` is taken (Python 2 strings do not occur in lucid's or
    torch's zip files, so it changes nothing).
    """
    _standard_pickle("load", pickle_module)
    unknown = sorted(set(pickle_load_args) - {"encoding"})
    if unknown:
        raise TypeError(f"lucid.load() got an unexpected keyword argument '{unknown[0]}'")
    place = _placement(map_location)
    if weights_only is None:
        weights_only = True
    if not isinstance(weights_only, bool):
        raise TypeError(f"lucid.load: weights_only must be True or False, but got {weights_only!r}")
    if mmap not in (None, False, True):
        raise TypeError(f"lucid.load: mmap must be None, True or False, but got {mmap!r}")
    with IO.open_for_reading(f, bool(mmap)) as (file, size, name, mapped):
        resolver, payload = _open(IO.ArchiveReader(file, size, name, mapped), place)
        return unpickle(payload, resolver, weights_only, name)


def _open(reader, place):
    if _V1_HEADER in reader.members:
        return open_v1(reader, place)
    return T.open_torch(reader, place)


def get_unsafe_globals_in_checkpoint(f):
    """The globals in the checkpoint `f` (a path or file object) that
    lucid.load(weights_only=True) would refuse now: what add_safe_globals would need,
    if the file is trusted. Nothing in the file is run."""
    with IO.open_for_reading(f, False) as (file, size, name, mapped):
        resolver, payload = _open(IO.ArchiveReader(file, size, name, mapped), _placement(None))
        return _unsafe_globals(payload, resolver)


# ---- map_location ----------------------------------------------------------------------------

def _location_name(d):
    """"cpu" or "gpu:N": a saved location, and a map_location dict's keys, in one spelling."""
    return "cpu" if d.type == "cpu" else f"gpu:{d.index or 0}"


def _saved_device(location):
    try:
        return Device(location)
    except (RuntimeError, TypeError, ValueError):
        raise RuntimeError(f"lucid.load: a tensor was saved on {location!r:.50}, which is not a device lucid "
                           "has (cpu, gpu/cuda). Pass map_location='cpu' to load it on the CPU") from None


def _same_location(location):
    """The saved location in lucid's spelling, when it is a device lucid knows."""
    try:
        return _location_name(Device(location))
    except (RuntimeError, TypeError, ValueError):
        return location


def _placement(map_location):
    """map_location as a function (cpu_tensor, saved_location) -> the tensor where it belongs."""
    if map_location is None:
        return lambda t, location: _to_device(t, _saved_device(location), location)
    if isinstance(map_location, (str, Device)):
        target = Device(map_location)
        return lambda t, location: _to_device(t, target, location)
    if isinstance(map_location, dict):
        table = {_location_name(Device(k)): Device(v) for k, v in map_location.items()}

        def remap(t, location):
            target = table.get(_same_location(location))
            return _to_device(t, target if target is not None else _saved_device(location), location)
        return remap
    if callable(map_location):
        def place(t, location):
            moved = map_location(t, location)
            if moved is None:
                return _to_device(t, _saved_device(location), location)
            if not isinstance(moved, Tensor) or moved.dtype != t.dtype or tuple(moved.shape) != tuple(t.shape):
                raise TypeError(f"lucid.load: map_location returned {moved!r:.100} for a {t.dtype} storage of "
                                f"{t.numel()} elements; it must return a tensor of that dtype and shape "
                                "(or None)")
            return moved
        return place
    raise TypeError(f"lucid.load: map_location must be None, a device, a dict of devices or a callable "
                    f"(tensor, location), but got {type(map_location).__name__}")


def _to_device(t, target, saved_location):
    if target.type == "gpu":
        _require_gpu(target, f"lucid.load: a tensor saved on {saved_location} cannot be restored onto "
                             f"{_location_name(target)}", f"Pass map_location='cpu' (or a dict such as "
                             f"{{'{saved_location}': 'cpu'}}) to load it elsewhere")
    return t if t.device == target else t.to(target)


def _require_gpu(target, what, remedy):
    count = gpu.device_count()
    if (target.index or 0) >= count:
        here = "lucid has no usable GPU here" if count == 0 else f"this machine has {count} GPU(s)"
        raise RuntimeError(f"{what}: {here}. {remedy}")


# ---- safetensors ------------------------------------------------------------------------------

def save_safetensors_to_bytes(tensors, metadata=None):
    """The safetensors file for `tensors` (dict of name -> Tensor) as bytes."""
    header, ordered = S.plan(tensors, metadata)
    return header + b"".join(S.tensor_bytes(t) for _, t in ordered)


def save_safetensors(tensors, path, metadata=None):
    """Writes `tensors` (dict of name -> Tensor) to a safetensors file at `path`,
    atomically. `metadata` is an optional dict of str -> str stored in the header.

    Each tensor is written by its logical contents (a strided view as the values it
    shows). Tensors that share memory are each written out in full, as
    safetensors.numpy does, and load as separate tensors."""
    if not IO.is_path(path):
        raise TypeError(f"save_safetensors: path must be a str or os.PathLike, but got {type(path).__name__} "
                        "(save_safetensors_to_bytes gives the bytes)")
    header, ordered = S.plan(tensors, metadata)
    with IO.atomic_write(path) as out:
        out.write(header)
        for _, t in ordered:
            out.write(S.tensor_bytes(t))


def load_safetensors_from_bytes(data, device="cpu"):
    """dict of name -> Tensor from the bytes of a safetensors file."""
    try:
        view = memoryview(data).cast("B")
    except TypeError:
        raise TypeError(f"load_safetensors_from_bytes expects bytes, bytearray or memoryview, but got "
                        f"{type(data).__name__}") from None
    header_len = S.header_length(view[:8], len(view))
    specs, _ = S.parse_header(view[8:8 + header_len], len(view) - 8 - header_len)
    start = 8 + header_len
    return _safetensors_tensors(specs, lambda spec: bytearray(view[start + spec.begin:start + spec.end]),
                                device)


def load_safetensors(path, device="cpu"):
    """dict of name -> Tensor from the safetensors file at `path`, on `device`.
    The header is checked in full (sizes, offsets, dtypes) before any tensor memory is
    allocated; problems raise ValueError naming them."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        header_len = S.header_length(f.read(8), size)
        specs, _ = S.parse_header(f.read(header_len), size - 8 - header_len)
        start = 8 + header_len

        def read(spec):
            buffer = bytearray(spec.end - spec.begin)
            f.seek(start + spec.begin)
            if f.readinto(buffer) != len(buffer):
                raise ValueError(f"safetensors tensor {spec.name!r}: the file changed while it was read")
            return buffer

        return _safetensors_tensors(specs, read, device)


def load_safetensors_metadata(path):
    """The header's __metadata__ (dict of str -> str; {} when there is none) of the
    safetensors file at `path`; no tensor is read."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        header_len = S.header_length(f.read(8), size)
        return S.parse_header(f.read(header_len), size - 8 - header_len)[1]


def _safetensors_tensors(specs, read, where):
    target = Device(where)
    if target.type == "gpu":  # a missing GPU is reported before anything is read
        _require_gpu(target, f"load_safetensors: cannot load onto {_location_name(target)}",
                     "Pass device='cpu'")
    tensors = {}
    for spec in specs:
        if spec.begin == spec.end:
            tensors[spec.name] = empty(spec.shape, dtype=spec.dtype, device=target)
            continue
        buffer = read(spec)
        if spec.dtype is D.bool:
            S.check_bool_bytes(buffer, spec.name)
        t = frombuffer(buffer, dtype=spec.dtype).reshape(spec.shape)
        tensors[spec.name] = t if target.type == "cpu" else t.to(target)
    return tensors


from ._sharded import load_sharded, save_sharded  # noqa: E402  (upstream Lucid's; uses save and load above)

__all__ += ["save_sharded", "load_sharded"]
