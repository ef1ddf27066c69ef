//===- ImportMain.cpp - The gc-import driver ------------------------------===//
#include "gc/Tools/ImportMain.h"

#include "gc/Import/Importer.h"
#include "gc/IR/OpStats.h"
#include "gc/Tools/ToolSupport.h"

#include <cstdio>
#include <iostream>
#include <map>

namespace gc {

int importMain(int argc, char **argv) {
  const std::string tool = "gc-import";
  CLI::App app("Import a torch.export archive (.pt2) as an aten-level gc graph file", tool);
  std::string input;
  OutputOptions output;
  ImportOptions options;
  bool opStats = false;
  app.add_option("input", input, "The .pt2 archive ('-' for stdin)")->required();
  output.addTo(app);
  static const std::map<std::string, ImportOptions::WeightMode> kModes = {
      {"reference", ImportOptions::WeightMode::Reference},
      {"blob", ImportOptions::WeightMode::Blob}};
  app.add_option("--weight-storage", options.weights,
                 "reference: weights stay in the archive, read in place; blob: copy them "
                 "into one aligned file next to the output")
      ->transform(CLI::CheckedTransformer(kModes, CLI::ignore_case));
  addRenamedFlag(app, "--weights", "--weight-storage=reference|blob");
  app.add_option("--weights-blob", options.blobPath,
                 "Where --weight-storage=blob writes the blob (default: OUTPUT.weights)");
  app.add_option("--model", options.modelName, "Which models/<name>.json to read")
      ->default_val("model");
  app.add_flag("--op-stats", opStats, "Print how often each op occurs to stderr");
  PluginFlag plugins;
  plugins.addTo(app);
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  if (Error e = plugins.load())
    return reportError(tool, e);

  if (options.weights == ImportOptions::WeightMode::Blob && options.blobPath.empty()) {
    if (output.path == "-")
      return reportError(tool, makeError() << "--weight-storage=blob needs -o FILE or --weights-blob FILE");
    options.blobPath = output.path + ".weights";
  }

  if (input == "-" && options.weights == ImportOptions::WeightMode::Reference)
    return reportError(tool, makeError() << "weights read from stdin cannot be referenced in "
                                            "place; use --weight-storage=blob");
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(input);
  if (!file)
    return reportError(tool, file.error());
  Expected<ImportResult> result = importArchive(*file, options);
  if (!result)
    return reportError(tool, result.error());

  if (options.weights == ImportOptions::WeightMode::Blob)
    if (Error e = writeFileAtomic(options.blobPath, result->blob))
      return reportError(tool, e);
  if (Error e = writeModuleFile(*result->module, output.path, output.format)) {
    // The module and its blob are one output: leave neither behind.
    if (options.weights == ImportOptions::WeightMode::Blob)
      std::remove(options.blobPath.c_str());
    return reportError(tool, e);
  }
  if (Error e = output.writeDepfile({input}))
    return reportError(tool, e);

  if (opStats)
    for (const auto &[op, count] : countOps(*result->module))
      std::cerr << count << " " << op << "\n";
  return 0;
}

} // namespace gc
