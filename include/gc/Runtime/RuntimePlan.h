//===- RuntimePlan.h - The plan libgcrt runs --------------------*- C++ -*-===//
//
// A runtime plan (formats/plan.fbs, docs/formats.md) says everything the
// runtime needs to run a package's graphs, with no compiler IR: buffers and
// views whose sizes are size programs over symbol slots, bindings, steps
// (kernels, oneDNN calls, fallbacks for the optional fallback component),
// and arena placements. gc-package writes one (lib/Plan); the runtime reads
// it through the generated accessors, once checked here.
//
//===----------------------------------------------------------------------===//
#ifndef GC_RUNTIME_RUNTIMEPLAN_H
#define GC_RUNTIME_RUNTIMEPLAN_H

#include "gc/Runtime/plan_generated.h"
#include "gc/Support/DType.h"
#include "gc/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gc {

/// The plan format this build writes and reads: a reader takes the same
/// major version and any minor version up to its own.
inline constexpr uint32_t kPlanMajor = 2;
inline constexpr uint32_t kPlanMinor = 10;
/// From this minor version on, a plan's GPU kernels built for sm_90 or
/// later wait at entry for the kernel before them on the stream
/// (griddepcontrol.wait), so that libgcrt may launch them early
/// (RuntimeOptions::cudaEarlyLaunch); older ones' may not.
inline constexpr uint32_t kPlanMinorEarlyKernels = 8;
/// The first minor version with the GatedSilu post-op.
inline constexpr uint32_t kPlanMinorGatedSilu = 9;
/// The first minor version with a matrix product's RMSNorm prologue.
inline constexpr uint32_t kPlanMinorRmsNorm = 10;

/// A plan whose bytes verified (structure, version, every index, every
/// size program). Immutable; shared by the executors of its graphs.
class RuntimePlan {
public:
  /// Checks `bytes`; errors are prefixed with `where` (the file and entry).
  static Expected<std::shared_ptr<const RuntimePlan>> read(std::string bytes,
                                                           const std::string &where);
  const plan::Plan &root() const { return *plan::GetPlan(bytes_.data()); }
  const std::string &bytes() const { return bytes_; }

private:
  explicit RuntimePlan(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string bytes_;
};

/// The value of `program` for these symbol values (by slot); an error for a
/// zero divisor. The program must have been checked (RuntimePlan::read).
Expected<int64_t> evaluate(const plan::SizeProgram &program, std::span<const int64_t> symbols);

/// The program as an expression for messages: "s0", "2*s0 + 1",
/// "floordiv(s0, 2)", with the plan's symbol names.
std::string sizeText(const plan::SizeProgram &program, const plan::Plan &plan);
/// "f32[s0, 64]"
std::string typeText(plan::DType dtype,
                     const flatbuffers::Vector<flatbuffers::Offset<plan::SizeProgram>> *sizes,
                     const plan::Plan &plan);

/// The symbol slot `program` binds when it is one Symbol instruction.
std::optional<uint32_t> boundSymbol(const plan::SizeProgram &program);

/// The binding roles the runtime acts on, as the IR names InputKind::Buffer,
/// OutputKind::BufferMutation and OutputKind::UserInputMutation; libgcrt
/// does not link the IR library, so test/Unit/Package checks they agree.
inline constexpr std::string_view kBufferRole = "buffer";
inline constexpr std::string_view kBufferMutationRole = "buffer_mutation";
inline constexpr std::string_view kUserInputMutationRole = "user_input_mutation";

inline DType dtypeOf(plan::DType t) { return static_cast<DType>(t); }

/// "kernel", "extern" or "fallback": how profiles name a step's kind.
const char *stepKindName(plan::StepKind k);

/// "graph @NAME"
std::string graphLabel(const plan::Graph &g);
/// " at model.py:42 in forward (layers.3: Block)": the step's first source
/// (plus " and N other places" for a fused kernel), for messages about the
/// step; "" when the plan records none.
std::string stepSourceSuffix(const plan::Step &s);
/// The module every source of the step lies in: the longest common prefix of
/// their module paths, by whole components ("layers.3" for "layers.3.attn"
/// and "layers.3.mlp"); "" for the root or when unknown.
std::string stepModulePath(const plan::Step &s);
/// The longest common prefix of two module paths, by whole components.
std::string_view commonModulePath(std::string_view a, std::string_view b);

} // namespace gc

#endif // GC_RUNTIME_RUNTIMEPLAN_H
