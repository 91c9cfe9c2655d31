// Engine errors. Each class maps to one Python exception type in the bindings
// (csrc/bindings/module.cpp), so a bad input surfaces as the exception PyTorch raises.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace lucid {

struct TypeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct ValueError : std::runtime_error { using std::runtime_error::runtime_error; };
struct IndexError : std::runtime_error { using std::runtime_error::runtime_error; };
struct RuntimeError : std::runtime_error { using std::runtime_error::runtime_error; };
struct NotImplementedError : std::runtime_error { using std::runtime_error::runtime_error; };

template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
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
