#include "autograd/grad_mode.h"

namespace lucid::autograd {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference_mode = false;
}  // namespace

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }
bool inference_mode_enabled() { return t_inference_mode; }
void set_inference_mode(bool enabled) { t_inference_mode = enabled; }

}  // namespace lucid::autograd
