//===- Describe.h - How messages name a node ---------------------*- C++ -*-===//
//
// The one place that decides how an error or warning names a node: its
// result, its op, and where in the user's model it came from, so that every
// stage points the user at their own source line (docs/debugging.md).
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_DESCRIBE_H
#define GC_IR_DESCRIBE_H

#include "gc/IR/LoopIR.h"

#include <string>

namespace gc {

/// " at model.py:42 in forward (layers.3.attn: Attention)", or "" for null.
std::string locSuffix(const SourceLoc *loc);
/// "node %add_1 (aten.add.Tensor)" (a node without results: "node
/// aten.foo.default"), then locSuffix.
std::string describeNode(const Node &n);
/// "node 'name'", then locSuffix.
std::string describeNode(const LoopNode &n);

} // namespace gc

#endif // GC_IR_DESCRIBE_H
