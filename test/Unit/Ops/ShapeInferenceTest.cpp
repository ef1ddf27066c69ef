//===- ShapeInferenceTest.cpp - Tests of the shape functions --------------===//
//
// Each test calls one op's shape function on hand-made argument types and
// compares the printed result types ("f32[2, 3]{strides=[1, 2]}", as the
// text form writes them) with values worked out by hand from torch's rules.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/Printer.h"
#include "gc/Ops/ShapeInference.h"

#include <gtest/gtest.h>

using namespace gc;

namespace {

using Sizes = std::vector<const SymExpr *>;

class ShapeInferenceTest : public ::testing::Test {
protected:
  SymContext &syms() { return m.syms(); }
  const SymExpr *c(int64_t v) { return syms().constant(v); }
  const SymExpr *s(std::string_view name) { return syms().symbol(name); }
  Sizes ints(std::initializer_list<int64_t> v) {
    Sizes out;
    for (int64_t i : v)
      out.push_back(c(i));
    return out;
  }

  /// A graph input of the given type: contiguous unless strides are given.
  Value *input(DType dtype, Sizes sizes, Sizes strides = {}, int64_t offset = 0) {
    TensorType t = contiguousType(syms(), dtype, std::move(sizes));
    if (!strides.empty())
      t.strides = std::move(strides);
    t.storageOffset = c(offset);
    return g.addInput("in" + std::to_string(g.inputs().size()), Type::makeTensor(t), {});
  }
  Value *f32(std::initializer_list<int64_t> sizes) { return input(DType::Float32, ints(sizes)); }

  /// The printed result types of `op`, or the error message.
  std::string infer(OpId op, std::vector<NamedArg> args) {
    Expected<std::vector<Type>> types = inferResultTypes(op, args, syms());
    if (!types)
      return "error: " + types.error().message();
    std::string out;
    for (const Type &t : *types)
      out += (out.empty() ? "" : ", ") + printType(t);
    return out;
  }

  static NamedArg arg(std::string name, Arg a) { return {std::move(name), false, std::move(a)}; }
  static NamedArg tensor(std::string name, Value *v) { return arg(std::move(name), Arg::tensor(v)); }
  static NamedArg list(std::string name, std::vector<Value *> vs) {
    Arg a;
    a.kind = ArgKind::Tensors;
    a.values = std::move(vs);
    return arg(std::move(name), std::move(a));
  }
  static NamedArg integer(std::string name, int64_t v) { return arg(std::move(name), Arg::integer(v)); }
  static NamedArg integers(std::string name, std::vector<int64_t> v) {
    return arg(std::move(name), Arg::integers(std::move(v)));
  }
  static NamedArg boolean(std::string name, bool v) { return arg(std::move(name), Arg::boolean(v)); }
  static NamedArg real(std::string name, double v) { return arg(std::move(name), Arg::real(v)); }
  static NamedArg dtype(std::string name, DType t) { return arg(std::move(name), Arg::scalarType(t)); }

  Module m;
  Graph &g = m.addGraph("test");
};

//===----------------------------------------------------------------------===//
// Broadcasting and promotion
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, SymbolicBroadcasting) {
  Value *a = input(DType::Float32, {s("s0"), c(1), c(4)});
  Value *b = f32({3, 1});
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", a), tensor("other", b)}), "f32[s0, 3, 4]");
  // A size-1 dimension stretches to a symbolic one.
  Value *row = f32({1, 4});
  Value *col = input(DType::Float32, {s("s0"), c(1)});
  EXPECT_EQ(infer(ops::aten_mul_Tensor, {tensor("self", row), tensor("other", col)}), "f32[s0, 4]");
  // Equal symbolic expressions broadcast; 0-dim tensors broadcast to anything.
  Value *sum = input(DType::Float32, {syms().add(s("s0"), c(1))});
  Value *scalar = f32({});
  EXPECT_EQ(infer(ops::aten_sub_Tensor, {tensor("self", sum), tensor("other", scalar)}),
            "f32[s0 + 1]");
}

TEST_F(ShapeInferenceTest, BroadcastErrors) {
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", f32({3})), tensor("other", f32({4}))}),
            "error: aten.add.Tensor: sizes 3 and 4 do not broadcast");
  EXPECT_EQ(infer(ops::aten_where_self, {tensor("condition", input(DType::Bool, ints({2, 3}))),
                                      tensor("self", f32({3})), tensor("other", f32({2, 2}))}),
            "error: aten.where.self: sizes 3 and 2 do not broadcast");
}

TEST_F(ShapeInferenceTest, Promotion) {
  Value *i32 = input(DType::Int32, ints({3}));
  Value *i64 = input(DType::Int64, ints({3}));
  Value *f16 = input(DType::Float16, ints({3}));
  Value *f64Scalar = input(DType::Float64, {});
  Value *flag = input(DType::Bool, ints({3}));
  // Tensors of one category: the wider type.
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", i32), tensor("other", i64)}), "i64[3]");
  // A Python float makes integers float32 but leaves float16 alone.
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", i32), real("other", 1.5)}), "f32[3]");
  EXPECT_EQ(infer(ops::aten_mul_Tensor, {tensor("self", f16), real("other", 2.0)}), "f16[3]");
  // A 0-dim float64 tensor does not widen a dimensioned float16 one, but it
  // does make integers floating (its own type, since it is a tensor).
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", f16), tensor("other", f64Scalar)}), "f16[3]");
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", i64), tensor("other", f64Scalar)}), "f64[3]");
  // An int scalar keeps int32; bool with an int scalar becomes int64.
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", i32), integer("other", 2)}), "i32[3]");
  EXPECT_EQ(infer(ops::aten_mul_Tensor, {tensor("self", flag), integer("other", 2)}), "i64[3]");
  EXPECT_EQ(infer(ops::aten_mul_Tensor, {tensor("self", flag), tensor("other", flag)}), "bool[3]");
  // True division of integers is float32; rounding division keeps them.
  EXPECT_EQ(infer(ops::aten_div_Tensor, {tensor("self", i64), tensor("other", i32)}), "f32[3]");
  EXPECT_EQ(infer(ops::aten_div_Tensor_mode, {tensor("self", i64), tensor("other", i32),
                                           arg("rounding_mode", Arg::string("floor"))}),
            "i64[3]");
  // Comparisons and logical ops give bool; floating unary ops float32.
  EXPECT_EQ(infer(ops::aten_lt_Tensor, {tensor("self", i32), tensor("other", f16)}), "bool[3]");
  EXPECT_EQ(infer(ops::aten_ge_Scalar, {tensor("self", f16), real("other", 0.5)}), "bool[3]");
  EXPECT_EQ(infer(ops::aten_logical_and_default, {tensor("self", i32), tensor("other", f16)}),
            "bool[3]");
  EXPECT_EQ(infer(ops::aten_sqrt_default, {tensor("self", i64)}), "f32[3]");
  EXPECT_EQ(infer(ops::aten_neg_default, {tensor("self", i32)}), "i32[3]");
  EXPECT_EQ(infer(ops::aten_pow_Tensor_Scalar, {tensor("self", i64), real("exponent", 0.5)}),
            "f32[3]");
  // where promotes the values, not the condition.
  EXPECT_EQ(infer(ops::aten_where_self,
                  {tensor("condition", flag), tensor("self", i32), tensor("other", f64Scalar)}),
            "f64[3]");
  EXPECT_EQ(infer(ops::aten__to_copy_default, {tensor("self", i32), dtype("dtype", DType::BFloat16)}),
            "bf16[3]");
  EXPECT_EQ(infer(ops::aten_to_other, {tensor("self", i32), tensor("other", f16)}), "f16[3]");
}

TEST_F(ShapeInferenceTest, Factories) {
  EXPECT_EQ(infer(ops::aten_full_default, {integers("size", {2, 3}), integer("fill_value", 1)}),
            "i64[2, 3]");
  EXPECT_EQ(infer(ops::aten_full_default, {integers("size", {2}), real("fill_value", 1)}), "f32[2]");
  EXPECT_EQ(infer(ops::aten_arange_start_step,
                  {integer("start", 2), integer("end", -3), integer("step", -1)}),
            "i64[5]");
  EXPECT_EQ(infer(ops::aten_arange_start_step, {integer("start", 0), real("end", 1.0),
                                             real("step", 0.3)}),
            "f32[4]");
  EXPECT_EQ(infer(ops::aten_arange_start_step, {integer("start", 0), integer("end", 3),
                                             integer("step", -1)}),
            "error: aten.arange.start_step: the range does not go in the direction of step");
  Value *seed = input(DType::Int64, {});
  EXPECT_EQ(infer(ops::gc_rand_default, {integers("size", {4, 2}), tensor("seed", seed),
                                      tensor("offset", seed)}),
            "f32[4, 2]");
  EXPECT_EQ(infer(ops::gc_rand_default, {integers("size", {4}), tensor("seed", seed),
                                      tensor("offset", seed), dtype("dtype", DType::Float64)}),
            "f64[4]");
}

//===----------------------------------------------------------------------===//
// Layouts of elementwise results and copies
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, ElementwiseLayouts) {
  // A transposed [3, 4] input: the result keeps its dimension order.
  Value *t = input(DType::Float32, ints({4, 3}), ints({1, 4}));
  Value *plain = f32({4, 3});
  EXPECT_EQ(infer(ops::aten_exp_default, {tensor("self", t)}), "f32[4, 3]{strides=[1, 4]}");
  // The first operand that orders the dimensions decides.
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", t), tensor("other", plain)}),
            "f32[4, 3]{strides=[1, 4]}");
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", plain), tensor("other", t)}), "f32[4, 3]");
  // Broadcast operands (stride 0) do not decide.
  Value *bias = f32({3});
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", bias), tensor("other", t)}),
            "f32[4, 3]{strides=[1, 4]}");
  // channels_last stays channels_last, also against a broadcast bias.
  Value *nhwc = input(DType::Float32, ints({2, 3, 4, 5}), ints({60, 1, 15, 3}));
  Value *perChannel = f32({3, 1, 1});
  EXPECT_EQ(infer(ops::aten_add_Tensor, {tensor("self", nhwc), tensor("other", perChannel)}),
            "f32[2, 3, 4, 5]{strides=[60, 1, 15, 3]}");
  EXPECT_EQ(infer(ops::aten_relu_default, {tensor("self", nhwc)}),
            "f32[2, 3, 4, 5]{strides=[60, 1, 15, 3]}");
  // A strided (not dense) input gives dense strides in its order.
  Value *everyOther = input(DType::Float32, ints({4, 3}), ints({1, 8}));
  EXPECT_EQ(infer(ops::aten_mul_Tensor, {tensor("self", everyOther), real("other", 2.0)}),
            "f32[4, 3]{strides=[1, 4]}");
  // Symbolic strides that every operand shares are kept.
  Value *symT = input(DType::Float32, {c(4), s("s0")}, {c(1), c(4)});
  EXPECT_EQ(infer(ops::aten_sigmoid_default, {tensor("self", symT)}),
            "f32[4, s0]{strides=[1, 4]}");
}

TEST_F(ShapeInferenceTest, CopyLayouts) {
  Value *gaps = input(DType::Float32, ints({2, 4, 3}), ints({48, 1, 12}), 5);
  // clone preserves the dimension order with dense strides, offset 0.
  EXPECT_EQ(infer(ops::aten_clone_default, {tensor("self", gaps)}),
            "f32[2, 4, 3]{strides=[12, 1, 4]}");
  EXPECT_EQ(infer(ops::aten_clone_default, {tensor("self", gaps),
                                         arg("memory_format", Arg{ArgKind::MemoryFormat, {},
                                                                  {1}, {}, {}, {}})}),
            "f32[2, 4, 3]");
  // contiguous of a contiguous tensor is the tensor itself.
  Value *shifted = input(DType::Float32, ints({2, 3}), {}, 6);
  EXPECT_EQ(infer(ops::aten_contiguous_default, {tensor("self", shifted)}), "f32[2, 3]{storage_offset=6}");
  EXPECT_EQ(infer(ops::aten_contiguous_default, {tensor("self", gaps)}), "f32[2, 4, 3]");
  EXPECT_EQ(infer(ops::aten_zeros_like_default, {tensor("self", gaps)}),
            "f32[2, 4, 3]{strides=[12, 1, 4]}");
  // dropout outside training returns its input.
  EXPECT_EQ(infer(ops::aten_dropout_default,
                  {tensor("input", gaps), real("p", 0.5), boolean("train", false)}),
            "f32[2, 4, 3]{strides=[48, 1, 12], storage_offset=5}");
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, ViewStridesAndOffsets) {
  Value *x = f32({2, 3, 4});
  EXPECT_EQ(infer(ops::aten_permute_default, {tensor("self", x), integers("dims", {2, 0, -2})}),
            "f32[4, 2, 3]{strides=[1, 12, 4]}");
  EXPECT_EQ(infer(ops::aten_transpose_int, {tensor("self", x), integer("dim0", -1),
                                         integer("dim1", 0)}),
            "f32[4, 3, 2]{strides=[1, 4, 12]}");
  // slice: offset start * stride, stride * step, length ceil((end - start) / step).
  EXPECT_EQ(infer(ops::aten_slice_Tensor, {tensor("self", x), integer("dim", 2), integer("start", 1),
                                        integer("end", -1), integer("step", 2)}),
            "f32[2, 3, 1]{strides=[12, 4, 2], storage_offset=1}");
  EXPECT_EQ(infer(ops::aten_slice_Tensor, {tensor("self", x), integer("dim", 1),
                                        integer("start", -100), integer("end", 100)}),
            "f32[2, 3, 4]");
  EXPECT_EQ(infer(ops::aten_select_int, {tensor("self", x), integer("dim", 1), integer("index", -1)}),
            "f32[2, 4]{strides=[12, 1], storage_offset=8}");
  EXPECT_EQ(infer(ops::aten_unsqueeze_default, {tensor("self", x), integer("dim", 1)}),
            "f32[2, 1, 3, 4]");
  EXPECT_EQ(infer(ops::aten_unsqueeze_default, {tensor("self", x), integer("dim", -1)}),
            "f32[2, 3, 4, 1]");
  // expand: stride 0 in new and stretched dimensions.
  Value *col = f32({3, 1});
  EXPECT_EQ(infer(ops::aten_expand_default, {tensor("self", col), integers("size", {2, -1, 5})}),
            "f32[2, 3, 5]{strides=[0, 1, 0]}");
  EXPECT_EQ(infer(ops::aten_as_strided_default, {tensor("self", x), integers("size", {2, 2}),
                                              integers("stride", {1, 3}),
                                              integer("storage_offset", 1)}),
            "f32[2, 2]{strides=[1, 3], storage_offset=1}");
  // Results never require grad, even views of a parameter.
  TensorType param = contiguousType(syms(), DType::Float32, ints({3, 2}));
  param.requiresGrad = true;
  Value *weight = g.addInput("weight", Type::makeTensor(param), {InputKind::Parameter, "w"});
  EXPECT_EQ(infer(ops::aten_t_default, {tensor("self", weight)}), "f32[2, 3]{strides=[1, 2]}");
  EXPECT_EQ(infer(ops::aten_diagonal_default, {tensor("self", x), integer("offset", 1),
                                            integer("dim1", 2), integer("dim2", 1)}),
            "f32[2, 2]{strides=[12, 5], storage_offset=4}");
  Value *ones = f32({1, 3, 1});
  EXPECT_EQ(infer(ops::aten_squeeze_dims, {tensor("self", ones), integers("dim", {0, 1, -1})}),
            "f32[3]");
  EXPECT_EQ(infer(ops::aten_squeeze_default, {tensor("self", ones)}), "f32[3]");
}

TEST_F(ShapeInferenceTest, ViewAndReshape) {
  Value *x = f32({2, 3, 4});
  EXPECT_EQ(infer(ops::aten_view_default, {tensor("self", x), integers("size", {-1, 4})}),
            "f32[6, 4]");
  // A sliced input splits along its chunks.
  Value *sliced = input(DType::Float32, ints({3, 4}), ints({6, 1}), 2);
  EXPECT_EQ(infer(ops::aten_view_default, {tensor("self", sliced), integers("size", {3, 2, 2})}),
            "f32[3, 2, 2]{strides=[6, 2, 1], storage_offset=2}");
  // A transposed input cannot merge dimensions: view fails, reshape copies.
  Value *t = input(DType::Float32, ints({4, 3}), ints({1, 4}));
  EXPECT_EQ(infer(ops::aten_view_default, {tensor("self", t), integers("size", {12})}),
            "error: aten.view.default: view sizes are not compatible with the input's sizes and "
            "strides; use reshape");
  EXPECT_EQ(infer(ops::aten_reshape_default, {tensor("self", t), integers("shape", {12})}),
            "f32[12]");
  EXPECT_EQ(infer(ops::aten_reshape_default, {tensor("self", t), integers("shape", {2, 2, 3})}),
            "f32[2, 2, 3]{strides=[2, 1, 4]}");
  EXPECT_EQ(infer(ops::aten_view_default, {tensor("self", x), integers("size", {5, -1})}),
            "error: aten.view.default: shape [5, -1] is invalid for an input of 24 elements");
  // -1 with a symbolic element count.
  Value *dyn = input(DType::Float32, {s("s0"), c(4)});
  EXPECT_EQ(infer(ops::aten_view_default, {tensor("self", dyn), integers("size", {-1, 2})}),
            "f32[2*s0, 2]");
  EXPECT_EQ(infer(ops::aten_flatten_using_ints, {tensor("self", dyn)}), "f32[4*s0]");
  EXPECT_EQ(infer(ops::aten_unflatten_int, {tensor("self", x), integer("dim", -1),
                                         integers("sizes", {2, -1})}),
            "f32[2, 3, 2, 2]");
}

TEST_F(ShapeInferenceTest, Splits) {
  Value *x = f32({5, 4});
  EXPECT_EQ(infer(ops::aten_split_Tensor, {tensor("self", x), integer("split_size", 2)}),
            "f32[2, 4], f32[2, 4]{storage_offset=8}, f32[1, 4]{storage_offset=16}");
  EXPECT_EQ(infer(ops::aten_split_with_sizes_default, {tensor("self", x),
                                                    integers("split_sizes", {3, 1}),
                                                    integer("dim", -1)}),
            "f32[5, 3]{strides=[4, 1]}, f32[5, 1]{strides=[4, 1], storage_offset=3}");
  EXPECT_EQ(infer(ops::aten_split_with_sizes_default, {tensor("self", x),
                                                    integers("split_sizes", {3, 3})}),
            "error: aten.split_with_sizes.default: pieces of 6 elements do not cover size 5");
  EXPECT_EQ(infer(ops::aten_chunk_default, {tensor("self", x), integer("chunks", 3),
                                         integer("dim", 1)}),
            "f32[5, 2]{strides=[4, 1]}, f32[5, 2]{strides=[4, 1], storage_offset=2}");
  EXPECT_EQ(infer(ops::aten_unbind_int, {tensor("self", f32({2, 3})), integer("dim", 1)}),
            "f32[2]{strides=[3]}, f32[2]{strides=[3], storage_offset=1}, f32[2]{strides=[3], storage_offset=2}");
  Value *dyn = input(DType::Float32, {s("s0"), c(4)});
  EXPECT_EQ(infer(ops::aten_unbind_int, {tensor("self", dyn)}),
            "error: aten.unbind.int: the size unbind splits is symbolic (s0); gc needs it to be "
            "known");
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, Reductions) {
  Value *x = input(DType::Float32, {c(2), s("s0"), c(4)});
  EXPECT_EQ(infer(ops::aten_sum_dim_IntList, {tensor("self", x), integers("dim", {-1, 0}),
                                           boolean("keepdim", true)}),
            "f32[1, s0, 1]");
  EXPECT_EQ(infer(ops::aten_sum_dim_IntList, {tensor("self", x), integers("dim", {1})}), "f32[2, 4]");
  // No dimension list, or an empty one, reduces everything.
  EXPECT_EQ(infer(ops::aten_amax_default, {tensor("self", x)}), "f32[]");
  EXPECT_EQ(infer(ops::aten_sum_dim_IntList, {tensor("self", x), arg("dim", Arg::none()),
                                           boolean("keepdim", true)}),
            "f32[1, 1, 1]");
  EXPECT_EQ(infer(ops::aten_argmax_default, {tensor("self", x), integer("dim", -2)}), "i64[2, 4]");
  EXPECT_EQ(infer(ops::aten_any_dim, {tensor("self", x), integer("dim", 0)}), "bool[s0, 4]");
  // Integer sums widen to int64; means need floating point.
  Value *i32 = input(DType::Int32, ints({3, 4}));
  EXPECT_EQ(infer(ops::aten_sum_dim_IntList, {tensor("self", i32), integers("dim", {0})}), "i64[4]");
  EXPECT_EQ(infer(ops::aten_cumsum_default, {tensor("self", i32), integer("dim", 1)}), "i64[3, 4]");
  EXPECT_EQ(infer(ops::aten_mean_dim, {tensor("self", i32), integers("dim", {0})}),
            "error: aten.mean.dim: needs a floating-point dtype, not i32");
  // A 0-dim tensor takes dimension 0 or -1.
  Value *scalar = f32({});
  EXPECT_EQ(infer(ops::aten_sum_dim_IntList, {tensor("self", scalar), integers("dim", {-1}),
                                           boolean("keepdim", true)}),
            "f32[]");
  EXPECT_EQ(infer(ops::aten_sum_dim_IntList, {tensor("self", x), integers("dim", {3})}),
            "error: aten.sum.dim_IntList: dimension 3 is out of range for rank 3");
  EXPECT_EQ(infer(ops::aten_amin_default, {tensor("self", x), integers("dim", {0, -3})}),
            "error: aten.amin.default: dimension -3 appears more than once");
}

TEST_F(ShapeInferenceTest, SortsAndMultipleResults) {
  Value *x = f32({3, 5});
  EXPECT_EQ(infer(ops::aten_sort_default, {tensor("self", x), integer("dim", 0)}),
            "f32[3, 5], i64[3, 5]");
  EXPECT_EQ(infer(ops::aten_topk_default, {tensor("self", x), integer("k", 2)}),
            "f32[3, 2], i64[3, 2]");
  EXPECT_EQ(infer(ops::aten_topk_default, {tensor("self", x), integer("k", 6)}),
            "error: aten.topk.default: k 6 is out of range for size 5");
  EXPECT_EQ(infer(ops::aten_max_dim, {tensor("self", x), integer("dim", 1),
                                   boolean("keepdim", true)}),
            "f32[3, 1], i64[3, 1]");
  EXPECT_EQ(infer(ops::aten__assert_tensor_metadata_default, {tensor("a", x)}), "");
  Value *h = input(DType::Float32, {s("s0"), c(8), c(16)});
  EXPECT_EQ(infer(ops::aten_native_layer_norm_default,
                  {tensor("input", h), integers("normalized_shape", {8, 16}),
                   arg("weight", Arg::none()), arg("bias", Arg::none()), real("eps", 1e-5)}),
            "f32[s0, 8, 16], f32[s0, 1, 1], f32[s0, 1, 1]");
  Value *img = f32({2, 3, 8, 8});
  Value *stat = f32({3});
  EXPECT_EQ(infer(ops::aten__native_batch_norm_legit_no_training_default,
                  {tensor("input", img), tensor("weight", stat), tensor("bias", stat),
                   tensor("running_mean", stat), tensor("running_var", stat),
                   real("momentum", 0.1), real("eps", 1e-5)}),
            "f32[2, 3, 8, 8], f32[0], f32[0]");
  EXPECT_EQ(infer(ops::aten__native_batch_norm_legit_functional_default,
                  {tensor("input", img), tensor("weight", stat), tensor("bias", stat),
                   tensor("running_mean", stat), tensor("running_var", stat),
                   boolean("training", true), real("momentum", 0.1), real("eps", 1e-5)}),
            "f32[2, 3, 8, 8], f32[3], f32[3], f32[3], f32[3]");
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, matmuls
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, ConvolutionWithSymbols) {
  Value *x = input(DType::Float32, {s("s0"), c(3), s("s1"), s("s2")});
  Value *w = f32({8, 3, 3, 3});
  // floor((s1 + 2 - 2 - 1) / 2) + 1 = floor((s1 + 1) / 2)
  EXPECT_EQ(infer(ops::aten_convolution_default,
                  {tensor("input", x), tensor("weight", w), arg("bias", Arg::none()),
                   integers("stride", {2, 2}), integers("padding", {1, 1}),
                   integers("dilation", {1, 1}), boolean("transposed", false),
                   integers("output_padding", {0, 0}), integer("groups", 1)}),
            "f32[s0, 8, floordiv(s1 + 1, 2), floordiv(s2 + 1, 2)]");
  // Dilation 2 widens the kernel to 5: s1 - 4.
  EXPECT_EQ(infer(ops::aten_conv2d_default, {tensor("input", x), tensor("weight", w),
                                          integers("dilation", {2})}),
            "f32[s0, 8, s1 - 4, s2 - 4]");
  // Transposed, stride 2, padding 1, output_padding 1: 2*s1 for any s1.
  Value *wt = f32({3, 4, 3, 3});
  EXPECT_EQ(infer(ops::aten_convolution_default,
                  {tensor("input", x), tensor("weight", wt), arg("bias", Arg::none()),
                   integers("stride", {2, 2}), integers("padding", {1, 1}),
                   integers("dilation", {1, 1}), boolean("transposed", true),
                   integers("output_padding", {1, 1}), integer("groups", 1)}),
            "f32[s0, 4, 2*s1, 2*s2]");
  Value *wrong = f32({8, 4, 3, 3});
  EXPECT_EQ(infer(ops::aten_conv2d_default, {tensor("input", x), tensor("weight", wrong)}),
            "error: aten.conv2d.default: convolution input channels: sizes 3 and 4 do not match");
  // A channels_last input gives a channels_last output.
  Value *nhwc = input(DType::Float32, ints({2, 3, 8, 8}), ints({192, 1, 24, 3}));
  EXPECT_EQ(infer(ops::aten_conv2d_default, {tensor("input", nhwc), tensor("weight", w),
                                          integers("padding", {1, 1})}),
            "f32[2, 8, 8, 8]{strides=[512, 1, 64, 8]}");
}

TEST_F(ShapeInferenceTest, PoolingWithSymbols) {
  Value *x = input(DType::Float32, {c(2), c(3), s("s1"), c(7)});
  EXPECT_EQ(infer(ops::aten_max_pool2d_with_indices_default,
                  {tensor("self", x), integers("kernel_size", {2, 2})}),
            "f32[2, 3, floordiv(s1, 2), 3], i64[2, 3, floordiv(s1, 2), 3]");
  // ceil_mode: 7 -> ceil((7 - 3) / 2) + 1 = 3; a window starting at 6 is inside.
  Value *y = f32({1, 1, 7, 8});
  EXPECT_EQ(infer(ops::aten_avg_pool2d_default,
                  {tensor("self", y), integers("kernel_size", {3, 3}), integers("stride", {2, 2}),
                   integers("padding", {0, 0}), boolean("ceil_mode", true)}),
            "f32[1, 1, 3, 4]");
  // Padding 1: ceil((7 + 2 - 3) / 2) + 1 = 4 and ceil((8 + 2 - 3) / 2) + 1 = 5;
  // the last windows start at 6 < 7 + 1 and 8 < 8 + 1, inside, so both stay.
  EXPECT_EQ(infer(ops::aten_max_pool2d_default,
                  {tensor("self", y), integers("kernel_size", {3, 3}), integers("stride", {2, 2}),
                   integers("padding", {1, 1}), boolean("ceil_mode", true)}),
            "f32[1, 1, 4, 5]");
  EXPECT_EQ(infer(ops::aten_max_pool2d_default,
                  {tensor("self", x), integers("kernel_size", {3, 3}), integers("stride", {2, 2}),
                   boolean("ceil_mode", true)}),
            "error: aten.max_pool2d.default: ceil_mode pooling of a symbolic size s1 is not "
            "supported");
  EXPECT_EQ(infer(ops::aten_max_pool2d_default, {tensor("self", y), integers("kernel_size", {2, 2}),
                                              integers("padding", {2, 2})}),
            "error: aten.max_pool2d.default: padding must be at most half the dilated kernel "
            "size");
}

TEST_F(ShapeInferenceTest, Matmuls) {
  Value *batch = input(DType::Float32, {s("s0"), c(3), c(4)});
  EXPECT_EQ(infer(ops::aten_matmul_default, {tensor("self", batch), tensor("other", f32({4, 5}))}),
            "f32[s0, 3, 5]");
  EXPECT_EQ(infer(ops::aten_matmul_default, {tensor("self", f32({4})), tensor("other", batch)}),
            "error: aten.matmul.default: matmul: sizes 4 and 3 do not match");
  EXPECT_EQ(infer(ops::aten_matmul_default, {tensor("self", f32({2, 1, 3, 4})),
                                          tensor("other", f32({5, 4, 6}))}),
            "f32[2, 5, 3, 6]");
  EXPECT_EQ(infer(ops::aten_matmul_default, {tensor("self", f32({4})), tensor("other", f32({4}))}),
            "f32[]");
  EXPECT_EQ(infer(ops::aten_linear_default, {tensor("input", batch), tensor("weight", f32({7, 4}))}),
            "f32[s0, 3, 7]");
  EXPECT_EQ(infer(ops::aten_addmm_default, {tensor("self", f32({5})), tensor("mat1", f32({3, 4})),
                                         tensor("mat2", f32({4, 5}))}),
            "f32[3, 5]");
  EXPECT_EQ(infer(ops::aten_bmm_default, {tensor("self", batch), tensor("mat2", f32({2, 4, 5}))}),
            "f32[s0, 3, 5]");
  auto einsum = [&](const char *equation, std::vector<Value *> operands) {
    return infer(ops::aten_einsum_default,
                 {arg("equation", Arg::string(equation)), list("tensors", operands)});
  };
  EXPECT_EQ(einsum("bij, bjk -> bki", {batch, input(DType::Float32, {s("s0"), c(4), c(5)})}),
            "f32[s0, 5, 3]");
  // Without "->": the ellipsis dimensions, then the subscripts used once.
  EXPECT_EQ(einsum("...ij,jk", {f32({2, 1, 3, 4}), f32({4, 5})}), "f32[2, 1, 3, 5]");
  EXPECT_EQ(einsum("ij,jk->il", {f32({3, 4}), f32({4, 5})}),
            "error: aten.einsum.default: einsum: output subscript 'l' names no operand "
            "dimension");
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, Indexing) {
  Value *x = f32({3, 4, 5});
  Value *i = input(DType::Int64, ints({2, 1}));
  Value *j = input(DType::Int64, ints({6}));
  Arg idx;
  idx.kind = ArgKind::OptionalTensors;
  // Adjacent indexed dimensions are replaced in place...
  idx.values = {nullptr, i, j};
  EXPECT_EQ(infer(ops::aten_index_Tensor, {tensor("self", x), arg("indices", idx)}),
            "f32[3, 2, 6]");
  // ... others put the index shape first.
  idx.values = {i, nullptr, j};
  EXPECT_EQ(infer(ops::aten_index_Tensor, {tensor("self", x), arg("indices", idx)}),
            "f32[2, 6, 4]");
  EXPECT_EQ(infer(ops::aten_cat_default, {list("tensors", {x, input(DType::Int32, ints({3, 2, 5}))}),
                                       integer("dim", 1)}),
            "f32[3, 6, 5]");
  EXPECT_EQ(infer(ops::aten_cat_default, {list("tensors", {x, f32({3, 2, 4})}), integer("dim", 1)}),
            "error: aten.cat.default: sizes 4 and 5 differ in dimension 2");
  EXPECT_EQ(infer(ops::aten_constant_pad_nd_default, {tensor("self", x),
                                                   integers("pad", {1, 2, -1, 0})}),
            "f32[3, 3, 8]");
  EXPECT_EQ(infer(ops::aten_gather_default, {tensor("self", x), integer("dim", 1),
                                          tensor("index", input(DType::Int64, ints({3, 2, 5})))}),
            "f32[3, 2, 5]");
  EXPECT_EQ(infer(ops::aten_embedding_default, {tensor("weight", f32({10, 8})), tensor("indices", i)}),
            "f32[2, 1, 8]");
}

TEST_F(ShapeInferenceTest, UnknownOpAndBadArguments) {
  EXPECT_EQ(infer(ops::aten_copy__default, {}),
            "error: no shape function for aten.copy_.default");
  EXPECT_EQ(infer(ops::aten_permute_default, {tensor("self", f32({2, 3})), integers("dims", {0})}),
            "error: aten.permute.default: permute needs 2 dimensions, not 1");
  EXPECT_EQ(infer(ops::aten_select_int, {tensor("self", f32({2, 3})), integer("dim", 0),
                                      integer("index", 2)}),
            "error: aten.select.int: index 2 is out of range for size 2");
  EXPECT_EQ(infer(ops::aten_mm_default, {tensor("self", f32({2, 3}))}),
            "error: aten.mm.default: missing argument 'mat2'");
}

} // namespace

//===----------------------------------------------------------------------===//
// Products, distances, FFTs and integrals
//===----------------------------------------------------------------------===//

TEST_F(ShapeInferenceTest, ProductsFftsAndIntegrals) {
  Value *i64 = input(DType::Int64, ints({3}));
  EXPECT_EQ(infer(ops::aten_addbmm_default, {tensor("self", f32({1})),
                                          tensor("batch1", f32({2, 3, 4})),
                                          tensor("batch2", f32({2, 4, 5}))}),
            "f32[3, 5]");
  EXPECT_EQ(infer(ops::aten_addmv_default, {tensor("self", f32({2})), tensor("mat", f32({3, 4})),
                                         tensor("vec", f32({4}))}),
            "error: aten.addmv.default: sizes 2 and 3 do not broadcast");
  EXPECT_EQ(infer(ops::aten_dot_default, {tensor("self", i64), tensor("tensor", i64)}), "i64[]");
  EXPECT_EQ(infer(ops::aten_mv_default, {tensor("self", f32({2, 3})), tensor("vec", f32({4}))}),
            "error: aten.mv.default: mv: sizes 3 and 4 do not match");
  EXPECT_EQ(infer(ops::aten_inner_default, {tensor("self", f32({2, 3})), tensor("other", f32({4, 3}))}),
            "f32[2, 4]");
  EXPECT_EQ(infer(ops::aten_tensordot_default,
                  {tensor("self", f32({2, 3, 4})), tensor("other", f32({4, 2, 5})),
                   integers("dims_self", {0, 2}), integers("dims_other", {1, 0})}),
            "f32[3, 5]");
  EXPECT_EQ(infer(ops::aten_kron_default, {tensor("self", f32({2, 1, 3})), tensor("other", f32({4, 3}))}),
            "f32[2, 4, 9]");
  EXPECT_EQ(infer(ops::aten_trace_default, {tensor("self", input(DType::Int32, ints({2, 3})))}),
            "i64[]");
  EXPECT_EQ(infer(ops::aten_cdist_default, {tensor("x1", f32({2, 1, 3, 2})), tensor("x2", f32({4, 5, 2}))}),
            "f32[2, 4, 3, 5]");
  EXPECT_EQ(infer(ops::aten_fft_irfft_default, {tensor("self", i64)}), "f32[4]");
  EXPECT_EQ(infer(ops::aten_fft_hfft2_default, {tensor("self", f32({5, 6, 7})),
                                             integers("s", {3, 10})}),
            "f32[5, 3, 10]");
  EXPECT_EQ(infer(ops::aten_fft_irfftn_default, {tensor("self", f32({5, 6, 7}))}), "f32[5, 6, 12]");
  EXPECT_EQ(infer(ops::aten_stft_default, {tensor("self", f32({2, 110})), integer("n_fft", 10)}),
            "f32[2, 6, 51, 2]");
  EXPECT_EQ(infer(ops::aten_cumulative_trapezoid_x,
                  {tensor("y", input(DType::Int64, ints({2, 3}))), tensor("x", f32({3}))}),
            "f32[2, 2]");
  EXPECT_EQ(infer(ops::aten_gradient_scalarint, {tensor("self", f32({2, 3}))}),
            "f32[2, 3], f32[2, 3]");
}
