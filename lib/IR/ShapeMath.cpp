//===- ShapeMath.cpp - Integer shape arithmetic shared by op layers -------===//

#include "gc/IR/ShapeMath.h"

#include "gc/IR/ArgReader.h"

#include <algorithm>
#include <string>

namespace gc {

int64_t normalizeDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r)
    throw ArgumentError("dimension " + std::to_string(dim) + " is out of range for rank " +
                        std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

std::vector<int64_t> movedimPermutation(const std::vector<int64_t> &source,
                                        const std::vector<int64_t> &destination, int64_t rank) {
  if (source.size() != destination.size())
    throw ArgumentError("movedim: source and destination differ in length");
  std::vector<int64_t> perm(rank, -1);
  std::vector<bool> moved(rank);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = normalizeDim(source[i], rank), d = normalizeDim(destination[i], rank);
    if (rank == 0)
      continue;
    if (moved[s] || perm[d] != -1)
      throw ArgumentError("movedim: repeated dim in source or destination");
    moved[s] = true;
    perm[d] = s;
  }
  int64_t next = 0;
  for (int64_t &p : perm) {
    if (p != -1)
      continue;
    while (moved[next])
      ++next;
    p = next++;
  }
  return perm;
}

std::vector<int64_t> splitLengths(int64_t size, int64_t pieceSize) {
  if (pieceSize < 0 || (pieceSize == 0 && size != 0))
    throw ArgumentError("split: split_size must be positive, got " + std::to_string(pieceSize));
  std::vector<int64_t> lengths;
  for (int64_t start = 0; start < size; start += pieceSize)
    lengths.push_back(std::min(pieceSize, size - start));
  if (lengths.empty())
    lengths.push_back(0);
  return lengths;
}

} // namespace gc
