// Engine errors. Each class maps to one Python exception type in the bindings
// (csrc/bindings/module.cpp), so a bad input surfaces as the exception PyTorch raises.
#pragma once

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace lucid {

struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct RuntimeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NotImplementedError : std::runtime_error { using std::runtime_error::runtime_error; };
// A device allocation that failed after the cache was released (lucid.gpu.OutOfMemoryError,
// a RuntimeError, as torch.OutOfMemoryError).
struct OutOfMemoryError : RuntimeError { using RuntimeError::RuntimeError; };

// Message building without iostreams: a statically linked libstdc++ (some
// toolchains link one into the extension) crashes in locale code when the process
// already loaded the shared libstdc++ (NumPy, PyTorch), and streams are slow anyway.
namespace detail {
inline void append(std::string& s, std::string_view v) { s.append(v); }
inline void append(std::string& s, const char* v) { s.append(v); }
inline void append(std::string& s, char c) { s.push_back(c); }
inline void append(std::string& s, bool b) { s.append(b ? "true" : "false"); }
template <typename T>
  requires std::is_arithmetic_v<T>
void append(std::string& s, T v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}
}  // namespace detail

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::string s;
  (detail::append(s, args), ...);
  return s;
}

template <typename E = RuntimeError, typename... Args>
[[noreturn]] void fail(Args&&... args) {
  throw E(str_cat(std::forward<Args>(args)...));
}

}  // namespace lucid

// Checks an invariant the caller controls (shapes, dtypes, indices) and throws a
// typed error with a message built from the remaining arguments.
#define LUCID_CHECK(cond, Err, ...)          \
  do {                                       \
    if (!(cond)) ::lucid::fail<Err>(__VA_ARGS__); \
  } while (0)
