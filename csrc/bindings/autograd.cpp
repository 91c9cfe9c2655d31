// Autograd from Python: the grad_fn node objects, Tensor's autograd properties and
// hooks, grad modes, the engine entry point, and the node behind
// lucid.autograd.Function (python/lucid/autograd/function.py).
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "autograd/anomaly.h"
#include "autograd/engine.h"
#include "autograd/record.h"
#include "bindings/common.h"
#include "ops/copy_ops.h"

namespace lucid::bindings {

namespace {

std::vector<TensorPtr> tensors_or_none(nb::handle seq) {
  std::vector<TensorPtr> out;
  for (nb::handle h : nb::iter(seq)) out.push_back(h.is_none() ? nullptr : nb::cast<TensorPtr>(h));
  return out;
}

nb::object tensor_or_none(const TensorPtr& t) { return t ? nb::cast(t) : nb::none(); }

nb::tuple tensors_to_tuple(const std::vector<TensorPtr>& ts) {
  nb::list l;
  for (const TensorPtr& t : ts) l.append(tensor_or_none(t));
  return nb::tuple(l);
}

// A Python callable as a tensor hook: None keeps the gradient; a tensor replaces it
// and must keep its shape.
TensorHook python_tensor_hook(nb::object fn) {
  return [fn = std::move(fn)](const TensorPtr& grad) -> TensorPtr {
    nb::object r = fn(grad);
    if (r.is_none()) return nullptr;
    LUCID_CHECK(is_tensor(r), TypeError, "a tensor hook must return None or a Tensor, not ",
                type_name_of(r));
    TensorPtr t = nb::cast<TensorPtr>(r);
    LUCID_CHECK(t->shape() == grad->shape(), RuntimeError, "hook has changed the size of value: got ",
                shape_str(t->shape()), ", expected ", shape_str(grad->shape()));
    return t;
  };
}

// Anomaly mode's Python side: the forward stack a node records, and the warning
// that shows it when the node's backward fails (PyTorch's wording).
std::string python_stack() {
  nb::gil_scoped_acquire gil;
  try {
    std::string out;
    for (nb::handle line : nb::module_::import_("traceback").attr("format_stack")()) out += nb::cast<std::string>(line);
    return out;
  } catch (nb::python_error& e) {
    e.discard_as_unraisable("lucid: recording the forward stack for anomaly mode");
    return {};
  }
}

void warn_forward_stack(const std::string& node_name, const std::string& stack) {
  nb::gil_scoped_acquire gil;
  const std::string msg =
      str_cat("Error detected in ", node_name, ". Traceback of forward call that caused the error:\n", stack);
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) PyErr_Clear();  // warnings as errors: the error wins
}

// The node of a lucid.autograd.Function: apply calls the Python `backward_fn(node,
// *grads)`, which runs the user's backward with its ctx.
struct PyFunctionNode final : Node {
  PyFunctionNode(std::string name, nb::object backward) : name_(std::move(name)), backward_(std::move(backward)) {}
  ~PyFunctionNode() override {
    nb::gil_scoped_acquire gil;
    backward_.reset();
  }
  const char* name() const override { return name_.c_str(); }
  std::vector<TensorPtr> apply(const std::vector<TensorPtr>& grads) override {
    nb::gil_scoped_acquire gil;
    nb::list args;
    args.append(nb::cast(std::static_pointer_cast<Node>(shared_from_this())));
    for (const TensorPtr& g : grads) args.append(tensor_or_none(g));
    LUCID_CHECK(backward_.is_valid(), RuntimeError, name_,
                ": its backward was dropped by the garbage collector (Note [Hook cycles])");
    nb::object r = backward_(*nb::tuple(args));
    std::vector<TensorPtr> out;
    if (nb::isinstance<nb::tuple>(r) || nb::isinstance<nb::list>(r)) {
      for (nb::handle h : nb::iter(r)) {
        LUCID_CHECK(h.is_none() || is_tensor(h), TypeError, name_,
                    ": backward must return Tensors or None, not ", type_name_of(h));
        out.push_back(h.is_none() ? nullptr : nb::cast<TensorPtr>(h));
      }
    } else {
      LUCID_CHECK(r.is_none() || is_tensor(r), TypeError, name_,
                  ": backward must return Tensors or None, not ", type_name_of(r));
      out.push_back(r.is_none() ? nullptr : nb::cast<TensorPtr>(r));
    }
    // Extra trailing Nones are allowed, as in PyTorch.
    while (out.size() > next_edges.size() && !out.back()) out.pop_back();
    LUCID_CHECK(out.size() == next_edges.size(), RuntimeError, "function ", name_,
                " returned an incorrect number of gradients (expected ", next_edges.size(), ", got ", out.size(),
                ")");
    return out;  // the engine checks each gradient's shape against its input
  }

  // (Note [Hook cycles]: the backward closes over the Function's class, hence its
  // module's globals, which often hold the outputs.)
  PyObject* backward_object() const { return backward_.ptr(); }
  void drop_backward() { nb::object dropped = std::move(backward_); }

 private:
  std::string name_;
  nb::object backward_;
};

// A Python object held from C++ state that may be dropped without the GIL (a node
// released by backward): its last reference is let go with the GIL held.
std::shared_ptr<nb::object> gil_safe(nb::object o) {
  return std::shared_ptr<nb::object>(new nb::object(std::move(o)), [](nb::object* p) {
    nb::gil_scoped_acquire gil;
    delete p;
  });
}

// saved_tensors_hooks' pair as the engine's packer (Note [Saved tensor hooks]): pack's
// result is kept until the node is released; unpack must give a Tensor.
SavedTensorPacker python_saved_tensor_hooks(nb::object pack_hook, nb::object unpack_hook) {
  return [pack = gil_safe(std::move(pack_hook)), unpack = gil_safe(std::move(unpack_hook))](
             const TensorPtr& t) -> SavedTensorUnpacker {
    nb::gil_scoped_acquire gil;
    std::shared_ptr<nb::object> packed = gil_safe((*pack)(t));
    return [packed, unpack]() -> TensorPtr {
      nb::gil_scoped_acquire gil;
      nb::object r = (*unpack)(*packed);
      LUCID_CHECK(is_tensor(r), TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                  "of type ", type_name_of(r));
      return nb::cast<TensorPtr>(r);
    };
  };
}

// Note [Hook cycles]
// `x.register_hook(lambda g: ... x ...)` makes a cycle Python cannot see: the
// tensor object owns its TensorImpl, which owns its hook node, which owns the hook,
// which refers to the tensor object. So the Tensor type takes part in cyclic GC:
// it reports the hooks it owns *exclusively* (nobody else in C++ holds the
// TensorImpl or its hook node; otherwise the references are not its own to report)
// and, when the collector finds such a cycle unreachable, clears them. A leaf's
// post-accumulate-grad hooks likewise: torch's recipe for optimizer steps inside
// backward keeps an optimizer per parameter in its hooks, and so the parameters. And an
// autograd.Function's output: its node holds the Function's backward, whose globals
// (the module defining the Function) often hold the output.
Node* exclusive_hook_node(PyObject* self) {
  if (!nb::inst_ready(self)) return nullptr;
  TensorImpl* t = nb::inst_ptr<TensorImpl>(self);
  if (!t->has_autograd_meta() || t->weak_from_this().use_count() != 1) return nullptr;
  const std::shared_ptr<Node>& node = t->is_leaf() ? t->autograd_meta()->grad_accumulator : t->grad_fn();
  return node && node.use_count() == 1 ? node.get() : nullptr;
}

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (Node* node = exclusive_hook_node(self)) {
    for (const auto* hooks : {&node->tensor_hooks, &node->post_accumulate_hooks})
      for (const Node::TensorHookEntry& h : *hooks) Py_VISIT(static_cast<PyObject*>(h.py_object));
    if (const auto* function = dynamic_cast<const PyFunctionNode*>(node)) Py_VISIT(function->backward_object());
  }
  return 0;
}

int tensor_clear(PyObject* self) {
  if (Node* node = exclusive_hook_node(self)) {
    std::vector<Node::TensorHookEntry> dropped, dropped_after;  // destroyed after the node is consistent again
    dropped.swap(node->tensor_hooks);
    dropped_after.swap(node->post_accumulate_hooks);
    if (auto* function = dynamic_cast<PyFunctionNode*>(node)) function->drop_backward();
  }
  return 0;
}

}  // namespace

struct WeakGradientNode {
  std::weak_ptr<Node> node;
};

// What register_hook returns: the node held weakly, so a kept handle does not keep
// a graph (or a hook cycle, Note [Hook cycles]) alive.
struct HookHandle {
  std::weak_ptr<Node> node;
  int64_t id;
  void remove() {
    if (std::shared_ptr<Node> n = node.lock()) n->remove_hook(id);
    node.reset();
  }
};

PyType_Slot* tensor_gc_slots() {
  static PyType_Slot slots[] = {{Py_tp_traverse, (void*)&tensor_traverse}, {Py_tp_clear, (void*)&tensor_clear},
                                {0, nullptr}};
  return slots;
}

void init_autograd(nb::module_& m, TensorClass& cls) {
  nb::class_<HookHandle>(m, "_HookHandle").def("remove", &HookHandle::remove);
  nb::class_<Node>(m, "Node")
      .def("name", [](const Node& n) { return std::string(n.name()); })
      .def_prop_ro("next_functions", [](const Node& n) {
        nb::list l;
        for (const Edge& e : n.next_edges)
          l.append(nb::make_tuple(e.fn ? nb::cast(e.fn) : nb::none(), e.input_nr));
        return nb::tuple(l);
      })
      .def_prop_ro("variable", [](const Node& n) -> nb::object {
        auto* acc = dynamic_cast<const AccumulateGrad*>(&n);
        if (!acc) throw nb::attribute_error(str_cat("'", n.name(), "' object has no attribute 'variable'").c_str());
        return tensor_or_none(acc->variable());
      })
      .def("_saved", [](const Node& n, size_t i) { return n.saved(i); })
      .def_prop_ro("_num_saved", [](const Node& n) {
        if (n.released) n.saved(0);  // raises: the graph was freed by an earlier backward
        return n.saved_tensors.size();
      })
      .def_prop_ro("_sequence_nr", [](const Node& n) { return n.sequence_nr; })
      .def("_register_hook", [](Node& n, nb::object fn) -> HookHandle {
        int64_t id = Node::next_hook_id();
        n.post_hooks.emplace_back(id, [fn](const std::vector<TensorPtr>& grad_inputs,
                                           const std::vector<TensorPtr>& grad_outputs) {
          nb::object r = fn(tensors_to_tuple(grad_inputs), tensors_to_tuple(grad_outputs));
          return r.is_none() ? std::vector<TensorPtr>{} : tensors_or_none(r);
        });
        return {n.weak_from_this(), id};
      })
      .def("_register_prehook", [](Node& n, nb::object fn) -> HookHandle {
        int64_t id = Node::next_hook_id();
        n.pre_hooks.emplace_back(id, [fn](const std::vector<TensorPtr>& grad_outputs) {
          nb::object r = fn(tensors_to_tuple(grad_outputs));
          return r.is_none() ? std::vector<TensorPtr>{} : tensors_or_none(r);
        });
        return {n.weak_from_this(), id};
      })
      .def("__repr__", [](const Node& n) { return str_cat("<", n.name(), " object>"); });

  cls.def_prop_ro("grad_fn", [](const TensorImpl& t) -> nb::object {
        const std::shared_ptr<Node>& fn = t.grad_fn();
        return fn ? nb::cast(fn) : nb::none();
      })
      .def_prop_ro("_output_nr", &TensorImpl::output_nr)
      .def("_register_hook", [](const TensorPtr& t, nb::object fn) -> HookHandle {
        Edge e = autograd::gradient_edge(t);
        LUCID_CHECK(e.valid(), RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
        int64_t id = Node::next_hook_id();
        PyObject* callable = fn.ptr();
        e.fn->tensor_hooks.push_back({id, e.input_nr, python_tensor_hook(std::move(fn)), callable});
        return HookHandle{e.fn, id};
      })
      // fn(tensor) after backward adds into the leaf's .grad; the leaf's AccumulateGrad
      // keeps it (and reports it to the cyclic GC, Note [Hook cycles]).
      .def("_register_post_accumulate_grad_hook", [](const TensorPtr& t, nb::object fn) -> HookHandle {
        LUCID_CHECK(t->requires_grad(), RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
        LUCID_CHECK(!t->grad_fn(), RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf tensors");
        std::shared_ptr<Node> acc = autograd::grad_accumulator(t);
        int64_t id = Node::next_hook_id();
        PyObject* callable = fn.ptr();
        acc->post_accumulate_hooks.push_back({id, 0, [fn = std::move(fn)](const TensorPtr& leaf) -> TensorPtr {
          nb::gil_scoped_acquire gil;
          LUCID_CHECK(fn(leaf).is_none(), RuntimeError, "post accumulate grad hooks should return None.");
          return nullptr;
        }, callable});
        return HookHandle{acc, id};
      })
      .def("retain_grad", [](const TensorPtr& t) {
        LUCID_CHECK(t->requires_grad(), RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
        if (t->is_leaf() || t->retains_grad()) return;
        t->set_retains_grad(true);
        t->grad_fn()->retained.emplace_back(t->output_nr(), t);
      })
      .def("detach", [](const TensorPtr& t) { return ops::detach(t); })
      .def("detach_", [](const TensorPtr& t) {
        LUCID_CHECK(!(t->grad_fn() && t->grad_fn()->is_view), RuntimeError,
                    "Can't detach views in-place. Use detach() instead.");
        t->clear_grad_fn();
        if (t->has_autograd_meta()) {
          t->set_requires_grad(false);
          t->set_leaf(true);
        }
        return t;
      });

  m.def("_run_backward", [](nb::handle outputs, nb::handle grad_outputs, nb::handle inputs, bool keep_graph,
                            bool create_graph, bool accumulate, bool allow_unused) {
    autograd::BackwardOptions o{keep_graph, create_graph, accumulate, allow_unused};
    std::vector<TensorPtr> result =
        autograd::run_backward(tensors_or_none(outputs), tensors_or_none(grad_outputs), tensors_or_none(inputs), o);
    return tensors_to_tuple(result);
  });
  m.def("is_grad_enabled", &autograd::grad_enabled);
  m.def("_set_grad_enabled", &autograd::set_grad_enabled);
  m.def("is_anomaly_enabled", &autograd::anomaly_enabled);
  m.def("is_anomaly_check_nan_enabled", &autograd::anomaly_check_nan);
  m.def("_set_anomaly_enabled", &autograd::set_anomaly, nb::arg("enabled"), nb::arg("check_nan") = true);
  autograd::set_anomaly_hooks({python_stack, warn_forward_stack});
  m.def("_push_saved_tensors_hooks", [](nb::object pack_hook, nb::object unpack_hook) {
    push_saved_tensor_hooks(python_saved_tensor_hooks(std::move(pack_hook), std::move(unpack_hook)));
  });
  m.def("_pop_saved_tensors_hooks", &pop_saved_tensor_hooks);
  // torch.autograd.graph.register_multi_grad_hook's questions, asked from inside hooks.
  m.def("_current_graph_task_id", &autograd::current_graph_task_id);
  m.def("_will_engine_execute_node", [](const std::shared_ptr<Node>& node) { return autograd::will_execute(*node); });
  // Where t's gradient arrives (its grad_fn, or a leaf's AccumulateGrad, made on first
  // use), held weakly: the multi-grad hook that asks about it is kept by that node's own
  // hooks, and a strong reference would be a cycle through C++ (Note [Hook cycles]).
  nb::class_<WeakGradientNode>(m, "_WeakGradientNode")
      .def("will_execute", [](const WeakGradientNode& w) {
        std::shared_ptr<Node> node = w.node.lock();
        return node && autograd::will_execute(*node);  // (a freed node is in no graph)
      });
  m.def("_weak_gradient_node", [](const TensorPtr& t) {
    Edge e = autograd::gradient_edge(t);
    LUCID_CHECK(e.valid(), RuntimeError, "It is not possible to get the gradient edge for a Tensor that does not "
                "require gradients");
    return WeakGradientNode{e.fn};
  });
  m.def("_increment_version", [](const TensorPtr& t) { t->bump_version(); });
  m.def("_set_saved_tensors_hooks_disabled", &set_saved_tensor_hooks_disabled, nb::arg("message").none());
  m.def("is_inference_mode_enabled", &autograd::inference_mode_enabled);
  m.def("_set_inference_mode", &autograd::set_inference_mode);

  // lucid.autograd.Function: a node over `inputs` (None for non-tensor arguments)
  // whose differentiable `outputs` get it as grad_fn; `saved` become its saved
  // tensors (outputs among them stored without history, as for built-in ops).
  m.def("_function_node", [](std::string name, nb::object backward, nb::handle inputs, nb::handle outputs,
                             nb::handle differentiable, nb::handle saved) {
    auto node = std::make_shared<PyFunctionNode>(std::move(name), std::move(backward));
    std::vector<TensorPtr> outs = tensors_or_none(outputs);
    autograd::attach(node, tensors_or_none(inputs), outs);
    std::vector<bool> diff;
    for (nb::handle h : nb::iter(differentiable)) diff.push_back(nb::cast<bool>(h));
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i] && !diff[i] && outs[i]->grad_fn() == node) {
        outs[i]->clear_grad_fn();
        outs[i]->set_requires_grad(false);
        outs[i]->set_leaf(true);
      }
    for (nb::handle h : nb::iter(saved)) {
      TensorPtr t = h.is_none() ? nullptr : nb::cast<TensorPtr>(h);
      bool is_output = std::find(outs.begin(), outs.end(), t) != outs.end();
      node->save(t, is_output);
    }
    return std::static_pointer_cast<Node>(node);
  });
}

}  // namespace lucid::bindings
