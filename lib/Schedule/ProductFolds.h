//===- ProductFolds.h - Decode-step neighbours folded into products -*- C++ -*-===//
//
// On a GPU, the nodes around a decoder's matrix products of a few rows that
// gc's few-row kernel can compute in the product's own launch: a gated
// MLP's SiLU product, the residual adds, the RMSNorms (ProductFolds.cpp).
// foldPostOps (PostOps.h) calls these.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_SCHEDULE_PRODUCTFOLDS_H
#define GC_LIB_SCHEDULE_PRODUCTFOLDS_H

#include "gc/IR/LoopIR.h"
#include "gc/Support/Target.h"

#include <set>

namespace gc::schedule {

/// Folds a gated pair into the extern `e` (the gate's product) where one
/// is there (ProductFolds.cpp's file comment says when). Returns whether it did.
bool foldGatedPair(SymContext &ctx, LoopGraph &graph, TargetDevice device,
                   std::set<uint32_t> &folded, uint32_t e);

/// On a GPU, makes the product `e` store x + its result where it alone
/// writes that result and every node reading it reads it only as a term
/// of x + result, x a buffer laid out as the result and ready before the
/// product (a residual stream: a transformer's h = x + attention output,
/// read by the next RMSNorm's sum, by its normalisation and by the next
/// residual add, each of which lowering left recomputing h). The product
/// then stores h once, as an Add post-op, and its readers load it. Only on
/// a GPU: there each reader is a kernel of its own that loads both terms
/// again, and the product's epilogue reads x in the same pass that writes
/// h; the CPU's fused loops keep the recomputation. Returns whether it
/// folded.
bool foldResidualAdd(SymContext &ctx, LoopGraph &graph, TargetDevice device,
                     const std::set<uint32_t> &folded, uint32_t e);

/// On a GPU, folds the RMSNorm pointwise node `p` (and the sum of squares
/// it reads) into the matrix products that read its result as their left
/// rows: each then reads h and the norm weight g itself (an RmsNormPrologue)
/// and the normalised row is never stored. Only where the few-row kernel
/// runs every such product (it alone computes the prologue), on one row of
/// a decode step; anything else keeps the norm's kernel. Returns whether it
/// folded.
bool foldRmsNorm(SymContext &ctx, LoopGraph &graph, TargetDevice device,
                 std::set<uint32_t> &folded, uint32_t p);

} // namespace gc::schedule

#endif // GC_LIB_SCHEDULE_PRODUCTFOLDS_H
