//===- Parser.h - Reading the text form -------------------------*- C++ -*-===//
#ifndef GC_PARSER_PARSER_H
#define GC_PARSER_PARSER_H

#include "gc/IR/Module.h"

#include <memory>
#include <string_view>

namespace gc {

/// Parses a module's text form. Errors are "file:line:col: message".
Expected<std::unique_ptr<Module>> parseModule(std::string_view text,
                                              std::string_view fileName);

} // namespace gc

#endif // GC_PARSER_PARSER_H
