//===- ShapeMath.h - Integer shape arithmetic shared by op layers -*- C++ -*-===//
//
// Pure integer computations on dimensions and sizes that the reference
// kernels, the shape functions and the decompositions all need. Failures
// throw ArgumentError; every caller runs inside a boundary that catches
// std::exception.
//
//===----------------------------------------------------------------------===//

#ifndef GC_IR_SHAPEMATH_H
#define GC_IR_SHAPEMATH_H

#include <cstdint>
#include <vector>

namespace gc {

/// `dim` wrapped into [0, rank); a rank-0 tensor accepts dims -1 and 0.
int64_t normalizeDim(int64_t dim, int64_t rank);

/// The permutation of movedim: result dim `destination[i]` takes input dim
/// `source[i]`, and the other dims keep their order in the remaining places.
/// `source` and `destination` must have the same length.
std::vector<int64_t> movedimPermutation(const std::vector<int64_t> &source,
                                        const std::vector<int64_t> &destination, int64_t rank);

/// The lengths of the pieces that split cuts a dimension of `size` into, each
/// `pieceSize` long but the last; one empty piece for an empty dimension.
std::vector<int64_t> splitLengths(int64_t size, int64_t pieceSize);

} // namespace gc

#endif // GC_IR_SHAPEMATH_H
