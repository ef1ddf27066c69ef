//===- Metadata.h - The package's metadata JSON -----------------*- C++ -*-===//
#ifndef GC_LIB_PACKAGEWRITER_METADATA_H
#define GC_LIB_PACKAGEWRITER_METADATA_H

#include "gc/IR/Module.h"
#include "gc/PackageWriter/PackageWriter.h"

#include <string>

namespace gc::package {

/// What a deployment wants to know without reading the module: versions,
/// flags, size symbols with their ranges, and per graph its target, inputs,
/// outputs (names, roles, dtypes, shapes) and mutated buffers. `m` is the
/// packaged module. Keys keep a fixed order, so the text is deterministic.
std::string packageMetadata(const Module &m, const PackageOptions &options);

} // namespace gc::package

#endif // GC_LIB_PACKAGEWRITER_METADATA_H
