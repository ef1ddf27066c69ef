//===- DataDependentTest.cpp - Kernels of Kernels/DataDependent.cpp -------===//
//
// nonzero, masked_select, unique and unique_consecutive, whose result sizes
// depend on the data, and the run-time checks torch.export puts on those
// sizes. Expected values are PyTorch 2.15's.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"
#include "gc/Interp/Kernel.h"

#include <gtest/gtest.h>

#include <limits>

using namespace gc;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using test::expectTensor;
using test::make;
using test::TestArg;

std::vector<Tensor> run(OpId op, const std::vector<TestArg> &args, unsigned numResults = 1) {
  return test::runNode(referenceKernels(), op, args, numResults);
}

TEST(DataDependent, NonzeroListsIndicesRowMajor) {
  Tensor x = make(DType::Float32, {2, 3}, {0, 1.5, 0, -2, 0, 3});
  expectTensor(run(ops::aten_nonzero_default, {{"self", x}})[0], DType::Int64, {3, 2},
               {0, 1, 1, 0, 1, 2});
  Tensor none = make(DType::Bool, {4}, {0, 0, 0, 0});
  expectTensor(run(ops::aten_nonzero_default, {{"self", none}})[0], DType::Int64, {0, 1}, {});
  // A 0-dim tensor gives rows of no columns.
  Tensor scalar = make(DType::Int64, {}, {7});
  expectTensor(run(ops::aten_nonzero_default, {{"self", scalar}})[0], DType::Int64, {1, 0}, {});
}

TEST(DataDependent, MaskedSelectBroadcasts) {
  Tensor x = make(DType::Float32, {2, 2}, {1, 2, 3, 4});
  Tensor m = make(DType::Bool, {2}, {0, 1});
  expectTensor(run(ops::aten_masked_select_default, {{"self", x}, {"mask", m}})[0],
               DType::Float32, {2}, {2, 4});
  Tensor notBool = make(DType::Int64, {2}, {0, 1});
  test::expectFailsWith(referenceKernels(), ops::aten_masked_select_default,
                        {{"self", x}, {"mask", notBool}}, "expected a bool mask");
}

TEST(DataDependent, UniqueSortsWithInverseAndCounts) {
  Tensor x = make(DType::Float32, {5}, {3, 1, kNaN, 3, 1});
  std::vector<Tensor> r = run(ops::aten__unique2_default,
                              {{"self", x}, {"return_inverse", Arg::boolean(true)},
                               {"return_counts", Arg::boolean(true)}},
                              3);
  expectTensor(r[0], DType::Float32, {3}, {1, 3, kNaN});
  expectTensor(r[1], DType::Int64, {5}, {1, 0, 2, 1, 0});
  expectTensor(r[2], DType::Int64, {3}, {2, 2, 1});
  // Without return_inverse and return_counts those results are empty.
  r = run(ops::aten__unique2_default, {{"self", x}}, 3);
  expectTensor(r[1], DType::Int64, {0}, {});
  expectTensor(r[2], DType::Int64, {0}, {});
}

TEST(DataDependent, UniqueConsecutiveCollapsesRuns) {
  Tensor x = make(DType::Int64, {2, 3}, {1, 1, 2, 2, 1, 1});
  std::vector<Tensor> r = run(ops::aten_unique_consecutive_default,
                              {{"self", x}, {"return_inverse", Arg::boolean(true)},
                               {"return_counts", Arg::boolean(true)}},
                              3);
  expectTensor(r[0], DType::Int64, {3}, {1, 2, 1});
  expectTensor(r[1], DType::Int64, {2, 3}, {0, 0, 1, 1, 2, 2});
  expectTensor(r[2], DType::Int64, {3}, {2, 2, 2});
  test::expectFailsWith(referenceKernels(), ops::aten_unique_consecutive_default,
                        {{"self", x}, {"dim", Arg::integer(0)}}, "only dim=None");
}

TEST(DataDependent, ChecksFailWithTheirMessage) {
  EXPECT_TRUE(run(ops::aten__assert_scalar_default,
                  {{"self", Arg::boolean(true)}, {"assert_msg", Arg::string("u0 <= 4")}}, 0)
                  .empty());
  test::expectFailsWith(referenceKernels(), ops::aten__assert_scalar_default,
                        {{"self", Arg::boolean(false)}, {"assert_msg", Arg::string("u0 <= 4")}},
                        "u0 <= 4");
  std::vector<TestArg> inRange = {
      {"size", Arg::integer(3)}, {"min", Arg::integer(0)}, {"max", Arg::integer(4)}};
  EXPECT_TRUE(run(ops::aten_sym_constrain_range_for_size_default, inRange, 0).empty());
  test::expectFailsWith(referenceKernels(), ops::aten_sym_constrain_range_default,
                        {{"size", Arg::integer(5)}, {"max", Arg::integer(4)}},
                        "size 5 is above its upper bound 4");
  test::expectFailsWith(referenceKernels(), ops::aten_sym_constrain_range_default,
                        {{"size", Arg::integer(-1)}, {"min", Arg::integer(0)}},
                        "size -1 is below its lower bound 0");
}

} // namespace
