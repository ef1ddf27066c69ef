//===- WeightBinder.h - Binding a package's weights to bytes ----*- C++ -*-===//
#ifndef GC_LIB_PACKAGE_WEIGHTBINDER_H
#define GC_LIB_PACKAGE_WEIGHTBINDER_H

#include "gc/Package/PackageReader.h"

namespace gc {

/// Makes WeightBindings for a LoadedPackage whose module and external
/// weights table the reader has checked.
struct WeightBinder {
  /// Every weight of `p`: those the package holds in place, those of the
  /// archive source mapped from the archive at `archive`. `own`: it is the
  /// archive the package names, and each weight must match its SHA-256;
  /// otherwise it is another archive of the same architecture, and each
  /// weight's entry must have the size the package expects.
  static Expected<std::shared_ptr<const WeightBinding>>
  bind(const LoadedPackage &p, const std::string &archive, bool own);

  /// Runs `p`'s constant program (if its plan has one) on the weights `b`
  /// binds, and binds each computed weight to its output, in memory that
  /// `b` then owns. Errors name the package, the graph and the weight.
  static Error compute(const LoadedPackage &p, WeightBinding &b);

  /// `current` with weight `name` replaced by a copy of `value`.
  static Expected<std::shared_ptr<const WeightBinding>>
  replace(const LoadedPackage &p, const WeightBinding &current, const std::string &name,
          const TensorRef &value);
};

} // namespace gc

#endif // GC_LIB_PACKAGE_WEIGHTBINDER_H
