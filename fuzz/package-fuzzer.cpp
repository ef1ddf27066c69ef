//===- package-fuzzer.cpp - Fuzzing the package reader through gcrt.h -----===//
//
// Each input is loaded as a whole package with gcrt_package_load_memory, as
// an application would; every graph's inputs and outputs are described, and
// when the first graph's inputs can be made (zeros, a symbolic size at its
// smallest) it is run once on one thread. A status other than OK is fine; a
// crash, a sanitizer report or a hang is not.
//
// Mutations of a whole package mostly stop at the CRC-32 of the entry they
// touch. So an input that is a runtime plan (file identifier GCPL, as a
// package's plan.gcpl.zst holds it decompressed) is first wrapped in a
// well-formed package, and mutations reach the plan reader, the weights'
// checks and the executor behind them.
//
//===----------------------------------------------------------------------===//
#include "gcrt/gcrt.h"

#include "gc/Package/Compression.h"
#include "gc/Package/Package.h"
#include "gc/Package/PackageFormat.h"
#include "gc/Support/Zip.h"

#include <cstdint>
#include <string>
#include <vector>

namespace {

/// The plan `plan` as the only content of a package: no weights, no
/// kernels, empty metadata. Level 1: the fuzzer's time goes to the reader.
std::string wrapPlan(std::string_view plan) {
  using namespace gc;
  ZipBuffer zip(package::kAlignment);
  zip.add(package::kFormatEntry, kPackageFormat);
  zip.add(package::kVersionEntry,
          std::to_string(kPackageMajor) + "." + std::to_string(kPackageMinor) + "\n");
  zip.add(package::kWeightsEntry, "");
  zip.add(package::kMetadataEntry, compressZstd("{}", 1));
  zip.add(package::kPlanEntry, compressZstd(plan, 1));
  return zip.finish();
}

/// Zero inputs for graph 0; false if a size is unbounded or too large to be
/// worth a run.
bool makeInputs(const gcrt_package *pkg, std::vector<std::vector<int64_t>> &sizes,
                std::vector<std::vector<char>> &memory, std::vector<gcrt_tensor> &inputs) {
  size_t n = gcrt_input_count(pkg, 0);
  sizes.resize(n);
  memory.resize(n);
  for (size_t i = 0; i < n; ++i) {
    gcrt_tensor_info info;
    if (gcrt_input_info(pkg, 0, i, &info) != GCRT_OK)
      return false;
    size_t elements = 1;
    for (size_t d = 0; d < info.rank; ++d) {
      int64_t s = info.sizes[d] >= 0 ? info.sizes[d] : info.min_sizes[d];
      if (s < 0 || s > (1 << 20) || (elements *= static_cast<size_t>(s)) > (1 << 20))
        return false;
      sizes[i].push_back(s);
    }
    memory[i].assign(elements * gcrt_dtype_size(info.dtype) + 1, 0);
    inputs.push_back({memory[i].data(), info.dtype, info.rank, sizes[i].data(), nullptr});
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string wrapped;
  if (size >= 8 && std::string_view(reinterpret_cast<const char *>(data) + 4, 4) == "GCPL") {
    wrapped = wrapPlan(std::string_view(reinterpret_cast<const char *>(data), size));
    data = reinterpret_cast<const uint8_t *>(wrapped.data());
    size = wrapped.size();
  }
  gcrt_package *pkg = nullptr;
  if (gcrt_package_load_memory(data, size, "fuzz.gcpkg", &pkg) != GCRT_OK)
    return 0;
  for (size_t g = 0; g < gcrt_graph_count(pkg); ++g) {
    gcrt_tensor_info info;
    for (size_t i = 0; i < gcrt_input_count(pkg, g); ++i)
      gcrt_input_info(pkg, g, i, &info);
    for (size_t i = 0; i < gcrt_output_count(pkg, g); ++i)
      gcrt_output_info(pkg, g, i, &info);
  }
  std::vector<std::vector<int64_t>> sizes;
  std::vector<std::vector<char>> memory;
  std::vector<gcrt_tensor> inputs;
  gcrt_context *ctx = nullptr;
  if (gcrt_graph_count(pkg) && makeInputs(pkg, sizes, memory, inputs) &&
      gcrt_context_create(pkg, 0, 1, &ctx) == GCRT_OK) {
    std::vector<gcrt_tensor> outputs(gcrt_output_count(pkg, 0));
    gcrt_run(ctx, inputs.data(), inputs.size(), outputs.data(), outputs.size());
  }
  gcrt_context_free(ctx);
  gcrt_package_free(pkg);
  return 0;
}
