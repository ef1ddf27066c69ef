//===- LowerTestUtil.h - Shared plumbing of the lowering tests --*- C++ -*-===//
#ifndef GC_TEST_UNIT_LOWER_LOWERTESTUTIL_H
#define GC_TEST_UNIT_LOWER_LOWERTESTUTIL_H

#include "gc/IR/LoopIR.h"
#include "gc/Tensor/Compare.h"
#include "gc/Tensor/Tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace gc::test {

/// Checks every output against its reference: relative error `tol`, and an
/// absolute error of `tol` times the reference's largest magnitude (at most
/// `tol`), so that an output of tiny values is not compared against zero.
inline void expectClose(const std::vector<Tensor> &got, const std::vector<Tensor> &want,
                        double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double largest = 0;
    for (double v : want[i].toDoubles())
      largest = std::max(largest, std::fabs(v));
    double atol = largest > 0 ? std::min(tol, tol * largest) : tol;
    Comparison c = compareTensors(got[i], want[i], tol, atol);
    EXPECT_TRUE(c.pass) << what << ": output " << i << ": " << c.problem
                        << " max abs error " << c.max_abs_error;
  }
}

} // namespace gc::test

#endif // GC_TEST_UNIT_LOWER_LOWERTESTUTIL_H
