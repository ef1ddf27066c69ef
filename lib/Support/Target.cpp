//===- Target.cpp - What a plan's kernels run on --------------------------===//
#include "gc/Support/Target.h"

#include <algorithm>
#include <charconv>
#include <cpuid.h>
#include <cstdlib>
#include <optional>

namespace gc {

namespace {
/// The architectures both LLVM 16's NVPTX backend (up to sm_90) and CUDA
/// 13's ptxas (from sm_75) build for.
constexpr int kKnownArchs[] = {75, 80, 86, 87, 89, 90};

Error appendArch(std::string_view item, std::vector<int> &archs) {
  std::string_view digits = item;
  if (digits.substr(0, 3) == "sm_")
    digits.remove_prefix(3);
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return makeError() << "malformed GPU architecture '" << item << "' (expected sm_NN)";
  if (std::find(std::begin(kKnownArchs), std::end(kKnownArchs), value) == std::end(kKnownArchs))
    return makeError() << "GPU architecture 'sm_" << value
                       << "' is not one gc can build for (sm_75 to sm_90)";
  archs.push_back(value);
  return Error::success();
}

template <class F> Error forEachItem(std::string_view list, F &&f) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos)
      comma = list.size();
    GC_RETURN_IF_ERROR(f(list.substr(start, comma - start)));
    start = comma + 1;
  }
  return Error::success();
}
/// The position of a CPU level in kCpuLevels, if `name` is one.
std::optional<size_t> cpuLevelIndex(std::string_view name) {
  auto it = std::find(kCpuLevels.begin(), kCpuLevels.end(), name);
  if (it == kCpuLevels.end())
    return std::nullopt;
  return static_cast<size_t>(it - kCpuLevels.begin());
}

bool allBits(unsigned value, std::initializer_list<int> bits) {
  for (int bit : bits)
    if (!(value & (1u << bit)))
      return false;
  return true;
}

/// The register state the operating system saves on a context switch
/// (XCR0): AVX and AVX-512 instructions fault unless it covers their
/// registers.
uint64_t savedRegisterState() {
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

size_t detectHostLevel() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return 0;
  // x86-64-v2 and v3 features of leaf 1: SSE3, SSSE3, FMA, CMPXCHG16B,
  // SSE4.1, SSE4.2, MOVBE, POPCNT, XSAVE, OSXSAVE, AVX, F16C.
  bool v3 = allBits(c, {0, 9, 12, 13, 19, 20, 22, 23, 26, 27, 28, 29});
  unsigned b7 = 0;
  if (!v3 || !__get_cpuid_count(7, 0, &a, &b7, &c, &d))
    return 0;
  v3 = allBits(b7, {3, 5, 8}); // BMI1, AVX2, BMI2
  // LAHF/SAHF and LZCNT.
  v3 = v3 && __get_cpuid(0x80000001, &a, &b, &c, &d) && allBits(c, {0, 5});
  uint64_t xcr0 = savedRegisterState();
  v3 = v3 && (xcr0 & 0x6) == 0x6; // SSE and AVX state
  if (!v3)
    return 0;
  // AVX512F, DQ, CD, BW, VL, with the opmask and ZMM state saved.
  bool v4 = allBits(b7, {16, 17, 28, 30, 31}) && (xcr0 & 0xe6) == 0xe6;
  return v4 ? 2 : 1;
}
} // namespace

Expected<std::vector<std::string>> cpuTargetList(std::string_view list) {
  std::vector<std::string> targets;
  GC_RETURN_IF_ERROR(forEachItem(list, [&](std::string_view item) -> Error {
    if (item.empty())
      return Error::success();
    if (item != "native" && !cpuLevelIndex(item)) {
      std::string known;
      for (std::string_view level : kCpuLevels)
        known += std::string(level) + ", ";
      return makeError() << "unknown CPU target '" << item << "' (expected " << known
                         << "or native)";
    }
    targets.emplace_back(item);
    return Error::success();
  }));
  if (targets.empty())
    return makeError() << "no CPU target in '" << list << "'";
  // "native" sorts last, where only a list of one may hold it.
  auto rank = [](const std::string &t) { return cpuLevelIndex(t).value_or(kCpuLevels.size()); };
  std::sort(targets.begin(), targets.end(),
            [&](const std::string &x, const std::string &y) { return rank(x) < rank(y); });
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  if (targets.size() > 1 && targets.back() == "native")
    return makeError() << "CPU target 'native' cannot be combined with others ('" << list
                       << "')";
  return targets;
}

std::string joinTargets(const std::vector<std::string> &targets) {
  std::string text;
  for (const std::string &t : targets)
    text += (text.empty() ? "" : ",") + t;
  return text;
}

std::string_view hostCpuLevel() {
  static const size_t level = detectHostLevel();
  return kCpuLevels[level];
}

Expected<std::string> selectCpuTarget(std::string_view targets) {
  Expected<std::vector<std::string>> list = cpuTargetList(targets);
  if (!list)
    return list.error();
  // A "native" plan is for the machine that compiled it: nothing to check.
  if (list->front() == "native")
    return list->front();
  size_t host = *cpuLevelIndex(hostCpuLevel());
  const char *forced = std::getenv(kCpuTargetEnv);
  if (forced && *forced) {
    std::optional<size_t> level = cpuLevelIndex(forced);
    if (!level)
      return makeError() << "$" << kCpuTargetEnv << " names '" << forced
                         << "', not a CPU level (x86-64, x86-64-v3 or x86-64-v4)";
    if (std::find(list->begin(), list->end(), forced) == list->end())
      return makeError() << "$" << kCpuTargetEnv << " asks for " << forced
                         << " kernels, but there are kernels for " << targets << " only";
    if (*level > host)
      return makeError() << "$" << kCpuTargetEnv << " asks for " << forced
                         << " kernels, but this CPU is " << hostCpuLevel();
    return std::string(forced);
  }
  for (auto it = list->rbegin(); it != list->rend(); ++it)
    if (*cpuLevelIndex(*it) <= host)
      return *it;
  return makeError() << "there are kernels for " << targets << " only, and this CPU is "
                     << hostCpuLevel();
}

Expected<std::vector<int>> cudaArchs(std::string_view target) {
  if (targetDevice(target) != TargetDevice::CUDA)
    return makeError() << "'" << target << "' is not a CUDA target";
  std::vector<int> archs;
  GC_RETURN_IF_ERROR(forEachItem(target.substr(kCudaTargetPrefix.size()), [&](std::string_view item) {
    return appendArch(item, archs);
  }));
  return archs;
}

Expected<std::string> cudaTarget(std::string_view archList) {
  std::vector<int> archs;
  GC_RETURN_IF_ERROR(
      forEachItem(archList, [&](std::string_view item) { return appendArch(item, archs); }));
  std::sort(archs.begin(), archs.end());
  archs.erase(std::unique(archs.begin(), archs.end()), archs.end());
  std::string target(kCudaTargetPrefix);
  for (size_t k = 0; k < archs.size(); ++k)
    target += (k ? ",sm_" : "sm_") + std::to_string(archs[k]);
  return target;
}

} // namespace gc
