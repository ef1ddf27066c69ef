//===- PackageReader.cpp - Opening a package ------------------------------===//
//
// Everything in a package is checked before it is used: the format and
// version, every entry's presence, method, CRC-32 (the weights' too, unless
// OpenOptions::verifyWeights is off) and decompressed size, the runtime
// plan, and every weight's place. A failure names the package file and the
// entry.
//
//===----------------------------------------------------------------------===//
#include "gc/Package/PackageReader.h"

#include "WeightBinder.h"

#include "gc/Package/Compression.h"
#include "gc/Package/PackageFormat.h"
#include "gc/Package/SharedLibrary.h"
#include "gc/Runtime/PluginSteps.h"
#include "gc/Support/Target.h"
#include "gc/Support/Zip.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>

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
bool fitsItsBytes(const plan::Weight &w) {
  int64_t last = w.storage_offset();
  if (last < 0)
    return false;
  for (size_t d = 0; d < w.sizes()->size(); ++d) {
    int64_t size = w.sizes()->Get(d), stride = w.strides()->Get(d);
    if (size < 0 || stride < 0)
      return false;
    if (size == 0)
      return true;
    int64_t reach = 0;
    if (__builtin_mul_overflow(size - 1, stride, &reach) ||
        __builtin_add_overflow(last, reach, &last))
      return false;
  }
  return static_cast<uint64_t>(last + 1) * dtypeSize(dtypeOf(w.dtype())) <= w.bytes();
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

    // Used in place: a damaged weight would run and give wrong numbers.
    auto start = std::chrono::steady_clock::now();
    if (Expected<std::string_view> weights = entry(kWeightsEntry, options_.verifyWeights);
        !weights)
      return weights.error();
    weights_ = zip_.find(kWeightsEntry);
    pkg->verifyWeights_ = options_.verifyWeights;
    if (options_.verifyWeights)
      pkg->verified_.push_back({zip_.path(), kWeightsEntry, weights_->compressedSize,
                                crcCheck(weights_->crc32), secondsSince(start)});

    Expected<std::string_view> planFrame = entry(kPlanEntry, true);
    if (!planFrame)
      return planFrame.error();
    Expected<std::string> planBytes =
        decompressZstd(*planFrame, maxDecompressed(*planFrame), where(kPlanEntry));
    if (!planBytes)
      return planBytes.error();
    Expected<std::shared_ptr<const RuntimePlan>> plan =
        RuntimePlan::read(planBytes.take(), where(kPlanEntry));
    if (!plan)
      return plan.error();
    pkg->plan_ = plan.take();
    for (const std::string &path : options_.plugins)
      if (Expected<const PluginLibrary *> lib = loadPlugin(path); !lib)
        return lib.error();
    for (const plan::Graph *g : *pkg->plan().graphs()) {
      bool gpu = targetDevice(g->target()->string_view()) != TargetDevice::CPU;
      if (Expected<std::vector<const PluginOp *>> ops = resolvePluginSteps(pkg->plan(), *g, gpu);
          !ops)
        return ops.error().withContext("'" + zip_.path() + "'");
    }
    bool external = zip_.find(kExternalWeightsEntry) != nullptr;
    GC_RETURN_IF_ERROR(checkWeights(pkg->plan(), external));
    std::string archive;
    if (external) {
      Expected<std::string> named = readExternal(*pkg, pkg->external_);
      if (!named)
        return named.error();
      archive = resolvePath(*named, parentDirectory(zip_.path()));
    }

    for (const plan::Graph *g : *pkg->plan().graphs()) {
      std::string name = g->kernel_library()->str();
      if (name.empty()) {
        pkg->kernels_.push_back(std::make_unique<NoKernels>());
        continue;
      }
      if (targetDevice(g->target()->string_view()) == TargetDevice::CPU) {
        Expected<std::string> chosen = chooseCpuKernels(*g, *pkg);
        if (!chosen)
          return chosen.error();
        name = chosen.take();
      }
      Expected<std::string_view> frame = entry(name, true);
      if (!frame)
        return frame.error();
      Expected<std::string> image = decompressZstd(*frame, maxDecompressed(*frame), where(name));
      if (!image)
        return image.error();
      // A GPU module is loaded by the driver when an executor needs it, so
      // a CUDA package opens (and describes itself) where there is no GPU.
      if (targetDevice(g->target()->string_view()) == TargetDevice::CUDA) {
        pkg->kernels_.push_back(std::make_unique<GpuKernelImage>(image.take()));
        continue;
      }
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
    pkg->fallback_ = options_.fallback;
    Expected<std::shared_ptr<const WeightBinding>> weights =
        WeightBinder::bind(*pkg, pkg->archivePath_, own);
    if (!weights)
      return weights.error();
    pkg->weights_ = weights.take();
    return pkg;
  }

private:
  /// The entry of CPU graph `g`'s kernels for the level this CPU runs best
  /// (or $GC_CPU_TARGET), recorded in `pkg` as the level its kernels are for.
  Expected<std::string> chooseCpuKernels(const plan::Graph &g, LoadedPackage &pkg) const {
    std::string_view target = g.target()->string_view();
    Expected<std::string> level = selectCpuTarget(target);
    if (!level)
      return level.error().withContext("'" + zip_.path() + "'");
    Expected<std::vector<std::string>> levels = cpuTargetList(target);
    std::vector<std::string> entries;
    std::string_view list = g.kernel_library()->string_view();
    for (size_t at = 0; at <= list.size();) {
      size_t comma = std::min(list.find(',', at), list.size());
      entries.emplace_back(list.substr(at, comma - at));
      at = comma + 1;
    }
    if (!levels || levels->size() != entries.size())
      return makeError() << where(kPlanEntry) << ": graph '" << g.name()->str() << "' names "
                         << entries.size() << " kernel libraries for target '" << target << "'";
    // Every level's library is present and intact, loaded or not.
    for (const std::string &e : entries)
      if (Expected<std::string_view> bytes = entry(e, true); !bytes)
        return bytes.error();
    pkg.kernelTarget_ = *level;
    pkg.kernelTargets_ = joinTargets(*levels);
    size_t index = std::find(levels->begin(), levels->end(), *level) - levels->begin();
    return entries[index];
  }

  std::string where(const std::string &entryName) const {
    return "'" + zip_.path() + "': entry '" + entryName + "'";
  }

  /// A stored entry's bytes, with `checkCrc` its CRC-32 verified.
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

  /// Every weight must lie, aligned, inside the weights entry, but for
  /// those in the archive when the package has external weights.
  Error checkWeights(const plan::Plan &p, bool external) const {
    if (p.constant_program() >= static_cast<int64_t>(p.graphs()->size()))
      return makeError() << where(kPlanEntry) << ": the constant program is graph "
                         << p.constant_program() << " of " << p.graphs()->size();
    uint64_t begin = weights_->dataOffset, end = begin + weights_->compressedSize;
    for (const plan::Weight *w : *p.weights()) {
      bool inArchive = w->in_archive();
      if (inArchive && !external)
        return makeError() << where(kPlanEntry) << ": weight '" << w->name()->str()
                           << "' is in an archive, but the package names none";
      if (w->computed() && (inArchive || p.constant_program() < 0))
        return makeError() << where(kPlanEntry) << ": weight '" << w->name()->str()
                           << "' is computed, but "
                           << (inArchive ? "also in the archive" : "the plan has no constant program");
      if (!inArchive && !w->computed() && (w->offset() < begin || w->offset() > end ||
                         w->bytes() > end - w->offset() || w->offset() % kAlignment != 0))
        return makeError() << where(kPlanEntry) << ": weight '" << w->name()->str() << "' ("
                           << w->bytes() << " bytes at offset " << w->offset()
                           << ") is not an aligned part of the weights entry";
      if (!fitsItsBytes(*w))
        return makeError() << where(kPlanEntry) << ": weight '" << w->name()->str()
                           << "' has a layout that reaches past its " << w->bytes() << " bytes";
    }
    return Error::success();
  }

  /// The external weights table: the archive's path (relative to the
  /// package's directory) and one record per weight in the archive, each
  /// agreeing with the plan's weight of that name.
  Expected<std::string> readExternal(const LoadedPackage &pkg,
                                     std::vector<ExternalWeight> &out) const {
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
        if (e.contains("entry_crc32"))
          x.entryCrc32 = e.at("entry_crc32").get<uint32_t>();
        out.push_back(std::move(x));
      }
    } catch (const nlohmann::json::exception &e) {
      return makeError() << where(kExternalWeightsEntry) << ": malformed: " << e.what();
    }
    size_t inArchive = 0;
    for (const plan::Weight *w : *pkg.plan().weights())
      inArchive += w->in_archive();
    if (inArchive != out.size())
      return makeError() << where(kExternalWeightsEntry) << ": lists " << out.size()
                         << " weights, but the plan has " << inArchive << " in the archive";
    for (const ExternalWeight &x : out) {
      std::optional<size_t> i = pkg.findWeight(x.name);
      const plan::Weight *w = i ? pkg.plan().weights()->Get(*i) : nullptr;
      if (!w || !w->in_archive() || w->bytes() != x.bytes || x.offset > x.entryBytes ||
          x.bytes > x.entryBytes - x.offset)
        return makeError() << where(kExternalWeightsEntry) << ": weight '" << x.name
                           << "' does not agree with the plan";
    }
    return archive;
  }

  ZipArchive zip_;
  const OpenOptions &options_;
  const ZipEntry *weights_ = nullptr;
};

LoadedPackage::~LoadedPackage() = default;

std::span<const uint8_t> LoadedPackage::weightBytes(size_t weight) const {
  return weights_->bytes(weight);
}

std::optional<size_t> LoadedPackage::findWeight(std::string_view name) const {
  const auto &weights = *plan().weights();
  for (size_t i = 0; i < weights.size(); ++i)
    if (weights.Get(i)->name()->string_view() == name)
      return i;
  return std::nullopt;
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
