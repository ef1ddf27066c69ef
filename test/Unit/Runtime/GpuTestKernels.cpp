//===- GpuTestKernels.cpp - Hand-written kernels for GPU tests ------------===//
//
// The fatbinaries are embedded with the assembler's .incbin, so that the
// test binaries carry them to whatever machine has the GPU.
//
//===----------------------------------------------------------------------===//
#include "GpuTestKernels.h"

#include "Cuda/CudaDriver.h"

#include <algorithm>

namespace gc::test {

#if defined(GC_TEST_FATBIN) && defined(GC_TEST_FATBIN_SM80)
asm(".pushsection .rodata\n"
    ".balign 64\n"
    "gcTestFatbin:\n"
    ".incbin \"" GC_TEST_FATBIN "\"\n"
    "gcTestFatbinEnd:\n"
    ".balign 64\n"
    "gcTestFatbinSm80:\n"
    ".incbin \"" GC_TEST_FATBIN_SM80 "\"\n"
    "gcTestFatbinSm80End:\n"
    ".popsection\n");
extern "C" const char gcTestFatbin[], gcTestFatbinEnd[], gcTestFatbinSm80[],
    gcTestFatbinSm80End[];

std::string gpuTestKernels() { return std::string(gcTestFatbin, gcTestFatbinEnd); }
std::string gpuTestKernelsSm80() { return std::string(gcTestFatbinSm80, gcTestFatbinSm80End); }
#else
std::string gpuTestKernels() { return {}; }
std::string gpuTestKernelsSm80() { return {}; }
#endif

std::string whyNoGpuTests() {
  if (gpuTestKernels().empty())
    return "the build found no ptxas and fatbinary for the test kernels";
  Expected<std::vector<CudaDevice>> devices = cudaDevices();
  return devices ? "" : devices.error().message();
}

namespace {

/// The driver, with GPU 0's primary context current on this thread.
const cuda::Driver &currentDriver() {
  const cuda::Driver &d = **cuda::driver();
  cuda::Device dev = 0;
  cuda::Context ctx = nullptr;
  EXPECT_EQ(d.deviceGet(&dev, 0), cuda::Success);
  // Retained for the process: the tests' memory lives in it.
  EXPECT_EQ(d.primaryCtxRetain(&ctx, dev), cuda::Success);
  EXPECT_EQ(d.ctxSetCurrent(ctx), cuda::Success);
  return d;
}

} // namespace

DeviceMemory::DeviceMemory(const std::vector<float> &values) : count_(values.size()) {
  const cuda::Driver &d = currentDriver();
  size_t bytes = std::max<size_t>(count_ * sizeof(float), 1);
  EXPECT_EQ(d.memAlloc(&address_, bytes), cuda::Success);
  if (count_) {
    EXPECT_EQ(d.memcpyHtoDAsync(address_, values.data(), count_ * sizeof(float), nullptr),
              cuda::Success);
  }
  EXPECT_EQ(d.streamSynchronize(nullptr), cuda::Success);
}

DeviceMemory::~DeviceMemory() {
  if (address_)
    currentDriver().memFree(address_);
}

std::vector<float> DeviceMemory::read() const {
  const cuda::Driver &d = currentDriver();
  std::vector<float> out(count_);
  if (count_) {
    EXPECT_EQ(d.memcpyDtoHAsync(out.data(), address_, count_ * sizeof(float), nullptr),
              cuda::Success);
  }
  EXPECT_EQ(d.streamSynchronize(nullptr), cuda::Success);
  return out;
}

} // namespace gc::test
