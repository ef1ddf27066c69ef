//===- KernelTestUtil.h - Shared plumbing of the kernel unit tests -*- C++ -*-===//
//
// Builds a graph of one node, runs it through a kernel registry and compares
// the result with expected values. Used by the Interp kernel tests.
//
//===----------------------------------------------------------------------===//

#ifndef GC_TEST_UNIT_INTERP_KERNELTESTUTIL_H
#define GC_TEST_UNIT_INTERP_KERNELTESTUTIL_H

#include "gc/Interp/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace gc::test {

/// A contiguous tensor holding `values` in row-major order.
inline Tensor make(DType dtype, Shape sizes, const std::vector<double> &values) {
  Tensor t = Tensor::zeros(dtype, std::move(sizes));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    t.storeDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

/// A view of `t` with its last two dimensions swapped, sharing t's storage.
inline Tensor transposed(const Tensor &t) {
  Shape sizes = t.sizes(), strides = t.strides();
  std::swap(sizes[sizes.size() - 2], sizes.back());
  std::swap(strides[strides.size() - 2], strides.back());
  return t.asStrided(sizes, strides, t.offset());
}

/// The arguments of one node under construction; `run` adds the node to its
/// graph and calls the kernel that `registry` holds for the op.
class OneNodeGraph {
public:
  /// Adds a tensor argument, which becomes a graph input.
  void addTensor(const std::string &name, const Tensor &t) {
    addArg(name, Arg::tensor(addInput(name, t)));
  }
  /// Tensor[] (all defined) or Tensor?[] (undefined entries are None).
  void addTensorList(const std::string &name, const std::vector<Tensor> &ts) {
    Arg a;
    a.kind = ArgKind::Tensors;
    for (const Tensor &t : ts) {
      if (!t.defined())
        a.kind = ArgKind::OptionalTensors;
      a.values.push_back(t.defined() ? addInput("x" + std::to_string(tensors_.size()), t)
                                     : nullptr);
    }
    addArg(name, std::move(a));
  }
  void addArg(const std::string &name, Arg a) {
    args_.push_back(NamedArg{name, false, std::move(a)});
  }

  std::vector<Tensor> run(const KernelRegistry &registry, OpId op,
                          size_t numResults = 1) {
    const OpVariant *variant = findVariant(op);
    const KernelEntry *entry = registry.find(variant ? variant->functional : op);
    KernelFn fn = entry ? entry->fn : nullptr;
    if (!fn)
      throw std::logic_error("no kernel for " + opString(op));
    std::vector<std::pair<std::string, Type>> results;
    for (size_t r = 0; r < numResults; ++r)
      results.emplace_back("r" + std::to_string(r), Type{});
    Node *node = graph_->addNode(op, args_, results);
    OpCall call(*node, tensors_, symInts_);
    return variant ? runVariant(*variant, call, registry) : fn(call);
  }

private:
  Value *addInput(const std::string &name, const Tensor &t) {
    Value *v = graph_->addInput(name, Type{}, InputSpec{});
    tensors_[v] = t;
    return v;
  }

  std::unique_ptr<Graph> graph_ = std::make_unique<Graph>("test"); // movable
  std::vector<NamedArg> args_;
  std::unordered_map<const Value *, Tensor> tensors_;
  std::unordered_map<const Value *, int64_t> symInts_;
};

/// An argument of a test node: a tensor (becomes a graph input) or a literal.
struct TestArg {
  std::string name;
  std::variant<Tensor, Arg> value;
};

/// Runs `op` on one node built from `args` through `registry`.
inline std::vector<Tensor> runNode(const KernelRegistry &registry, OpId op,
                                   const std::vector<TestArg> &args, size_t numResults = 1) {
  OneNodeGraph node;
  for (const TestArg &a : args) {
    if (const Tensor *t = std::get_if<Tensor>(&a.value))
      node.addTensor(a.name, *t);
    else
      node.addArg(a.name, std::get<Arg>(a.value));
  }
  return node.run(registry, op, numResults);
}

/// The single result of `op`.
inline Tensor runNode1(const KernelRegistry &registry, OpId op,
                       const std::vector<TestArg> &args) {
  std::vector<Tensor> out = runNode(registry, op, args);
  EXPECT_EQ(out.size(), 1u) << op;
  return out.at(0);
}

/// Expects running `op` to throw a KernelError (or a TensorError from a
/// tensor operation it made) whose message holds `fragment`.
inline void expectFailsWith(const KernelRegistry &registry, OpId op,
                            const std::vector<TestArg> &args, const std::string &fragment) {
  try {
    runNode(registry, op, args);
    ADD_FAILURE() << op << " did not fail";
  } catch (const TensorError &e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

/// How expectTensor compares values. NaN always matches NaN only.
struct Tolerance {
  enum Kind { Exact, FourUlps, Absolute, Relative } kind = Exact;
  double amount = 0;

  static Tolerance exact() { return {}; }
  /// EXPECT_DOUBLE_EQ.
  static Tolerance ulps() { return {FourUlps, 0}; }
  /// |got - want| <= amount; infinities must match exactly.
  static Tolerance absolute(double amount) { return {Absolute, amount}; }
  /// |got - want| <= amount * |want|; 0 asks for exact values.
  static Tolerance relative(double amount) { return {Relative, amount}; }
};

/// Checks dtype, shape and values.
inline void expectTensor(const Tensor &t, DType dtype, const Shape &sizes,
                         const std::vector<double> &values, Tolerance tol = Tolerance::exact()) {
  EXPECT_EQ(dtypeName(t.dtype()), dtypeName(dtype));
  EXPECT_EQ(shapeString(t.sizes()), shapeString(sizes));
  std::vector<double> got = t.toDoubles();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
      continue;
    }
    switch (tol.kind) {
    case Tolerance::FourUlps:
      EXPECT_DOUBLE_EQ(got[i], values[i]) << "element " << i;
      break;
    case Tolerance::Absolute:
      if (std::isinf(values[i]))
        EXPECT_EQ(got[i], values[i]) << "element " << i;
      else
        EXPECT_NEAR(got[i], values[i], tol.amount) << "element " << i;
      break;
    case Tolerance::Relative:
      if (tol.amount != 0) {
        EXPECT_NEAR(got[i], values[i], tol.amount * std::fabs(values[i])) << "element " << i;
        break;
      }
      [[fallthrough]];
    case Tolerance::Exact:
      EXPECT_EQ(got[i], values[i]) << "element " << i;
      break;
    }
  }
}

} // namespace gc::test

#endif // GC_TEST_UNIT_INTERP_KERNELTESTUTIL_H
