//===- Kernel.h - Reference kernels and their registry ----------*- C++ -*-===//
//
// A reference kernel runs one op on tensors. It reads its arguments through
// an OpCall by their schema names, computes its results with torch's
// semantics (broadcasting, type promotion, views that alias), and returns
// them. Each family of ops registers its kernels in one table
// (lib/Interp/Kernels/<Family>.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GC_INTERP_KERNEL_H
#define GC_INTERP_KERNEL_H

#include "gc/Support/RandomState.h"
#include "gc/IR/ArgReader.h"
#include "gc/IR/Module.h"
#include "gc/IR/OpRegistry.h"
#include "gc/IR/OpVariants.h"
#include "gc/Tensor/Tensor.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace gc {

/// What a kernel throws when it cannot run (a bad argument, an unsupported
/// case). The interpreter catches it and reports it with the node's name;
/// it never leaves the interpreter.
struct KernelError : TensorError {
  using TensorError::TensorError;
};
[[noreturn]] void kernelFail(const std::string &message);

/// A number argument (torch's Scalar), remembering whether it was written as
/// a bool, an int or a float, since that decides type promotion.
struct Scalar {
  enum class Kind { Bool, Int, Float } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  double toDouble() const { return kind == Kind::Float ? f : static_cast<double>(i); }
};

/// The arguments of one node, resolved to tensors and numbers.
class OpCall : public ArgReader {
public:
  OpCall(const Node &node, const std::unordered_map<const Value *, Tensor> &tensors,
         const std::unordered_map<const Value *, int64_t> &symInts,
         RandomState *random = nullptr)
      : ArgReader(node.args()), node_(node), tensors_(tensors), symInts_(symInts),
        random_(random) {}

  const Node &node() const { return node_; }
  /// The call of `other`, a node over the same values (a variant's
  /// functional node, runVariant).
  OpCall forNode(const Node &other) const { return OpCall(other, tensors_, symInts_, random_); }
  /// The run's generator stream, for a random op that draws its numbers
  /// itself (an aten-level op the decompositions would turn into gc.rand):
  /// it takes them from `offset` on and moves `offset` past them, as the
  /// decomposed graph would. Null where no runner stands behind the call.
  RandomState *random() const { return random_; }

  Tensor tensor(std::string_view name) const;
  std::optional<Tensor> optTensor(std::string_view name) const;
  std::vector<Tensor> tensors(std::string_view name) const;
  /// Tensor?[]: a missing entry is an undefined Tensor.
  std::vector<Tensor> optTensors(std::string_view name) const;
  std::optional<std::vector<int64_t>> optInts(std::string_view name) const;
  Scalar scalar(std::string_view name) const;

private:
  Tensor lookup(const Value *v) const;
  int64_t symIntValue(const Value *v, std::string_view name) const override;

  const Node &node_;
  const std::unordered_map<const Value *, Tensor> &tensors_;
  const std::unordered_map<const Value *, int64_t> &symInts_;
  RandomState *random_;
};

/// A kernel returns one tensor per result of its node.
using KernelFn = std::vector<Tensor> (*)(const OpCall &call);

struct KernelEntry {
  OpId op;
  KernelFn fn;
  /// Comma-separated names of the arguments the op writes in place (the
  /// `Tensor(a!)` arguments of its schema), or null. A variant's writes
  /// are runVariant's.
  const char *mutates = nullptr;
};

using KernelRegistry = OpRegistry<KernelEntry>;

/// The numbers gc.rand(sizes, seed, offset, dtype) gives (Philox-4x32-10;
/// lib/Interp/Kernels/Core.cpp says how), for the kernels that draw their
/// own: a contiguous tensor of floating `dtype`.
Tensor uniformNumbers(DType dtype, const Shape &sizes, uint64_t seed, uint64_t offset);

/// The registry with every reference kernel gc has.
const KernelRegistry &referenceKernels();

/// Runs the in-place or out= variant `v` (OpVariants.h) that `call`'s node
/// calls: the kernel of its functional op in `kernels` on the functional
/// op's arguments, then each result written into its argument's storage
/// through that argument's strides, as torch does; the result must have the
/// argument's sizes (gc does not resize an out= tensor) and be castable to
/// its dtype. Returns the written tensors. Throws KernelError.
std::vector<Tensor> runVariant(const OpVariant &v, const OpCall &call,
                               const KernelRegistry &kernels);

// One per family, each defined beside its kernels.
void registerPointwiseKernels(KernelRegistry &r);
void registerReductionKernels(KernelRegistry &r);
void registerShapeKernels(KernelRegistry &r);
void registerIndexingKernels(KernelRegistry &r);
void registerProductKernels(KernelRegistry &r);
void registerConvolutionKernels(KernelRegistry &r);
void registerNormalizationKernels(KernelRegistry &r);
void registerNNKernels(KernelRegistry &r);
void registerRecurrentKernels(KernelRegistry &r);
void registerCoreKernels(KernelRegistry &r);
void registerLinalgKernels(KernelRegistry &r);
void registerSizeKernels(KernelRegistry &r);
void registerQuantizeKernels(KernelRegistry &r);
void registerDataDependentKernels(KernelRegistry &r);

// Helpers shared by the kernel families (defined in Kernels/Shape.cpp).

/// A 0-dim tensor holding a number exactly, in the widest dtype of its
/// literal's kind (bool, int64, float64), so that `Tensor::to` converts it as
/// torch does.
Tensor numberTensor(const Scalar &s);
/// `dim` wrapped into [0, rank) as torch wraps negative dims; a 0-dim tensor
/// takes 0 or -1, as if it had one dimension. Throws KernelError when out of
/// range.
int64_t wrapDim(int64_t dim, int64_t rank);
/// torch.cat: a new tensor of the promoted dtype holding `tensors` one after
/// the other along `dim`.
Tensor concatenate(const std::vector<Tensor> &tensors, int64_t dim);

} // namespace gc

#endif // GC_INTERP_KERNEL_H
