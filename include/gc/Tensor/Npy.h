//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
#ifndef GC_TENSOR_NPY_H
#define GC_TENSOR_NPY_H

#include "gc/Tensor/Tensor.h"
#include "gc/Support/Error.h"

#include <string>

namespace gc {

/// Reads a .npy file (format versions 1-3, little-endian or byte-order-free
/// dtypes bool, u1, i1, i2, i4, i8, f2, f4, f8; C or Fortran order). bf16 is
/// read from numpy's opaque 2-byte void type "|V2" as torch writes it. Errors
/// name the file.
Expected<Tensor> readNpy(const std::string &path);
/// The .npy bytes of `t` (C order).
std::string encodeNpy(const Tensor &t);

} // namespace gc

#endif // GC_TENSOR_NPY_H
