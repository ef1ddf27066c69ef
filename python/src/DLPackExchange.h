//===- DLPackExchange.h - DLPack's C exchange table -------------*- C++ -*-===//
//
// DLPack 1.x lets a tensor type publish, as the capsule
// `type(t).__dlpack_c_exchange_api__` named "dlpack_exchange_api", a table of
// C functions: view a tensor object as a DLTensor, allocate a tensor of the
// framework's own, and wrap one as a Python object, all without a Python
// call. torch has it (2.10 on); gcrt uses it to take and return tensors in
// well under a microsecond each, and falls back to __dlpack__ (through
// nanobind) for producers without it. These are the ABI's layouts, declared
// here because gcrt depends on no framework's headers.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PYTHON_DLPACKEXCHANGE_H
#define GC_PYTHON_DLPACKEXCHANGE_H

#include <Python.h>

#include <cstdint>

namespace gc::python::dlpack {

struct Version {
  uint32_t major, minor;
};
struct Device {
  int32_t type, id;
};
struct DataType {
  uint8_t code, bits;
  uint16_t lanes;
};
struct Tensor {
  void *data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byteOffset;
};
struct ManagedTensor {
  Version version;
  void *managerContext;
  void (*deleter)(ManagedTensor *self);
  uint64_t flags;
  Tensor tensor;
};

/// The table's first version (major 1); later minor versions only append.
struct ExchangeApi {
  Version version;
  const void *previous;
  int (*allocate)(Tensor *prototype, ManagedTensor **out, void *errorContext,
                  void (*setError)(void *errorContext, const char *kind, const char *message));
  int (*managedFromObject)(void *object, ManagedTensor **out);
  int (*managedToObject)(ManagedTensor *tensor, void **out);
  int (*viewObject)(void *object, Tensor *out);
  int (*currentStream)(int32_t deviceType, int32_t deviceId, void **stream);
};

/// The table of `object`'s type, or null where it has none (or an
/// incompatible major version). Looked up once per type.
const ExchangeApi *exchangeApiOf(PyObject *object);

} // namespace gc::python::dlpack

#endif // GC_PYTHON_DLPACKEXCHANGE_H
