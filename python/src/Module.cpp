//===- Module.cpp - gcrt._gcrt, the extension module ----------------------===//
#include "Bindings.h"

namespace nb = nanobind;

NB_MODULE(_gcrt, m) {
  using namespace gc::python;
  m.doc() = "libgcrt and the gc compiler, for the gcrt package";
  static nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static nb::exception<InputError> inputError(m, "InputError", error.ptr());
  bindRuntime(m);
  bindCompiler(m);
}
