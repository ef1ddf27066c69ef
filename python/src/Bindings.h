//===- Bindings.h - The pieces of gcrt's extension module -------*- C++ -*-===//
#ifndef GC_PYTHON_BINDINGS_H
#define GC_PYTHON_BINDINGS_H

#include <nanobind/nanobind.h>

#include <stdexcept>

namespace gc::python {

/// Raised to Python as gcrt.Error: a package that cannot load, a run that
/// fails. The message is the C side's.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// gcrt.InputError (a gcrt.Error): wrong arguments to a call, named by
/// their path in the exported program's signature.
struct InputError : Error {
  using Error::Error;
};

/// gcrt._runtime's classes and functions.
void bindRuntime(nanobind::module_ &m);
/// gcrt._compiler's compile().
void bindCompiler(nanobind::module_ &m);

} // namespace gc::python

#endif // GC_PYTHON_BINDINGS_H
