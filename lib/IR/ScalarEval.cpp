//===- ScalarEval.cpp - The scalar math, defined once ----------------------===//
#include "gc/IR/ScalarEval.h"

#include <algorithm>
#include <cmath>

namespace gc {

namespace {

/// Python's remainder: the sign of the divisor.
double remainder(double x, double y) {
  double r = std::fmod(x, y);
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

/// maximum and minimum propagate NaN, as torch's do.
double maximum(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
}
double minimum(double x, double y) {
  return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
}

std::optional<double> evalUnary(ScalarOp op, double x) {
  switch (op) {
  case ScalarOp::Neg: return -x;
  case ScalarOp::Abs: return std::fabs(x);
  case ScalarOp::Exp: return std::exp(x);
  case ScalarOp::Expm1: return std::expm1(x);
  case ScalarOp::Log: return std::log(x);
  case ScalarOp::Log1p: return std::log1p(x);
  case ScalarOp::Sqrt: return std::sqrt(x);
  case ScalarOp::Rsqrt: return 1 / std::sqrt(x);
  case ScalarOp::Sin: return std::sin(x);
  case ScalarOp::Cos: return std::cos(x);
  case ScalarOp::Tan: return std::tan(x);
  case ScalarOp::Asin: return std::asin(x);
  case ScalarOp::Acos: return std::acos(x);
  case ScalarOp::Atan: return std::atan(x);
  case ScalarOp::Sinh: return std::sinh(x);
  case ScalarOp::Cosh: return std::cosh(x);
  case ScalarOp::Tanh: return std::tanh(x);
  case ScalarOp::Erf: return std::erf(x);
  case ScalarOp::Erfc: return std::erfc(x);
  case ScalarOp::Sigmoid: return 1 / (1 + std::exp(-x));
  case ScalarOp::Reciprocal: return 1 / x;
  case ScalarOp::Floor: return std::floor(x);
  case ScalarOp::Ceil: return std::ceil(x);
  case ScalarOp::Round: return std::nearbyint(x);
  case ScalarOp::Trunc: return std::trunc(x);
  case ScalarOp::Sign: return std::isnan(x) ? x : (x > 0) - (x < 0);
  case ScalarOp::IsNan: return std::isnan(x);
  case ScalarOp::LogicalNot: return x == 0;
  default: return std::nullopt;
  }
}

std::optional<double> evalBinary(ScalarOp op, double x, double y) {
  switch (op) {
  case ScalarOp::Add: return x + y;
  case ScalarOp::Sub: return x - y;
  case ScalarOp::Mul: return x * y;
  case ScalarOp::Div: return x / y;
  case ScalarOp::FloorDiv: return std::floor(x / y);
  case ScalarOp::TruncDiv: return std::trunc(x / y);
  case ScalarOp::Remainder: return remainder(x, y);
  case ScalarOp::Fmod: return std::fmod(x, y);
  case ScalarOp::Pow: return std::pow(x, y);
  case ScalarOp::Atan2: return std::atan2(x, y);
  case ScalarOp::Maximum: return maximum(x, y);
  case ScalarOp::Minimum: return minimum(x, y);
  case ScalarOp::Eq: return x == y;
  case ScalarOp::Ne: return x != y;
  case ScalarOp::Lt: return x < y;
  case ScalarOp::Le: return x <= y;
  case ScalarOp::Gt: return x > y;
  case ScalarOp::Ge: return x >= y;
  case ScalarOp::LogicalAnd: return x != 0 && y != 0;
  case ScalarOp::LogicalOr: return x != 0 || y != 0;
  default: return std::nullopt;
  }
}

} // namespace

std::optional<double> evalFloatScalarOp(ScalarOp op, double x, double y) {
  return scalarOpArity(op) == 1 ? evalUnary(op, x) : evalBinary(op, x, y);
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
