//===- NodeMetadata.h - A node's source location in an archive -*- C++ -*-===//
//
// torch.export writes, in each node's `metadata`, the user's stack
// (`stack_trace`) and the modules the call was made in (`nn_module_stack`);
// gc-import keeps one SourceLoc of them per node (docs/debugging.md).
//
//===----------------------------------------------------------------------===//
#ifndef GC_IMPORT_NODEMETADATA_H
#define GC_IMPORT_NODEMETADATA_H

#include "gc/IR/SourceLoc.h"

#include <nlohmann/json.hpp>

#include <optional>

namespace gc {

/// The innermost frame of `stack_trace` outside torch's own package
/// ("File \"m.py\", line 42, in forward\n    code"), so that a call to
/// `self.fc(x)` is the user's line, not nn.Linear's; and the innermost entry
/// of `nn_module_stack` ("key,path,pkg.Class;..."). None when the metadata
/// has neither a frame nor a module below the root. Metadata is advisory: a
/// form gc does not recognize is left out, never an error.
std::optional<SourceLoc> sourceLocOf(const nlohmann::json &node);

} // namespace gc

#endif // GC_IMPORT_NODEMETADATA_H
