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
  PyObject *capsule = PyObject_GetAttrString(reinterpret_cast<PyObject *>(type),
                                             "__dlpack_c_exchange_api__");
  if (capsule) {
    auto *table = static_cast<const ExchangeApi *>(
        PyCapsule_GetPointer(capsule, "dlpack_exchange_api"));
    if (table && table->version.major == 1)
      api = table;
    Py_DECREF(capsule);
  }
  PyErr_Clear();
  // The type object outlives the entry: types of tensors stay for the
  // process, and the reference keeps one that would not.
  Py_INCREF(type);
  known.emplace_back(type, api);
  return api;
}

} // namespace gc::python::dlpack
