//===- Printer.h - The text form of a module --------------------*- C++ -*-===//
#ifndef GC_IR_PRINTER_H
#define GC_IR_PRINTER_H

#include "gc/IR/Module.h"

#include <string>

namespace gc {

struct LoopGraph;

/// The module's text form (see docs/formats.md). Parsing it gives back an
/// equal module, and printing that gives back the same text.
std::string printModule(const Module &m);
/// One loop graph and the symbol ranges it may use, without the module's
/// weights or their paths: what a kernel's code depends on.
std::string printLoopGraph(const Module &m, const LoopGraph &g);
/// The text of one type, as it appears in the module text: "f32[2, s0]".
std::string printType(const Type &t);

} // namespace gc

#endif // GC_IR_PRINTER_H
