//===- DLPackExchange.cpp - Finding a tensor type's exchange table --------===//
#include "DLPackExchange.h"

#include <utility>
#include <vector>

namespace gc::python::dlpack {

const ExchangeApi *exchangeApiOf(PyObject *object) {
  // Few tensor types reach a process: a short list, searched first.
  static std::vector<std::pair<PyTypeObject *, const ExchangeApi *>> known;
  PyTypeObject *type = Py_TYPE(object);
  for (const auto &[t, api] : known)
    if (t == type)
      return api;
  const ExchangeApi *api = nullptr;
  // DLPack 1.3's name, a capsule; then the name torch 2.10 (and TVM's FFI
  // before it) used for the same table, a capsule or an address.
  for (const char *name : {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
    PyObject *value = PyObject_GetAttrString(reinterpret_cast<PyObject *>(type), name);
    if (!value)
      continue;
    const void *table = nullptr;
    if (PyCapsule_CheckExact(value))
      table = PyCapsule_GetPointer(value, PyCapsule_GetName(value));
    else if (PyLong_Check(value))
      table = PyLong_AsVoidPtr(value);
    Py_DECREF(value);
    PyErr_Clear();
    if (table && static_cast<const ExchangeApi *>(table)->version.major == 1) {
      api = static_cast<const ExchangeApi *>(table);
      break;
    }
  }
  PyErr_Clear();
  // The type object outlives the entry: types of tensors stay for the
  // process, and the reference keeps one that would not.
  Py_INCREF(type);
  known.emplace_back(type, api);
  return api;
}

} // namespace gc::python::dlpack
