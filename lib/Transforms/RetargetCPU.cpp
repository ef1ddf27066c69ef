//===- RetargetCPU.cpp - Move a model exported on another device to the CPU ===//
//
// A model exported with its tensors on cuda records that device in every
// tensor type, in its weights' metadata and in device arguments (`to`,
// `full(device=...)`). gc-lower compiles for the CPU and refuses such a
// module rather than compile it for the CPU behind the user's back; this
// pass is how a user says "compile it for the CPU on purpose". Run it first:
// later passes then see a plain CPU model (a `to(device=cuda)` becomes a
// `to(device=cpu)` that canonicalization drops as a no-op).
//
//===----------------------------------------------------------------------===//
#include "gc/IR/Module.h"
#include "gc/Transforms/Passes.h"

namespace gc {

namespace {

class RetargetCPUPass : public Pass {
public:
  std::string_view name() const override { return "retarget-cpu"; }

  Error run(Module &m) override {
    for (Weight &w : m.weights())
      retarget(w.type.device, "weights moved");
    for (const auto &g : m.graphs()) {
      for (Value *v : g->inputs())
        retarget(v->type(), "values moved");
      for (const auto &n : g->nodes()) {
        for (Value *v : n->results())
          retarget(v->type(), "values moved");
        for (NamedArg &a : n->args())
          if (a.value.kind == ArgKind::Device)
            retarget(a.value.device, "device arguments changed");
      }
    }
    return Error::success();
  }

private:
  void retarget(Type &t, const char *counter) {
    if (t.isTensor())
      retarget(t.tensor.device, counter);
  }

  void retarget(Device &d, const char *counter) {
    if (d.kind == DeviceKind::CPU)
      return;
    d = Device{DeviceKind::CPU, -1};
    ++statistics()[counter];
  }
};

} // namespace

std::unique_ptr<Pass> createRetargetCPUPass() { return std::make_unique<RetargetCPUPass>(); }

} // namespace gc
