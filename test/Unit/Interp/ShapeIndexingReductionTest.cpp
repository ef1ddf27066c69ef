//===- ShapeIndexingReductionTest.cpp - Shape, indexing, reduction kernels ===//
//
// Each test runs one kernel on a one-node graph through OpCall and checks
// the result's dtype, sizes, values (worked out by hand) and, for views,
// strides and aliasing.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"
#include "gc/Interp/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gc {
namespace {

const KernelRegistry &kernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerShapeKernels(r);
    registerIndexingKernels(r);
    registerReductionKernels(r);
    return r;
  }();
  return registry;
}

using test::make;
using test::transposed;

/// 0, 1, 2, ... in row-major order.
Tensor iota(DType dtype, Shape sizes) {
  Tensor t = Tensor::zeros(dtype, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.storeInt(i, i);
  return t;
}

/// Builds one node with the given arguments and runs its kernel.
class Call {
public:
  Call &in(const std::string &name, const Tensor &t) {
    node_.addTensor(name, t);
    return *this;
  }
  /// Tensor[] (all defined) or Tensor?[] (undefined entries are None).
  Call &list(const std::string &name, const std::vector<Tensor> &ts) {
    node_.addTensorList(name, ts);
    return *this;
  }
  Call &arg(const std::string &name, Arg a) {
    node_.addArg(name, std::move(a));
    return *this;
  }
  Call &i(const std::string &name, int64_t v) { return arg(name, Arg::integer(v)); }
  Call &is(const std::string &name, std::vector<int64_t> v) {
    return arg(name, Arg::integers(std::move(v)));
  }
  Call &b(const std::string &name, bool v) { return arg(name, Arg::boolean(v)); }
  Call &f(const std::string &name, double v) { return arg(name, Arg::real(v)); }
  Call &dtype(DType t) { return arg("dtype", Arg::scalarType(t)); }

  std::vector<Tensor> run(OpId op, unsigned numResults = 1) {
    return node_.run(kernels(), op, numResults);
  }
  Tensor run1(OpId op) {
    std::vector<Tensor> r = run(op);
    EXPECT_EQ(r.size(), 1u);
    return r.at(0);
  }

private:
  test::OneNodeGraph node_;
};

void expectTensor(const Tensor &t, DType dtype, const Shape &sizes,
                  const std::vector<double> &values) {
  test::expectTensor(t, dtype, sizes, values, test::Tolerance::ulps());
}

void expectView(const Tensor &view, const Tensor &base, const Shape &strides, int64_t offset) {
  EXPECT_TRUE(view.sharesStorage(base));
  EXPECT_EQ(shapeString(view.strides()), shapeString(strides));
  EXPECT_EQ(view.offset(), offset);
}

constexpr DType F32 = DType::Float32, F64 = DType::Float64, I64 = DType::Int64, I32 = DType::Int32,
                U8 = DType::UInt8, Bool = DType::Bool;
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

TEST(ShapeKernels, ViewInfersSizeAndAliases) {
  Tensor x = iota(F32, {2, 3});
  Tensor v = Call().in("self", x).is("size", {3, -1}).run1(ops::aten_view_default);
  expectTensor(v, F32, {3, 2}, {0, 1, 2, 3, 4, 5});
  expectView(v, x, {2, 1}, 0);
  v.setDouble({2, 1}, 42);
  EXPECT_EQ(x.getDouble({1, 2}), 42);
  EXPECT_THROW(Call().in("self", x).is("size", {4, -1}).run1(ops::aten_view_default), KernelError);
  EXPECT_THROW(Call().in("self", x).is("size", {-1, -1}).run1(ops::aten_view_default), KernelError);
}

TEST(ShapeKernels, ViewOfTransposeFollowsStrideRule) {
  Tensor xt = transposed(iota(F32, {2, 3})); // sizes [3, 2], strides [1, 3]
  EXPECT_THROW(Call().in("self", xt).is("size", {6}).run1(ops::aten_view_default), KernelError);
  // Splitting off size-1 dims is always possible.
  Tensor v = Call().in("self", xt).is("size", {3, 2, 1}).run1(ops::aten_view_default);
  expectView(v, xt, {1, 3, 3}, 0);
  // A size-1 dim does not break a contiguous chunk, whatever its stride.
  Tensor y = iota(F32, {2, 1, 3}).asStrided({2, 1, 3}, {3, 7, 1}, 0);
  expectView(Call().in("self", y).is("size", {6}).run1(ops::aten_view_default), y, {1}, 0);
  // Zero-size tensors view freely.
  Tensor e = Tensor::zeros(F32, {0, 3});
  expectTensor(Call().in("self", e).is("size", {3, 1, 0}).run1(ops::aten_view_default), F32, {3, 1, 0},
               {});
  // ... but -1 cannot be inferred from zero elements.
  EXPECT_THROW(Call().in("self", e).is("size", {-1, 0}).run1(ops::aten_view_default), KernelError);
}

TEST(ShapeKernels, ReshapeCopiesOnlyWhenItMust) {
  Tensor x = iota(F32, {2, 3});
  Tensor r = Call().in("self", x).is("shape", {-1}).run1(ops::aten_reshape_default);
  expectView(r, x, {1}, 0);
  Tensor xt = transposed(x);
  Tensor c = Call().in("self", xt).is("shape", {6}).run1(ops::aten_reshape_default);
  expectTensor(c, F32, {6}, {0, 3, 1, 4, 2, 5});
  EXPECT_FALSE(c.sharesStorage(x));
  EXPECT_TRUE(c.isContiguous());
}

TEST(ShapeKernels, PermuteTransposeT) {
  Tensor x = iota(F32, {2, 3, 4});
  Tensor p = Call().in("self", x).is("dims", {2, 0, -2}).run1(ops::aten_permute_default);
  EXPECT_EQ(shapeString(p.sizes()), "[4, 2, 3]");
  expectView(p, x, {1, 12, 4}, 0);
  EXPECT_EQ(p.getDouble({3, 1, 2}), 12 + 8 + 3);
  EXPECT_THROW(Call().in("self", x).is("dims", {0, 0, 1}).run1(ops::aten_permute_default),
               KernelError);
  Tensor tr = Call().in("self", x).i("dim0", -1).i("dim1", 0).run1(ops::aten_transpose_int);
  EXPECT_EQ(shapeString(tr.sizes()), "[4, 3, 2]");
  expectView(tr, x, {1, 4, 12}, 0);
  Tensor m = iota(I64, {2, 3});
  expectTensor(Call().in("self", m).run1(ops::aten_t_default), I64, {3, 2}, {0, 3, 1, 4, 2, 5});
  Tensor v = iota(I64, {3});
  expectView(Call().in("self", v).run1(ops::aten_t_default), v, {1}, 0);
  EXPECT_THROW(Call().in("self", x).run1(ops::aten_t_default), KernelError);
}

TEST(ShapeKernels, ExpandAddsLeadingDimsAndZeroStrides) {
  Tensor x = make(F32, {3, 1}, {1, 2, 3});
  Tensor e = Call().in("self", x).is("size", {2, -1, 4}).run1(ops::aten_expand_default);
  EXPECT_EQ(shapeString(e.sizes()), "[2, 3, 4]");
  expectView(e, x, {0, 1, 0}, 0);
  EXPECT_EQ(e.getDouble({1, 2, 3}), 3);
  // A new leading dim of size 1 gets the stride a contiguous layout gives.
  expectView(Call().in("self", x).is("size", {1, 3, 1}).run1(ops::aten_expand_default), x, {3, 1, 1},
             0);
  Tensor scalar = Tensor::scalar(F32, 2);
  expectView(Call().in("self", scalar).is("size", {3, 1}).run1(ops::aten_expand_default), scalar,
             {0, 0}, 0);
  EXPECT_THROW(Call().in("self", x).is("size", {2, 4}).run1(ops::aten_expand_default), KernelError);
  EXPECT_THROW(Call().in("self", x).is("size", {-1, 3, 1}).run1(ops::aten_expand_default),
               KernelError);
}

TEST(ShapeKernels, SliceClampsAndWraps) {
  Tensor x = iota(I64, {10});
  Tensor s = Call()
                 .in("self", x)
                 .i("dim", 0)
                 .i("start", -3)
                 .i("end", std::numeric_limits<int64_t>::max())
                 .run1(ops::aten_slice_Tensor);
  expectTensor(s, I64, {3}, {7, 8, 9});
  expectView(s, x, {1}, 7);
  Tensor stepped = Call().in("self", x).i("start", 1).i("step", 3).run1(ops::aten_slice_Tensor);
  expectTensor(stepped, I64, {3}, {1, 4, 7});
  expectView(stepped, x, {3}, 1);
  expectTensor(Call().in("self", x).i("start", 20).run1(ops::aten_slice_Tensor), I64, {0}, {});
  expectTensor(Call().in("self", x).i("start", 5).i("end", 2).run1(ops::aten_slice_Tensor), I64, {0},
               {});
  expectTensor(Call().in("self", x).i("start", -30).i("end", 2).run1(ops::aten_slice_Tensor), I64, {2},
               {0, 1});
  Tensor m = iota(F32, {2, 5});
  Tensor c = Call()
                 .in("self", m)
                 .i("dim", -1)
                 .i("start", 1)
                 .i("end", -1)
                 .i("step", 2)
                 .run1(ops::aten_slice_Tensor);
  expectTensor(c, F32, {2, 2}, {1, 3, 6, 8});
  expectView(c, m, {5, 2}, 1);
}

TEST(ShapeKernels, SelectNarrow) {
  Tensor x = iota(F32, {2, 3});
  Tensor s = Call().in("self", x).i("dim", 1).i("index", -1).run1(ops::aten_select_int);
  expectTensor(s, F32, {2}, {2, 5});
  expectView(s, x, {3}, 2);
  EXPECT_THROW(Call().in("self", x).i("dim", 0).i("index", 2).run1(ops::aten_select_int), KernelError);
  Tensor n =
      Call().in("self", x).i("dim", -1).i("start", -2).i("length", 2).run1(ops::aten_narrow_default);
  expectTensor(n, F32, {2, 2}, {1, 2, 4, 5});
  expectView(n, x, {3, 1}, 1);
  EXPECT_THROW(
      Call().in("self", x).i("dim", 1).i("start", 2).i("length", 2).run1(ops::aten_narrow_default),
      KernelError);
}

TEST(ShapeKernels, SqueezeUnsqueeze) {
  Tensor x = iota(F32, {1, 3, 1});
  Tensor all = Call().in("self", x).run1(ops::aten_squeeze_default);
  EXPECT_EQ(shapeString(all.sizes()), "[3]");
  expectView(all, x, {1}, 0);
  EXPECT_EQ(shapeString(Call().in("self", x).i("dim", -1).run1(ops::aten_squeeze_dim).sizes()),
            "[1, 3]");
  // A dim that is not size 1 stays.
  EXPECT_EQ(shapeString(Call().in("self", x).i("dim", 1).run1(ops::aten_squeeze_dim).sizes()),
            "[1, 3, 1]");
  EXPECT_EQ(shapeString(Call().in("self", x).is("dim", {0, 1}).run1(ops::aten_squeeze_dims).sizes()),
            "[3, 1]");
  Tensor scalar = Tensor::scalar(F32, 7);
  EXPECT_EQ(Call().in("self", scalar).i("dim", 0).run1(ops::aten_squeeze_dim).dim(), 0);

  Tensor m = iota(F32, {2, 3});
  Tensor u = Call().in("self", m).i("dim", -1).run1(ops::aten_unsqueeze_default);
  EXPECT_EQ(shapeString(u.sizes()), "[2, 3, 1]");
  expectView(u, m, {3, 1, 1}, 0);
  Tensor u0 = Call().in("self", m).i("dim", 0).run1(ops::aten_unsqueeze_default);
  expectView(u0, m, {6, 3, 1}, 0);
  Tensor mt = transposed(m);
  expectView(Call().in("self", mt).i("dim", 1).run1(ops::aten_unsqueeze_default), m, {1, 6, 3}, 0);
  EXPECT_THROW(Call().in("self", m).i("dim", 3).run1(ops::aten_unsqueeze_default), KernelError);
}

TEST(ShapeKernels, FlattenUnflatten) {
  Tensor x = iota(F32, {2, 3, 4});
  Tensor f = Call().in("self", x).i("start_dim", 1).run1(ops::aten_flatten_using_ints);
  EXPECT_EQ(shapeString(f.sizes()), "[2, 12]");
  expectView(f, x, {12, 1}, 0);
  Tensor same =
      Call().in("self", x).i("start_dim", -2).i("end_dim", 1).run1(ops::aten_flatten_using_ints);
  expectView(same, x, {12, 4, 1}, 0);
  Tensor ft = Call().in("self", transposed(iota(F32, {2, 3}))).run1(ops::aten_flatten_using_ints);
  expectTensor(ft, F32, {6}, {0, 3, 1, 4, 2, 5});
  expectTensor(Call().in("self", Tensor::scalar(F32, 5)).run1(ops::aten_flatten_using_ints), F32, {1},
               {5});

  Tensor m = iota(F32, {3, 4});
  Tensor u = Call().in("self", m).i("dim", -1).is("sizes", {2, -1}).run1(ops::aten_unflatten_int);
  EXPECT_EQ(shapeString(u.sizes()), "[3, 2, 2]");
  expectView(u, m, {4, 2, 1}, 0);
  EXPECT_THROW(Call().in("self", m).i("dim", 0).is("sizes", {2, 2}).run1(ops::aten_unflatten_int),
               KernelError);
}

TEST(ShapeKernels, SplitChunkUnbind) {
  Tensor x = iota(F32, {5});
  std::vector<Tensor> parts = Call().in("self", x).i("split_size", 2).run(ops::aten_split_Tensor, 3);
  ASSERT_EQ(parts.size(), 3u);
  expectTensor(parts[2], F32, {1}, {4});
  expectView(parts[1], x, {1}, 2);
  std::vector<Tensor> sized = Call()
                                  .in("self", iota(F32, {2, 5}))
                                  .is("split_sizes", {1, 4})
                                  .i("dim", -1)
                                  .run(ops::aten_split_with_sizes_default, 2);
  ASSERT_EQ(sized.size(), 2u);
  expectTensor(sized[1], F32, {2, 4}, {1, 2, 3, 4, 6, 7, 8, 9});
  EXPECT_THROW(
      Call().in("self", x).is("split_sizes", {1, 1}).run(ops::aten_split_with_sizes_default, 2),
      KernelError);

  std::vector<Tensor> chunks = Call().in("self", x).i("chunks", 3).run(ops::aten_chunk_default, 3);
  ASSERT_EQ(chunks.size(), 3u);
  expectTensor(chunks[1], F32, {2}, {2, 3});
  // Fewer chunks than asked when the pieces come out even earlier.
  EXPECT_EQ(Call().in("self", iota(F32, {6})).i("chunks", 4).run(ops::aten_chunk_default).size(), 3u);
  // An empty dim still gives `chunks` pieces.
  EXPECT_EQ(
      Call().in("self", Tensor::zeros(F32, {0})).i("chunks", 2).run(ops::aten_chunk_default).size(),
      2u);

  Tensor m = iota(I64, {2, 3});
  std::vector<Tensor> rows = Call().in("self", m).i("dim", -1).run(ops::aten_unbind_int, 3);
  ASSERT_EQ(rows.size(), 3u);
  expectTensor(rows[2], I64, {2}, {2, 5});
  expectView(rows[2], m, {3}, 2);
}

TEST(ShapeKernels, MovedimAndBroadcastTensors) {
  Tensor x = iota(F32, {2, 3, 4});
  Tensor m =
      Call().in("self", x).is("source", {0}).is("destination", {2}).run1(ops::aten_movedim_intlist);
  EXPECT_EQ(shapeString(m.sizes()), "[3, 4, 2]");
  expectView(m, x, {4, 1, 12}, 0);
  Tensor back =
      Call().in("self", x).is("source", {-1}).is("destination", {0}).run1(ops::aten_movedim_intlist);
  EXPECT_EQ(shapeString(back.sizes()), "[4, 2, 3]");

  Tensor a = make(F32, {3, 1}, {1, 2, 3}), b = make(I64, {4}, {1, 2, 3, 4});
  std::vector<Tensor> r = Call().list("tensors", {a, b}).run(ops::aten_broadcast_tensors_default, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(shapeString(r[0].sizes()), "[3, 4]");
  expectView(r[0], a, {1, 0}, 0);
  expectView(r[1], b, {0, 1}, 0);
  EXPECT_EQ(r[1].dtype(), I64);
}

TEST(ShapeKernels, Repeat) {
  Tensor x = make(F32, {2}, {1, 2});
  expectTensor(Call().in("self", x).is("repeats", {2, 2}).run1(ops::aten_repeat_default), F32, {2, 4},
               {1, 2, 1, 2, 1, 2, 1, 2});
  Tensor xt = transposed(make(I64, {2, 2}, {1, 2, 3, 4})); // [[1, 3], [2, 4]]
  expectTensor(Call().in("self", xt).is("repeats", {1, 2}).run1(ops::aten_repeat_default), I64, {2, 4},
               {1, 3, 1, 3, 2, 4, 2, 4});
  expectTensor(Call().in("self", x).is("repeats", {0, 3}).run1(ops::aten_repeat_default), F32, {0, 6},
               {});
  EXPECT_THROW(Call().in("self", xt).is("repeats", {2}).run1(ops::aten_repeat_default), KernelError);
}

TEST(ShapeKernels, FlipRoll) {
  Tensor x = iota(F32, {2, 3});
  Tensor f = Call().in("self", x).is("dims", {0, -1}).run1(ops::aten_flip_default);
  expectTensor(f, F32, {2, 3}, {5, 4, 3, 2, 1, 0});
  EXPECT_FALSE(f.sharesStorage(x));
  expectTensor(Call().in("self", transposed(x)).is("dims", {1}).run1(ops::aten_flip_default), F32,
               {3, 2}, {3, 0, 4, 1, 5, 2});
  EXPECT_THROW(Call().in("self", x).is("dims", {1, -1}).run1(ops::aten_flip_default), KernelError);

  expectTensor(
      Call().in("self", iota(I64, {5})).is("shifts", {2}).is("dims", {0}).run1(ops::aten_roll_default),
      I64, {5}, {3, 4, 0, 1, 2});
  expectTensor(
      Call().in("self", x).is("shifts", {1, -1}).is("dims", {0, 1}).run1(ops::aten_roll_default), F32,
      {2, 3}, {4, 5, 3, 1, 2, 0});
  // Without dims the tensor rolls as if flattened.
  expectTensor(Call().in("self", x).is("shifts", {1}).run1(ops::aten_roll_default), F32, {2, 3},
               {5, 0, 1, 2, 3, 4});
  expectTensor(
      Call().in("self", transposed(x)).is("shifts", {-7}).is("dims", {0}).run1(ops::aten_roll_default),
      F32, {3, 2}, {1, 4, 2, 5, 0, 3});
}

TEST(ShapeKernels, CatPromotesAndSkipsLegacyEmpty) {
  Tensor a = make(I32, {2}, {1, 2}), b = make(F32, {1}, {3.5});
  expectTensor(Call().list("tensors", {a, b}).run1(ops::aten_cat_default), F32, {3}, {1, 2, 3.5});
  Tensor m = make(F32, {2, 1}, {1, 2}), n = iota(F32, {2, 2});
  expectTensor(Call().list("tensors", {m, transposed(n)}).i("dim", -1).run1(ops::aten_cat_default),
               F32, {2, 3}, {1, 0, 2, 2, 1, 3});
  expectTensor(Call().list("tensors", {Tensor::zeros(Bool, {0}), n}).run1(ops::aten_cat_default), F32,
               {2, 2}, {0, 1, 2, 3});
  EXPECT_THROW(Call().list("tensors", {m, iota(F32, {3, 1})}).i("dim", 1).run1(ops::aten_cat_default),
               KernelError);
  // Large int64 values do not go through double.
  Tensor big = Tensor::zeros(I64, {1});
  big.storeInt(0, (int64_t{1} << 53) + 1);
  Tensor out = Call().list("tensors", {big, make(Bool, {1}, {1})}).run1(ops::aten_cat_default);
  EXPECT_EQ(out.dtype(), I64);
  EXPECT_EQ(out.toInts(), (std::vector<int64_t>{(int64_t{1} << 53) + 1, 1}));
}

TEST(ShapeKernels, Stack) {
  Tensor a = make(F32, {2}, {1, 2}), b = make(F32, {2}, {3, 4});
  expectTensor(Call().list("tensors", {a, b}).run1(ops::aten_stack_default), F32, {2, 2},
               {1, 2, 3, 4});
  expectTensor(Call().list("tensors", {a, b}).i("dim", -1).run1(ops::aten_stack_default), F32, {2, 2},
               {1, 3, 2, 4});
  EXPECT_THROW(Call().list("tensors", {a, make(F32, {1}, {1})}).run1(ops::aten_stack_default),
               KernelError);
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

TEST(IndexingKernels, IndexWithTensors) {
  Tensor x = iota(F32, {3, 4});
  Tensor rows = make(I64, {2}, {2, -3});
  expectTensor(Call().in("self", x).list("indices", {rows}).run1(ops::aten_index_Tensor), F32, {2, 4},
               {8, 9, 10, 11, 0, 1, 2, 3});
  expectTensor(Call()
                   .in("self", x)
                   .list("indices", {Tensor(), make(I32, {2}, {1, 3})})
                   .run1(ops::aten_index_Tensor),
               F32, {3, 2}, {1, 3, 5, 7, 9, 11});
  // Index tensors broadcast: [2, 1] with [2] gives [2, 2].
  expectTensor(Call()
                   .in("self", x)
                   .list("indices", {make(I64, {2, 1}, {0, 2}), make(I64, {2}, {1, 3})})
                   .run1(ops::aten_index_Tensor),
               F32, {2, 2}, {1, 3, 9, 11});
  EXPECT_THROW(
      Call().in("self", x).list("indices", {make(I64, {1}, {3})}).run1(ops::aten_index_Tensor),
      KernelError);
}

TEST(IndexingKernels, IndexPlacesAdvancedDims) {
  Tensor x = iota(F32, {2, 3, 4});
  // Separated by a slice: the broadcast dims go first.
  expectTensor(Call()
                   .in("self", x)
                   .list("indices", {make(I64, {2}, {0, 1}), Tensor(), make(I64, {2}, {0, 3})})
                   .run1(ops::aten_index_Tensor),
               F32, {2, 3}, {0, 4, 8, 15, 19, 23});
  // Adjacent after a slice: they stay in place.
  expectTensor(Call()
                   .in("self", x)
                   .list("indices", {Tensor(), make(I64, {2}, {2, 0}), make(I64, {2}, {1, 1})})
                   .run1(ops::aten_index_Tensor),
               F32, {2, 2}, {9, 1, 21, 13});
  // Adjacent with a trailing slice, on a non-contiguous input.
  Tensor xt = transposed(iota(F32, {4, 3})); // [3, 4], xt[i][j] = 3j + i
  expectTensor(Call()
                   .in("self", xt)
                   .list("indices", {Tensor(), make(I64, {1}, {2})})
                   .run1(ops::aten_index_Tensor),
               F32, {3, 1}, {6, 7, 8});
}

TEST(IndexingKernels, IndexWithMasks) {
  Tensor x = iota(F32, {3, 4});
  expectTensor(
      Call().in("self", x).list("indices", {make(Bool, {3}, {1, 0, 1})}).run1(ops::aten_index_Tensor),
      F32, {2, 4}, {0, 1, 2, 3, 8, 9, 10, 11});
  std::vector<double> mask(12);
  for (size_t i = 0; i < 12; ++i)
    mask[i] = i % 5 == 0;
  expectTensor(
      Call().in("self", x).list("indices", {make(Bool, {3, 4}, mask)}).run1(ops::aten_index_Tensor),
      F32, {3}, {0, 5, 10});
  expectTensor(Call()
                   .in("self", x)
                   .list("indices", {Tensor(), make(Bool, {4}, {0, 0, 0, 0})})
                   .run1(ops::aten_index_Tensor),
               F32, {3, 0}, {});
  EXPECT_THROW(Call()
                   .in("self", x)
                   .list("indices", {make(Bool, {4}, {1, 0, 0, 0})})
                   .run1(ops::aten_index_Tensor),
               KernelError);
}

TEST(IndexingKernels, EmbeddingIndexSelect) {
  Tensor w = iota(F32, {3, 2});
  expectTensor(Call()
                   .in("weight", w)
                   .in("indices", make(I64, {1, 2}, {2, 0}))
                   .run1(ops::aten_embedding_default),
               F32, {1, 2, 2}, {4, 5, 0, 1});
  Tensor x = iota(I64, {3, 4});
  expectTensor(Call()
                   .in("self", x)
                   .i("dim", -1)
                   .in("index", make(I64, {2}, {3, 0}))
                   .run1(ops::aten_index_select_default),
               I64, {3, 2}, {3, 0, 7, 4, 11, 8});
  expectTensor(Call()
                   .in("self", transposed(x))
                   .i("dim", 0)
                   .in("index", make(I32, {1}, {2}))
                   .run1(ops::aten_index_select_default),
               I64, {1, 3}, {2, 6, 10});
  expectTensor(Call()
                   .in("self", x)
                   .i("dim", 0)
                   .in("index", Tensor::zeros(I64, {0}))
                   .run1(ops::aten_index_select_default),
               I64, {0, 4}, {});
  EXPECT_THROW(Call()
                   .in("self", x)
                   .i("dim", 0)
                   .in("index", make(F32, {1}, {0}))
                   .run1(ops::aten_index_select_default),
               KernelError);
}

TEST(IndexingKernels, GatherScatter) {
  Tensor x = make(F32, {2, 2}, {1, 2, 3, 4});
  Tensor idx = make(I64, {2, 2}, {0, 0, 1, 0});
  expectTensor(Call().in("self", x).i("dim", -1).in("index", idx).run1(ops::aten_gather_default), F32,
               {2, 2}, {1, 1, 4, 3});
  // A smaller index takes a corner; dim 0 reads rows.
  expectTensor(Call()
                   .in("self", transposed(x))
                   .i("dim", 0)
                   .in("index", make(I64, {1, 2}, {1, 0}))
                   .run1(ops::aten_gather_default),
               F32, {1, 2}, {2, 3});

  Tensor src = iota(F32, {2, 3});
  expectTensor(Call()
                   .in("self", Tensor::zeros(F32, {2, 3}))
                   .i("dim", 1)
                   .in("index", make(I64, {1, 2}, {2, 0}))
                   .in("src", src)
                   .run1(ops::aten_scatter_src),
               F32, {2, 3}, {1, 0, 0, 0, 0, 0});
  Tensor self = make(I64, {3}, {1, 1, 1});
  Tensor added = Call()
                     .in("self", self)
                     .i("dim", 0)
                     .in("index", make(I64, {3}, {0, 0, 2}))
                     .in("src", make(I64, {3}, {1, 2, 3}))
                     .run1(ops::aten_scatter_add_default);
  expectTensor(added, I64, {3}, {4, 1, 4});
  EXPECT_EQ(self.toInts(), (std::vector<int64_t>{1, 1, 1})) << "self must not change";
  EXPECT_THROW(Call()
                   .in("self", self)
                   .i("dim", 0)
                   .in("index", make(I64, {1}, {0}))
                   .in("src", make(F32, {1}, {1}))
                   .run1(ops::aten_scatter_src),
               KernelError);
  // Unlike advanced indexing, gather and scatter take no negative indices.
  EXPECT_THROW(Call()
                   .in("self", x)
                   .i("dim", 0)
                   .in("index", make(I64, {1, 1}, {-1}))
                   .run1(ops::aten_gather_default),
               KernelError);
}

TEST(IndexingKernels, IndexAdd) {
  Tensor source = make(F32, {3, 2}, {1, 1, 2, 2, 3, 3});
  expectTensor(Call()
                   .in("self", Tensor::zeros(F32, {3, 2}))
                   .i("dim", 0)
                   .in("index", make(I64, {3}, {0, 2, 0}))
                   .in("source", source)
                   .i("alpha", 2)
                   .run1(ops::aten_index_add_default),
               F32, {3, 2}, {8, 8, 0, 0, 4, 4});
  expectTensor(Call()
                   .in("self", make(I32, {2, 2}, {1, 2, 3, 4}))
                   .i("dim", -1)
                   .in("index", make(I64, {1}, {1}))
                   .in("source", make(I32, {2, 1}, {10, 20}))
                   .run1(ops::aten_index_add_default),
               I32, {2, 2}, {1, 12, 3, 24});
}

TEST(IndexingKernels, TrilTriu) {
  Tensor x = iota(F32, {3, 3});
  expectTensor(Call().in("self", x).run1(ops::aten_tril_default), F32, {3, 3},
               {0, 0, 0, 3, 4, 0, 6, 7, 8});
  expectTensor(Call().in("self", x).i("diagonal", 1).run1(ops::aten_triu_default), F32, {3, 3},
               {0, 1, 2, 0, 0, 5, 0, 0, 0});
  expectTensor(Call().in("self", iota(I64, {2, 2, 3})).i("diagonal", -1).run1(ops::aten_tril_default),
               I64, {2, 2, 3}, {0, 0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0});
  expectTensor(Call().in("self", transposed(x)).run1(ops::aten_triu_default), F32, {3, 3},
               {0, 3, 6, 0, 4, 7, 0, 0, 8});
  EXPECT_THROW(Call().in("self", iota(F32, {3})).run1(ops::aten_tril_default), KernelError);
}

TEST(IndexingKernels, CumsumCumprod) {
  expectTensor(Call().in("self", make(I32, {3}, {1, 2, 3})).i("dim", 0).run1(ops::aten_cumsum_default),
               I64, {3}, {1, 3, 6});
  expectTensor(
      Call().in("self", make(Bool, {3}, {1, 0, 1})).i("dim", -1).run1(ops::aten_cumsum_default), I64,
      {3}, {1, 1, 2});
  // [[0, 2, 4], [1, 3, 5]] along the last dim.
  expectTensor(
      Call().in("self", transposed(iota(F32, {3, 2}))).i("dim", -1).run1(ops::aten_cumsum_default),
      F32, {2, 3}, {0, 2, 6, 1, 4, 9});
  expectTensor(
      Call().in("self", make(I64, {2}, {1, 2})).i("dim", 0).dtype(F64).run1(ops::aten_cumsum_default),
      F64, {2}, {1, 3});
  expectTensor(
      Call().in("self", make(F32, {4}, {1, 2, 3, 4})).i("dim", 0).run1(ops::aten_cumprod_default), F32,
      {4}, {1, 2, 6, 24});
  expectTensor(Call().in("self", make(U8, {2}, {3, 4})).i("dim", 0).run1(ops::aten_cumprod_default),
               I64, {2}, {3, 12});
  expectTensor(
      Call().in("self", Tensor::zeros(F32, {0, 2})).i("dim", 0).run1(ops::aten_cumsum_default), F32,
      {0, 2}, {});
  expectTensor(Call().in("self", Tensor::scalar(F32, 3)).i("dim", 0).run1(ops::aten_cumsum_default),
               F32, {}, {3});
}

TEST(IndexingKernels, Diff) {
  Tensor x = make(F32, {4}, {1, 4, 9, 16});
  expectTensor(Call().in("self", x).run1(ops::aten_diff_default), F32, {3}, {3, 5, 7});
  expectTensor(Call().in("self", x).i("n", 2).run1(ops::aten_diff_default), F32, {2}, {2, 2});
  expectTensor(Call().in("self", x).i("n", 5).run1(ops::aten_diff_default), F32, {0}, {});
  expectTensor(Call()
                   .in("self", x)
                   .in("prepend", make(F32, {1}, {0}))
                   .in("append", make(F32, {1}, {20}))
                   .run1(ops::aten_diff_default),
               F32, {5}, {1, 3, 5, 7, 4});
  expectTensor(Call().in("self", make(Bool, {3}, {1, 1, 0})).run1(ops::aten_diff_default), Bool, {2},
               {0, 1});
  expectTensor(
      Call().in("self", transposed(iota(I64, {2, 2}))).i("dim", 0).run1(ops::aten_diff_default), I64,
      {1, 2}, {1, 1});
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

TEST(ReductionKernels, Sum) {
  Tensor x = iota(F32, {2, 3});
  expectTensor(Call().in("self", x).run1(ops::aten_sum_default), F32, {}, {15});
  expectTensor(Call().in("self", iota(I32, {2, 3})).run1(ops::aten_sum_default), I64, {}, {15});
  expectTensor(Call().in("self", make(Bool, {3}, {1, 0, 1})).run1(ops::aten_sum_default), I64, {},
               {2});
  expectTensor(Call().in("self", x).is("dim", {0}).b("keepdim", true).run1(ops::aten_sum_dim_IntList),
               F32, {1, 3}, {3, 5, 7});
  expectTensor(Call().in("self", x).is("dim", {-1}).run1(ops::aten_sum_dim_IntList), F32, {2},
               {3, 12});
  expectTensor(Call().in("self", x).is("dim", {}).run1(ops::aten_sum_dim_IntList), F32, {}, {15});
  expectTensor(
      Call().in("self", x).arg("dim", Arg::none()).b("keepdim", true).run1(ops::aten_sum_dim_IntList),
      F32, {1, 1}, {15});
  expectTensor(
      Call().in("self", transposed(x)).is("dim", {1}).dtype(F64).run1(ops::aten_sum_dim_IntList), F64,
      {3}, {3, 5, 7});
  expectTensor(
      Call().in("self", Tensor::zeros(F32, {0, 2})).is("dim", {0}).run1(ops::aten_sum_dim_IntList),
      F32, {2}, {0, 0});
  EXPECT_THROW(Call().in("self", x).is("dim", {0, -2}).run1(ops::aten_sum_dim_IntList), KernelError);
  EXPECT_THROW(Call().in("self", x).is("dim", {2}).run1(ops::aten_sum_dim_IntList), KernelError);
  // int64 sums are exact and wrap.
  Tensor big = make(I64, {2}, {0, 1});
  big.storeInt(0, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Call().in("self", big).run1(ops::aten_sum_default).toInts(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
  // A 0-dim tensor reduces over dim 0 to itself.
  expectTensor(
      Call().in("self", Tensor::scalar(F32, 4)).is("dim", {0}).run1(ops::aten_sum_dim_IntList), F32,
      {}, {4});
}

TEST(ReductionKernels, MeanProd) {
  Tensor x = iota(F32, {2, 3});
  expectTensor(Call().in("self", x).run1(ops::aten_mean_default), F32, {}, {2.5});
  expectTensor(Call().in("self", x).is("dim", {-1}).b("keepdim", true).run1(ops::aten_mean_dim), F32,
               {2, 1}, {1, 4});
  EXPECT_THROW(Call().in("self", iota(I64, {3})).run1(ops::aten_mean_default), KernelError);
  expectTensor(Call().in("self", iota(I64, {4})).dtype(F64).run1(ops::aten_mean_default), F64, {},
               {1.5});
  expectTensor(Call().in("self", Tensor::zeros(F32, {0})).run1(ops::aten_mean_default), F32, {},
               {kNan});

  expectTensor(Call().in("self", make(F32, {4}, {1, 2, 3, 4})).run1(ops::aten_prod_default), F32, {},
               {24});
  expectTensor(Call()
                   .in("self", make(I32, {2, 2}, {1, 2, 3, 4}))
                   .i("dim", 0)
                   .b("keepdim", true)
                   .run1(ops::aten_prod_dim_int),
               I64, {1, 2}, {3, 8});
  expectTensor(Call().in("self", Tensor::zeros(F32, {0})).run1(ops::aten_prod_default), F32, {}, {1});
}

TEST(ReductionKernels, AmaxAmin) {
  Tensor x = make(F32, {2, 2}, {1, 5, 7, 3});
  expectTensor(Call().in("self", x).is("dim", {0}).run1(ops::aten_amax_default), F32, {2}, {7, 5});
  expectTensor(Call().in("self", x).run1(ops::aten_amin_default), F32, {}, {1});
  expectTensor(
      Call().in("self", transposed(x)).is("dim", {-1}).b("keepdim", true).run1(ops::aten_amin_default),
      F32, {2, 1}, {1, 3});
  expectTensor(Call().in("self", make(F32, {3}, {1, kNan, 2})).run1(ops::aten_amax_default), F32, {},
               {kNan});
  Tensor big = make(I64, {2}, {0, 0});
  big.storeInt(1, (int64_t{1} << 60) + 1);
  EXPECT_EQ(Call().in("self", big).run1(ops::aten_amax_default).toInts(),
            (std::vector<int64_t>{(int64_t{1} << 60) + 1}));
  EXPECT_THROW(Call().in("self", Tensor::zeros(F32, {0})).run1(ops::aten_amax_default), KernelError);
  // Reducing a non-empty dim of an empty tensor is fine.
  expectTensor(
      Call().in("self", Tensor::zeros(F32, {0, 2})).is("dim", {1}).run1(ops::aten_amax_default), F32,
      {0}, {});
}

TEST(ReductionKernels, ArgmaxArgmin) {
  Tensor x = make(F32, {2, 2}, {1, 5, 7, 3});
  expectTensor(Call().in("self", x).run1(ops::aten_argmax_default), I64, {}, {2});
  expectTensor(Call().in("self", x).i("dim", 1).run1(ops::aten_argmax_default), I64, {2}, {1, 0});
  expectTensor(Call().in("self", x).b("keepdim", true).run1(ops::aten_argmin_default), I64, {1, 1},
               {0});
  expectTensor(Call().in("self", transposed(x)).i("dim", -1).run1(ops::aten_argmin_default), I64, {2},
               {0, 1});
  expectTensor(Call().in("self", make(I32, {3}, {3, 3, 1})).run1(ops::aten_argmax_default), I64, {},
               {0});
  expectTensor(Call().in("self", make(F32, {3}, {1, kNan, kNan})).run1(ops::aten_argmin_default), I64,
               {}, {1});
  EXPECT_THROW(
      Call().in("self", Tensor::zeros(F32, {2, 0})).i("dim", 1).run1(ops::aten_argmax_default),
      KernelError);
}

TEST(ReductionKernels, AnyAll) {
  Tensor x = make(F32, {2, 2}, {0, kNan, 0, 0});
  expectTensor(Call().in("self", x).i("dim", 1).run1(ops::aten_any_dim), Bool, {2}, {1, 0});
  expectTensor(Call().in("self", x).run1(ops::aten_all_default), Bool, {}, {0});
  expectTensor(Call().in("self", make(U8, {2}, {2, 1})).run1(ops::aten_all_default), U8, {}, {1});
  expectTensor(Call().in("self", Tensor::zeros(I64, {0})).run1(ops::aten_all_default), Bool, {}, {1});
  expectTensor(Call().in("self", Tensor::zeros(I64, {0})).run1(ops::aten_any_default), Bool, {}, {0});
  expectTensor(Call()
                   .in("self", transposed(make(Bool, {2, 2}, {1, 1, 0, 1})))
                   .i("dim", 0)
                   .b("keepdim", true)
                   .run1(ops::aten_all_dim),
               Bool, {1, 2}, {1, 0});
}

TEST(ReductionKernels, VarStd) {
  Tensor x = make(F32, {4}, {1, 2, 3, 4});
  expectTensor(Call().in("self", x).run1(ops::aten_var_correction), F32, {},
               {static_cast<float>(5.0 / 3)});
  expectTensor(Call().in("self", x).i("correction", 0).run1(ops::aten_var_correction), F32, {},
               {1.25});
  expectTensor(Call().in("self", x).run1(ops::aten_std_correction), F32, {},
               {static_cast<float>(std::sqrt(5.0 / 3))});
  expectTensor(Call().in("self", x).b("unbiased", false).run1(ops::aten_std_dim), F32, {},
               {static_cast<float>(std::sqrt(1.25))});
  Tensor m = make(F64, {2, 2}, {1, 3, 2, 6});
  expectTensor(Call().in("self", m).is("dim", {1}).b("keepdim", true).run1(ops::aten_var_dim), F64,
               {2, 1}, {2, 8});
  expectTensor(Call().in("self", transposed(m)).is("dim", {-1}).run1(ops::aten_var_correction), F64,
               {2}, {0.5, 4.5});
  expectTensor(Call().in("self", make(F32, {1}, {3})).run1(ops::aten_var_correction), F32, {}, {kNan});
  EXPECT_THROW(Call().in("self", iota(I64, {3})).run1(ops::aten_var_correction), KernelError);
}

TEST(ReductionKernels, Logsumexp) {
  expectTensor(
      Call().in("self", make(F64, {2}, {0, 0})).is("dim", {0}).run1(ops::aten_logsumexp_default), F64,
      {}, {std::log(2.0)});
  expectTensor(Call()
                   .in("self", make(F32, {2, 2}, {-kInf, 1, -kInf, kInf}))
                   .is("dim", {0})
                   .b("keepdim", true)
                   .run1(ops::aten_logsumexp_default),
               F32, {1, 2}, {-kInf, kInf});
  expectTensor(
      Call().in("self", make(F64, {2}, {1000, 1000})).is("dim", {0}).run1(ops::aten_logsumexp_default),
      F64, {}, {1000 + std::log(2.0)});
  expectTensor(
      Call().in("self", make(I64, {1}, {2})).is("dim", {-1}).run1(ops::aten_logsumexp_default), F32,
      {}, {2});
}

TEST(ReductionKernels, VectorNorm) {
  Tensor x = make(F32, {2}, {3, -4});
  expectTensor(Call().in("self", x).run1(ops::aten_linalg_vector_norm_default), F32, {}, {5});
  expectTensor(Call().in("self", x).i("ord", 1).run1(ops::aten_linalg_vector_norm_default), F32, {},
               {7});
  expectTensor(Call().in("self", x).f("ord", kInf).run1(ops::aten_linalg_vector_norm_default), F32, {},
               {4});
  expectTensor(Call().in("self", x).f("ord", -kInf).run1(ops::aten_linalg_vector_norm_default), F32,
               {}, {3});
  expectTensor(Call()
                   .in("self", make(F32, {3}, {0, 2, 0}))
                   .i("ord", 0)
                   .run1(ops::aten_linalg_vector_norm_default),
               F32, {}, {1});
  expectTensor(
      Call().in("self", make(F64, {2}, {1, 1})).i("ord", 3).run1(ops::aten_linalg_vector_norm_default),
      F64, {}, {std::cbrt(2.0)});
  expectTensor(Call()
                   .in("self", transposed(make(F32, {2, 2}, {3, 0, 4, 1})))
                   .is("dim", {1})
                   .b("keepdim", true)
                   .run1(ops::aten_linalg_vector_norm_default),
               F32, {2, 1}, {5, 1});
  expectTensor(Call().in("self", Tensor::zeros(F32, {0})).run1(ops::aten_linalg_vector_norm_default),
               F32, {}, {0});
  EXPECT_THROW(Call()
                   .in("self", Tensor::zeros(F32, {0}))
                   .f("ord", kInf)
                   .run1(ops::aten_linalg_vector_norm_default),
               KernelError);
  EXPECT_THROW(Call().in("self", iota(I64, {2})).run1(ops::aten_linalg_vector_norm_default),
               KernelError);
}

} // namespace
} // namespace gc
