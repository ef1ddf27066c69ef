//===- RunMain.cpp - The gc-run driver ------------------------------------===//
#include "gc/Tools/RunMain.h"

#include "gc/Interp/Compare.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Interp/Npy.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace gc {

namespace {

struct RunOptions {
  std::string input;
  std::vector<std::string> inputs;
  std::string inputsDir;
  std::string outputDir;
  std::vector<std::string> expects;
  double rtol = 1e-4;
  double atol = 1e-4;
  bool writeBuffers = false;
  std::string graph;
};

size_t countUserInputs(const Graph &g) {
  size_t n = 0;
  for (const InputSpec &s : g.inputSpecs())
    n += s.kind == InputKind::UserInput;
  return n;
}

Expected<std::vector<Tensor>> readInputs(const RunOptions &o, const Graph &g) {
  std::vector<std::string> paths = o.inputs;
  if (!o.inputsDir.empty()) {
    if (!paths.empty())
      return makeError() << "give inputs either with --input or with --inputs-dir, not both";
    for (size_t i = 0; i < countUserInputs(g); ++i)
      paths.push_back(o.inputsDir + "/in" + std::to_string(i) + ".npy");
  }
  std::vector<Tensor> out;
  for (const std::string &p : paths) {
    Expected<Tensor> t = readNpy(p);
    if (!t)
      return t.error();
    out.push_back(t.take());
  }
  return out;
}

/// Writes out<i>.npy per user output and, with --write-buffers,
/// buffer_after.<name>.npy per mutated buffer.
Error writeOutputs(const RunOptions &o, const Graph &g, const RunResult &r) {
  size_t user = 0;
  for (size_t i = 0; i < r.outputs.size(); ++i)
    if (g.outputSpecs()[i].kind == OutputKind::UserOutput)
      GC_RETURN_IF_ERROR(writeFileAtomic(o.outputDir + "/out" + std::to_string(user++) + ".npy",
                                         encodeNpy(r.outputs[i])));
  if (o.writeBuffers)
    for (const auto &[name, t] : r.mutatedBuffers)
      GC_RETURN_IF_ERROR(
          writeFileAtomic(o.outputDir + "/buffer_after." + name + ".npy", encodeNpy(t)));
  return Error::success();
}

/// Prints one line per expected output; returns how many did not match.
Expected<size_t> checkOutputs(const RunOptions &o, const Graph &g, const RunResult &r) {
  std::vector<size_t> userOutputs;
  for (size_t i = 0; i < g.outputSpecs().size(); ++i)
    if (g.outputSpecs()[i].kind == OutputKind::UserOutput)
      userOutputs.push_back(i);
  if (o.expects.size() != userOutputs.size())
    return makeError() << "the graph has " << userOutputs.size() << " user outputs, but "
                       << o.expects.size() << " --expect files were given";
  size_t failures = 0;
  for (size_t k = 0; k < o.expects.size(); ++k) {
    Expected<Tensor> want = readNpy(o.expects[k]);
    if (!want)
      return want.error();
    Comparison c = compareTensors(r.outputs[userOutputs[k]], *want, o.rtol, o.atol);
    char line[256];
    if (!c.problem.empty())
      std::snprintf(line, sizeof line, "out%zu: FAIL: %s", k, c.problem.c_str());
    else
      std::snprintf(line, sizeof line, "out%zu: max abs error %.3g, max rel error %.3g: %s", k,
                    c.maxAbsError, c.maxRelError, c.pass ? "pass" : "FAIL");
    std::cout << line << "\n";
    failures += !c.pass;
  }
  return failures;
}

} // namespace

int runMain(int argc, char **argv) {
  const std::string tool = "gc-run";
  CLI::App app("Run a gc graph file with the reference interpreter, and check its results", tool);
  RunOptions o;
  app.add_option("file", o.input, "Graph file, binary or text ('-' for stdin)")->required();
  app.add_option("--input", o.inputs, "An input .npy file, once per user input, in order");
  app.add_option("--inputs-dir", o.inputsDir, "A directory holding in0.npy, in1.npy, ...");
  app.add_option("--output-dir", o.outputDir, "Write out0.npy, out1.npy, ... there");
  app.add_option("--expect", o.expects, "An expected output .npy, once per user output");
  app.add_option("--rtol", o.rtol, "Relative tolerance for --expect")->default_val(1e-4);
  app.add_option("--atol", o.atol, "Absolute tolerance for --expect")->default_val(1e-4);
  app.add_flag("--write-buffers", o.writeBuffers,
               "Also write the buffers the graph mutates, as buffer_after.<name>.npy");
  app.add_option("--graph", o.graph, "Which graph of the module to run (default: the first)");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  if (o.writeBuffers && o.outputDir.empty())
    return reportError(tool, makeError() << "--write-buffers needs --output-dir");

  Expected<std::unique_ptr<Module>> m = readModuleFile(o.input);
  if (!m)
    return reportError(tool, m.error());
  const Graph *g = o.graph.empty() ? ((*m)->graphs().empty() ? nullptr : (*m)->graphs()[0].get())
                                   : (*m)->graph(o.graph);
  if (!g)
    return reportError(tool, makeError() << "'" << o.input << "' has no graph "
                                         << (o.graph.empty() ? "" : "@" + o.graph));
  Expected<std::map<std::string, Tensor>> weights = loadWeights(**m);
  if (!weights)
    return reportError(tool, weights.error().withContext("'" + o.input + "'"));
  Expected<std::vector<Tensor>> inputs = readInputs(o, *g);
  if (!inputs)
    return reportError(tool, inputs.error());
  Expected<RunResult> r = runGraph(**m, *g, *inputs, *weights);
  if (!r)
    return reportError(tool, r.error().withContext("'" + o.input + "'"));
  if (!o.outputDir.empty())
    if (Error e = writeOutputs(o, *g, *r))
      return reportError(tool, e);
  if (!o.expects.empty()) {
    Expected<size_t> failures = checkOutputs(o, *g, *r);
    if (!failures)
      return reportError(tool, failures.error());
    if (*failures)
      return reportError(tool, makeError() << *failures << " of " << o.expects.size()
                                           << " outputs do not match within rtol " << o.rtol
                                           << ", atol " << o.atol);
  }
  return 0;
}

} // namespace gc
