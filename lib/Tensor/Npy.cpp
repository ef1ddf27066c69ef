//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Host tensors through the codec of gc/TensorIO/TensorIO.h, which gcrt-run
// uses too: the format, the dtypes and the errors are there.
//
//===----------------------------------------------------------------------===//
#include "gc/Tensor/Npy.h"

#include "gc/Tensor/Compare.h"

#include <cstring>

namespace gc {

Expected<Tensor> readNpy(const std::string &path) {
  gc_npy npy;
  char message[1024];
  if (!gc_npy_read(path.c_str(), &npy, message, sizeof message))
    return makeError() << message;
  Shape sizes(npy.sizes, npy.sizes + npy.tensor.rank);
  bool fortran = npy.tensor.strides != nullptr;
  // Fortran order is the transposed C layout: read it as that, reverse the
  // dims back as a view, then make it contiguous.
  Tensor out = Tensor::zeros(static_cast<DType>(npy.tensor.dtype),
                             fortran ? Shape(sizes.rbegin(), sizes.rend()) : sizes);
  if (out.numel())
    std::memcpy(out.storage()->data(), npy.tensor.data, out.storage()->size());
  gc_npy_free(&npy);
  if (!fortran)
    return out;
  return out.asStrided(sizes, Shape(out.strides().rbegin(), out.strides().rend()), 0).clone();
}

std::string encodeNpy(const Tensor &t) {
  Tensor c = t.isContiguous() && t.offset() == 0 ? t : t.clone();
  gcrt_tensor view = tensorView(c);
  char header[GC_NPY_HEADER_MAX];
  std::string out(header, gc_npy_header(&view, header));
  out.append(reinterpret_cast<const char *>(view.data),
             static_cast<size_t>(c.numel()) * dtypeSize(c.dtype()));
  return out;
}

} // namespace gc
