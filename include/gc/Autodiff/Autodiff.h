//===- Autodiff.h - The joint forward and backward graph --------*- C++ -*-===//
//
// Reverse-mode differentiation of a core module, with AOTAutograd's calling
// convention. The one graph "joint" takes the primals (the core graph's
// inputs, unchanged) and then one tangent per differentiable user output;
// it returns the core graph's outputs (mutations first, as gc-opt orders
// them) and then the gradients: one per parameter that requires grad, in
// input order, and with JointOptions::gradUserInputs one per floating user
// input. Forward nodes come first, then the backward nodes.
//
//===----------------------------------------------------------------------===//
#ifndef GC_AUTODIFF_AUTODIFF_H
#define GC_AUTODIFF_AUTODIFF_H

#include "gc/IR/Module.h"
#include "gc/Pass/Pass.h"
#include "gc/Support/Error.h"

namespace gc {

struct JointOptions {
  /// Also return gradients for the floating user inputs.
  bool gradUserInputs = false;
};

/// Turns a core module with one graph into a joint module in place. Errors
/// name the node whose op has no derivative or whose rule failed.
Error buildJointModule(Module &m, const JointOptions &o);

/// buildJointModule as a pass ("joint").
std::unique_ptr<Pass> createJointPass(const JointOptions &options);
/// Adds "joint" (default options) to the pass registry.
void registerAutodiffPasses();

} // namespace gc

#endif // GC_AUTODIFF_AUTODIFF_H
