//===- Importer.h - torch.export archives to aten-level modules -*- C++ -*-===//
#ifndef GC_IMPORT_IMPORTER_H
#define GC_IMPORT_IMPORTER_H

#include "gc/IR/Module.h"
#include "gc/Support/FileSystem.h"

#include <memory>
#include <string>

namespace gc {

struct ImportOptions {
  enum class WeightMode {
    Reference, ///< weights stay in the archive, read in place
    Blob,      ///< weights are copied into one aligned blob file
  };
  WeightMode weights = WeightMode::Reference;
  /// Blob mode: where the blob will be written.
  std::string blobPath;
  /// Which models/<name>.json of the archive to read.
  std::string modelName = "model";
  /// Record each weight's SHA-256, with which a later stage that reopens
  /// the weights' source checks that it did not change. gc-compile, which
  /// packages from the mapping it imported, skips the pass over the bytes.
  bool hashWeights = true;
};

struct ImportResult {
  std::unique_ptr<Module> module;
  /// Blob mode: the blob's bytes, for the caller to write next to the module.
  std::string blob;
};

/// Reads a torch.export archive (PyTorch 2.8+, schema major version 8) into
/// an aten-level module: graph, signature, symbols and weights. Every
/// failure names the archive and the entry, node or weight at fault.
Expected<ImportResult> importArchive(std::shared_ptr<MappedFile> archive,
                                     const ImportOptions &options);

} // namespace gc

#endif // GC_IMPORT_IMPORTER_H
