//===- PostOpRules.h - What the post-op folds share ---------------*- C++ -*-===//
//
// The rules PostOps.cpp (epilogue chains) and ProductFolds.cpp (a decode
// step's products: gated pairs, residual adds, RMSNorm prologues) both
// read: which post-ops each library computes, and how a fold finds the one
// node that reads a result and checks that it writes where the extern did.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_POSTOPRULES_H
#define GC_LIB_SCHEDULE_POSTOPRULES_H

#include "Fusion.h"

#include "gc/IR/LoopIR.h"
#include "gc/Support/Target.h"

#include <optional>
#include <set>
#include <vector>

namespace gc::schedule {

/// Whether the library running `op` on `device` applies `kinds` in order.
/// oneDNN takes any chain of the elementwise kinds. On a GPU, cuBLASLt
/// computes act(A·B + C + bias): at most one Add (as C) and one AddBias
/// before at most one Relu or GeluTanh (its GELU is the tanh form), which
/// comes last; cuDNN's convolution adds bias and tensors and applies ReLU
/// as separate calls in any order, but the runtime sets up no other
/// activation for it (no GELU, no SiLU). A GatedSilu, alone on a matrix
/// product, only gc's few-row GPU kernel computes (ProductFolds.cpp says
/// where it runs).
bool libraryApplies(OpId op, TargetDevice device, const std::vector<PostOp::Kind> &kinds);

/// `e` with the variable of each extent-1 loop of `node` replaced by 0.
/// Lowering leaves such a variable in some indices and not in others (a
/// batch of one: the epilogue stores through the batch stride, its load of
/// the extern's result ignores it), yet both name the same element.
const SymExpr *withoutUnitLoops(SymContext &ctx, const LoopNode &node, const SymExpr *e);

/// Whether the extern may write `out`, the epilogue's buffer, through the
/// view it had of `result`, its own: the epilogue reads `result` at its store
/// position, so each element keeps its offset, and this holds where both are
/// laid out alike, or are both dense (`out` in any order of its dims: a
/// channels-last activation) and the epilogue writes every element.
bool sameOffsets(SymContext &ctx, const Buffer &result, const Buffer &out,
                 const LoopNode &epilogue);

/// The only live node reading `buffer`, if exactly one does.
std::optional<uint32_t> soleReader(const std::vector<Access> &access,
                                   const std::set<uint32_t> &folded,
                                   uint32_t buffer);

/// The constant value of `e`, if it is one.
std::optional<int64_t> constantOf(const SymExpr *e);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_POSTOPRULES_H
