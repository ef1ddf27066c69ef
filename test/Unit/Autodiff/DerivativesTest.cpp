//===- DerivativesTest.cpp - Derivative rules against finite differences --===//
//
// Each case builds a one-op core graph in double precision, turns it into a
// joint graph, runs it on random inputs and tangents, and compares every
// input's gradient with central differences of sum(output * tangent).
//
//===----------------------------------------------------------------------===//
#include "gc/Autodiff/Derivatives.h"
#include "gc/Autodiff/Autodiff.h"
#include "gc/IR/Verifier.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Ops/GraphBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

namespace gc {
namespace {

/// How to fill an input: uniform in [lo, hi), or the given values.
struct Fill {
  double lo = -1, hi = 1;
  std::vector<double> values;
};

Fill positive() { return {0.5, 2, {}}; }
Fill values(std::vector<double> v) { return {0, 0, std::move(v)}; }

using Dims = std::vector<int64_t>;
using Args = std::vector<std::pair<std::string, ArgValue>>;

class GradCheck {
public:
  GradCheck() : graph_(m_.addGraph("forward")), b_(m_, graph_) { m_.setLevel(Level::Core); }

  Value *input(const Shape &sizes, Fill fill = {}, DType dtype = DType::Float64) {
    TensorType t;
    t.dtype = dtype;
    for (int64_t s : sizes)
      t.sizes.push_back(m_.syms().constant(s));
    t.strides = contiguousStrides(m_.syms(), t.sizes);
    t.storageOffset = m_.syms().constant(0);
    std::string name = "in" + std::to_string(graph_.inputs().size());
    b_.reserveName(name);
    Value *v = graph_.addInput(name, Type::makeTensor(t), InputSpec{InputKind::UserInput, name});
    Tensor x = Tensor::zeros(dtype, sizes);
    std::uniform_real_distribution<double> u(fill.lo, fill.hi);
    for (int64_t i = 0; i < x.numel(); ++i)
      x.storeDouble(i, fill.values.empty() ? u(rng_) : fill.values.at(i));
    inputs_.push_back(x);
    return v;
  }
  Value *index(const Shape &sizes, std::vector<double> v) {
    return input(sizes, values(std::move(v)), DType::Int64);
  }

  /// Calls the op once; every result becomes a user output.
  void call(OpId op, Args args) {
    op_ = op;
    for (Value *r : b_.create(op, std::move(args)))
      graph_.addOutput(r, OutputSpec{OutputKind::UserOutput, {}, {}});
  }

  void check() {
    size_t forwardOutputs = graph_.outputs().size();
    Error e = buildJointModule(m_, JointOptions{true});
    ASSERT_FALSE(e) << e.message();
    Error v = verifyModule(m_);
    ASSERT_FALSE(v) << v.message();
    const Graph &joint = *m_.graphs()[0];
    std::vector<Tensor> all = inputs_;
    std::vector<size_t> tangentOf;
    for (size_t i = 0; i < forwardOutputs; ++i)
      if (isFloatingPoint(joint.outputs()[i]->type().tensor.dtype))
        tangentOf.push_back(i);
    ASSERT_EQ(joint.inputs().size(), inputs_.size() + tangentOf.size());
    std::uniform_real_distribution<double> u(-1, 1);
    for (size_t k = 0; k < tangentOf.size(); ++k) {
      Tensor t = Tensor::zeros(DType::Float64, shapeOf(joint.inputs()[inputs_.size() + k]));
      for (int64_t i = 0; i < t.numel(); ++i)
        t.storeDouble(i, u(rng_));
      all.push_back(t);
    }
    Expected<RunResult> base = runGraph(m_, joint, all, {});
    ASSERT_TRUE(base) << base.error().message();
    auto loss = [&](const std::vector<Tensor> &in) {
      Expected<RunResult> r = runGraph(m_, joint, in, {});
      EXPECT_TRUE(r) << r.error().message();
      double l = 0;
      for (size_t k = 0; k < tangentOf.size(); ++k) {
        std::vector<double> y = r->outputs[tangentOf[k]].toDoubles();
        std::vector<double> t = all[inputs_.size() + k].toDoubles();
        for (size_t i = 0; i < y.size(); ++i)
          l += y[i] * t[i];
      }
      return l;
    };
    size_t checked = 0;
    for (size_t o = forwardOutputs; o < joint.outputs().size(); ++o) {
      const std::string &target = joint.outputSpecs()[o].target;
      size_t in = std::stoul(target.substr(2));
      std::vector<double> grad = base->outputs[o].toDoubles();
      ASSERT_EQ(static_cast<int64_t>(grad.size()), inputs_[in].numel());
      for (int64_t i = 0; i < inputs_[in].numel(); ++i) {
        const double h = 1e-6;
        std::vector<Tensor> plus = all, minus = all;
        plus[in] = all[in].clone();
        minus[in] = all[in].clone();
        plus[in].storeDouble(i, all[in].loadDouble(i) + h);
        minus[in].storeDouble(i, all[in].loadDouble(i) - h);
        double numeric = (loss(plus) - loss(minus)) / (2 * h);
        EXPECT_NEAR(grad[i], numeric, 1e-6 + 1e-5 * std::abs(numeric))
            << op_ << ": d/d" << target << "[" << i << "]";
        ++checked;
      }
    }
    EXPECT_GT(checked, 0u) << op_ << ": no gradient was checked";
  }

private:
  Shape shapeOf(const Value *v) {
    Shape s;
    for (const SymExpr *e : v->type().tensor.sizes)
      s.push_back(e->constant());
    return s;
  }

  Module m_;
  Graph &graph_;
  GraphBuilder b_;
  std::mt19937 rng_{7};
  std::vector<Tensor> inputs_;
  OpId op_{};
};

struct Case {
  const char *name;
  OpId op;
  void (*build)(GradCheck &c, OpId op);
};

void unary(GradCheck &c, OpId op) { c.call(op, {{"self", c.input({2, 3})}}); }
void binary(GradCheck &c, OpId op) {
  c.call(op, {{"self", c.input({3, 4}, positive())}, {"other", c.input({4}, positive())}});
}

/// Inside every floating unary op's domain: positive (log, sqrt) and
/// inside (-1, 1) (asin, acos).
void unaryInDomain(GradCheck &c, OpId op) {
  c.call(op, {{"self", c.input({2, 3}, {0.1, 0.9, {}})}});
}

const Case kCases[] = {
    // The floating unary ops: their GC_UNARY_OP rows.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR)                                \
  {#SCALAR_OP, ops::ID, unaryInDomain},
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP
    {"Abs", ops::aten_abs_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({4}, values({-1.5, -0.3, 0.4, 2}))}});
     }},
    {"Neg", ops::aten_neg_default, unary},
    {"Clone", ops::aten_clone_default, unary},
    {"ToCopy", ops::aten__to_copy_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"dtype", DType::Float64}});
     }},
    {"AddBroadcast", ops::aten_add_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"other", c.input({3, 1})}, {"alpha", 2.5}});
     }},
    {"AddNumber", ops::aten_add_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3})}, {"other", 1.5}});
     }},
    {"Sub", ops::aten_sub_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({4})}, {"other", c.input({2, 4})}, {"alpha", 3}});
     }},
    {"Mul", ops::aten_mul_Tensor, binary},
    {"MulNumber", ops::aten_mul_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3})}, {"other", 0.7}});
     }},
    {"Div", ops::aten_div_Tensor, binary},
    {"DivMode", ops::aten_div_Tensor_mode, binary},
    {"DivFloor", ops::aten_div_Tensor_mode,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 2}, values({1.3, 2.6, -3.4, 5.5}))},
                   {"other", c.input({2}, values({0.7, 1.6}))},
                   {"rounding_mode", "floor"}});
     }},
    {"PowScalar", ops::aten_pow_Tensor_Scalar,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3}, positive())}, {"exponent", 2.5}});
     }},
    {"PowInt", ops::aten_pow_Tensor_Scalar,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"exponent", 3}});
     }},
    {"PowTensor", ops::aten_pow_Tensor_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4}, positive())}, {"exponent", c.input({4})}});
     }},
    {"Maximum", ops::aten_maximum_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"other", c.input({3})}});
     }},
    {"Minimum", ops::aten_minimum_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"other", c.input({3})}});
     }},
    {"Where", ops::aten_where_self,
     [](GradCheck &c, OpId op) {
       Value *cond = c.input({2, 3}, values({1, 0, 0, 1, 1, 0}), DType::Bool);
       c.call(op, {{"condition", cond}, {"self", c.input({2, 3})}, {"other", c.input({3})}});
     }},
    {"Fmod", ops::aten_fmod_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({4}, values({2.3, -2.3, 5.1, 0.4}))},
                   {"other", c.input({4}, values({0.7, 0.9, -1.3, 0.3}))}});
     }},
    {"Remainder", ops::aten_remainder_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({4}, values({2.3, -2.3, 5.1, 0.4}))},
                   {"other", c.input({4}, values({0.7, 0.9, -1.3, 0.3}))}});
     }},
    {"Permute", ops::aten_permute_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3, 4})}, {"dims", Dims{2, 0, 1}}});
     }},
    {"View", ops::aten_view_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 6})}, {"size", Dims{3, -1}}});
     }},
    {"Expand", ops::aten_expand_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 1})}, {"size", Dims{2, 3, 4}}});
     }},
    {"Squeeze", ops::aten_squeeze_dims,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 1, 2})}, {"dim", Dims{1}}});
     }},
    {"Unsqueeze", ops::aten_unsqueeze_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 2})}, {"dim", -1}});
     }},
    {"Slice", ops::aten_slice_Tensor,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 9})}, {"dim", 1}, {"start", 1}, {"end", -1}, {"step", 3}});
     }},
    {"Select", ops::aten_select_int,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"dim", 1}, {"index", -2}});
     }},
    {"Cat", ops::aten_cat_default,
     [](GradCheck &c, OpId op) {
       std::vector<Value *> xs = {c.input({2, 1}), c.input({2, 3}), c.input({2, 2})};
       c.call(op, {{"tensors", xs}, {"dim", 1}});
     }},
    {"Flip", ops::aten_flip_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"dims", Dims{0, 1}}});
     }},
    {"ConstantPad", ops::aten_constant_pad_nd_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"pad", Dims{1, -1, 2, 0}}});
     }},
    {"Gather", ops::aten_gather_default,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({2, 3});
       c.call(op, {{"self", x}, {"dim", 1}, {"index", c.index({2, 4}, {0, 2, 2, 1, 1, 1, 0, 2})}});
     }},
    {"Scatter", ops::aten_scatter_src,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({2, 4});
       c.call(op, {{"self", x},
                   {"dim", 1},
                   {"index", c.index({2, 2}, {3, 0, 1, 2})},
                   {"src", c.input({2, 2})}});
     }},
    {"ScatterAdd", ops::aten_scatter_add_default,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({2, 4});
       c.call(op, {{"self", x},
                   {"dim", 1},
                   {"index", c.index({2, 3}, {3, 0, 3, 1, 1, 2})},
                   {"src", c.input({2, 3})}});
     }},
    {"ScatterReduceSum", ops::aten_scatter_reduce_two,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({2, 4});
       c.call(op, {{"self", x},
                   {"dim", 1},
                   {"index", c.index({2, 3}, {3, 0, 3, 1, 1, 2})},
                   {"src", c.input({2, 3})},
                   {"reduce", "sum"},
                   {"include_self", false}});
     }},
    {"IndexPut", ops::aten_index_put_default,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({4, 3});
       c.call(op, {{"self", x},
                   {"indices", std::vector<Value *>{c.index({2}, {1, -1})}},
                   {"values", c.input({3})}});
     }},
    {"IndexPutAccumulate", ops::aten_index_put_default,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({2, 4});
       c.call(op, {{"self", x},
                   {"indices", std::vector<Value *>{nullptr, c.index({3}, {2, 0, 2})}},
                   {"values", c.input({2, 3})},
                   {"accumulate", true}});
     }},
    {"IndexOne", ops::aten_index_Tensor,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({5, 2});
       c.call(op, {{"self", x}, {"indices", std::vector<Value *>{c.index({2, 2}, {4, 1, -1, 0})}}});
     }},
    {"IndexTwo", ops::aten_index_Tensor,
     [](GradCheck &c, OpId op) {
       Value *x = c.input({2, 3, 4});
       c.call(op, {{"self", x},
                   {"indices",
                    std::vector<Value *>{nullptr, c.index({3}, {2, 0, 2}), c.index({1}, {3})}}});
     }},
    {"Sum", ops::aten_sum_dim_IntList,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3, 4})}, {"dim", Dims{0, -1}}});
     }},
    {"SumKeepdim", ops::aten_sum_dim_IntList,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"dim", Dims{1}}, {"keepdim", true}});
     }},
    {"Amax", ops::aten_amax_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"dim", Dims{1}}});
     }},
    {"Amin", ops::aten_amin_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"dim", Dims{0}}, {"keepdim", true}});
     }},
    {"Prod", ops::aten_prod_dim_int,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4, 2}, values({0.5, 2,   0,    1.5,  -1,  3,   0.7, 0,
                                                       1.2, 0.9, -0.4, 2,    1.1, 0.3, 0,   0,
                                                       2,   1,   0.6,  -1.3, 0.8, 1,   1.7, 0.2}))},
                   {"dim", 1}});
     }},
    {"Cumsum", ops::aten_cumsum_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"dim", 1}});
     }},
    {"Sort", ops::aten_sort_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 4})}, {"dim", 0}, {"descending", true}});
     }},
    {"Topk", ops::aten_topk_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({3, 5})}, {"k", 2}});
     }},
    {"Mm", ops::aten_mm_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 3})}, {"mat2", c.input({3, 4})}});
     }},
    {"Bmm", ops::aten_bmm_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 2, 3})}, {"mat2", c.input({2, 3, 2})}});
     }},
    {"Convolution", ops::aten_convolution_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"input", c.input({2, 4, 6, 5})},
                   {"weight", c.input({4, 2, 3, 2})},
                   {"bias", c.input({4})},
                   {"stride", Dims{2, 1}},
                   {"padding", Dims{1, 0}},
                   {"dilation", Dims{1, 2}},
                   {"transposed", false},
                   {"output_padding", Dims{0, 0}},
                   {"groups", 2}});
     }},
    {"Convolution1d", ops::aten_convolution_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"input", c.input({1, 2, 7})},
                   {"weight", c.input({3, 2, 3})},
                   {"bias", ArgValue::none()},
                   {"stride", Dims{3}},
                   {"padding", Dims{2}},
                   {"dilation", Dims{1}},
                   {"transposed", false},
                   {"output_padding", Dims{0}},
                   {"groups", 1}});
     }},
    {"MaxPool2d", ops::aten_max_pool2d_with_indices_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({1, 2, 5, 5})},
                   {"kernel_size", Dims{3, 3}},
                   {"stride", Dims{2, 2}},
                   {"padding", Dims{1, 1}}});
     }},
    {"AvgPool2dCeil", ops::aten_avg_pool2d_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({1, 2, 5, 6})},
                   {"kernel_size", Dims{3, 2}},
                   {"stride", Dims{2, 3}},
                   {"padding", Dims{1, 1}},
                   {"ceil_mode", true},
                   {"count_include_pad", false}});
     }},
    {"AvgPool2dDivisor", ops::aten_avg_pool2d_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({1, 1, 4, 4})},
                   {"kernel_size", Dims{2, 2}},
                   {"ceil_mode", true},
                   {"divisor_override", 3}});
     }},
    {"AvgPool2d", ops::aten_avg_pool2d_default,
     [](GradCheck &c, OpId op) {
       c.call(op, {{"self", c.input({2, 5, 4})},
                   {"kernel_size", Dims{3, 2}},
                   {"stride", Dims{2, 2}},
                   {"padding", Dims{1, 1}}});
     }},
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class Derivative : public testing::TestWithParam<Case> {};

TEST_P(Derivative, MatchesFiniteDifferences) {
  GradCheck c;
  GetParam().build(c, GetParam().op);
  c.check();
}

INSTANTIATE_TEST_SUITE_P(Rules, Derivative, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.name);
                         });

TEST(Derivatives, EveryRuleHasACase) {
  std::set<OpId> covered;
  for (const Case &c : kCases)
    covered.insert(c.op);
  for (OpId op : derivatives().ops()) {
    if (derivatives().find(op)->fn) {
      EXPECT_TRUE(covered.count(op)) << op << " has no finite-difference case";
    }
  }
}

} // namespace
} // namespace gc
