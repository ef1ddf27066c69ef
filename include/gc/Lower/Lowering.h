//===- Lowering.h - Core graphs to loop IR ----------------------*- C++ -*-===//
//
// gc-lower: each core graph of a module becomes a LoopGraph (LoopIR.h).
// Values are lowered lazily, as Inductor's GraphLowering does: a pointwise op
// becomes a body that its consumers inline, a view becomes an index rewrite,
// and a value becomes a buffer (is "realized") only when the heuristics say
// so: it is a graph output, a reduction, an extern's input, read by several
// consumers, or its body has grown large.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LOWER_LOWERING_H
#define GC_LOWER_LOWERING_H

#include "gc/IR/LayoutMode.h"
#include "gc/IR/LoopIR.h"
#include "gc/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gc {


struct LowerOptions {
  /// An op without a lowering is an error instead of a Fallback node.
  bool noFallback = false;
  /// A pointwise body with more operations than this is realized.
  unsigned maxInlineOps = 64;
  /// The layout of convolution networks' activations.
  LayoutMode layout = LayoutMode::Auto;
};

/// What lowering one graph produced besides the loop graph.
struct LowerReport {
  /// One line per core node that became a Fallback: "node 'x': aten.cumsum.default".
  std::vector<std::string> fallbacks;
  /// Intermediate buffers laid out channels-last (LayoutMode).
  int64_t channelsLastBuffers = 0;
};

/// Lowers every graph of `module` (level Core or Partitioned) in place: the
/// module's graphs are replaced by loop graphs and its level becomes Loops.
/// Errors name the graph, node and op.
Expected<LowerReport> lowerModule(Module &module, const LowerOptions &options);

/// Ops that have a lowering (for docs/ops.md).
std::vector<OpId> loweredOps();

} // namespace gc

#endif // GC_LOWER_LOWERING_H
