//===- SourceText.h - How messages write a place in the user's code -*- C++ -*-===//
//
// One wording for a source location, shared by the compiler (gc::SourceLoc,
// gc/IR/SourceLoc.h) and the runtime (a plan step's sources), which links no
// compiler library.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_SOURCETEXT_H
#define GC_SUPPORT_SOURCETEXT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace gc {

/// "model.py:42 in forward (layers.3.attn: Attention)"; only the known
/// (non-empty, positive) parts are written, "" when none is.
inline std::string describeSource(std::string_view file, int64_t line, std::string_view function,
                                  std::string_view modulePath, std::string_view moduleClass) {
  std::string out;
  if (!file.empty()) {
    out = file;
    if (line > 0)
      out += ':' + std::to_string(line);
    if (!function.empty())
      out += " in " + std::string(function);
  }
  if (!modulePath.empty() || !moduleClass.empty()) {
    out += out.empty() ? "(" : " (";
    out += modulePath;
    if (!moduleClass.empty())
      out += (modulePath.empty() ? "" : ": ") + std::string(moduleClass);
    out += ')';
  }
  return out;
}

} // namespace gc

#endif // GC_SUPPORT_SOURCETEXT_H
