//===- GpuTestKernels.h - Hand-written kernels for GPU tests ----*- C++ -*-===//
#ifndef GC_TEST_UNIT_RUNTIME_GPUTESTKERNELS_H
#define GC_TEST_UNIT_RUNTIME_GPUTESTKERNELS_H

#include "gc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gc::test {

/// The kernels of Inputs/gpu-kernels.ptx as a fatbinary: cubins for sm_80
/// and sm_90 and the PTX. Empty where the build had no CUDA toolkit.
std::string gpuTestKernels();
/// The same kernels as an sm_80 cubin alone, which no other major
/// architecture runs.
std::string gpuTestKernelsSm80();

/// Why GPU tests cannot run here ("" if they can): no toolkit at build
/// time, no driver or no device.
std::string whyNoGpuTests();

/// Memory on GPU 0, with the bytes given, for tests of tensors that are
/// already there. Errors fail the current test.
class DeviceMemory {
public:
  explicit DeviceMemory(const std::vector<float> &values);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  /// The device address, as TensorRef::data and gcrt_tensor::data hold it.
  void *data() const { return reinterpret_cast<void *>(address_); }
  std::vector<float> read() const;

private:
  uint64_t address_ = 0;
  size_t count_ = 0;
};

} // namespace gc::test

/// Skips the current test where GPU tests cannot run.
#define GC_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (std::string why = ::gc::test::whyNoGpuTests(); !why.empty())           \
      GTEST_SKIP() << why;                                                     \
  } while (0)

#endif // GC_TEST_UNIT_RUNTIME_GPUTESTKERNELS_H
