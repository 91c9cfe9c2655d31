// Tensor printing: a C++ port of torch/_tensor_str.py (the data part of repr).
// TensorImpl::to_string() is format_tensor_data(*this, 7), 7 being len("tensor(").
#pragma once

#include <cstdint>
#include <string>

namespace lucid {

class TensorImpl;

// torch.set_printoptions state. threshold is an element count; the Python layer maps
// float('inf') (profile="full") to INT64_MAX. sci_mode: -1 automatic, 0 off, 1 on.
struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;
  int64_t edgeitems = 3;
  int64_t linewidth = 80;
  int sci_mode = -1;
};

// ValueError on negative precision or edgeitems (torch would fail later, or print
// nonsense); everything else is accepted as torch accepts it.
void set_print_options(int precision, int64_t threshold, int64_t edgeitems, int64_t linewidth,
                       int sci_mode);
PrintOptions get_print_options();

// What torch._tensor_str._tensor_str(t, indent) returns: "[]" for an empty tensor, the
// scalar alone for a 0-d tensor, otherwise the nested, aligned, wrapped bracket text.
// `indent` is the column the text starts at (the length of the caller's prefix).
std::string format_tensor_data(const TensorImpl& t, int64_t indent);

}  // namespace lucid
