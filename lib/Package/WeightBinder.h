//===- WeightBinder.h - Binding a package's weights to bytes ----*- C++ -*-===//
#ifndef GC_LIB_PACKAGE_WEIGHTBINDER_H
#define GC_LIB_PACKAGE_WEIGHTBINDER_H

#include "gc/Package/PackageReader.h"

#include <chrono>

namespace gc {

/// Makes WeightBindings for a LoadedPackage whose module and external
/// weights table the reader has checked.
struct WeightBinder {
  /// Every weight of `p`: those the package holds in place, those of the
  /// archive source mapped from the archive at `archive`. `own`: it is the
  /// archive the package names, and each entry must match the CRC-32 the
  /// package recorded (each weight its SHA-256, in packages from before);
  /// otherwise it is another archive of the same architecture, each
  /// weight's entry must have the size the package expects, and match the
  /// archive's own CRC-32. Entries are checked once each, and only where
  /// the package was opened with OpenOptions::verifyWeights.
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

/// How a VerifiedEntry records a CRC-32: "CRC-32 1a2b3c4d".
std::string crcCheck(uint32_t crc);
/// Seconds from `start` to now, for VerifiedEntry::seconds.
double secondsSince(std::chrono::steady_clock::time_point start);

} // namespace gc

#endif // GC_LIB_PACKAGE_WEIGHTBINDER_H
