//===- GpuTestKernels.cpp - Hand-written kernels for GPU tests ------------===//
//
// The fatbinaries are embedded with the assembler's .incbin, so that the
// test binaries carry them to whatever machine has the GPU.
//
//===----------------------------------------------------------------------===//
#include "GpuTestKernels.h"

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

} // namespace gc::test
