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

#include "gc/IR/Module.h"
#include "gc/Interp/Tensor.h"

#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace gc {

/// What a kernel throws when it cannot run (a bad argument, an unsupported
/// case). The interpreter catches it and reports it with the node's name;
/// it never leaves the interpreter.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
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
class OpCall {
public:
  OpCall(const Node &node, const std::unordered_map<const Value *, Tensor> &tensors,
         const std::unordered_map<const Value *, int64_t> &symInts)
      : node_(node), tensors_(tensors), symInts_(symInts) {}

  const Node &node() const { return node_; }
  /// True if the argument is given and is not None.
  bool has(std::string_view name) const;

  Tensor tensor(std::string_view name) const;
  std::optional<Tensor> optTensor(std::string_view name) const;
  std::vector<Tensor> tensors(std::string_view name) const;
  /// Tensor?[]: a missing entry is an undefined Tensor.
  std::vector<Tensor> optTensors(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  int64_t integer(std::string_view name, int64_t dflt) const;
  /// int[] and SymInt[] arguments; a single int is a list of one.
  std::vector<int64_t> ints(std::string_view name) const;
  std::optional<std::vector<int64_t>> optInts(std::string_view name) const;
  double real(std::string_view name) const;
  double real(std::string_view name, double dflt) const;
  Scalar scalar(std::string_view name) const;
  bool boolean(std::string_view name, bool dflt) const;
  std::string string(std::string_view name, const std::string &dflt) const;
  std::optional<DType> dtype(std::string_view name) const;

private:
  const NamedArg &get(std::string_view name) const;
  const NamedArg *find(std::string_view name) const;
  Tensor lookup(const Value *v) const;
  int64_t symInt(const Value *v, int64_t constant) const;

  const Node &node_;
  const std::unordered_map<const Value *, Tensor> &tensors_;
  const std::unordered_map<const Value *, int64_t> &symInts_;
};

/// A kernel returns one tensor per result of its node.
using KernelFn = std::vector<Tensor> (*)(const OpCall &call);

struct KernelEntry {
  const char *op; ///< qualified name with overload: "aten.add.Tensor"
  KernelFn fn;
  /// Comma-separated names of the arguments the op writes in place (the
  /// `Tensor(a!)` arguments of its schema), or null.
  const char *mutates = nullptr;
};

class KernelRegistry {
public:
  void add(std::span<const KernelEntry> entries);
  /// The entry for `op`, or null.
  const KernelEntry *find(std::string_view op) const;
  /// Every op with a kernel, sorted (for docs/ops.md).
  std::vector<std::string> ops() const;

private:
  std::map<std::string, KernelEntry, std::less<>> kernels_;
};

/// The registry with every reference kernel gc has.
const KernelRegistry &referenceKernels();

// One per family, each defined beside its kernels.
void registerPointwiseKernels(KernelRegistry &r);
void registerReductionKernels(KernelRegistry &r);
void registerShapeKernels(KernelRegistry &r);
void registerIndexingKernels(KernelRegistry &r);
void registerNNKernels(KernelRegistry &r);

// Helpers shared by the kernel families (defined in Kernels/Shape.cpp).

/// `dim` wrapped into [0, rank) as torch wraps negative dims; a 0-dim tensor
/// takes 0 or -1, as if it had one dimension. Throws KernelError when out of
/// range.
int64_t wrapDim(int64_t dim, int64_t rank);
/// torch.cat: a new tensor of the promoted dtype holding `tensors` one after
/// the other along `dim`.
Tensor concatenate(const std::vector<Tensor> &tensors, int64_t dim);

} // namespace gc

#endif // GC_INTERP_KERNEL_H
