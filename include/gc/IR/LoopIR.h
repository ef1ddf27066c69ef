//===- LoopIR.h - Loop IR: buffers, loop nodes and execution plans -*- C++ -*-===//
//
// gc-lower turns a core graph into a LoopGraph: a list of buffers and, in
// execution order, the nodes that fill them. A Pointwise node computes one
// element of its output per point of its iteration space; a Reduction node
// combines the values of a body over reduction loops into one element per
// point of its outer space. Bodies are small SSA lists of scalar operations
// whose loads read buffers through index expressions (SymExpr) over the loop
// variables, so views never copy: a view is a different index expression.
// Extern nodes call a library (matmul, convolution) on strided views of
// buffers; Fallback nodes run the reference kernel of a core op.
//
// gc-codegen adds a Plan: which nodes form one kernel, the order of steps,
// where every buffer lives, and the object code of the kernels.
//
// Loop variables are symbols of the module's SymContext named "i0", "i1", ...
// (the iteration space, outermost first) and "r0", "r1", ... (reduction
// loops). Indirect indices (a gather) name the body values they read as
// symbols "t0", "t1", ... (see BodyOp::indirect). Model size symbols are
// named "s0", "s1", ..., so the three sets never collide.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_LOOPIR_H
#define GC_IR_LOOPIR_H

#include "gc/IR/Module.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// Scalar operations of a body, one row each in ScalarOps.def.
enum class ScalarOp : uint8_t {
#define GC_SCALAR_OP(ID, NAME, ARITY, CPU, EVAL) ID,
#include "gc/IR/ScalarOps.def"
#undef GC_SCALAR_OP
};
inline constexpr size_t kNumScalarOps = 0
#define GC_SCALAR_OP(ID, NAME, ARITY, CPU, EVAL) +1
#include "gc/IR/ScalarOps.def"
#undef GC_SCALAR_OP
    ;
std::string_view scalarOpName(ScalarOp op);
std::optional<ScalarOp> parseScalarOp(std::string_view name);
/// 1, 2 or 3.
unsigned scalarOpArity(ScalarOp op);

/// One operation of a body. Operands are indices of earlier operations.
struct BodyOp {
  enum class Kind : uint8_t {
    Load,    ///< buffer[index]; if `mask` >= 0 and operand `mask` is false,
             ///< the result is `constant` and memory is not touched
    Const,   ///< `constant` (integers are exact in a double up to 2^53)
    Index,   ///< the integer value of `index` (arange, masks)
    Compute, ///< `op` applied to `operands`
    Cast,    ///< operands[0] converted to `dtype` (torch's conversion rules)
  };
  Kind kind = Kind::Const;
  DType dtype = DType::Float32; ///< the result's dtype
  ScalarOp op = ScalarOp::Add;  ///< Compute only
  std::vector<uint32_t> operands;
  uint32_t buffer = 0;             ///< Load: index into LoopGraph::buffers
  const SymExpr *index = nullptr;  ///< Load, Index: element offset / value
  /// Load: body values bound to the symbols t0, t1, ... in `index`, in that
  /// order (each an integer body value), for gathers.
  std::vector<uint32_t> indirect;
  int32_t mask = -1;  ///< Load: a Bool body value guarding the access, or -1
  double constant = 0; ///< Const; Load: the value where masked off
  bool operator==(const BodyOp &) const = default;
};

/// A scalar program over the loop variables; `result` is the value produced.
struct Body {
  std::vector<BodyOp> ops;
  uint32_t result = 0;
  bool operator==(const Body &) const = default;
};

/// Keeps the ops of `body` that `roots` need (through operands, indirect
/// indices and masks), in their order, and numbers them anew; returns each
/// kept op's new number at its old one (the others' are meaningless).
/// `body.result` is renumbered where it is kept.
std::vector<uint32_t> keepNeededOps(Body &body, std::span<const uint32_t> roots);

/// How a Reduction combines values. ArgMax/ArgMin give the int64 position in
/// the flattened reduction space (r0 outermost) of the first extreme value.
enum class ReduceKind : uint8_t { Sum, Prod, Max, Min, ArgMax, ArgMin, Any };
std::string_view reduceKindName(ReduceKind k);
std::optional<ReduceKind> parseReduceKind(std::string_view name);

/// How a Pointwise node's store meets the element already in its output:
/// None overwrites it; the others read it, combine the body's value into it
/// (x + v, x * v, max, min; a NaN wins max and min) and write the result.
enum class StoreCombine : uint8_t { None, Add, Mul, Max, Min };

/// What a buffer holds and who owns its memory.
enum class BufferKind : uint8_t {
  Input,        ///< a graph input (user input, parameter, buffer, constant)
  Output,       ///< written by the graph and returned (caller's memory)
  Intermediate, ///< lives only during one run (the plan's arena)
};

/// A buffer: a dense region of elements. `sizes` and `strides` give its
/// layout; an intermediate whose layout gc-lower was free to choose is
/// `flexible` (the scheduler may permute its strides), others are fixed.
struct Buffer {
  std::string name;
  BufferKind kind = BufferKind::Intermediate;
  DType dtype = DType::Float32;
  std::vector<const SymExpr *> sizes;
  std::vector<const SymExpr *> strides;
  bool flexible = false;
  bool operator==(const Buffer &) const = default;
};

/// A tensor argument of an Extern or Fallback node: a strided view of a
/// buffer (sizes, strides and storage offset in elements).
struct BufferView {
  uint32_t buffer = 0;
  TensorType type;
  bool operator==(const BufferView &) const = default;
};

/// A non-tensor argument of an Extern or Fallback node, or a tensor one
/// (kind Tensor/Tensors/OptionalTensors: indices into LoopNode::inputs,
/// -1 for a None entry, in `ints`).
struct LoopArg {
  std::string name;
  bool keywordOnly = false;
  Arg value; ///< Arg::values is always empty here
  bool operator==(const LoopArg &) const = default;
};

/// Pointwise activations and binary ops an Extern can apply to its result
/// before storing it (oneDNN post-ops), in order. GatedSilu, on a matrix
/// product alone, makes the value v so far silu(v) * u, where u is the
/// same product with `input` in place of its weight (mat2): a gated MLP's
/// gate and up projections in one call, each element rounded once
/// (folded on GPUs only, where gc's few-row kernel computes both;
/// lib/Schedule/ProductFolds.cpp).
struct PostOp {
  enum class Kind : uint8_t { AddBias, Add, Relu, GeluErf, GeluTanh, Swish, GatedSilu };
  Kind kind = Kind::AddBias;
  /// AddBias: the bias vector (along the output's last dim, or the
  /// convolution's channels); Add: a tensor of the output's shape;
  /// GatedSilu: the second weight, laid out as the product's own.
  uint32_t input = 0; ///< index into LoopNode::inputs
  bool operator==(const PostOp &) const = default;
};

/// An RMSNorm of a matrix product's left rows, applied as the product reads
/// them: row m of the left operand a is taken as
/// a[m, k] * weight[k] / sqrt(mean over k of a[m, k]^2 + eps), computed in
/// float32 and never stored (lib/Schedule/ProductFolds.cpp folds a decode
/// step's RMSNorm into the GPU products that read it).
struct RmsNormPrologue {
  uint32_t weight = 0; ///< index into LoopNode::inputs: k values, unit stride
  double eps = 0;
  bool operator==(const RmsNormPrologue &) const = default;
};

/// Call nodes run other loop graphs of the module: `op` is cond or
/// while_loop, `args` name the graphs (ArgKind::Graph) and give the tensor
/// arguments as indices into `inputs`, and `outputs` receive the results.
struct LoopNode {
  enum class Kind : uint8_t { Pointwise, Reduction, Extern, Fallback, Call };
  Kind kind = Kind::Pointwise;
  std::string name; ///< unique within the graph, for messages and text
  /// Pointwise: the iteration space; Reduction: the outer (kept) space.
  std::vector<const SymExpr *> ranges;
  /// Reduction: the reduced loops r0, r1, ...
  std::vector<const SymExpr *> reductionRanges;
  ReduceKind reduce = ReduceKind::Sum;
  Body body;
  /// Pointwise/Reduction: the output buffer and the element offset of the
  /// point i0, i1, ... within it.
  uint32_t output = 0;
  const SymExpr *storeIndex = nullptr;
  /// Pointwise: body values bound to the symbols t0, t1, ... in
  /// `storeIndex`, in that order (integer body values), for scatters.
  std::vector<uint32_t> storeIndirect;
  /// Pointwise: how the store combines with what the output holds.
  StoreCombine combine = StoreCombine::None;

  /// Extern/Fallback: a core op (ops::aten_mm_default) applied to `inputs`,
  /// writing `outputs` (one view per result; a result nobody reads may be
  /// a buffer of its own that the plan drops).
  OpId op{};
  std::vector<LoopArg> args;
  std::vector<BufferView> inputs;
  std::vector<BufferView> outputs;
  std::vector<PostOp> postOps; ///< Extern only
  /// Extern matrix products only: their left rows' RMSNorm, or none.
  std::optional<RmsNormPrologue> rmsNorm;
  /// The core graph node this came from, for messages.
  std::string origin;
  /// Reduction only: a scan. The node stores its running value after every
  /// step of its one reduction loop (its storeIndex uses r0), as cumsum and
  /// cumprod do; reduce is Sum or Prod. The loop runs serially, in order.
  bool scan = false;
  /// The core node's source location (Module::locations()), or null.
  const SourceLoc *loc = nullptr;
  bool operator==(const LoopNode &) const = default;
};

/// Whether `n` is a scattering node: its store goes through loaded indices
/// or combines with the output's element, so a point does not own the
/// element it writes (several points may write one element, in point
/// order, and the node writes only some elements of its output: an earlier
/// node fills the rest).
inline bool scatters(const LoopNode &n) {
  return !n.storeIndirect.empty() || n.combine != StoreCombine::None;
}

/// The index into `n.inputs` of its tensor argument `name`, or nullopt when
/// there is none, it is None, or it names no input.
std::optional<uint32_t> tensorInput(const LoopNode &n, std::string_view name);

/// A graph input or output bound to a buffer. An output may be a view of a
/// buffer (it aliases an input, or torch gave it an unusual layout): `type`
/// is exactly the type the core graph gave the value.
struct LoopBinding {
  std::string name;
  uint32_t buffer = 0;
  TensorType type;
  bool operator==(const LoopBinding &) const = default;
};

/// How a GPU kernel spreads the points of its parallel ranges over threads
/// (docs/gpu.md). CPU kernels have None: the runtime splits the first
/// parallel range across threads.
enum class GpuMapping : uint8_t {
  None,
  /// One thread per point of the flattened parallel ranges (grid-stride);
  /// each thread runs the nodes' inner loops and reductions alone.
  ThreadPerPoint,
  /// One block per point (grid-stride over points); the block's threads
  /// share every node's inner loops, and reductions combine across them.
  BlockPerPoint,
};

/// A reduction of at least this many points (by its sizes' upper bounds)
/// makes its GPU kernel BlockPerPoint, its points combined across the block
/// (GpuLaunch.cpp); gc-codegen's fusion reads it too, so that such a block
/// is not given many rows of another reduction to combine one at a time.
constexpr int64_t kGpuBlockReduction = 64;

/// One kernel: the nodes it runs, in order, inside a loop nest whose outer
/// `parallelRanges` all of them share (each node's own ranges start with
/// them).
struct KernelGroup {
  std::string name; ///< the symbol of the kernel's entry point
  std::vector<uint32_t> nodes;
  std::vector<const SymExpr *> parallelRanges;
  /// GPU kernels: set by the GPU kernel emitter.
  GpuMapping mapping = GpuMapping::None;
  uint32_t blockThreads = 0; ///< threads per block (GPU kernels)
  /// ThreadPerPoint: the points each thread runs in one step of its loop,
  /// the grid's width apart, all loads before any store (0 or 1: one).
  uint32_t pointsPerThread = 0;
  /// ThreadPerPoint: consecutive points of the innermost parallel range
  /// that a thread takes as one vector, so that its unit-stride accesses
  /// are single wide loads and stores (0 or 1: one point).
  uint32_t vectorWidth = 0;
  bool operator==(const KernelGroup &) const = default;
};

/// An output of a step that may take the memory of an input that dies at
/// that step: every element of `input` is read only where the same element
/// of `output` is written, at the same byte size.
struct InplacePair {
  uint32_t output = 0;
  uint32_t input = 0;
  bool operator==(const InplacePair &) const = default;
};

/// One step of the execution plan.
struct PlanStep {
  enum class Kind : uint8_t { Kernel, Extern, Fallback, Call };
  Kind kind = Kind::Kernel;
  uint32_t index = 0; ///< Kernel: a KernelGroup; Extern/Fallback/Call: a LoopNode
  /// Intermediate buffers whose last use is this step.
  std::vector<uint32_t> frees;
  /// Where the step could write in place (set by the scheduler; the memory
  /// planner decides).
  std::vector<InplacePair> inplace;
  bool operator==(const PlanStep &) const = default;
};

/// Where an intermediate buffer lives: a byte offset in the arena. Buffers
/// whose size is symbolic are placed by the runtime (offset -1).
struct BufferPlacement {
  uint32_t buffer = 0;
  int64_t offset = -1;
  int64_t bytes = 0;
  bool operator==(const BufferPlacement &) const = default;
};

/// What gc-codegen adds to a LoopGraph.
struct Plan {
  std::vector<KernelGroup> kernels;
  std::vector<PlanStep> steps;
  std::vector<BufferPlacement> placements;
  /// Size symbols in the order kernels receive their values.
  std::vector<std::string> symbols;
  int64_t arenaBytes = 0;         ///< peak of the static placements
  int64_t intermediateBytes = 0;  ///< sum of all static intermediates
  /// "x86-64", "x86-64-v3", "x86-64-v4", or for NVIDIA GPUs
  /// "cuda:sm_80,sm_90" (gc/Support/Target.h).
  std::string target;
  /// CPU: an ELF relocatable object; CUDA: a fatbinary (a cubin per
  /// architecture and PTX for newer ones).
  std::string objectCode;
  std::string objectHash;         ///< SHA-256 of what made objectCode
  bool operator==(const Plan &) const = default;
};

/// A graph at the Loops or Kernels level.
struct LoopGraph {
  std::string name;
  std::vector<Buffer> buffers;
  /// One per core graph input, in order, with its role.
  std::vector<LoopBinding> inputs;
  std::vector<InputSpec> inputSpecs;
  std::vector<LoopNode> nodes;
  std::vector<LoopBinding> outputs;
  std::vector<OutputSpec> outputSpecs;
  Plan plan; ///< empty at the Loops level
  bool operator==(const LoopGraph &) const = default;
};

} // namespace gc

#endif // GC_IR_LOOPIR_H
