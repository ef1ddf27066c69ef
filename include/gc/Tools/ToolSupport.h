//===- ToolSupport.h - What every gc tool shares ----------------*- C++ -*-===//
#ifndef GC_TOOLS_TOOLSUPPORT_H
#define GC_TOOLS_TOOLSUPPORT_H

#include "gc/Bytecode/ModuleIO.h"
#include "gc/Support/Error.h"

#include <CLI/CLI.hpp>

#include <string>

namespace gc {

/// Options every tool that writes a module has: `-o FILE` and `--emit`.
struct OutputOptions {
  std::string path = "-";
  FileFormat format = FileFormat::Binary;
  void addTo(CLI::App &app);
};

/// Prints "<tool>: error: <message>" to stderr and returns the exit code 1.
int reportError(const std::string &tool, const Error &e);

/// Parses the command line; on --help or a usage error sets `exitCode` and
/// returns false.
bool parseCommandLine(CLI::App &app, int argc, char **argv, int &exitCode);

} // namespace gc

#endif // GC_TOOLS_TOOLSUPPORT_H
