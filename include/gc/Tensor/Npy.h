//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
#ifndef GC_TENSOR_NPY_H
#define GC_TENSOR_NPY_H

#include "gc/Tensor/Tensor.h"
#include "gc/Support/Error.h"

#include <string>

namespace gc {

/// Reads a .npy file as gc_npy_read (gc/TensorIO/TensorIO.h) does, into a
/// contiguous tensor. Errors name the file.
Expected<Tensor> readNpy(const std::string &path);
/// The .npy bytes of `t` (C order), as gc_npy_write writes them.
std::string encodeNpy(const Tensor &t);

} // namespace gc

#endif // GC_TENSOR_NPY_H
