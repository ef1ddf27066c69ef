//===- Target.cpp - What a plan's kernels run on --------------------------===//
#include "gc/Support/Target.h"

#include <algorithm>
#include <charconv>

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
} // namespace

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
