// What the fusion passes of a flush share (ops/fusion.cpp, the elementwise chains;
// ops/fusion_rows.cpp, the norms with their chains): the fusable calls as steps, the
// programs built of them, and the rewriting of the pending list.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/pending.h"
#include "ops/prims/fused.h"

namespace lucid::ops {

// A fusable call of a list, as the program builder sees it.
struct Call {
  pending::Work* work;
  FusedKind kind;
  uint8_t op;
  Dtype dtype;  // the result's
  const TensorImpl* out;
  int n_operands;
  const TensorImpl* operand[3];  // null: the number in `number`
  std::optional<Scalar> number[3];
};

// Which views of a call's shape its operands may be (besides contiguous tensors and one
// element, which every program reads): contiguous rows repeated along the leading
// dimensions (the CPU's programs), or any view whose FusedView fits (the GPU's).
enum class Views { Rows, Any };

// The recorded call as a fusable step, if it is one.
std::optional<Call> as_call(pending::Work& w, Views views);

// A program and the tensors it stores and reads, in order.
struct Built {
  FusedProgram program;
  std::vector<const TensorImpl*> outs, ins;
};

// The program of calls[0, count), or nothing when it does not fit the limits or two of
// its operands overlap without being the same elements; `fits` is then a count worth
// trying next. Its outputs are the written storages something besides these calls holds.
std::optional<Built> build(const std::vector<Call>& calls, size_t count, size_t& fits);

// The start of a storage's bytes: operands with equal ones share a storage.
const std::byte* bytes_of(const TensorImpl& t);
// Whether a and b are the same contiguous elements of one storage, of one dtype.
bool same_place(const TensorImpl& a, const TensorImpl& b);
// How many Storage copies hold a storage's bytes (TensorImpl::storage_is_shared's count).
long storage_copies(const TensorImpl& t);
// How many of the tensors (snapshots) a recorded call holds share the storage at `bytes`.
long snapshots_holding(pending::Work& w, const std::byte* bytes);

// `count` calls of a list from `first` to be replaced by `work`, or dropped when it is null.
struct Replacement {
  size_t first, count;
  std::unique_ptr<pending::Work> work;
};
// Applies replacements made in list order (non-overlapping). Made before the list is
// touched, so that running out of memory while making them leaves the list as recorded.
void splice(std::vector<std::unique_ptr<pending::Work>>& list, std::vector<Replacement>& replacements);

// The products' epilogue pass (ops/fusion_products.cpp, Note [Product epilogues]), run on
// a GPU's list first: the calls it replaced.
size_t fuse_product_epilogues(std::vector<std::unique_ptr<pending::Work>>& list);

// The norm pass (ops/fusion_rows.cpp), run on a GPU's list after the elementwise pass:
// the calls it replaced.
size_t fuse_norm_rows(int device, std::vector<std::unique_ptr<pending::Work>>& list);

}  // namespace lucid::ops
