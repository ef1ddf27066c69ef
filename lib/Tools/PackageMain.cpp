//===- PackageMain.cpp - The gc-package driver ----------------------------===//
#include "gc/Tools/PackageMain.h"

#include "gc/PackageWriter/PackageWriter.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"

#include <optional>

namespace gc {

int packageMain(int argc, char **argv) {
  CLI::App app("gc-package: a kernels-level graph file (from gc-codegen) to a deployable "
               "package");
  std::string input;
  // Only the output path and the depfile: a package has one form, so the
  // --emit of the graph tools does not apply.
  OutputOptions out;
  PackageOptions options;
  app.add_option("input", input, "Graph file at the kernels level ('-' for stdin)")->required();
  app.add_option("-o", out.path, "Output package ('-' for stdout)")->default_val("-");
  app.add_option("--depfile", out.depfile,
                 "(also -MF FILE) Write a Makefile-syntax depfile of the files the package was "
                 "made from");
  app.add_option("--linker", options.linker,
                 "The ld-compatible linker that makes the kernels' shared libraries")
      ->default_val(options.linker);
  // gc-opt chose the weights mode; the flag must agree with it.
  TargetFlags target;
  addWeightsFlag(app, target.weights,
                 "embed: the package holds every weight; external: it holds only the weights "
                 "its source archive (.pt2) does not, names the archive relative to the "
                 "package's directory, and libgcrt maps it at load time. Must agree with the "
                 "module, where gc-opt --weights recorded it");
  TimeTraceFlag timeTrace;
  timeTrace.addTo(app);
  PluginFlag plugins;
  plugins.addTo(app);
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  if (Error e = plugins.load())
    return reportError("gc-package", e);

  options.outputDir = out.path == "-" ? "." : parentDirectory(out.path);
  TimeTrace *trace = timeTrace.trace();
  std::optional<TraceScope> whole(std::in_place, trace, "gc-package", "tool");
  Expected<std::unique_ptr<Module>> m = [&] {
    TraceScope scope(trace, "read", "stage");
    return readModuleFile(input);
  }();
  if (!m)
    return reportError("gc-package", m.error());
  if (Error e = assignTarget(**m, target))
    return reportError("gc-package", e.withContext("'" + input + "'"));
  Expected<std::unique_ptr<OutputFile>> file = OutputFile::create(out.path);
  if (!file)
    return reportError("gc-package", file.error());
  if (Error e = [&] {
        TraceScope scope(trace, "package", "stage");
        return writePackage(**m, options, **file);
      }())
    return reportError("gc-package", e.withContext("'" + input + "'"));
  if (Error e = [&] {
        TraceScope scope(trace, "write", "stage");
        return (*file)->commit();
      }())
    return reportError("gc-package", e);
  if (Error e = out.writeDepfile(moduleDependencies(input, **m)))
    return reportError("gc-package", e);
  whole.reset();
  if (Error e = timeTrace.write())
    return reportError("gc-package", e);
  return 0;
}

} // namespace gc
