//===- Compiler.cpp - gc-compile in-process, for gcrt.compile -------------===//
//
// gcrt.compile runs exactly gc-compile: the same option parser, pipeline
// and compile cache, given the command line the Python layer builds from
// its keyword arguments. What gc-compile would print on stderr is captured:
// on failure it becomes the message of a gcrt.Error (the type _runtime
// defines), on success the warnings are returned to be shown as Python
// warnings.
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "gc/Tools/CompileMain.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace nb = nanobind;

namespace gc::python {
namespace {

/// Sends std::cerr to a string while alive. The GIL is held throughout, so
/// no other Python thread compiles at the same time.
class CapturedErrors {
public:
  CapturedErrors() : saved_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CapturedErrors() { std::cerr.rdbuf(saved_); }
  std::string text() const { return text_.str(); }

private:
  std::ostringstream text_;
  std::streambuf *saved_;
};

/// The lines of gc-compile's stderr that hold `marker` ("error:",
/// "warning:"), leaving out its progress reports; all of it if none does.
std::string linesWith(const std::string &text, std::string_view marker, bool orAll) {
  std::istringstream in(text);
  std::string line, kept;
  while (std::getline(in, line))
    if (line.find(marker) != std::string::npos)
      kept += line + "\n";
  return kept.empty() && orAll ? text : kept;
}

std::string compile(const std::vector<std::string> &args) {
  std::vector<std::string> argv = {"gc-compile"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char *> pointers;
  for (std::string &a : argv)
    pointers.push_back(a.data());
  pointers.push_back(nullptr);
  int status;
  std::string text;
  {
    CapturedErrors captured;
    status = compileMain(static_cast<int>(argv.size()), pointers.data());
    text = captured.text();
  }
  if (status != 0) {
    nb::object error = nb::module_::import_("gcrt._runtime").attr("Error");
    PyErr_SetString(error.ptr(), linesWith(text, "error:", true).c_str());
    throw nb::python_error();
  }
  return linesWith(text, "warning:", false);
}

} // namespace

void bindCompiler(nb::module_ &m) {
  m.def("compile", &compile, nb::arg("args"),
        "Runs gc-compile with these arguments in this process; returns its warnings");
}

} // namespace gc::python
