//===- PackageWriter.cpp - Building a package -----------------------------===//
#include "gc/PackageWriter/PackageWriter.h"

#include "Metadata.h"

#include "gc/IR/LoopIR.h"
#include "gc/Package/Compression.h"
#include "gc/Package/PackageFormat.h"
#include "gc/PackageWriter/Linker.h"
#include "gc/Plan/PlanBuilder.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/TargetObjects.h"
#include "gc/Support/Zip.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

namespace gc {

namespace {

using namespace package;

uint64_t alignUp(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

std::string versionText() {
  return std::to_string(kPackageMajor) + "." + std::to_string(kPackageMinor) + "\n";
}

/// The entries before the weights.
Error addHead(ZipWriter &zip) {
  GC_RETURN_IF_ERROR(zip.add(kFormatEntry, kPackageFormat));
  return zip.add(kVersionEntry, versionText());
}

/// The weights that stay in the source archive (--weights=external): the
/// archive's path as the package names it, and where each weight lies.
struct ExternalPlan {
  uint32_t source = 0; ///< the module's weight source that is the archive
  std::string archive; ///< relative to the package's directory
  std::vector<ExternalWeight> weights;
};

/// For external weights (the module's target says), the weights of `m` that
/// are entries of its source archive, each checked against its SHA-256
/// (weights of a blob, such as the constants --freeze computed, go into the
/// package). None for an embedded package or a module without an archive
/// source.
Expected<std::optional<ExternalPlan>> planExternal(const Module &m, const PackageOptions &options) {
  if (!m.target() || m.target()->weights != WeightsMode::External)
    return std::optional<ExternalPlan>();
  std::optional<uint32_t> source;
  for (uint32_t i = 0; i < m.weightSources().size(); ++i) {
    if (m.weightSources()[i].kind != WeightSource::Kind::Archive)
      continue;
    if (source)
      return makeError() << "--weights=external needs one source archive, but the module names '"
                         << m.weightSources()[*source].path << "' and '"
                         << m.weightSources()[i].path << "'";
    source = i;
  }
  if (!source)
    return std::optional<ExternalPlan>();
  std::string path = resolvePath(m.weightSources()[*source].path, m.sourceBaseDir());
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  Expected<ZipArchive> zip = ZipArchive::open(*file);
  if (!zip)
    return zip.error();
  // Entries by where their data starts, to find the one holding a weight.
  std::vector<const ZipEntry *> byOffset;
  for (const ZipEntry &e : zip->entries())
    byOffset.push_back(&e);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const ZipEntry *a, const ZipEntry *b) { return a->dataOffset < b->dataOffset; });

  ExternalPlan plan;
  plan.source = *source;
  plan.archive = relativePath(path, options.outputDir);
  for (const Weight &w : m.weights()) {
    if (w.source != *source)
      continue;
    auto it = std::upper_bound(byOffset.begin(), byOffset.end(), w.offset,
                               [](uint64_t o, const ZipEntry *e) { return o < e->dataOffset; });
    const ZipEntry *e = it == byOffset.begin() ? nullptr : *(it - 1);
    if (!e || e->method != 0 || w.offset - e->dataOffset > e->compressedSize ||
        w.bytes > e->compressedSize - (w.offset - e->dataOffset))
      return makeError() << "weight '" << w.name << "': " << w.bytes << " bytes at offset "
                         << w.offset << " of '" << path << "' are not inside one stored entry";
    std::string digest = sha256Hex(**file, w.offset, w.bytes);
    if (!w.sha256.empty() && digest != w.sha256)
      return makeError() << "weight '" << w.name << "': the bytes in '" << path
                         << "' do not match the module's SHA-256";
    plan.weights.push_back(
        ExternalWeight{w.name, e->name, e->compressedSize, w.offset - e->dataOffset, w.bytes,
                       std::move(digest), e->crc32});
  }
  return std::optional(std::move(plan));
}

/// The external_weights entry's JSON: the archive, then per weight in the
/// module's order its entry, offset, size, dtype, shape, SHA-256 and the
/// entry's CRC-32.
std::string externalJson(const Module &m, const ExternalPlan &plan) {
  nlohmann::ordered_json j;
  j["archive"] = plan.archive;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ExternalWeight &x : plan.weights) {
    const Weight &w = *m.weight(x.name);
    nlohmann::ordered_json e;
    e["name"] = x.name;
    e["entry"] = x.entry;
    e["entry_bytes"] = x.entryBytes;
    e["offset"] = x.offset;
    e["bytes"] = x.bytes;
    e["dtype"] = dtypeName(w.type.dtype);
    nlohmann::ordered_json shape = nlohmann::ordered_json::array();
    for (const SymExpr *s : w.type.sizes)
      shape.push_back(s->constant());
    e["shape"] = shape;
    e["sha256"] = x.sha256;
    e["entry_crc32"] = *x.entryCrc32;
    list.push_back(e);
  }
  j["weights"] = list;
  return j.dump(2) + "\n";
}

/// The weights entry: every weight of `m` that the package holds (all but
/// those of the archive source `external`, if any), each at an aligned
/// offset, in the module's order, as pieces of the mapped sources (nothing
/// is copied until the entry is written); `offsets` receives where each
/// weight starts within the entry (0 for one it does not hold).
struct WeightsLayout {
  std::vector<ZipPiece> pieces;
  uint64_t bytes = 0;
  /// The mappings the pieces point into.
  std::vector<std::shared_ptr<MappedFile>> files;
};

Expected<WeightsLayout> layoutWeights(const Module &m, std::optional<uint32_t> external,
                                      std::vector<uint64_t> &offsets) {
  static const char kZeros[kAlignment] = {};
  WeightsLayout layout;
  layout.files.resize(m.weightSources().size());
  const auto &pending = m.pendingBlob();
  for (const Weight &w : m.weights()) {
    if (w.source >= layout.files.size())
      return makeError() << "weight '" << w.name << "' names source " << w.source
                         << ", but the module has " << layout.files.size();
    if ((external && w.source == *external) ||
        m.weightSources()[w.source].kind == WeightSource::Kind::Program) {
      offsets.push_back(0);
      continue;
    }
    std::string path = resolvePath(m.weightSources()[w.source].path, m.sourceBaseDir());
    std::shared_ptr<MappedFile> &file = layout.files[w.source];
    if (!file && pending && pending->source == w.source)
      file = MappedFile::fromBuffer("<constants in memory>", pending->bytes);
    if (!file) {
      Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path);
      if (!f)
        return makeError() << "weight '" << w.name << "': " << f.error().message();
      file = *f;
    }
    std::string_view text = file->text();
    if (w.offset > text.size() || w.bytes > text.size() - w.offset)
      return makeError() << "weight '" << w.name << "': '" << file->path() << "' has "
                         << text.size() << " bytes, too few for " << w.bytes
                         << " bytes at offset " << w.offset;
    std::string_view bytes = text.substr(w.offset, w.bytes);
    // A source changed since the module was made would otherwise ship
    // silently wrong weights. A module fresh from the importer in this
    // process has no digests to check (gc-compile).
    if (!w.sha256.empty() && sha256Hex(*file, w.offset, w.bytes) != w.sha256)
      return makeError() << "weight '" << w.name << "': the bytes in '" << file->path()
                         << "' do not match the module's SHA-256";
    if (uint64_t padding = alignUp(layout.bytes) - layout.bytes) {
      layout.pieces.push_back(ZipPiece{std::string_view(kZeros, padding)});
      layout.bytes += padding;
    }
    offsets.push_back(layout.bytes);
    layout.pieces.push_back(ZipPiece{bytes, file.get()});
    layout.bytes += bytes.size();
  }
  return layout;
}

/// A copy of `m` as the package describes it (in its plan and metadata):
/// weights in the package itself at `weightOffsets` (source 0), those of
/// the archive (`external`) at their offsets in it (source kArchiveSource),
/// those the constant program computes with a Program source, no object
/// code (the shared libraries replace it).
std::unique_ptr<Module> packagedModule(const Module &m,
                                       const std::vector<uint64_t> &weightOffsets,
                                       std::optional<uint32_t> external) {
  std::unique_ptr<Module> copy = m.clone();
  Module &p = *copy;
  p.pendingBlob().reset();
  p.weightSources() = {WeightSource{WeightSource::Kind::Archive, ""}};
  if (external)
    p.weightSources().push_back(WeightSource{WeightSource::Kind::Archive, ""});
  std::optional<uint32_t> program;
  for (size_t i = 0; i < p.weights().size(); ++i) {
    Weight &w = p.weights()[i];
    if (external && w.source == *external) {
      w.source = kArchiveSource;
      continue;
    }
    if (m.weightSources()[w.source].kind == WeightSource::Kind::Program) {
      if (!program) {
        program = static_cast<uint32_t>(p.weightSources().size());
        p.weightSources().push_back(WeightSource{WeightSource::Kind::Program, ""});
      }
      w.source = *program;
      w.offset = 0;
      continue;
    }
    w.source = 0;
    w.offset = weightOffsets[i];
  }
  for (const auto &g : p.loopGraphs())
    g->plan.objectCode.clear();
  return copy;
}

} // namespace

Error writePackage(const Module &m, const PackageOptions &options, ByteSink &out) {
  if (m.level() != Level::Kernels)
    return makeError() << "a package needs a module at the kernels level (from gc-codegen), not "
                       << levelName(m.level());
  if (m.loopGraphs().empty())
    return makeError() << "the module has no graph to package";

  Expected<std::optional<ExternalPlan>> external = planExternal(m, options);
  if (!external)
    return external.error();
  std::optional<uint32_t> externalSource;
  if (*external)
    externalSource = (*external)->source;
  std::vector<uint64_t> offsets;
  Expected<WeightsLayout> weights = layoutWeights(m, externalSource, offsets);
  if (!weights)
    return weights.error();
  // Where an entry's data starts depends only on what comes before it, its
  // name and its size, so the weights' offsets in the file are known
  // before anything is written.
  ZipWriter zip(out, kAlignment);
  GC_RETURN_IF_ERROR(addHead(zip));
  uint64_t base = zip.nextDataOffset(kWeightsEntry, weights->bytes);
  for (uint64_t &o : offsets)
    o += base;

  std::unique_ptr<Module> packaged = packagedModule(m, offsets, externalSource);

  std::vector<std::pair<std::string, std::string>> libraries;
  // Per graph, the entries of its kernels: one per CPU level it was built for.
  std::vector<std::string> kernelEntries(m.loopGraphs().size());
  for (size_t i = 0; i < m.loopGraphs().size(); ++i) {
    const LoopGraph &g = *m.loopGraphs()[i];
    if (g.plan.kernels.empty())
      continue;
    if (g.plan.objectCode.empty())
      return makeError() << "graph @" << g.name << " has kernels but no object code";
    TargetDevice device = targetDevice(g.plan.target);
    if (device == TargetDevice::CUDA) {
      // The driver loads a fatbinary as it is.
      kernelEntries[i] = kernelsEntry(i, device);
      libraries.emplace_back(kernelEntries[i], compressZstd(g.plan.objectCode));
      continue;
    }
    Expected<std::vector<TargetObject>> objects = targetObjects(g.plan.target, g.plan.objectCode);
    if (!objects)
      return objects.error().withContext("graph @" + g.name);
    for (const TargetObject &o : *objects) {
      Expected<std::string> library = linkSharedLibrary(o.object, options.linker);
      if (!library)
        return library.error().withContext("graph @" + g.name);
      std::string entry = kernelsEntry(i, device, objects->size() > 1 ? o.target : "");
      kernelEntries[i] += (kernelEntries[i].empty() ? "" : ",") + entry;
      libraries.emplace_back(std::move(entry), compressZstd(*library));
    }
  }
  std::string metadata = compressZstd(package::packageMetadata(*packaged, options));
  PlanOptions planOptions;
  if (externalSource)
    planOptions.archiveSource = kArchiveSource;
  planOptions.kernelLibrary = [&](size_t graph) { return kernelEntries[graph]; };
  Expected<std::string> plan = buildRuntimePlan(*packaged, planOptions);
  if (!plan)
    return plan.error();
  std::string planFrame = compressZstd(*plan);
  std::string externalTable;
  if (*external)
    externalTable = compressZstd(externalJson(*packaged, **external));

  GC_RETURN_IF_ERROR(zip.add(kWeightsEntry, weights->pieces));
  GC_RETURN_IF_ERROR(zip.add(kMetadataEntry, metadata));
  GC_RETURN_IF_ERROR(zip.add(kPlanEntry, planFrame));
  for (const auto &[name, bytes] : libraries)
    GC_RETURN_IF_ERROR(zip.add(name, bytes));
  if (*external)
    GC_RETURN_IF_ERROR(zip.add(kExternalWeightsEntry, externalTable));
  return zip.finish();
}

} // namespace gc
