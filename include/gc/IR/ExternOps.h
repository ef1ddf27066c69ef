//===- ExternOps.h - Ops that run as one library call -----------*- C++ -*-===//
//
// The GC_EXTERN_OP rows of OpDefs.def, read: what lowering, the post-op
// folding, the plan, the roofline and the pipelines know of each op that
// runs as one call into a library. Adding such an op is adding its row (and
// the runtime's call); no concern tests for its id.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_EXTERNOPS_H
#define GC_IR_EXTERNOPS_H

#include "gc/IR/LoopIR.h"
#include "gc/IR/Module.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gc {

/// The call the plan makes.
enum class ExternCall : uint8_t {
  Matmul,      ///< oneDNN matmul; cuBLASLt on GPUs
  Convolution, ///< oneDNN convolution; cuDNN on GPUs
  Attention,   ///< the runtime's fused attention step (CPU) or kernel (GPU)
};

/// The dim of the result a folded bias runs along, or None: the call takes
/// no post-ops.
enum class ExternBias : uint8_t { None, LastDim, Channels };

/// The multiply-adds per output element, for the roofline.
enum class ExternWork : uint8_t {
  Uncounted,
  InnerOfSelf, ///< the last dim of input 0 (k of a matrix product)
  WeightTail,  ///< the dims of input 1 after its first (C/groups x kernel)
  /// Both products of attention: each row of the result [..., L, Ev] takes
  /// S keys x E for its scores and S x Ev for the scores times the values
  /// (key [..., S, E]); all S counted, a causal mask's half too.
  Attention,
};

/// Which calls an inference pipeline keeps whole instead of decomposing them.
enum class ExternWhole : uint8_t {
  Always,         ///< a core op: every pipeline keeps it
  FusedAttention, ///< the calls the target's fused attention takes
};

struct ExternOp {
  OpId op;
  ExternCall call;
  ExternBias bias;
  ExternWork work;
  ExternWhole whole;
};

/// The row of `op`, or null if it is no library call.
const ExternOp *externOp(OpId op);
/// Every op with a GC_EXTERN_OP row, in table order.
std::vector<OpId> externOps();

/// The dim of a rank-`rank` result of `op` that a folded bias runs along;
/// nullopt if `op` takes no post-ops (or is no library call).
std::optional<size_t> externBiasDim(OpId op, size_t rank);

/// A matrix product's operands among its loop node's inputs.
struct ProductOperands {
  uint32_t src, weights;
};
/// `node`'s left operand and weight (its `self` and `mat2` tensor
/// arguments) when it calls an op whose row's call is Matmul, else nullopt
/// (the int8 qlinear's operands are named otherwise).
std::optional<ProductOperands> productOperands(const LoopNode &node);

/// Whether the backend of `device` runs this call whole, as one step of its
/// own: a call of an op outside the core set whose row's WHOLE column takes
/// it on that device. An inference pipeline keeps such calls (the decompose
/// pass's keeping variant, decompose-keep-whole), the verifier accepts them at
/// level core for the module's target, and every other pipeline (training,
/// gc-opt alone) decomposes them. This is the one place that says what the
/// fused attention of each device takes:
/// - CPU (lib/Runtime/Cpu/AttentionStep.cpp): float32, bfloat16 or float16
///   query, key and value of one type on the CPU (half precision widened to
///   float32 as the step reads it), one head count or, with enable_gqa,
///   static key heads dividing the query heads (grouped-query attention);
/// - CUDA (lib/Runtime/Cuda/AttentionKernel.cu): float32, bfloat16 or
///   float16 query, key and value of one type and rank 3 or 4, one static
///   head dimension of at most 128 for all three, key heads dividing query
///   heads (grouped-query attention); float32 only with a static count of
///   at most 16 query rows (a decode step), where the kernel's exact
///   multiply-adds beat cuBLAS's products plus the softmax kernels, and
///   bfloat16 and float16 (tensor cores) at every size but such a decode
///   step without grouped-query heads, as measured (docs/gpu.md);
/// both: no dropout, a mask that is absent, boolean or of one of those
/// floating-point types (any broadcast), or is_causal.
bool runsWhole(const Node &n, TargetDevice device);
/// runsWhole for a call of `op` on `args` that no node holds yet (a pass
/// asking whether a call it would make runs whole).
bool runsWhole(OpId op, const std::vector<NamedArg> &args, TargetDevice device);

} // namespace gc

#endif // GC_IR_EXTERNOPS_H
