//===- SympyExpr.h - Reading torch's symbolic size expressions --*- C++ -*-===//
#ifndef GC_IMPORT_SYMPYEXPR_H
#define GC_IMPORT_SYMPYEXPR_H

#include "gc/IR/SymExpr.h"

namespace gc {

/// Parses the `expr_str` of a torch.export symbolic size. torch writes
/// sympy's srepr form ("Mul(Integer(2), Symbol('s0', integer=True))"); older
/// archives use infix text ("2*s0 + 1"). Both are accepted: calls of Symbol,
/// Integer, Add, Mul, Pow (integer exponent), FloorDiv, Mod, PythonMod, Max,
/// Min, and infix + - * // % ** with parentheses. Keyword arguments of calls
/// (assumptions such as positive=True) are ignored.
Expected<const SymExpr *> parseSympyExpr(std::string_view text, SymContext &ctx);

} // namespace gc

#endif // GC_IMPORT_SYMPYEXPR_H
