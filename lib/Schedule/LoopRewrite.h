//===- LoopRewrite.h - Loop order and loop collapse of one node -*- C++ -*-===//
//
// Rewrites of a single Pointwise or Reduction node that keep what it
// computes: renaming its loop variables (a new loop order, loops of extent 1
// dropped) and merging two adjacent loops into one. Both substitute into every index expression of
// the node (store, loads, Index ops).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_LOOPREWRITE_H
#define GC_LIB_SCHEDULE_LOOPREWRITE_H

#include "gc/IR/IndexSimplify.h"
#include "gc/IR/LoopIR.h"

#include <string>
#include <vector>

namespace gc::schedule {

/// "i<k>" or "r<k>".
std::string loopVar(bool reduction, size_t k);

/// Whether `name` is a loop or indirect-index variable (i<k>, r<k>, t<k>)
/// rather than a size symbol.
bool isLoopSymbol(const std::string &name);

/// Whether `e` mentions a loop or indirect-index variable.
bool mentionsLoopSymbol(const SymExpr *e);

/// The size symbols' ranges with each loop variable of `node` added as
/// [0, bound of its extent - 1].
VarRanges nodeRanges(const SymContext &ctx, const LoopNode &node);

/// The product of `extents` (a loop nest's points, a shape's elements).
const SymExpr *extentProduct(SymContext &ctx, const std::vector<const SymExpr *> &extents);

/// The store index, then every Load and Index expression of the body.
std::vector<const SymExpr *> indexExprs(const LoopNode &node);

/// Simplifies every index expression of `node` under its loop ranges and
/// extents.
void simplifyNodeIndices(SymContext &ctx, LoopNode &node);

/// Removes the outer loops of extent 1 (their variable is 0 in every index),
/// keeping one if all are. Lowering leaves such a loop where torch kept a
/// dimension of size 1 (a keepdim reduction, a batch of one), and its
/// variable in some indices but not others; without it, nodes that run over
/// the same elements have the same loop prefix and fuse.
void dropUnitLoops(SymContext &ctx, LoopNode &node);

/// Permutes the outer loops so that the innermost walks the store (then the
/// loads) with the smallest stride. Reduction loops keep their order.
void reorderLoops(SymContext &ctx, LoopNode &node);

/// Whether loops k and k+1 (outer, or reduction if `reduction`) index every
/// expression of `node` as one loop of their combined extent.
bool canCollapse(SymContext &ctx, const LoopNode &node, bool reduction,
                 size_t k);

/// Merges loops k and k+1 (canCollapse must hold) into loop k.
void collapse(SymContext &ctx, LoopNode &node, bool reduction, size_t k);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_LOOPREWRITE_H
