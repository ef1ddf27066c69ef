//===- Module.cpp - gcrt's two extension modules --------------------------===//
//
// gcrt._runtime links libgcrt alone, so a deployment that only runs
// packages imports gcrt with no compiler (and no LLVM) installed;
// gcrt._compiler links the compiler, and gcrt.compile imports it on first
// use. Both raise the same exception types, defined by _runtime (a
// translator per module would see the other module's C++ types too).
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

namespace nb = nanobind;

#ifdef GC_PYTHON_COMPILER
NB_MODULE(_compiler, m) {
  m.doc() = "the gc compiler in-process, for gcrt.compile";
  gc::python::bindCompiler(m);
}
#else
NB_MODULE(_runtime, m) {
  using namespace gc::python;
  m.doc() = "libgcrt, for the gcrt package";
  // One translator, most derived first: InputError is an Error in C++ and
  // in Python alike. The types live as long as the process.
  static PyObject *error = PyErr_NewException("gcrt.Error", PyExc_RuntimeError, nullptr);
  static PyObject *inputError = PyErr_NewException("gcrt.InputError", error, nullptr);
  m.attr("Error") = nb::handle(error);
  m.attr("InputError") = nb::handle(inputError);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const InputError &e) {
      PyErr_SetString(inputError, e.what());
    } catch (const Error &e) {
      PyErr_SetString(error, e.what());
    }
  });
  bindRuntime(m);
}
#endif
