//===- RunMain.cpp - The gc-run driver ------------------------------------===//
#include "gc/Tools/RunMain.h"

#include "gc/Tools/ModelRunner.h"
#include "gc/Tensor/Compare.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Tensor/Npy.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"
#include "gc/Runtime/Roofline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace gc {

namespace {

struct RunOptions {
  std::string input;
  std::vector<std::string> inputs;
  std::string inputsDir;
  std::string outputDir;
  std::vector<std::string> expects;
  std::vector<std::string> expectBuffers;
  std::vector<std::string> expectGrads;
  /// Unset: the default of each expected tensor's dtype (toleranceFor).
  std::optional<double> rtol;
  std::optional<double> atol;
  bool writeBuffers = false;
  std::string graph;
  unsigned runs = 0;
  bool expectRuns = false;
  unsigned bench = 0;
  unsigned threads = 0;
  bool profile = false;
  std::string peaks;
  uint64_t seed = RandomState::kDefaultSeed;
};

size_t countUserInputs(const ModelRunner &g) {
  size_t n = 0;
  for (const InputSpec &s : g.inputSpecs())
    n += s.kind == InputKind::UserInput;
  return n;
}

/// The directory of run `k`'s files: --inputs-dir itself, or with --runs
/// its run<k>/.
std::string runDir(const RunOptions &o, unsigned k) {
  return o.runs ? o.inputsDir + "/run" + std::to_string(k) : o.inputsDir;
}

/// The user inputs of run `k`: the --input files (the same every run), or
/// in<i>.npy of the run's directory.
Expected<std::vector<Tensor>> readInputs(const RunOptions &o, const ModelRunner &g, unsigned k) {
  std::vector<std::string> paths = o.inputs;
  if (!o.inputsDir.empty()) {
    if (!paths.empty())
      return makeError() << "give inputs either with --input or with --inputs-dir, not both";
    for (size_t i = 0; i < countUserInputs(g); ++i)
      paths.push_back(runDir(o, k) + "/in" + std::to_string(i) + ".npy");
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

/// Writes out<i>.npy per user output, saved<i>.npy per value a forward
/// graph saves for its backward graph (in output order, so that they can be
/// passed back as the backward graph's first inputs), grad.<target>.npy per
/// gradient, input_after.<name>.npy per user input the run changed (the
/// caller's tensor: an in-place graph's kernels wrote it, a functional
/// graph's runner copied its user_input_mutation output back; `given` holds
/// the inputs as read) and, with --write-buffers, buffer_after.<name>.npy
/// per mutated buffer.
Error writeOutputs(const RunOptions &o, const ModelRunner &g, const RunResult &r,
                   const std::vector<Tensor> &given, const std::vector<Tensor> &inputs) {
  size_t k = 0;
  for (const InputSpec &in : g.inputSpecs()) {
    if (in.kind != InputKind::UserInput)
      continue;
    if (k < inputs.size() && !compareTensors(inputs[k], given[k], 0, 0).pass)
      GC_RETURN_IF_ERROR(writeFileAtomic(o.outputDir + "/input_after." + in.target + ".npy",
                                         encodeNpy(inputs[k])));
    ++k;
  }
  size_t user = 0;
  size_t saved = 0;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const OutputSpec &spec = g.outputSpecs()[i];
    std::string file;
    if (spec.kind == OutputKind::UserOutput)
      file = "out" + std::to_string(user++);
    else if (spec.kind == OutputKind::SavedForBackward)
      file = "saved" + std::to_string(saved++);
    else if (spec.kind == OutputKind::GradientToParameter ||
             spec.kind == OutputKind::GradientToUserInput)
      file = "grad." + spec.target;
    if (!file.empty())
      GC_RETURN_IF_ERROR(
          writeFileAtomic(o.outputDir + "/" + file + ".npy", encodeNpy(r.outputs[i])));
  }
  if (o.writeBuffers)
    for (const auto &[name, t] : r.mutatedBuffers)
      GC_RETURN_IF_ERROR(
          writeFileAtomic(o.outputDir + "/buffer_after." + name + ".npy", encodeNpy(t)));
  return Error::success();
}

/// "rtol R, atol A" as given (a float32 result's default for the one not
/// given), or the per-dtype defaults.
std::string tolerancesText(const RunOptions &o) {
  if (!o.rtol && !o.atol)
    return "the default tolerances of their dtypes";
  Tolerance f32 = toleranceFor(DType::Float32, o.rtol, o.atol);
  std::ostringstream text;
  text << "rtol " << f32.rtol << ", atol " << f32.atol;
  return text.str();
}

/// Prints "<label>: max abs error ..., max rel error ...: pass|FAIL" and
/// returns whether it matched.
Expected<bool> checkOne(const std::string &label, const Tensor &got, const std::string &file,
                        const RunOptions &o) {
  Expected<Tensor> want = readNpy(file);
  if (!want)
    return want.error();
  Tolerance tol = toleranceFor(want->dtype(), o.rtol, o.atol);
  Comparison c = compareTensors(got, *want, tol.rtol, tol.atol);
  std::cout << comparisonLine(c, label) << "\n";
  return c.pass;
}

/// Checks --expect-buffer NAME=FILE pairs; returns how many did not match.
Expected<size_t> checkBuffers(const RunOptions &o, const RunResult &r) {
  size_t failures = 0;
  for (const std::string &pair : o.expectBuffers) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos)
      return makeError() << "--expect-buffer takes NAME=FILE, got '" << pair << "'";
    std::string name = pair.substr(0, eq);
    auto it = r.mutatedBuffers.find(name);
    if (it == r.mutatedBuffers.end())
      return makeError() << "buffer '" << name << "' is not mutated by the graph";
    Expected<bool> ok = checkOne("buffer " + name, it->second, pair.substr(eq + 1), o);
    if (!ok)
      return ok.error();
    failures += !*ok;
  }
  return failures;
}

/// Checks --expect-grad TARGET=FILE pairs against the gradient outputs of a
/// joint graph; returns how many did not match.
Expected<size_t> checkGrads(const RunOptions &o, const ModelRunner &g, const RunResult &r) {
  size_t failures = 0;
  for (const std::string &pair : o.expectGrads) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos)
      return makeError() << "--expect-grad takes TARGET=FILE, got '" << pair << "'";
    std::string target = pair.substr(0, eq);
    const auto &specs = g.outputSpecs();
    auto it = std::find_if(specs.begin(), specs.end(), [&](const OutputSpec &s) {
      return (s.kind == OutputKind::GradientToParameter ||
              s.kind == OutputKind::GradientToUserInput) &&
             s.target == target;
    });
    if (it == specs.end())
      return makeError() << "the graph returns no gradient for '" << target << "'";
    Expected<bool> ok =
        checkOne("grad " + target, r.outputs[it - specs.begin()], pair.substr(eq + 1), o);
    if (!ok)
      return ok.error();
    failures += !*ok;
  }
  return failures;
}

/// Prints one line per expected output, `files` one per user output, each
/// labelled `prefix` + "out<k>"; returns how many did not match.
Expected<size_t> checkOutputs(const RunOptions &o, const ModelRunner &g, const RunResult &r,
                              const std::vector<std::string> &files, const std::string &prefix) {
  std::vector<size_t> userOutputs;
  for (size_t i = 0; i < g.outputSpecs().size(); ++i)
    if (g.outputSpecs()[i].kind == OutputKind::UserOutput)
      userOutputs.push_back(i);
  if (files.size() != userOutputs.size())
    return makeError() << "the graph has " << userOutputs.size() << " user outputs, but "
                       << files.size() << " --expect files were given";
  size_t failures = 0;
  for (size_t k = 0; k < files.size(); ++k) {
    Expected<bool> ok = checkOne(prefix + "out" + std::to_string(k), r.outputs[userOutputs[k]],
                                 files[k], o);
    if (!ok)
      return ok.error();
    failures += !*ok;
  }
  return failures;
}

/// Runs `n` more times after one warm-up run and prints
/// "bench: N runs, min A ms, median B ms, p90 C ms".
Error bench(ModelRunner &runner, const std::vector<Tensor> &inputs, unsigned n) {
  std::vector<double> ms;
  for (unsigned i = 0; i <= n; ++i) {
    auto start = std::chrono::steady_clock::now();
    Expected<RunResult> r = runner.run(inputs);
    if (!r)
      return r.error();
    if (i > 0)
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
  }
  std::sort(ms.begin(), ms.end());
  char line[160];
  std::snprintf(line, sizeof line, "bench: %u runs, min %.4g ms, median %.4g ms, p90 %.4g ms", n,
                ms.front(), ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]);
  std::cout << line << "\n";
  return Error::success();
}

/// The CPU level whose kernels ran, of those there are, then one line per
/// plan step: its share of the time of all runs so far; then the roofline
/// against the peaks of --peaks, GC_PEAKS or measured for the run's threads.
void printProfile(const KernelTargets &targets, const std::vector<StepProfile> &steps,
                  const RunOptions &o, const std::optional<MachinePeaks> &given) {
  if (!targets.loaded.empty()) {
    std::string available = targets.available;
    for (size_t comma = 0; (comma = available.find(',', comma)) != std::string::npos; comma += 2)
      available.replace(comma, 1, ", ");
    std::cout << "kernels: " << targets.loaded << " (of " << available << ")\n";
  }
  double total = 0;
  for (const StepProfile &p : steps)
    total += p.seconds;
  std::cout << "profile: step, kind, name, mean us, min us, share of the time\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepProfile &p = steps[i];
    char line[256];
    std::snprintf(line, sizeof line, "  %3zu %-8s %-32s %10.2f %10.2f %5.1f%%", i,
                  stepKindName(p.kind), p.name.c_str(),
                  p.runs ? p.seconds / p.runs * 1e6 : 0.0, p.minSeconds * 1e6,
                  total > 0 ? 100 * p.seconds / total : 0.0);
    std::cout << line << "\n";
  }
  double setUp = 0;
  for (const StepProfile &p : steps)
    if (p.firstSeconds > 0 && p.runs)
      setUp += p.firstSeconds - p.seconds / p.runs;
  if (setUp > 0) {
    char line[128];
    std::snprintf(line, sizeof line,
                  "first run: %.2f ms more than a later one (one-time set-up), left out above",
                  setUp * 1e3);
    std::cout << line << "\n";
  }
  // Layout reorders hide inside oneDNN's steps; their sum is what a choice
  // of activation layouts (gc-lower --layout) saves.
  int64_t reorders = 0, runs = 0;
  double reorderSeconds = 0;
  for (const StepProfile &p : steps) {
    reorders += p.reorders;
    reorderSeconds += p.reorderSeconds;
    runs = std::max(runs, p.runs);
  }
  char line[256];
  std::snprintf(line, sizeof line, "reorders: %.1f per run, mean us %.2f, %.1f%% of the time",
                runs ? static_cast<double>(reorders) / runs : 0.0,
                runs ? reorderSeconds / runs * 1e6 : 0.0,
                total > 0 ? 100 * reorderSeconds / total : 0.0);
  std::cout << line << "\n";
  std::cout << rooflineReport(steps, given ? *given : measureCpuPeaks(o.threads, targets.loaded));
}

} // namespace

int runMain(int argc, char **argv) {
  const std::string tool = "gc-run";
  CLI::App app("Run a gc graph file (any level: interpreters for graphs and loop IR, compiled kernels "
               "for kernel plans) or a package, and check its results",
               tool);
  RunOptions o;
  app.add_option("file", o.input, "Graph file, binary or text ('-' for stdin), or package")
      ->required();
  app.add_option("--input", o.inputs, "An input .npy file, once per user input, in order");
  app.add_option("--inputs-dir", o.inputsDir, "A directory holding in0.npy, in1.npy, ...");
  app.add_option("--output-dir", o.outputDir,
                 "Write out0.npy, out1.npy, ... there (and saved<i>.npy, grad.<target>.npy, "
                 "input_after.<name>.npy); made when missing");
  app.add_option("--expect", o.expects, "An expected output .npy, once per user output");
  app.add_option("--expect-buffer", o.expectBuffers,
                 "NAME=FILE: the expected value of a buffer the graph mutates");
  app.add_option("--expect-grad", o.expectGrads,
                 "TARGET=FILE: the expected gradient of a parameter or user input (joint graphs)");
  app.add_option("--rtol", o.rtol,
                 "Relative tolerance for --expect (default 1e-4; 1e-3 for float16 and 1.6e-2 for "
                 "bfloat16 results, as torch.testing.assert_close)");
  app.add_option("--atol", o.atol,
                 "Absolute tolerance for --expect (default 1e-4; 1e-5 for float16 and bfloat16 "
                 "results)");
  app.add_flag("--write-buffers", o.writeBuffers,
               "Also write the buffers the graph mutates, as buffer_after.<name>.npy");
  app.add_option("--graph", o.graph, "Which graph of the module to run (default: the first)");
  app.add_option("--runs", o.runs,
                 "Run N times in a row, each run reading the buffers the one before mutated "
                 "and drawing fresh random numbers; with --inputs-dir DIR, run k reads "
                 "DIR/run<k>/in<i>.npy. --expect, "
                 "--expect-buffer and --output-dir see the last run")
      ->check(CLI::Range(1u, 1000000u));
  app.add_flag("--expect-runs", o.expectRuns,
               "With --runs and --inputs-dir DIR: check run k's user outputs against "
               "DIR/run<k>/out0.npy, out1.npy, ...");
  app.add_option("--bench", o.bench,
                 "Also time N runs after a warm-up run and print min, median and p90");
  app.add_flag("--profile", o.profile,
               "Kernel plans and packages: print the time each plan step took, and its "
               "roofline against the machine's peaks (measured)");
  app.add_option("--peaks", o.peaks,
                 "GFLOPS,GBPS: the peaks --profile sets steps against, instead of measuring "
                 "them (or GC_PEAKS)");
  app.add_option("--threads", o.threads,
                 "Kernel plans: worker threads (default: one per hardware thread)");
  app.add_option("--seed", o.seed,
                 "The seed of the generator random ops draw from (default 0; docs/random.md)")
      ->check(CLI::Validator(
          [](std::string &s) {
            // CLI11 would wrap a negative number around into the unsigned range.
            return s.starts_with("-") ? "takes an integer in [0, 2^64), got '" + s + "'"
                                      : std::string();
          },
          "SEED"));
  PluginFlag plugins;
  plugins.addTo(app);
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  if (Error e = plugins.load())
    return reportError(tool, e);
  if (o.writeBuffers && o.outputDir.empty())
    return reportError(tool, makeError() << "--write-buffers needs --output-dir");
  if (o.expectRuns && (!o.runs || o.inputsDir.empty()))
    return reportError(tool, makeError() << "--expect-runs needs --runs and --inputs-dir");

  Expected<std::optional<MachinePeaks>> peaks = givenPeaks(o.peaks);
  if (!peaks)
    return reportError(tool, peaks.error());

  RunnerOptions ro;
  ro.threads = o.threads;
  ro.profile = o.profile;
  ro.seed = o.seed;
  Expected<std::unique_ptr<ModelRunner>> runner = openModelRunner(o.input, o.graph, ro);
  if (!runner)
    return reportError(tool, runner.error());
  const ModelRunner &g = **runner;
  size_t failures = 0, checks = 0;
  std::optional<RunResult> r;
  std::vector<Tensor> inputs, given;
  for (unsigned k = 0; k < std::max(o.runs, 1u); ++k) {
    Expected<std::vector<Tensor>> in = readInputs(o, g, k);
    if (!in)
      return reportError(tool, in.error());
    inputs = in.take();
    given.clear();
    for (const Tensor &t : inputs)
      given.push_back(t.clone());
    Expected<RunResult> result = (*runner)->run(inputs);
    if (!result)
      return reportError(tool, result.error().withContext(
                                   "'" + o.input + "'" +
                                   (o.runs ? ", run " + std::to_string(k) : std::string())));
    r = result.take();
    if (!o.expectRuns)
      continue;
    std::vector<std::string> files;
    for (const OutputSpec &spec : g.outputSpecs())
      if (spec.kind == OutputKind::UserOutput)
        files.push_back(runDir(o, k) + "/out" + std::to_string(files.size()) + ".npy");
    Expected<size_t> f = checkOutputs(o, g, *r, files, "run" + std::to_string(k) + " ");
    if (!f)
      return reportError(tool, f.error());
    failures += *f;
    checks += files.size();
  }
  if (o.bench)
    if (Error e = bench(**runner, inputs, o.bench))
      return reportError(tool, e.withContext("'" + o.input + "'"));
  if (o.profile)
    printProfile((*runner)->kernelTargets(), (*runner)->profile(), o, *peaks);
  if (!o.outputDir.empty()) {
    // The folder is made when it is missing (its parent must exist).
    std::error_code made;
    if (!std::filesystem::is_directory(o.outputDir) &&
        !std::filesystem::create_directory(o.outputDir, made))
      return reportError(tool, makeError() << "'" << o.outputDir << "': cannot make the output folder: "
                                           << (made ? made.message() : "it is not a folder"));
    if (Error e = writeOutputs(o, g, *r, given, inputs))
      return reportError(tool, e);
  }
  if (!o.expects.empty()) {
    Expected<size_t> f = checkOutputs(o, g, *r, o.expects, "");
    if (!f)
      return reportError(tool, f.error());
    failures += *f;
  }
  Expected<size_t> f = checkBuffers(o, *r);
  if (!f)
    return reportError(tool, f.error());
  failures += *f;
  Expected<size_t> fg = checkGrads(o, g, *r);
  if (!fg)
    return reportError(tool, fg.error());
  failures += *fg;
  if (failures)
    return reportError(
        tool, makeError() << failures << " of "
                          << checks + o.expects.size() + o.expectBuffers.size() +
                                 o.expectGrads.size()
                          << " checks do not match within " << tolerancesText(o));
  return 0;
}

} // namespace gc
