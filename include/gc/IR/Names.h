//===- Names.h - What names the text form can hold --------------*- C++ -*-===//
#ifndef GC_IR_NAMES_H
#define GC_IR_NAMES_H

#include <string_view>

namespace gc {

/// Op names: dot-separated parts of letters, digits and '_', starting with
/// a letter or '_' ("aten.add.Tensor", "aten.__and__.Tensor").
bool isOpName(std::string_view s);
/// Value and graph names: letters, digits, '_' and '.' (torch's names are
/// Python identifiers, possibly with a leading digit after renaming).
bool isValueName(std::string_view s);
/// Argument names: a letter or '_', then letters, digits and '_' (Python
/// parameter names: "self", "keepdim", "max").
bool isArgName(std::string_view s);
/// Symbol names: a letter or '_', then letters, digits and '_'; not one of
/// the expression functions (floordiv, mod, min, max).
bool isSymbolName(std::string_view s);

} // namespace gc

#endif // GC_IR_NAMES_H
