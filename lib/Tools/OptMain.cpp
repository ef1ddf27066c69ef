//===- OptMain.cpp - The gc-opt driver ------------------------------------===//
#include "gc/Tools/OptMain.h"

#include "gc/Tools/ToolSupport.h"

namespace gc {

int optMain(int argc, char **argv) {
  const std::string tool = "gc-opt";
  CLI::App app("Read a gc graph file (binary or text), verify it and write it", tool);
  std::string input;
  OutputOptions output;
  app.add_option("input", input, "Graph file, binary or text ('-' for stdin)")->required();
  output.addTo(app);
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;

  Expected<std::unique_ptr<Module>> m = readModuleFile(input);
  if (!m)
    return reportError(tool, m.error());
  if (Error e = writeModuleFile(**m, output.path, output.format))
    return reportError(tool, e);
  return 0;
}

} // namespace gc
