//===- WeightBinder.cpp - Binding a package's weights to bytes ------------===//
//
// An embedded package's weights are used in place in the mapped package
// (whose weights entry the reader checked). An external package's weights
// that the source archive holds are used in place in the mapped archive,
// found by entry name, after four checks: the entry is stored, has room
// for the weight, is aligned, and its bytes are intact. With the archive
// the package names, intact means the CRC-32 recorded at packaging time
// (the SHA-256 of each weight, hashed on several threads, for packages from
// before entry CRCs); another archive, to swap weights, must have entries
// of the sizes the package expects and match its own CRC-32 fields. Each
// entry is read once, however many weights it holds, and only entries that
// weights are bound to: a large archive's other entries are not read.
//
//===----------------------------------------------------------------------===//
#include "WeightBinder.h"

#include "gc/Package/PackageFormat.h"
#include "gc/Runtime/StridedLayout.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/Zip.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>
#include <unordered_set>

namespace gc {

using namespace package;

namespace {

/// Hashes each of `views` of `file` against `want`, on up to 8 threads;
/// the index of the first mismatch, or none.
std::optional<size_t> firstMismatch(const MappedFile &file,
                                    const std::vector<std::span<const uint8_t>> &views,
                                    const std::vector<const std::string *> &want) {
  std::vector<char> bad(views.size(), 0);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < views.size();)
      bad[i] = sha256Hex(file, uint64_t(views[i].data() - file.bytes().data()),
                         views[i].size()) != *want[i];
  };
  uint64_t total = 0;
  for (std::span<const uint8_t> v : views)
    total += v.size();
  // Threads pay for themselves only on megabytes.
  unsigned threads = total < (4u << 20) ? 1 : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  for (size_t i = 0; i < bad.size(); ++i)
    if (bad[i])
      return i;
  return std::nullopt;
}

struct AlignedFree {
  void operator()(void *p) const { ::operator delete(p, std::align_val_t(kAlignment)); }
};

} // namespace

Expected<std::shared_ptr<const WeightBinding>>
WeightBinder::bind(const LoadedPackage &p, const std::string &archive, bool own) {
  const auto &weights = *p.plan().weights();
  auto b = std::make_shared<WeightBinding>();
  b->bytes_.resize(weights.size());
  b->owners_.push_back(p.file_);
  b->verified_ = p.verified_;
  bool external = !p.external_.empty();
  size_t held = 0;
  const plan::Weight *firstHeld = nullptr;
  for (size_t i = 0; i < weights.size(); ++i) {
    const plan::Weight &w = *weights.Get(i);
    if (w.in_archive() || w.computed())
      continue;
    b->bytes_[i] = p.file_->bytes().subspan(w.offset(), w.bytes());
    if (!held++)
      firstHeld = &w;
  }
  if (!external) {
    GC_RETURN_IF_ERROR(compute(p, *b));
    return std::shared_ptr<const WeightBinding>(std::move(b));
  }

  std::string package = "'" + p.file_->path() + "'";
  std::string more = p.external_.size() > 1
                         ? " (and " + std::to_string(p.external_.size() - 1) + " more)"
                         : "";
  // Constants computed from the weights of the archive the package was
  // made from would not follow the new ones. Since plan 1.2, what --freeze
  // derives from the archive is computed at load time, never held.
  if (!own && held && p.plan().version()->minor_version() < 2)
    return makeError() << package << " holds " << held << " constant" << (held == 1 ? "" : "s")
                       << " that --freeze computed from its archive's weights at compile time "
                       << "(such as '" << firstHeld->name()->str() << "'), which '" << archive
                       << "' would not change; compile without --freeze to swap archives";
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(archive);
  if (!file)
    return makeError() << package << ": weight '" << p.external_[0].name << "'" << more
                       << " is in an archive that is missing: " << file.error().message();
  Expected<ZipArchive> zip = ZipArchive::open(*file);
  if (!zip)
    return makeError() << package << ": weight '" << p.external_[0].name << "'" << more
                       << " is in an archive: " << zip.error().message();
  b->owners_.push_back(*file);
  std::vector<std::span<const uint8_t>> views;
  std::vector<const std::string *> digests;
  std::vector<const ExternalWeight *> shaChecked;
  // Each entry to check by CRC-32, with the first weight bound to it.
  std::vector<std::pair<const ZipEntry *, const ExternalWeight *>> crcChecked;
  std::unordered_set<const ZipEntry *> seen;
  for (const ExternalWeight &x : p.external_) {
    size_t index = *p.findWeight(x.name); // the reader checked the table
    const plan::Weight &w = *weights.Get(index);
    auto fail = [&]() {
      return std::move(makeError() << package << ": weight '" << x.name << "': the archive '"
                                   << archive << "' ");
    };
    const ZipEntry *e = zip->find(x.entry);
    if (!e)
      return fail() << "has no entry '" << x.entry << "'";
    if (e->method != 0)
      return fail() << "compresses entry '" << x.entry << "'; weights must be stored";
    if (!own && e->compressedSize != x.entryBytes)
      return fail() << "has " << e->compressedSize << " bytes in entry '" << x.entry
                    << "', the package expects " << x.entryBytes
                    << " (an archive of another architecture?)";
    if (x.offset > e->compressedSize || x.bytes > e->compressedSize - x.offset)
      return fail() << "has " << e->compressedSize << " bytes in entry '" << x.entry
                    << "', too few for " << x.bytes << " bytes at offset " << x.offset;
    uint64_t at = e->dataOffset + x.offset;
    uint64_t align = w.offset() % kAlignment == 0 ? kAlignment : dtypeSize(dtypeOf(w.dtype()));
    if (at % align != 0)
      return fail() << "has entry '" << x.entry << "' at offset " << at
                    << ", not aligned to " << align << " bytes";
    b->bytes_[index] = (*file)->bytes().subspan(at, x.bytes);
    if (!p.verifyWeights_)
      continue;
    if (own && !x.entryCrc32) {
      views.push_back(b->bytes_[index]);
      digests.push_back(&x.sha256);
      shaChecked.push_back(&x);
    } else if (seen.insert(e).second) {
      crcChecked.emplace_back(e, &x);
    }
  }
  for (auto [e, x] : crcChecked) {
    auto start = std::chrono::steady_clock::now();
    uint32_t want = own ? *x->entryCrc32 : e->crc32;
    uint32_t got = crc32(**file, e->dataOffset, e->compressedSize);
    if (got != want) {
      char crcs[64];
      std::snprintf(crcs, sizeof crcs, " (%s %08x, computed %08x)", own ? "recorded" : "stored",
                    want, got);
      return makeError() << package << ": weight '" << x->name << "': entry '" << e->name
                         << "' of the archive '" << archive
                         << (own ? "' does not match the CRC-32 the package recorded"
                                 : "' fails its CRC-32 check")
                         << crcs
                         << (own ? ": the archive was damaged or changed since the package was "
                                   "made; restore it, or make the package again"
                                 : ": the archive was damaged; copy it again");
    }
    b->verified_.push_back({archive, e->name, e->compressedSize, crcCheck(got),
                            secondsSince(start)});
  }
  auto hashed = std::chrono::steady_clock::now();
  if (std::optional<size_t> bad = firstMismatch(**file, views, digests)) {
    const ExternalWeight &x = *shaChecked[*bad];
    return makeError() << package << ": weight '" << x.name << "': its bytes in '" << archive
                       << "' (entry '" << x.entry
                       << "') do not match the package's SHA-256; the archive changed since "
                          "the package was made";
  }
  // The weights were hashed together, on several threads: each is
  // recorded with the time of all.
  for (const ExternalWeight *x : shaChecked)
    b->verified_.push_back({archive, x->entry, x->bytes, "SHA-256 of weight '" + x->name + "'",
                            secondsSince(hashed)});
  GC_RETURN_IF_ERROR(compute(p, *b));
  return std::shared_ptr<const WeightBinding>(std::move(b));
}

std::string crcCheck(uint32_t crc) {
  char text[24];
  std::snprintf(text, sizeof text, "CRC-32 %08x", crc);
  return text;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Error WeightBinder::compute(const LoadedPackage &p, WeightBinding &b) {
  const plan::Plan &plan = p.plan();
  const auto &weights = *plan.weights();
  if (plan.constant_program() < 0)
    return Error::success();
  const plan::Graph &g = *plan.graphs()->Get(plan.constant_program());
  std::string where = "'" + p.file_->path() + "': " + graphLabel(g) + " (the constant program)";
  for (const plan::Binding *in : *g.inputs())
    if (in->weight() < 0 || weights.Get(in->weight())->computed())
      return makeError() << where << ": input '" << in->name()->str()
                         << "' is not a weight the package holds or maps";
  // Each output into new memory of its weight's layout, which replaces
  // what an earlier run computed.
  std::vector<std::shared_ptr<const void>> computed;
  std::vector<TensorRef> outputs;
  std::vector<size_t> targets;
  for (const plan::Binding *out : *g.outputs()) {
    std::optional<size_t> index = p.findWeight(out->target()->string_view());
    const plan::Weight *w = index ? weights.Get(*index) : nullptr;
    if (!w || !w->computed())
      return makeError() << where << ": output '" << out->name()->str() << "' is for '"
                         << out->target()->str() << "', not a computed weight";
    if (std::find(targets.begin(), targets.end(), *index) != targets.end())
      return makeError() << where << ": two outputs compute weight '" << w->name()->str() << "'";
    std::shared_ptr<void> memory(::operator new(std::max<uint64_t>(w->bytes(), 1),
                                                std::align_val_t(kAlignment)),
                                 AlignedFree());
    TensorRef ref;
    ref.data = static_cast<char *>(memory.get()) + w->storage_offset() * dtypeSize(dtypeOf(w->dtype()));
    ref.dtype = dtypeOf(w->dtype());
    ref.sizes.assign(w->sizes()->begin(), w->sizes()->end());
    ref.strides.assign(w->strides()->begin(), w->strides()->end());
    outputs.push_back(std::move(ref));
    targets.push_back(*index);
    computed.push_back(std::move(memory));
  }
  for (size_t i = 0; i < weights.size(); ++i)
    if (weights.Get(i)->computed() &&
        std::find(targets.begin(), targets.end(), i) == targets.end())
      return makeError() << where << ": no output computes weight '"
                         << weights.Get(i)->name()->str() << "'";

  // The executor lives only for this call: neither the package nor the
  // binding needs to be owned by it.
  RuntimeOptions options;
  options.fallback = p.fallback_;
  std::shared_ptr<const LoadedPackage> package(std::shared_ptr<const LoadedPackage>(), &p);
  std::shared_ptr<const WeightBinding> binding(std::shared_ptr<const WeightBinding>(), &b);
  Expected<std::unique_ptr<PackageExecutor>> exec =
      PackageExecutor::create(package, plan.constant_program(), options, binding);
  if (!exec)
    return exec.error().withContext("'" + p.file_->path() + "'");
  // The executor checks the outputs' sizes against the graph's.
  Expected<std::vector<std::vector<int64_t>>> sizes = (*exec)->outputSizes({});
  if (!sizes)
    return sizes.error().withContext(where);
  for (size_t j = 0; j < outputs.size(); ++j)
    if ((*sizes)[j] != outputs[j].sizes ||
        dtypeOf(g.outputs()->Get(j)->view()->dtype()) != outputs[j].dtype)
      return makeError() << where << ": output '" << g.outputs()->Get(j)->name()->str()
                         << "' is " << typeText(dtypeOf(g.outputs()->Get(j)->view()->dtype()),
                                                (*sizes)[j])
                         << ", but weight '" << weights.Get(targets[j])->name()->str()
                         << "' is " << typeText(outputs[j].dtype, outputs[j].sizes);
  if (Error e = (*exec)->run({}, outputs))
    return e.withContext(where);
  for (size_t j = 0; j < outputs.size(); ++j) {
    const plan::Weight &w = *weights.Get(targets[j]);
    const uint8_t *base = static_cast<const uint8_t *>(outputs[j].data) -
                          w.storage_offset() * dtypeSize(outputs[j].dtype);
    b.bytes_[targets[j]] = std::span(base, w.bytes());
  }
  b.computed_ = std::move(computed);
  return Error::success();
}

/// Whether `value` has weight `w`'s dtype and sizes (any strides) and data
/// to hold its elements; errors name the package and the weight.
static Error checkWeightValue(const std::string &package, const plan::Weight &w,
                             const std::string &name, const TensorRef &value) {
  DType dtype = dtypeOf(w.dtype());
  std::vector<int64_t> sizes(w.sizes()->begin(), w.sizes()->end());
  if (value.dtype != dtype || value.sizes != sizes) {
    auto shape = [](const std::vector<int64_t> &s) {
      std::string out = "[";
      for (size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
      return out + "]";
    };
    return makeError() << package << ": weight '" << name << "' must be "
                       << dtypeName(dtype) << shape(sizes) << ", got "
                       << dtypeName(value.dtype) << shape(value.sizes);
  }
  if (!value.strides.empty() && value.strides.size() != sizes.size())
    return makeError() << package << ": the value for weight '" << name << "' has "
                       << value.strides.size() << " strides for rank " << sizes.size();
  int64_t elements = 1;
  for (int64_t s : sizes)
    elements *= s;
  if (elements && !value.data)
    return makeError() << package << ": the value for weight '" << name << "' has no data";

  return Error::success();
}

/// `value`'s strides, row-major where it gives none.
static std::vector<int64_t> stridesOf(const TensorRef &value) {
  if (!value.strides.empty())
    return value.strides;
  std::vector<int64_t> strides(value.sizes.size(), 1);
  for (size_t d = value.sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * std::max<int64_t>(value.sizes[d], 1);
  return strides;
}

Expected<std::shared_ptr<const WeightBinding>>
WeightBinder::replace(const LoadedPackage &p, const WeightBinding &current,
                      const std::string &name, const TensorRef &value) {
  std::string package = "'" + p.file_->path() + "'";
  std::optional<size_t> index = p.findWeight(name);
  if (!index)
    return makeError() << package << " has no weight '" << name << "'";
  const plan::Weight &w = *p.plan().weights()->Get(*index);
  if (w.computed())
    return makeError() << package << ": weight '" << name
                       << "' is computed by the package's constant program from other weights "
                          "when they are bound; set those instead";
  GC_RETURN_IF_ERROR(checkWeightValue(package, w, name, value));
  DType dtype = dtypeOf(w.dtype());
  std::vector<int64_t> sizes(w.sizes()->begin(), w.sizes()->end());
  // A copy in the weight's own layout (strides and storage offset), which
  // the plan was compiled for.
  std::shared_ptr<void> memory(::operator new(std::max<uint64_t>(w.bytes(), 1),
                                              std::align_val_t(kAlignment)),
                               AlignedFree());
  std::memset(memory.get(), 0, w.bytes());
  size_t element = dtypeSize(dtype);
  std::vector<int64_t> from = stridesOf(value);
  std::vector<int64_t> to(w.strides()->begin(), w.strides()->end());
  const auto *src = static_cast<const char *>(value.data);
  auto *dst = static_cast<char *>(memory.get()) + w.storage_offset() * element;
  copyStrided(dst, to, src, from, sizes, element);
  auto b = std::make_shared<WeightBinding>(current);
  b->bytes_[*index] = std::span(static_cast<const uint8_t *>(memory.get()), w.bytes());
  b->owners_.push_back(std::move(memory));
  GC_RETURN_IF_ERROR(compute(p, *b));
  return std::shared_ptr<const WeightBinding>(std::move(b));
}

Expected<std::shared_ptr<const WeightBinding>> bindWeightsFile(const LoadedPackage &package,
                                                               const std::string &path) {
  if (package.externalWeights().empty())
    return makeError() << "'" << package.file().path()
                       << "' embeds its weights; only a package made with --weights=external "
                          "takes them from another archive";
  return WeightBinder::bind(package, path, false);
}

Expected<std::shared_ptr<const WeightBinding>> bindWeight(const LoadedPackage &package,
                                                          const WeightBinding &current,
                                                          const std::string &name,
                                                          const TensorRef &value) {
  return WeightBinder::replace(package, current, name, value);
}

Error readWeight(const LoadedPackage &package, const WeightBinding &current,
                 const std::string &name, const TensorRef &into) {
  std::string label = "'" + package.file().path() + "'";
  std::optional<size_t> index = package.findWeight(name);
  if (!index)
    return makeError() << label << " has no weight '" << name << "'";
  const plan::Weight &w = *package.plan().weights()->Get(*index);
  GC_RETURN_IF_ERROR(checkWeightValue(label, w, name, into));
  size_t element = dtypeSize(into.dtype);
  std::vector<int64_t> from(w.strides()->begin(), w.strides()->end());
  const auto *src = reinterpret_cast<const char *>(current.bytes(*index).data()) +
                    w.storage_offset() * element;
  copyStrided(static_cast<char *>(into.data), stridesOf(into), src, from, into.sizes, element);
  return Error::success();
}

} // namespace gc
