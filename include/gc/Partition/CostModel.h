//===- CostModel.h - What saving a value costs ------------------*- C++ -*-===//
//
// A saved value costs the bytes it occupies between the forward and the
// backward graph. Symbolic sizes are evaluated with one hint per symbol:
// 1024 clamped into the symbol's range (so its minimum when that is above
// 1024, its maximum when that is below), the same hint for every size it
// appears in, so that the comparison between values stays meaningful.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PARTITION_COSTMODEL_H
#define GC_PARTITION_COSTMODEL_H

#include "gc/IR/Module.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <string>

namespace gc {

inline constexpr int64_t kDefaultSymbolHint = 1024;

/// The value symbol `name` stands for in costs.
int64_t symbolHint(const SymContext &syms, const std::string &name);

/// Bytes of `v`: elements times element size for a tensor, 8 for a symbolic
/// scalar.
Expected<uint64_t> valueBytes(const SymContext &syms, const Value &v);

} // namespace gc

#endif // GC_PARTITION_COSTMODEL_H
