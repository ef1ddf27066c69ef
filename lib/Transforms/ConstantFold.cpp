//===- ConstantFold.cpp - Evaluating nodes on constants at compile time ---===//
//
// A node whose tensor arguments are all constants (weights the module holds:
// inputs of kind constant, as freeze makes them) is evaluated once, here,
// with the reference kernels, and its result becomes a new constant. Nodes
// without tensor arguments (full, arange) fold too. Only small results fold
// (at most kMaxFoldBytes each), so the module does not grow by much: a
// folded view of a large weight would copy it. A node that narrows its one
// tensor argument (as many elements, fewer bytes each) folds at any size: a
// cast of a weight to bfloat16 (--precision=bf16) replaces the weight with
// half the bytes, or adds half where the weight stays in use.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/Transforms/Passes.h"

namespace gc {

namespace {

constexpr int64_t kMaxFoldBytes = int64_t(1) << 20;

class ConstantFoldPass : public Pass {
public:
  std::string_view name() const override { return "constant-fold"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    auto narrows = [](const Node &n) {
      std::vector<const Value *> tensors;
      for (const NamedArg &a : n.args())
        for (const Value *v : a.value.values)
          if (v && v->type().kind == Type::Kind::Tensor)
            tensors.push_back(v);
      if (tensors.size() != 1 || n.results().size() != 1)
        return false;
      const TensorType &in = tensors[0]->type().tensor, &out = n.results()[0]->type().tensor;
      return in.sizes == out.sizes && dtypeSize(out.dtype) < dtypeSize(in.dtype);
    };
    auto small = [&narrows](const Node &n) {
      if (narrows(n))
        return true;
      for (const Value *r : n.results())
        if (staticBytes(r->type().tensor).value_or(kMaxFoldBytes + 1) > kMaxFoldBytes)
          return false;
      return true;
    };
    // By index: a fold may add the constant program's graph.
    for (size_t i = 0; i < m.graphs().size(); ++i)
      GC_RETURN_IF_ERROR(foldConstants(m, *m.graphs()[i], small, statistics()));
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createConstantFoldPass() { return std::make_unique<ConstantFoldPass>(); }

} // namespace gc
