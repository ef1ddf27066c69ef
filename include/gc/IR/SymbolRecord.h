//===- SymbolRecord.h - A size symbol as files write it ---------*- C++ -*-===//
//
// The module's symbols live in its SymContext, a class; on the way in and
// out of a file they are plain records: a name and a range. The graph
// file's symbol table (formats/graph.fbs, lib/GraphFile) and the text
// form's `symbol` items (Printer.cpp, lib/Parser) both write this one, so it
// belongs to the IR rather than to either format.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_SYMBOLRECORD_H
#define GC_IR_SYMBOLRECORD_H

#include "gc/IR/Fields.h"

namespace gc {

struct FileSymbol {
  std::string name;
  int64_t min = 0;
  int64_t max = SymRange::kUnbounded;
};

template <> inline constexpr auto kFields<FileSymbol> = std::tuple(
    field("name", &FileSymbol::name), field("min", &FileSymbol::min), field("max", &FileSymbol::max));

} // namespace gc

#endif // GC_IR_SYMBOLRECORD_H
