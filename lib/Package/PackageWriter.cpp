//===- PackageWriter.cpp - Building a package -----------------------------===//
#include "gc/Package/Package.h"

#include "Metadata.h"
#include "PackageFormat.h"

#include "gc/Bytecode/FlatBufferIO.h"
#include "gc/IR/LoopIR.h"
#include "gc/Package/Compression.h"
#include "gc/Package/Linker.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/Zip.h"

namespace gc {

namespace {

using namespace package;

uint64_t alignUp(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

std::string versionText() {
  return std::to_string(kPackageMajor) + "." + std::to_string(kPackageMinor) + "\n";
}

/// The entries before the weights. Where an entry's data starts depends
/// only on what comes before it and on its name, so a probe archive with
/// an empty weights entry tells where the real one's data will start.
void addHead(ZipWriter &zip) {
  zip.add(kFormatEntry, kPackageFormat);
  zip.add(kVersionEntry, versionText());
}

Expected<uint64_t> weightsDataOffset() {
  ZipWriter probe(kAlignment);
  addHead(probe);
  probe.add(kWeightsEntry, "");
  Expected<ZipArchive> zip = ZipArchive::open(MappedFile::fromBuffer("<probe>", probe.finish()));
  if (!zip)
    return zip.error();
  return zip->find(kWeightsEntry)->dataOffset;
}

/// Every weight of `m`, each at an aligned offset, in the module's order;
/// `offsets` receives where each one starts within the blob.
Expected<std::string> gatherWeights(const Module &m, std::vector<uint64_t> &offsets) {
  std::vector<std::shared_ptr<MappedFile>> files(m.weightSources().size());
  const auto &pending = m.pendingBlob();
  std::string blob;
  for (const Weight &w : m.weights()) {
    if (w.source >= files.size())
      return makeError() << "weight '" << w.name << "' names source " << w.source
                         << ", but the module has " << files.size();
    std::string path = resolvePath(m.weightSources()[w.source].path, m.sourceBaseDir());
    std::shared_ptr<MappedFile> &file = files[w.source];
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
    // silently wrong weights.
    if (!w.sha256.empty() && sha256Hex(bytes) != w.sha256)
      return makeError() << "weight '" << w.name << "': the bytes in '" << file->path()
                         << "' do not match the module's SHA-256";
    blob.resize(alignUp(blob.size()), '\0');
    offsets.push_back(blob.size());
    blob.append(bytes);
  }
  return blob;
}

/// A copy of `m` as the package holds it: weights in the package itself at
/// `weightOffsets`, no object code (the shared libraries replace it).
Expected<std::unique_ptr<Module>> packagedModule(const Module &m,
                                                 const std::vector<uint64_t> &weightOffsets) {
  std::string bytes = writeModuleFlatBuffer(m);
  Expected<std::unique_ptr<Module>> copy = readModuleFlatBuffer(
      std::span(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()), "<module>");
  if (!copy)
    return copy.error();
  Module &p = **copy;
  p.pendingBlob().reset();
  p.weightSources() = {WeightSource{WeightSource::Kind::Archive, ""}};
  for (size_t i = 0; i < p.weights().size(); ++i) {
    p.weights()[i].source = 0;
    p.weights()[i].offset = weightOffsets[i];
  }
  for (const auto &g : p.loopGraphs())
    g->plan.objectCode.clear();
  return copy;
}

} // namespace

Expected<std::string> buildPackage(const Module &m, const PackageOptions &options) {
  if (m.level() != Level::Kernels)
    return makeError() << "a package needs a module at the kernels level (from gc-codegen), not "
                       << levelName(m.level());
  if (m.loopGraphs().empty())
    return makeError() << "the module has no graph to package";

  std::vector<uint64_t> offsets;
  Expected<std::string> weights = gatherWeights(m, offsets);
  if (!weights)
    return weights.error();
  Expected<uint64_t> base = weightsDataOffset();
  if (!base)
    return base.error();
  for (uint64_t &o : offsets)
    o += *base;

  Expected<std::unique_ptr<Module>> packaged = packagedModule(m, offsets);
  if (!packaged)
    return packaged.error();

  std::vector<std::pair<std::string, std::string>> libraries;
  for (size_t i = 0; i < m.loopGraphs().size(); ++i) {
    const LoopGraph &g = *m.loopGraphs()[i];
    if (g.plan.kernels.empty())
      continue;
    if (g.plan.objectCode.empty())
      return makeError() << "graph @" << g.name << " has kernels but no object code";
    Expected<std::string> library = linkSharedLibrary(g.plan.objectCode, options.linker);
    if (!library)
      return library.error().withContext("graph @" + g.name);
    libraries.emplace_back(kernelsEntry(i), compressZstd(*library));
  }
  std::string metadata = compressZstd(package::packageMetadata(**packaged, options));
  std::string module = compressZstd(writeModuleFlatBuffer(**packaged));

  uint64_t total = *base + weights->size() + metadata.size() + module.size();
  for (const auto &[name, bytes] : libraries)
    total += bytes.size();
  // Headers and padding take a little more; leave them ample room.
  if (total + (1u << 20) > kMaxArchiveBytes)
    return makeError() << "the package would hold about " << total
                       << " bytes; packages over 4 GiB (zip64) are not supported yet";

  ZipWriter zip(kAlignment);
  addHead(zip);
  zip.add(kWeightsEntry, *weights);
  zip.add(kMetadataEntry, metadata);
  zip.add(kModuleEntry, module);
  for (const auto &[name, bytes] : libraries)
    zip.add(name, bytes);
  return zip.finish();
}

} // namespace gc
