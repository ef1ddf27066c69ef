//===- Roofline.h - Profile steps against the machine's peaks --*- C++ -*-===//
//
// `--profile`'s roofline: each step's achieved FLOP/s and bytes per second
// (the work the compiler counted, plan::Step flops and bytes, over the time
// the step took) against the peaks of the machine the run used, and which
// of the two limits the step is nearer. CPU peaks are measured once, for the
// run's threads with code for the ISA of the loaded kernels; GPU peaks come
// from the device's attributes and a table of per-SM throughput by compute
// capability. GC_PEAKS="GFLOPS,GBPS" (or a tool's --peaks) overrides both.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_ROOFLINE_H
#define GC_RUNTIME_ROOFLINE_H

#include "gc/Runtime/Runtime.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

struct MachinePeaks {
  double flopsPerSecond = 0, bytesPerSecond = 0;
  /// Where the numbers came from, for the report.
  std::string source;
};

/// Measures the CPU's peaks with `threads` threads at once (0: one per
/// hardware thread): FMA chains on independent vector accumulators, and a
/// streaming read of a buffer far larger than the caches. `target` is the
/// CPU level of the loaded kernels ("x86-64-v4" measures AVX-512, other
/// x86-64 levels AVX2; "": the widest this CPU has). Takes about 0.3 s.
MachinePeaks measureCpuPeaks(unsigned threads, std::string_view target);

/// A GPU's peaks from its attributes: the memory bus's width times twice
/// its clock, and SMs times clock times the per-SM FLOPs of the unit
/// `dtype` runs on (float32: FP32 FMA, or TF32 tensor cores when
/// `allowTF32`; bfloat16 and float16: tensor cores). An error names a
/// compute capability the table lacks, or attributes the driver lacks.
Expected<MachinePeaks> cudaPeaks(const CudaDevice &device, DType dtype, bool allowTF32);

/// `text` as "GFLOPS,GBPS" (both positive); errors name `what`.
Expected<MachinePeaks> parsePeaks(std::string_view text, std::string_view what);

/// The peaks the user gave: `flag` (a tool's --peaks) when it is not
/// empty, else GC_PEAKS when it is set; nullopt: measure them.
Expected<std::optional<MachinePeaks>> givenPeaks(std::string_view flag);

/// The report: the peaks and where they came from, one line per step with
/// its work (achieved GFLOP/s and GB/s, each as a share of its peak, its
/// FLOPs per byte and the bound it is nearer), and the whole run's.
std::string rooflineReport(const std::vector<StepProfile> &steps, const MachinePeaks &peaks);

} // namespace gc

#endif // GC_RUNTIME_ROOFLINE_H
