//===- Package.h - Deployable packages --------------------------*- C++ -*-===//
//
// A package (.gcpkg) is what gc-package makes from a Kernels-level module: a
// zip archive, in the manner of torch.export's .pt2, holding everything a
// deployment needs and nothing it does not (docs/package.md):
//
//   archive_format       "gc-package"
//   version              "<major>.<minor>"
//   weights              every weight, each 64-byte aligned, never compressed
//   metadata.json.zst    inputs, outputs, symbols, versions, target, flags
//   module.gcm.zst       the module's graph file, without object code
//   kernels/<i>.so.zst   loop graph i's kernels, linked as a shared library
//
// Entries are stored and 64-byte aligned, so the weights are used in place
// in the mapped file. The module's weights name the package itself as their
// source, at their offsets in the file.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PACKAGE_PACKAGE_H
#define GC_PACKAGE_PACKAGE_H

#include "gc/IR/Module.h"
#include "gc/Runtime/Runtime.h"
#include "gc/Support/Error.h"
#include "gc/Support/FileSystem.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gc {

/// The format this build writes. A reader accepts the same major version
/// and any minor version up to its own.
inline constexpr const char *kPackageFormat = "gc-package";
inline constexpr uint32_t kPackageMajor = 1;
inline constexpr uint32_t kPackageMinor = 0;

struct PackageOptions {
  /// An ld-compatible linker (docs/package.md).
  std::string linker = "ld";
};

/// The bytes of a package for `m`, a Kernels-level module whose weights are
/// read from their sources (and checked against their SHA-256). The bytes
/// depend only on the module and the options.
Expected<std::string> buildPackage(const Module &m, const PackageOptions &options);

/// True if `bytes` start like a package (a zip whose first entry is
/// archive_format); a cheap test for tools that take any kind of file.
bool isPackage(std::span<const uint8_t> bytes);

/// A package opened for running: its module, its kernels loaded, its
/// weights in place. Everything is validated when it is opened.
class LoadedPackage {
public:
  ~LoadedPackage();
  LoadedPackage(const LoadedPackage &) = delete;
  LoadedPackage &operator=(const LoadedPackage &) = delete;

  const Module &module() const { return *module_; }
  const MappedFile &file() const { return *file_; }
  /// The kernels of module().loopGraphs()[graph].
  const KernelLibrary &kernels(size_t graph) const { return *kernels_[graph]; }
  /// The bytes of a weight of module(), in place in the package.
  std::span<const uint8_t> weightBytes(const Weight &w) const;

private:
  friend class PackageReader;
  LoadedPackage() = default;
  std::shared_ptr<MappedFile> file_;
  std::unique_ptr<Module> module_;
  std::vector<std::unique_ptr<KernelLibrary>> kernels_;
};

/// Opens the package at `path` ("-" reads stdin). The module's weight
/// source is `path`, so loadWeights() works on it too. Errors name the file
/// and the entry.
Expected<std::unique_ptr<LoadedPackage>> openPackage(const std::string &path);
/// Opens a package whose bytes are already in memory (MappedFile::fromBuffer).
Expected<std::unique_ptr<LoadedPackage>> openPackage(std::shared_ptr<MappedFile> file);

/// A loop graph of an opened package, ready to run many times on user
/// inputs, with the package's weights bound in place. Not safe to run from
/// two threads at once; separate executors over one package may run
/// concurrently.
class PackageExecutor {
public:
  /// `graph` indexes module().loopGraphs().
  static Expected<std::unique_ptr<PackageExecutor>>
  create(std::shared_ptr<const LoadedPackage> package, size_t graph,
         const RuntimeOptions &options);

  const LoopGraph &graph() const { return graph_; }
  /// One per user input, in order.
  Expected<std::vector<std::vector<int64_t>>> outputSizes(std::span<const TensorRef> userInputs);
  /// `outputs` has one per graph output, of the sizes outputSizes gives.
  Error run(std::span<const TensorRef> userInputs, std::span<const TensorRef> outputs);
  /// Time per step (RuntimeOptions::profile).
  std::vector<StepProfile> profile() const { return executor_->profile(); }

private:
  PackageExecutor(std::shared_ptr<const LoadedPackage> package, const LoopGraph &graph)
      : package_(std::move(package)), graph_(graph) {}
  Expected<std::span<const TensorRef>> bind(std::span<const TensorRef> userInputs);

  std::shared_ptr<const LoadedPackage> package_;
  const LoopGraph &graph_;
  std::unique_ptr<Executor> executor_;
  /// Every graph input: weights filled in at creation, user inputs per call.
  std::vector<TensorRef> inputs_;
  std::vector<size_t> userSlots_;
};

} // namespace gc

#endif // GC_PACKAGE_PACKAGE_H
