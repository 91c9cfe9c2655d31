"""The memory behind tensors as torch presents it: Tensor.untyped_storage() (bytes) and
the older Tensor.storage() (elements of the tensor's dtype, torch.TypedStorage), and
Tensor.set_, which points a tensor at another's memory.

A storage here is a window on a tensor's memory, not a separate object in the engine:
TypedStorage keeps a flat 1-D view over the whole allocation, so reading, writing and
slicing it read and write the tensors that share that memory, as torch's do."""

import warnings

from . import _C

__all__ = ["UntypedStorage", "TypedStorage", "set_"]


class UntypedStorage:
    """The bytes behind a tensor, as torch.UntypedStorage presents them (read side):
    tensors that share storage report the same data_ptr()."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def data_ptr(self):
        return self._tensor._storage_data_ptr

    def nbytes(self):
        return self._tensor._storage_nbytes

    size = nbytes

    def __len__(self):
        return self.nbytes()

    @property
    def device(self):
        return self._tensor.device

    def _flat(self):
        """The whole allocation as a 1-D tensor of the owner's dtype."""
        t = self._tensor.detach()
        return t.as_strided((self.nbytes() // t.element_size(),), (1,), 0)


_warned_typed = False


def _warn_typed_storage():
    # torch warns once a process that TypedStorage is deprecated; so does lucid.
    global _warned_typed
    if not _warned_typed:
        _warned_typed = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. To access UntypedStorage directly, use tensor.untyped_storage() instead "
                      "of tensor.storage()", UserWarning, stacklevel=3)


class TypedStorage:
    """torch.TypedStorage: a tensor's whole allocation counted in elements of its dtype.
    Indexing reads and writes the shared memory (a slice only on the write side, as in
    torch)."""

    __slots__ = ("_data",)
    is_sparse = False

    def __init__(self, tensor, *, _flat=None):
        _warn_typed_storage()
        self._data = UntypedStorage(tensor)._flat() if _flat is None else _flat

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        return self._data.device

    def size(self):
        return self._data.numel()

    __len__ = size

    def element_size(self):
        return self._data.element_size()

    def nbytes(self):
        return self.size() * self.element_size()

    def data_ptr(self):
        return self._data.data_ptr()

    def untyped(self):
        return UntypedStorage(self._data)

    _untyped_storage = property(untyped)

    def tolist(self):
        return self._data.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # (torch's refuses them too)
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._data[self._index(idx)].item()

    def __setitem__(self, idx, value):
        self._data[idx if isinstance(idx, slice) else self._index(idx)] = value

    def _index(self, idx):
        if not isinstance(idx, int):
            raise TypeError(f"can't index a {type(self).__name__} with {type(idx).__name__}; expected an int "
                            "or a slice")
        n = self.size()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx

    def fill_(self, value):
        self._data.fill_(value)
        return self

    def clone(self):
        return TypedStorage(None, _flat=self._data.clone())

    def cpu(self):
        return self if self.device.type == "cpu" else TypedStorage(None, _flat=self._data.cpu())

    def to(self, device):
        return TypedStorage(None, _flat=self._data.to(device))

    def is_shared(self):
        return False

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        name = "torch.storage.TypedStorage"
        tail = f"[{name}(dtype={self.dtype}, device={self.device}) of size {self.size()}]"
        return body + "\n" + tail if body else tail


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """torch's Tensor.set_: with no argument, an empty tensor; with a tensor, that tensor's
    memory, shape and strides; with a storage, a view of it at storage_offset with size
    and stride (contiguous strides by default). Later writes through either are seen by
    both."""
    lucid = _lucid()
    if self.requires_grad and self.is_leaf and _C.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if source is None:
        self._set_data(lucid.empty(0, dtype=self.dtype, device=self.device))
        return self
    if isinstance(source, lucid.Tensor):
        if size is None:
            if source.dtype != self.dtype:
                raise RuntimeError(f"Could not set tensor of type {self.dtype} to a tensor of type {source.dtype}")
            self._set_data(source.detach())
            return self
        source = source.untyped_storage()
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype}, got a Storage of type {source.dtype}")
        flat = source._data
    elif isinstance(source, UntypedStorage):
        flat = source._flat()
        if flat.dtype != self.dtype:
            if source.nbytes() % self.element_size():
                raise RuntimeError(f"a storage of {source.nbytes()} bytes does not hold a whole number of "
                                   f"{self.dtype} elements")
            flat = flat.view(lucid.uint8).view(self.dtype)
    else:
        raise TypeError(f"set_(): expected a Tensor or a storage, got {type(source).__name__}")
    if size is None:
        size = (flat.numel() - storage_offset,)
    size = tuple(size)
    if stride is None:
        from ._ops_more import _contiguous_strides
        stride = _contiguous_strides(size)
    self._set_data(flat.as_strided(size, tuple(stride), flat.storage_offset() + storage_offset))
    return self


def _lucid():
    import lucid

    return lucid
