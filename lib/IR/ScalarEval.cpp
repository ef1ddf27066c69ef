//===- ScalarEval.cpp - The scalar math, defined once ----------------------===//
#include "gc/IR/ScalarEval.h"

#include <algorithm>
#include <cmath>

namespace gc {

namespace {

// gc_digamma and the other special functions of the SPECIAL rows, the
// same text the kernels' math library compiles.
#include "SpecialMath.inc"

/// Python's remainder: the sign of the divisor.
double pythonRemainder(double x, double y) {
  double r = std::fmod(x, y);
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

} // namespace

std::optional<double> evalFloatScalarOp(ScalarOp op, double x, double y) {
  (void)y; // unary rows do not read it
  switch (op) {
#define NOT_FLOAT std::nullopt
#define GC_SCALAR_OP(ID, NAME, ARITY, CPU, EVAL)                                                  \
  case ScalarOp::ID:                                                                              \
    return EVAL;
#include "gc/IR/ScalarOps.def"
#undef GC_SCALAR_OP
#undef NOT_FLOAT
  }
  return std::nullopt;
}

bool scalarOpGivesBool(ScalarOp op) {
  switch (op) {
  case ScalarOp::IsNan:
  case ScalarOp::LogicalNot:
  case ScalarOp::Eq:
  case ScalarOp::Ne:
  case ScalarOp::Lt:
  case ScalarOp::Le:
  case ScalarOp::Gt:
  case ScalarOp::Ge:
  case ScalarOp::LogicalAnd:
  case ScalarOp::LogicalOr: return true;
  default: return false;
  }
}

} // namespace gc
