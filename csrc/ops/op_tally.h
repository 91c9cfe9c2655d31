// The ops a thread launches while a tally is set: what lucid.compile.diagnose reads
// (python/lucid/compile/_diagnose.py) to say which of a function's ops a compiled call
// records, and which run at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"

namespace lucid::ops {

struct OpTally {
  struct Op {
    std::string name;            // the op's user-facing name ("add", "matmul")
    std::vector<int64_t> shape;  // of its first output (of its first input when it has none)
    Dtype dtype = Dtype::F32;
    DeviceType device = DeviceType::CPU;
    bool recorded = false;  // recorded for a flush (a lazy GPU) rather than run at once
  };
  std::vector<Op> ops;
};

// Sets this thread's tally (null: none); launch() appends every op it is given. The
// setter's caller owns it.
void set_op_tally(OpTally* tally);
OpTally* op_tally();  // this thread's, or null

// Gradients accumulated into a tensor's .grad (by backward, autograd/node.cpp) since
// the process started: diagnose's grad_sinks is the difference over a call.
void count_grad_sink();
uint64_t grad_sinks();

}  // namespace lucid::ops
