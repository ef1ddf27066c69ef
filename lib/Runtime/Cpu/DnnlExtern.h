//===- DnnlExtern.h - Extern steps run by oneDNN ----------------*- C++ -*-===//
//
// Matrix products and convolutions, with their post-ops fused, as oneDNN
// primitives. A primitive is made for one set of evaluated layouts and kept
// by the caller for as long as those layouts hold.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_RUNTIME_CPU_DNNLEXTERN_H
#define GC_LIB_RUNTIME_CPU_DNNLEXTERN_H

#include "ExternCall.h"

#include "gc/Runtime/RuntimePlan.h"
#include "gc/Runtime/StridedLayout.h"

#include <memory>
#include <string>

namespace gc {

/// One prepared extern call on the CPU: a oneDNN primitive (DnnlContext),
/// or a step the runtime runs itself (the fused attention, AttentionStep.h;
/// the few-row product, FewRowProduct.h).
class CpuCall : public ExternCall {
public:
  Error run(const ExternArgs &args) final { return execute(args.hostBuffers, args.reorders); }
  /// The oneDNN implementation that runs the call ("jit_wino_4x3:avx512_core",
  /// "brgconv:avx512_core", ...; "" for gc's own kernels): which algorithm
  /// a convolution took.
  virtual std::string implementation() const { return {}; }

protected:
  /// Runs the call on host buffers; where `reorders` is given, adds the
  /// reorders it ran.
  virtual Error execute(char *const *buffers, ExternReorders *reorders) = 0;
};

/// An engine and a stream, shared by the calls it prepares.
class DnnlContext {
public:
  DnnlContext();
  ~DnnlContext();
  DnnlContext(const DnnlContext &) = delete;
  DnnlContext &operator=(const DnnlContext &) = delete;

  /// The call `step` describes (its `dnnl` is set) with these input and
  /// output view layouts, or null when oneDNN cannot do it (a dtype other
  /// than f32, an empty tensor, a layout no primitive accepts).
  /// `constant` marks the inputs whose contents never change (weights):
  /// a layout oneDNN derives from them is made once per data address.
  std::unique_ptr<CpuCall> prepare(const plan::OpStep &step, const std::vector<StridedLayout> &inputs,
                                    const std::vector<StridedLayout> &outputs,
                                    const std::vector<bool> &constant);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gc

#endif // GC_LIB_RUNTIME_CPU_DNNLEXTERN_H
