//===- PackageWriter.h - Making packages ------------------------*- C++ -*-===//
//
// gc-package's side of packages (Package.h): the bytes of a package for a
// Kernels-level module, with its kernels linked. Not part of libgcrt.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PACKAGE_PACKAGEWRITER_H
#define GC_PACKAGE_PACKAGEWRITER_H

#include "gc/IR/Module.h"
#include "gc/Package/Package.h"
#include "gc/Support/Error.h"

#include <string>

namespace gc {

struct PackageOptions {
  /// An ld-compatible linker (docs/package.md).
  std::string linker = "ld";
  WeightsMode weights = WeightsMode::Embed;
  /// The directory the package will be written to: with external weights
  /// the package names the archive relative to it.
  std::string outputDir = ".";
};

/// The bytes of a package for `m`, a Kernels-level module whose weights are
/// read from their sources (and checked against their SHA-256). The bytes
/// depend only on the module and the options.
Expected<std::string> buildPackage(const Module &m, const PackageOptions &options);

} // namespace gc

#endif // GC_PACKAGE_PACKAGEWRITER_H
