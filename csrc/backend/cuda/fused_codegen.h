// Generated kernels for fused elementwise programs (Note [Elementwise fusion],
// Note [Generated kernels]): each program becomes straight-line CUDA code, compiled
// with NVRTC, which runs a chain at the memory's speed where the interpreter
// (fused_elementwise.cu) spends its time choosing instructions.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <string>

#include <cuda_runtime_api.h>

#include "ops/primitive.h"
#include "ops/prims/fused.h"

namespace lucid::cuda {

// The kernel's source, or "" when one of the program's ops has no generated form
// (those programs are always interpreted). `index32`: every index fits in an int.
std::string fused_kernel_source(const ops::FusedProgram& p, bool index32);

// The fusion pass's FusedVariant (ops/prims/fused.h), called once a fused call at its
// flush: the program's generated kernel (a cudaKernel_t) when it is compiled, else 0
// (interpreted: while it compiles, when compiling is off, or when the program has no
// generated form). The first sight of a program starts its compilation.
uint64_t fused_variant(const ops::FusedProgram& p, int64_t numel, int device);

// Runs the program with `kernel`, the generated kernel fused_variant gave for it.
void launch_generated_fused(const ops::FusedProgram& p, const void* kernel, ops::Outputs outs, ops::Inputs ins,
                            int64_t n, cudaStream_t stream);

// Fused calls run by generated kernels since the process started.
size_t generated_fused_launches();

// The pieces of a program's generated code, for kernels that run programs inside
// another computation (the fused norms, fused_rows.cpp).
// The compute type C and the 16-bit conversions.
std::string fused_prelude(Dtype compute);
// One function per distinct op of the programs; false when an op has no generated form.
bool write_op_functions(std::ostream& s, std::initializer_list<const ops::FusedProgram*> programs);
// The program's steps as `const C <prefix><k> = ...;` lines, given in `reg` the C
// expression each input and constant register holds; on return `reg` holds the values
// of the registers after the last step (the outputs' among them).
void write_steps(std::ostream& s, const ops::FusedProgram& p, std::string (&reg)[ops::kFusedMaxRegs],
                 const std::string& prefix, const char* indent);
// The element type of a `d` operand's pointer; `v` (an element of a `d` operand) as C;
// `v` (a C value) converted for storing as `d`.
const char* storage_type(Dtype d);
std::string load_expr(Dtype d, const std::string& v);
std::string store_expr(Dtype d, const std::string& v);

// View inputs (ops::FusedRead::View) in generated code. A kernel takes each View
// input's terms as ViewTerms in its parameter; with 32-bit indices it divides by
// multiplying with the magic numbers (div_mul, div_shift; size_mul, size_shift) of
// unsigned division by div and size, valid for dividends below 2^31: about 3
// instructions where a division by a number known only at run time takes about 20
// (PyTorch's IntDivider does the same).
struct ViewTerm {
  long long div, size, stride;
  unsigned div_mul, div_shift, size_mul, size_shift;
};
// The elements the program's View inputs reach past their first (an upper bound: the
// index width must hold it as it holds the element count).
int64_t view_reach(const ops::FusedProgram& p);
bool has_views(const ops::FusedProgram& p);
// The generated code's ViewTerm and view_term(term, i), a term's part of an offset: for
// `index32` kernels (i unsigned, below 2^31: magic numbers) or 64-bit ones (i long long).
std::string view_functions(bool index32);
// The offset a view reads for element `index`, as C: the sum of its terms, whose
// ViewTerms are `slot`[0], [1], ...
std::string view_element(const ops::FusedView& v, const std::string& slot, const std::string& index);
// A view's ViewTerms for a kernel's parameter.
void fill_view(const ops::FusedView& v, ViewTerm* terms);

}  // namespace lucid::cuda
