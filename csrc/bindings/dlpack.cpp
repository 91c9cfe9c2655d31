// DLPack exchange in both directions. NumPy interop also goes through here:
// Tensor.numpy() is numpy.from_dlpack(tensor), so there is one zero-copy path,
// and the capsule's manager keeps the TensorImpl alive for as long as the array.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>

#include "bindings/common.h"
#include "bindings/dlpack_abi.h"
#include "core/gpu_runtime.h"

namespace lucid::bindings {

using namespace lucid::dlpack;

namespace {

constexpr const char* kName = "dltensor";
constexpr const char* kNameVersioned = "dltensor_versioned";
constexpr const char* kUsedName = "used_dltensor";
constexpr const char* kUsedNameVersioned = "used_dltensor_versioned";

DLDataType to_dl_dtype(Dtype d) {
  uint8_t bits = uint8_t(dtype_size(d) * 8);
  switch (d) {
    case Dtype::Bool: return {kDLBool, 8, 1};
    case Dtype::U8: return {kDLUInt, 8, 1};
    case Dtype::I8: case Dtype::I16: case Dtype::I32: case Dtype::I64: return {kDLInt, bits, 1};
    case Dtype::BF16: return {kDLBfloat, 16, 1};
    case Dtype::C64: return {kDLComplex, 64, 1};
    case Dtype::C128: return {kDLComplex, 128, 1};
    default: return {kDLFloat, bits, 1};
  }
}

Dtype from_dl_dtype(DLDataType t) {
  LUCID_CHECK(t.lanes == 1, TypeError, "from_dlpack: vector dtypes (lanes=", t.lanes, ") are not supported");
  switch (t.code) {
    case kDLBool: if (t.bits == 8) return Dtype::Bool; break;
    case kDLUInt: if (t.bits == 8) return Dtype::U8; break;
    case kDLInt:
      if (t.bits == 8) return Dtype::I8;
      if (t.bits == 16) return Dtype::I16;
      if (t.bits == 32) return Dtype::I32;
      if (t.bits == 64) return Dtype::I64;
      break;
    case kDLFloat:
      if (t.bits == 16) return Dtype::F16;
      if (t.bits == 32) return Dtype::F32;
      if (t.bits == 64) return Dtype::F64;
      break;
    case kDLBfloat: if (t.bits == 16) return Dtype::BF16; break;
    case kDLComplex:
      if (t.bits == 64) return Dtype::C64;
      if (t.bits == 128) return Dtype::C128;
      break;
  }
  fail<TypeError>("from_dlpack: unsupported DLPack dtype (code ", int(t.code), ", ", int(t.bits),
                  " bits); lucid supports bool, uint8, int8-64, float16, bfloat16, float32, float64, complex64 and complex128");
}

// What a producer's capsule owns: the tensor and the arrays DLTensor points into.
struct ExportContext {
  TensorPtr tensor;
  std::vector<int64_t> shape, strides;
};

template <typename Managed>
void fill_export(Managed* mt, ExportContext* ctx) {
  const TensorImpl& t = *ctx->tensor;
  ctx->shape = t.shape();
  ctx->strides = t.stride();
  for (int64_t& s : ctx->strides) s /= int64_t(t.itemsize());
  DLTensor& dl = mt->dl_tensor;
  dl.data = t.data_ptr();
  t.mark_reached_outside();
  if (t.device().is_cpu()) dl.device = {kDLCPU, 0};
  else dl.device = {kDLCUDA, t.device().index};
  dl.ndim = int32_t(t.ndim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  mt->manager_ctx = ctx;
  mt->deleter = [](Managed* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
    delete self;
  };
}

template <typename Managed>
void capsule_destructor(PyObject* capsule, const char* live_name) {
  // Only a capsule nobody consumed still owns its tensor.
  if (PyCapsule_IsValid(capsule, live_name)) {
    auto* mt = static_cast<Managed*>(PyCapsule_GetPointer(capsule, live_name));
    if (mt && mt->deleter) mt->deleter(mt);
  }
}

nb::object to_dlpack(TensorPtr t, bool versioned) {
  if (!t->is_cpu_storage()) t->eval();  // consumers may read on any stream: finish our writes
  auto* ctx = new ExportContext{t, {}, {}};
  if (versioned) {
    auto* mt = new DLManagedTensorVersioned{};
    mt->version = {1, 0};
    mt->flags = 0;
    fill_export(mt, ctx);
    PyObject* cap = PyCapsule_New(mt, kNameVersioned, [](PyObject* c) {
      capsule_destructor<DLManagedTensorVersioned>(c, kNameVersioned);
    });
    if (!cap) { mt->deleter(mt); throw nb::python_error(); }
    return nb::steal(cap);
  }
  auto* mt = new DLManagedTensor{};
  fill_export(mt, ctx);
  PyObject* cap = PyCapsule_New(mt, kName, [](PyObject* c) { capsule_destructor<DLManagedTensor>(c, kName); });
  if (!cap) { mt->deleter(mt); throw nb::python_error(); }
  return nb::steal(cap);
}

template <typename Managed>
TensorPtr import_managed(Managed* mt) {
  const DLTensor& dl = mt->dl_tensor;
  Dtype dtype = from_dl_dtype(dl.dtype);
  int64_t item = int64_t(dtype_size(dtype));
  LUCID_CHECK(dl.ndim >= 0 && (dl.ndim == 0 || dl.shape), RuntimeError, "from_dlpack: malformed tensor (ndim ",
              dl.ndim, ")");
  // (TensorImpl raises for more too, but only after the storage owns the producer's
  // tensor: its deleter would then run here and again from the unconsumed capsule)
  LUCID_CHECK(size_t(dl.ndim) <= kMaxDims, RuntimeError, "from_dlpack: tensors have at most ", kMaxDims,
              " dimensions, got ", dl.ndim);
  Shape shape(dl.shape, dl.shape + dl.ndim);
  const int64_t numel = numel_of(shape);  // rejects negative sizes and element counts past 2^63
  LUCID_CHECK(numel == 0 || dl.data, RuntimeError, "from_dlpack: malformed tensor (no data pointer for ", numel,
              " elements)");
  Stride stride;
  if (dl.strides) {
    stride.assign(dl.strides, dl.strides + dl.ndim);
    for (size_t d = 0; d < stride.size(); ++d) {
      LUCID_CHECK(stride[d] >= 0 || shape[d] <= 1, ValueError,
                  "from_dlpack: negative strides are not supported (got stride ", stride[d], " in dim ", d, ")");
      LUCID_CHECK(!__builtin_mul_overflow(std::max<int64_t>(stride[d], 0), item, &stride[d]), ValueError,
                  "from_dlpack: stride ", dl.strides[d], " of dim ", d, " overflows as a byte stride");
    }
  } else {
    stride = contiguous_strides(shape, item);
  }
  // Validate everything before taking ownership: once `data` exists, it alone
  // releases the producer's tensor.
  int32_t kind = dl.device.device_type;
  LUCID_CHECK(kind == kDLCPU || kind == kDLCUDAHost || kind == kDLCUDA, RuntimeError,
              "from_dlpack: unsupported device type ", kind, " (lucid reads CPU, CUDA and CUDA-host memory)");
  if (kind == kDLCUDA) gpu_runtime(dl.device.device_id);
  const size_t nbytes = size_t(view_extent_bytes(shape, stride, size_t(item)));  // may raise: before `data`
  auto* base = static_cast<std::byte*>(dl.data) + dl.byte_offset;
  DataPtr data(base, [mt](std::byte*) {
    nb::gil_scoped_acquire gil;  // producers' deleters may touch Python objects
    if (mt->deleter) mt->deleter(mt);
  });
  Storage storage;
  Device device = Device::cpu();
  if (kind == kDLCPU) {
    storage = CpuStorage{{std::move(data), nbytes}};
  } else if (kind == kDLCUDAHost) {
    // Pinned host memory: both devices address it; under unified virtual
    // addressing the GPU uses the same address. Without a GPU it is host memory
    // like any other (shared storage would ask the absent GPU to synchronise before
    // every read).
    GpuRuntime* rt = gpu_runtime_or_null();
    if (rt && rt->device_count() > 0) storage = SharedStorage{{std::move(data), nbytes}, base, 0};
    else storage = CpuStorage{{std::move(data), nbytes}};
  } else {
    storage = GpuStorage{{std::move(data), nbytes}, dl.device.device_id};
    device = Device::gpu(dl.device.device_id);
  }
  TensorMeta meta{std::move(shape), std::move(stride), dtype, device, 0};
  auto t = std::make_shared<TensorImpl>(std::move(storage), std::move(meta));
  t->mark_reached_outside();  // (the producer still holds the memory)
  return t;
}

TensorPtr from_dlpack(nb::handle capsule) {
  PyObject* c = capsule.ptr();
  LUCID_CHECK(PyCapsule_CheckExact(c), RuntimeError, "from_dlpack expects a DLPack capsule or an object with "
              "__dlpack__, but got ", type_name_of(capsule));
  if (PyCapsule_IsValid(c, kNameVersioned)) {
    auto* mt = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kNameVersioned));
    LUCID_CHECK(mt->version.major == 1, RuntimeError, "from_dlpack: unsupported DLPack major version ",
                mt->version.major, " (lucid reads 1.x)");
    TensorPtr t = import_managed(mt);
    PyCapsule_SetName(c, kUsedNameVersioned);
    if (mt->flags & kFlagReadOnly) t = t->clone();  // never write into a read-only buffer
    return t;
  }
  if (PyCapsule_IsValid(c, kName)) {
    auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kName));
    TensorPtr t = import_managed(mt);
    PyCapsule_SetName(c, kUsedName);
    return t;
  }
  PyErr_Clear();
  fail<RuntimeError>("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                     "only once, so you might have already constructed a tensor from it once.");
}

}  // namespace

void init_dlpack(nb::module_& m) {
  m.def("to_dlpack", &to_dlpack, nb::arg("tensor"), nb::arg("versioned"));
  m.def("from_dlpack", &from_dlpack);
  m.def("dlpack_device", [](const TensorImpl& t) {
    return t.device().is_cpu() ? std::make_tuple(int(kDLCPU), 0) : std::make_tuple(int(kDLCUDA), t.device().index);
  });
}

}  // namespace lucid::bindings
