//===- Pipelines.h - The pass lists of each stage ---------------*- C++ -*-===//
#ifndef GC_TRANSFORMS_PIPELINES_H
#define GC_TRANSFORMS_PIPELINES_H

#include <string>

namespace gc {

struct CorePipelineOptions {
  /// Inference: parameters become constants and fold into their users.
  bool freeze = false;
  /// A model exported on another device (cuda) is compiled for the CPU on
  /// purpose: every tensor and device argument becomes cpu first.
  bool retargetCPU = false;
};

/// gc-opt's default pipeline, aten graph to core graph, as a --passes list.
std::string corePipeline(const CorePipelineOptions &options);

/// What gc-opt --joint runs on the joint graph once autodiff built it.
std::string jointPipeline();

} // namespace gc

#endif // GC_TRANSFORMS_PIPELINES_H
