//===- PackageWriter.h - Making packages ------------------------*- C++ -*-===//
//
// gc-package's side of packages (Package.h): the bytes of a package for a
// Kernels-level module, with its kernels linked. Not part of libgcrt.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PACKAGEWRITER_PACKAGEWRITER_H
#define GC_PACKAGEWRITER_PACKAGEWRITER_H

#include "gc/IR/Module.h"
#include "gc/Package/Package.h"
#include "gc/Support/Error.h"
#include "gc/Support/FileSystem.h"

#include <string>

namespace gc {

struct PackageOptions {
  /// An ld-compatible linker (docs/package.md).
  std::string linker = "ld";
  /// The directory the package will be written to: with external weights
  /// the package names the archive relative to it.
  std::string outputDir = ".";
};

/// Writes a package for `m`, a Kernels-level module, to `out`, holding the
/// weights as the module's target says (embedded where it has none). They
/// are checked against the module's SHA-256 digests, where it has them, and
/// copied from their sources as the package is written, never gathered in
/// memory. The bytes depend only on the module and the options. On an
/// error `out` holds a partial package (an OutputFile is then not
/// committed, so no file is left behind).
Error writePackage(const Module &m, const PackageOptions &options, ByteSink &out);

} // namespace gc

#endif // GC_PACKAGEWRITER_PACKAGEWRITER_H
