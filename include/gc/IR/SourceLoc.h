//===- SourceLoc.h - Where in the user's model a node came from -*- C++ -*-===//
//
// torch.export records, per node, the user's stack (`stack_trace`) and the
// module path (`nn_module_stack`). gc keeps the innermost frame and the
// innermost module as a SourceLoc, interned once per module, so that every
// node holds one pointer and every pass can hand it on (docs/debugging.md).
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_SOURCELOC_H
#define GC_IR_SOURCELOC_H

#include <compare>
#include <cstdint>
#include <set>
#include <string>

namespace gc {

/// One place in the user's code. Empty fields are unknown; an archive without
/// a stack trace still names the module.
struct SourceLoc {
  std::string file;     ///< as the archive holds it (often an absolute path)
  int64_t line = 0;     ///< 1-based; 0 when unknown
  std::string function; ///< the frame's function ("forward")
  std::string modulePath;  ///< "layers.3.attn"; empty at the root module
  std::string moduleClass; ///< the module's class without its Python module ("Attention")
  auto operator<=>(const SourceLoc &) const = default;
  bool operator==(const SourceLoc &) const = default;
};

/// "model.py:42 in forward (layers.3.attn: Attention)": how every message
/// about a node names its source; only the known parts are written.
std::string describeLoc(const SourceLoc &loc);

/// Interns SourceLocs: equal locations share one address, which stays valid
/// as long as the table (its module) lives.
class SourceLocTable {
public:
  const SourceLoc *intern(const SourceLoc &loc) { return &*locs_.insert(loc).first; }
  size_t size() const { return locs_.size(); }

private:
  std::set<SourceLoc> locs_;
};

} // namespace gc

#endif // GC_IR_SOURCELOC_H
