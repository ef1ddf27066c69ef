//===- PackageReader.cpp - Opening a package ------------------------------===//
//
// Everything in a package is checked before it is used: the format and
// version, every entry's presence, method, CRC-32 (the weights excepted:
// they may be large and are covered by their own SHA-256, which gc-package
// checked) and decompressed size, the module, and every weight's place.
// A failure names the package file and the entry.
//
//===----------------------------------------------------------------------===//
#include "gc/Package/PackageReader.h"

#include "PackageFormat.h"
#include "WeightBinder.h"

#include "gc/GraphFile/FlatBufferIO.h"
#include "gc/IR/LoopIR.h"
#include "gc/Package/Compression.h"
#include "gc/Package/SharedLibrary.h"
#include "gc/Support/Zip.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

namespace gc {

namespace {

using namespace package;

/// What a section may claim to decompress to, so that a corrupt size never
/// turns into a huge allocation: at most 4 GiB, and at most 1024 times its
/// compressed size (beyond a first MiB), far above what plans and code reach.
uint64_t maxDecompressed(std::string_view frame) {
  return std::min<uint64_t>(4ull << 30, std::max<uint64_t>(1u << 20, frame.size() * 1024));
}

/// A library for a graph whose plan has no kernels (every step an extern
/// or a fallback): it resolves nothing, and nothing asks it to.
class NoKernels final : public KernelLibrary {
public:
  KernelEntryFn lookup(const std::string &) const override { return nullptr; }
};

std::optional<std::pair<uint32_t, uint32_t>> parseVersion(std::string_view text) {
  if (!text.empty() && text.back() == '\n')
    text.remove_suffix(1);
  size_t dot = text.find('.');
  if (dot == std::string_view::npos)
    return std::nullopt;
  uint32_t major = 0, minor = 0;
  const char *end = text.data() + text.size();
  auto [p1, e1] = std::from_chars(text.data(), text.data() + dot, major);
  auto [p2, e2] = std::from_chars(text.data() + dot + 1, end, minor);
  if (e1 != std::errc() || e2 != std::errc() || p1 != text.data() + dot || p2 != end ||
      dot == 0 || dot + 1 == text.size())
    return std::nullopt;
  return std::pair(major, minor);
}

/// Whether every element the weight's layout addresses lies in its bytes,
/// so that running never reads past them.
bool fitsItsBytes(const Weight &w) {
  if (!w.type.storageOffset || !w.type.storageOffset->isConst() ||
      w.type.strides.size() != w.type.rank())
    return false;
  int64_t last = w.type.storageOffset->constant();
  if (last < 0)
    return false;
  for (size_t d = 0; d < w.type.rank(); ++d) {
    const SymExpr *size = w.type.sizes[d], *stride = w.type.strides[d];
    if (!size->isConst() || !stride->isConst() || size->constant() < 0 || stride->constant() < 0)
      return false;
    if (size->constant() == 0)
      return true;
    int64_t reach = 0;
    if (__builtin_mul_overflow(size->constant() - 1, stride->constant(), &reach) ||
        __builtin_add_overflow(last, reach, &last))
      return false;
  }
  return static_cast<uint64_t>(last + 1) * dtypeSize(w.type.dtype) <= w.bytes;
}

} // namespace

class PackageReader {
public:
  PackageReader(ZipArchive zip, const OpenOptions &options)
      : zip_(std::move(zip)), options_(options) {}

  Expected<std::unique_ptr<LoadedPackage>> read() {
    GC_RETURN_IF_ERROR(checkFormat());
    auto pkg = std::unique_ptr<LoadedPackage>(new LoadedPackage());
    pkg->file_ = zip_.file();

    Expected<std::string_view> metadata = entry(kMetadataEntry, true);
    if (!metadata)
      return metadata.error();
    Expected<std::string> json =
        decompressZstd(*metadata, maxDecompressed(*metadata), where(kMetadataEntry));
    if (!json)
      return json.error();
    if (!nlohmann::json::accept(*json))
      return makeError() << where(kMetadataEntry) << ": not valid JSON";

    // Only stored and present: the weights are used in place, unchecked.
    if (Expected<std::string_view> weights = entry(kWeightsEntry, false); !weights)
      return weights.error();
    weights_ = zip_.find(kWeightsEntry);

    Expected<std::string_view> moduleFrame = entry(kModuleEntry, true);
    if (!moduleFrame)
      return moduleFrame.error();
    Expected<std::string> moduleBytes =
        decompressZstd(*moduleFrame, maxDecompressed(*moduleFrame), where(kModuleEntry));
    if (!moduleBytes)
      return moduleBytes.error();
    Expected<std::unique_ptr<Module>> module = readModuleFlatBuffer(
        std::span(reinterpret_cast<const uint8_t *>(moduleBytes->data()), moduleBytes->size()),
        where(kModuleEntry));
    if (!module)
      return module.error();
    pkg->module_ = module.take();
    bool external = zip_.find(kExternalWeightsEntry) != nullptr;
    GC_RETURN_IF_ERROR(checkModule(*pkg->module_, external));
    std::string archive;
    if (external) {
      Expected<std::string> named = readExternal(*pkg->module_, pkg->external_);
      if (!named)
        return named.error();
      archive = resolvePath(*named, parentDirectory(zip_.path()));
    }

    const auto &graphs = pkg->module_->loopGraphs();
    for (size_t i = 0; i < graphs.size(); ++i) {
      if (graphs[i]->plan.kernels.empty()) {
        pkg->kernels_.push_back(std::make_unique<NoKernels>());
        continue;
      }
      std::string name = kernelsEntry(i);
      Expected<std::string_view> frame = entry(name, true);
      if (!frame)
        return frame.error();
      Expected<std::string> image = decompressZstd(*frame, maxDecompressed(*frame), where(name));
      if (!image)
        return image.error();
      Expected<std::unique_ptr<SharedLibrary>> library = SharedLibrary::load(*image, where(name));
      if (!library)
        return library.error();
      pkg->kernels_.push_back(library.take());
    }

    // The archive last: everything else is checked by then.
    bool own = options_.weightsFile.empty();
    if (!own && !external)
      return makeError() << "'" << zip_.path() << "' embeds its weights; only a package made "
                         << "with --weights=external takes them from another archive ('"
                         << options_.weightsFile << "')";
    pkg->archivePath_ = own ? archive : options_.weightsFile;
    if (external)
      pkg->module_->weightSources()[kArchiveSource].path = pkg->archivePath_;
    Expected<std::shared_ptr<const WeightBinding>> weights =
        WeightBinder::bind(*pkg, pkg->archivePath_, own);
    if (!weights)
      return weights.error();
    pkg->weights_ = weights.take();
    return pkg;
  }

private:
  std::string where(const std::string &entryName) const {
    return "'" + zip_.path() + "': entry '" + entryName + "'";
  }

  /// A stored entry's bytes; `checkCrc` for everything but the weights.
  Expected<std::string_view> entry(const std::string &name, bool checkCrc) const {
    const ZipEntry *e = zip_.find(name);
    if (!e)
      return makeError() << "'" << zip_.path() << "': the package has no entry '" << name << "'";
    return zip_.read(*e, checkCrc);
  }

  Error checkFormat() const {
    const ZipEntry *format = zip_.find(kFormatEntry);
    bool isPackage = false;
    if (format) {
      Expected<std::string_view> text = zip_.read(*format, true);
      isPackage = text && *text == kPackageFormat;
    }
    if (!isPackage)
      return makeError() << "'" << zip_.path() << "' is not a gc package (no archive_format '"
                         << kPackageFormat << "' entry)";
    Expected<std::string_view> version = entry(kVersionEntry, true);
    if (!version)
      return version.error();
    std::optional<std::pair<uint32_t, uint32_t>> v = parseVersion(*version);
    if (!v)
      return makeError() << where(kVersionEntry) << ": not a version (major.minor)";
    if (v->first != kPackageMajor || v->second > kPackageMinor)
      return makeError() << "'" << zip_.path() << "' is a version " << v->first << "."
                         << v->second << " package; this gc reads version " << kPackageMajor
                         << ".0 to " << kPackageMajor << "." << kPackageMinor;
    return Error::success();
  }

  /// The module must be a plan whose weights all lie, aligned, inside the
  /// weights entry, but for those of the archive source when the package
  /// has external weights; source 0 becomes the package file.
  Error checkModule(Module &m, bool external) const {
    if (m.level() != Level::Kernels)
      return makeError() << where(kModuleEntry) << ": the module is at the "
                         << levelName(m.level()) << " level, not kernels";
    size_t maxSources = external ? kArchiveSource + 1 : 1;
    if (m.weightSources().size() > maxSources)
      return makeError() << where(kModuleEntry) << ": the module names "
                         << m.weightSources().size() << " weight sources, not "
                         << (external ? "the package and its archive" : "the package alone");
    uint64_t begin = weights_->dataOffset, end = begin + weights_->compressedSize;
    for (const Weight &w : m.weights()) {
      bool inArchive = external && w.source == kArchiveSource;
      if (!inArchive && (w.source != 0 || w.offset < begin || w.offset > end ||
                         w.bytes > end - w.offset || w.offset % kAlignment != 0))
        return makeError() << where(kModuleEntry) << ": weight '" << w.name << "' ("
                           << w.bytes << " bytes at offset " << w.offset
                           << ") is not an aligned part of the weights entry";
      if (!fitsItsBytes(w))
        return makeError() << where(kModuleEntry) << ": weight '" << w.name
                           << "' has a layout that is symbolic or reaches past its "
                           << w.bytes << " bytes";
    }
    if (!m.weightSources().empty())
      m.weightSources()[0].path = zip_.path();
    m.setSourceBaseDir(".");
    return Error::success();
  }

  /// The external weights table: the archive's path (relative to the
  /// package's directory) and one record per weight of the archive source,
  /// each agreeing with the module's weight of that name.
  Expected<std::string> readExternal(const Module &m, std::vector<ExternalWeight> &out) const {
    Expected<std::string_view> frame = entry(kExternalWeightsEntry, true);
    if (!frame)
      return frame.error();
    Expected<std::string> text =
        decompressZstd(*frame, maxDecompressed(*frame), where(kExternalWeightsEntry));
    if (!text)
      return text.error();
    std::string archive;
    try {
      nlohmann::json j = nlohmann::json::parse(*text);
      archive = j.at("archive").get<std::string>();
      for (const nlohmann::json &e : j.at("weights")) {
        ExternalWeight x;
        x.name = e.at("name").get<std::string>();
        x.entry = e.at("entry").get<std::string>();
        x.entryBytes = e.at("entry_bytes").get<uint64_t>();
        x.offset = e.at("offset").get<uint64_t>();
        x.bytes = e.at("bytes").get<uint64_t>();
        x.sha256 = e.at("sha256").get<std::string>();
        out.push_back(std::move(x));
      }
    } catch (const nlohmann::json::exception &e) {
      return makeError() << where(kExternalWeightsEntry) << ": malformed: " << e.what();
    }
    size_t inArchive = 0;
    for (const Weight &w : m.weights())
      inArchive += w.source == kArchiveSource;
    if (inArchive != out.size())
      return makeError() << where(kExternalWeightsEntry) << ": lists " << out.size()
                         << " weights, but the module has " << inArchive << " in the archive";
    for (const ExternalWeight &x : out) {
      const Weight *w = m.weight(x.name);
      if (!w || w->source != kArchiveSource || w->bytes != x.bytes ||
          x.offset > x.entryBytes || x.bytes > x.entryBytes - x.offset)
        return makeError() << where(kExternalWeightsEntry) << ": weight '" << x.name
                           << "' does not agree with the module";
    }
    return archive;
  }

  ZipArchive zip_;
  const OpenOptions &options_;
  const ZipEntry *weights_ = nullptr;
};

LoadedPackage::~LoadedPackage() = default;

std::span<const uint8_t> LoadedPackage::weightBytes(const Weight &w) const {
  return weights_->bytes(&w - module_->weights().data());
}

Expected<std::unique_ptr<LoadedPackage>> openPackage(std::shared_ptr<MappedFile> file,
                                                     const OpenOptions &options) {
  Expected<ZipArchive> zip = ZipArchive::open(std::move(file));
  if (!zip)
    return zip.error();
  return PackageReader(zip.take(), options).read();
}

Expected<std::unique_ptr<LoadedPackage>> openPackage(const std::string &path,
                                                     const OpenOptions &options) {
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  return openPackage(file.take(), options);
}

} // namespace gc
