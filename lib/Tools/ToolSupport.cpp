//===- ToolSupport.cpp - What every gc tool shares ------------------------===//
#include "gc/Tools/ToolSupport.h"

#include <iostream>
#include <map>

namespace gc {

void OutputOptions::addTo(CLI::App &app) {
  app.add_option("-o", path, "Output file ('-' for stdout)")->default_val("-");
  static const std::map<std::string, FileFormat> kFormats = {
      {"binary", FileFormat::Binary}, {"text", FileFormat::Text}};
  app.add_option("--emit", format, "Output form: binary (FlatBuffers graph file) or text")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case));
}

int reportError(const std::string &tool, const Error &e) {
  std::cerr << tool << ": error: " << e.message() << "\n";
  return 1;
}

bool parseCommandLine(CLI::App &app, int argc, char **argv, int &exitCode) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    exitCode = app.exit(e);
    return false;
  }
  return true;
}

} // namespace gc
