//===- Type.h - Types of graph values ---------------------------*- C++ -*-===//
#ifndef GC_IR_TYPE_H
#define GC_IR_TYPE_H

#include "gc/IR/DType.h"
#include "gc/IR/SymExpr.h"

#include <string>
#include <vector>

namespace gc {

/// A tensor's metadata: element type, device, sizes, strides and storage
/// offset, each size and stride an expression (a constant when static).
struct TensorType {
  DType dtype = DType::Float32;
  Device device;
  std::vector<const SymExpr *> sizes;
  std::vector<const SymExpr *> strides;
  const SymExpr *storageOffset = nullptr;
  bool requiresGrad = false;

  size_t rank() const { return sizes.size(); }
  bool operator==(const TensorType &) const = default;
};

/// Row-major strides for `sizes`, as torch computes them (a size-1 or size-0
/// dimension still gets the product of the sizes after it, never 0).
std::vector<const SymExpr *> contiguousStrides(
    SymContext &ctx, const std::vector<const SymExpr *> &sizes);

/// The type of a value: a tensor, or a symbolic scalar.
struct Type {
  enum class Kind : uint8_t { Tensor, SymInt, SymFloat, SymBool };
  Kind kind = Kind::Tensor;
  TensorType tensor; ///< meaningful only for Kind::Tensor

  static Type makeTensor(TensorType t) { return Type{Kind::Tensor, std::move(t)}; }
  static Type makeScalar(Kind k) { return Type{k, {}}; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool operator==(const Type &) const = default;
};

} // namespace gc

#endif // GC_IR_TYPE_H
