//===- ToolSupport.cpp - What every gc tool shares ------------------------===//
#include "gc/Tools/ToolSupport.h"

#include "gc/Support/FileSystem.h"
#include "gc/Support/Target.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

namespace gc {

void OutputOptions::addTo(CLI::App &app, bool offerLLVM) {
  app.add_option("-o", path, "Output file ('-' for stdout)")->default_val("-");
  app.add_option("--depfile", depfile,
                 "(also -MF FILE, as compilers spell it) Write a Makefile-syntax depfile of the "
                 "files the output was made from");
  std::vector<std::string> forms = {"binary", "text"};
  if (offerLLVM) {
    forms.push_back("llvm");
    forms.push_back("ptx");
  }
  app.add_option_function<std::string>(
         "--emit",
         [this](const std::string &form) {
           format = form == "text" ? FileFormat::Text : FileFormat::Binary;
           llvm = form == "llvm";
           ptx = form == "ptx";
         },
         offerLLVM ? "Output form: binary (FlatBuffers graph file), text, llvm (the kernels' "
                     "optimized LLVM IR) or ptx (the GPU kernels' PTX, with --device cuda)"
                   : "Output form: binary (FlatBuffers graph file) or text")
      ->check(CLI::IsMember(forms, CLI::ignore_case));
}

namespace {
/// Make's escaping for a path in a rule.
std::string escapeForMake(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == '$')
      out += '$';
    else if (c == ' ' || c == '#')
      out += '\\';
    out += c;
  }
  return out;
}
} // namespace

Error OutputOptions::writeDepfile(const std::vector<std::string> &inputs) const {
  if (depfile.empty())
    return Error::success();
  if (path == "-")
    return makeError() << "-MF needs an output file (-o)";
  std::string rule = escapeForMake(path) + ":";
  std::set<std::string> seen;
  for (const std::string &in : inputs)
    if (in != "-" && seen.insert(in).second)
      rule += " \\\n  " + escapeForMake(in);
  return writeFileAtomic(depfile, rule + "\n");
}

void TimeTraceFlag::addTo(CLI::App &app) {
  app.add_option("--time-trace", path,
                 "Write where the time went (each stage, pass and kernel batch, with the "
                 "thread that ran it) to FILE as Chrome trace JSON (chrome://tracing, Perfetto)")
      ->type_name("FILE")
      ->check([](const std::string &file) {
        // Refused before anything runs, so that no output is written
        // without its trace.
        if (file.empty())
          return std::string("needs a file name");
        if (!std::filesystem::is_directory(parentDirectory(file)))
          return "no directory '" + parentDirectory(file) + "' for '" + file + "'";
        return std::string();
      });
}

TimeTrace *TimeTraceFlag::trace() {
  if (path.empty())
    return nullptr;
  if (!trace_)
    trace_ = std::make_unique<TimeTrace>();
  return trace_.get();
}

Error TimeTraceFlag::write() const {
  return trace_ ? trace_->write(path) : Error::success();
}

void PassManagerFlags::addTo(CLI::App &app, const std::string &listHelp) {
  app.add_option("--print-after", printAfter, "Print the module after this pass ('all' for every)")
      ->delimiter(',');
  app.add_flag("--time-passes", options.timePasses, "Print the time each pass took to stderr");
  timeTrace.addTo(app);
  app.add_flag("--stats", options.statistics, "Print pass statistics to stderr");
  app.add_flag("!--no-verify-each", options.verifyEach,
               "Do not verify the module after each pass");
  app.add_flag("--list-passes", listPasses, listHelp);
}

Error PassManagerFlags::resolvePrintAfter(
    const std::function<bool(std::string_view)> &isKnown) {
  for (const std::string &name : printAfter)
    if (name != "all" && !isKnown(name))
      return makeError() << "--print-after names unknown pass '" << name
                         << "' (see --list-passes)";
  options.printAfter.insert(printAfter.begin(), printAfter.end());
  return Error::success();
}

void addRenamedFlag(CLI::App &app, const std::string &old, const std::string &now) {
  app.add_option_function<std::string>(
         old, [old, now](const std::string &) {
           throw CLI::ValidationError(old + " is now " + now);
         })
      ->expected(0, 1)
      ->group("");
}

void addWeightsFlag(CLI::App &app, std::optional<WeightsMode> &mode, const std::string &help) {
  app.add_option_function<std::string>(
         "--weights", [&mode](const std::string &name) { mode = *parseWeightsMode(name); }, help)
      ->check(CLI::IsMember({"embed", "external"}))
      ->default_str("embed");
}

namespace {
/// --device, --target and --gpu-arch: the opt phase records them on the
/// module, later phases check them against it (Driver/AssignTarget.h).
void addTargetFlags(CLI::App &app, TargetFlags &target, const std::string &where) {
  // Repeated or comma-separated, the levels make one list: the kernels
  // are built once per level and the runtime loads the best the CPU runs.
  app.add_option_function<std::vector<std::string>>(
         "--target",
         [&target](const std::vector<std::string> &items) {
           Expected<std::vector<std::string>> list = cpuTargetList(joinTargets(items));
           if (!list)
             throw CLI::ValidationError("--target", list.error().message());
           target.cpuLevels = joinTargets(*list);
         },
         "CPU targets: x86-64, x86-64-v3, x86-64-v4 (comma-separated or repeated: kernels for "
         "each, the runtime loads the best the CPU runs), or native alone" + where)
      ->check([](const std::string &item) -> std::string {
        Expected<std::vector<std::string>> list = cpuTargetList(item);
        return list ? std::string() : list.error().message();
      })
      ->allow_extra_args(false)
      ->default_str(std::string(kDefaultCpuTargets));
  app.add_option_function<std::string>(
         "--device",
         [&target](const std::string &name) {
           target.device = name == "cuda" ? TargetDevice::CUDA : TargetDevice::CPU;
         },
         "cpu or cuda (NVIDIA GPUs); default: cuda if the model was exported on a GPU, else "
         "cpu" + where)
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option_function<std::string>(
         "--gpu-arch",
         [&target](const std::string &list) {
           Expected<std::string> cuda = cudaTarget(list);
           if (!cuda)
             throw CLI::ValidationError("--gpu-arch", cuda.error().message());
           target.gpuArchs = cuda->substr(kCudaTargetPrefix.size());
         },
         "GPU architectures to build cubins for, with PTX for newer ones (--device cuda)" +
             where)
      ->default_str(std::string(kDefaultGpuArchs));
  app.add_option_function<std::string>(
         "--precision",
         [&target](const std::string &name) {
           target.precision = name == "bf16" ? Precision::BFloat16 : Precision::Exact;
         },
         "exact, or bf16: float32 matrix products and convolutions on bfloat16 operands, "
         "their results widened back to float32 (opt-in; AMX and AVX-512 BF16 on the CPU, "
         "tensor cores on GPUs)" + where)
      ->check(CLI::IsMember({"exact", "bf16"}))
      ->default_str("exact");
  app.add_option_function<std::string>(
         "--conv-algorithm",
         [&target](const std::string &name) {
           target.convAlgorithm = name == "direct" ? ConvAlgorithm::Direct : ConvAlgorithm::Auto;
         },
         "auto: float32 3x3 convolutions on the CPU take oneDNN's Winograd algorithm where "
         "it is faster (docs/backend.md); direct: oneDNN's direct algorithm everywhere" +
             where)
      ->check(CLI::IsMember({"auto", "direct"}))
      ->default_str("auto");
}
} // namespace

void addPipelineFlags(CLI::App &app, PipelineOptions &options, std::span<const Phase> phases,
                      const std::string &helpPrefix) {
  auto runs = [&](Phase p) { return std::find(phases.begin(), phases.end(), p) != phases.end(); };
  auto help = [&](Phase p, const char *text) {
    return helpPrefix.empty() ? std::string(text)
                              : std::string(phaseInfo(p).tool) + ": " + text;
  };
  if (runs(Phase::Opt)) {
    app.add_flag("--freeze", options.core.freeze,
                 help(Phase::Opt, "inference; make parameters constants and fold them"));
    app.add_flag("--retarget-cpu", options.core.retargetCPU,
                 help(Phase::Opt, "compile a model exported on another device (cuda) for the CPU"));
    addWeightsFlag(app, options.target.weights,
                   help(Phase::Opt, "embed: the package holds every weight (the default); "
                                    "external: it names the .pt2 archive and maps its weights "
                                    "at load time, and what --freeze derives from them is "
                                    "computed then (a constant program). Recorded on the "
                                    "module for gc-package"));
  }
  // The opt phase chooses the target; a tool that runs only later phases
  // takes the flags to check them against the module.
  if (runs(Phase::Opt))
    addTargetFlags(app, options.target, "; recorded on the module for the later phases");
  else if (runs(Phase::Lower) || runs(Phase::Codegen))
    addTargetFlags(app, options.target,
                   "; must agree with the module's target, which gc-opt chose");
  if (runs(Phase::Joint))
    app.add_flag("--grad-inputs", options.joint.gradUserInputs,
                 help(Phase::Joint, "also return gradients for the floating user inputs"));
  if (runs(Phase::Partition))
    app.add_option_function<std::string>(
           "--partition",
           [&options](const std::string &name) {
             options.partition = *parsePartitionStrategy(name);
           },
           help(Phase::Partition, "what the forward saves: min-cut (the fewest bytes, "
                                  "recomputing the rest) or save-all (every forward value the "
                                  "backward reads)"))
        ->check(CLI::IsMember({"min-cut", "save-all"}));
  if (runs(Phase::Lower)) {
    app.add_flag("--no-fallback", options.lower.noFallback,
                 help(Phase::Lower, "an op without a lowering is an error instead of a "
                                    "reference-kernel call"));
    app.add_option_function<std::string>(
           "--layout",
           [&options](const std::string &name) { options.lower.layout = *parseLayoutMode(name); },
           help(Phase::Lower, "activations of convolution networks: plain (as torch gave "
                              "them), channels-last between 2-d convolutions, or auto "
                              "(channels-last where a graph on the CPU has 2-d convolutions; "
                              "the default)"))
        ->check(CLI::IsMember({"plain", "channels-last", "auto"}));
  }
  if (runs(Phase::Codegen)) {
    CodegenOptions &codegen = options.codegen;
    app.add_option("-j,--jobs", codegen.emit.jobs,
                   help(Phase::Codegen, "threads that compile kernels (default: one per "
                                        "hardware thread); the output is the same for any"))
        ->check(CLI::Range(1u, 4096u));
    app.add_flag("!--no-fuse", codegen.schedule.fuse,
                 help(Phase::Codegen, "one kernel per loop node"));
    app.add_flag("!--no-extern-post-ops", codegen.schedule.externPostOps,
                 help(Phase::Codegen, "do not fold bias, activations and adds into matmul and "
                                      "convolution calls"));
    app.add_flag("!--no-share-kernels", codegen.schedule.shareKernels,
                 help(Phase::Codegen, "compile a kernel for every group, even where groups "
                                      "run the same code on other buffers"));
  }
}

void PluginFlag::addTo(CLI::App &app) {
  app.add_option("--plugin", paths,
                 "A plugin library that gives custom ops the model calls (docs/plugins.md); "
                 "repeatable");
}

void StageTool::addTo(CLI::App &app, bool offerLLVM) {
  app.add_option("input", input, "Graph file, binary or text ('-' for stdin)");
  output.addTo(app, offerLLVM);
  passManager.addTo(app, "List the passes this tool runs and exit");
  plugins.addTo(app);
}

int StageTool::run(const std::string &tool, std::vector<std::unique_ptr<Pass>> passes,
                   const Hooks &hooks) {
  if (passManager.listPasses) {
    for (const auto &p : passes)
      for (const PassInfo &info : registeredPasses())
        if (info.name == p->name())
          std::cout << info.name << " - " << info.summary << "\n";
    return 0;
  }
  if (input.empty())
    return reportError(tool, makeError() << "no input file");
  if (Error e = plugins.load())
    return reportError(tool, e);
  TimeTrace *trace = passManager.timeTrace.trace();
  passManager.options.trace = trace;
  std::optional<TraceScope> whole(std::in_place, trace, tool, "tool");
  if (Error e = passManager.resolvePrintAfter([&](std::string_view name) {
        return std::any_of(passes.begin(), passes.end(),
                           [&](const auto &p) { return p->name() == name; });
      }))
    return reportError(tool, e);
  Expected<std::unique_ptr<Module>> m = [&] {
    TraceScope scope(trace, "read", "stage");
    return readModuleFile(input);
  }();
  if (!m)
    return reportError(tool, m.error());
  std::vector<std::string> deps = moduleDependencies(input, **m);
  if (hooks.before)
    if (Error e = hooks.before(**m))
      return reportError(tool, e.withContext("'" + input + "'"));
  PassManager manager(passManager.options, std::cerr);
  for (auto &p : passes)
    manager.add(std::move(p));
  Error failed = manager.run(**m);
  for (const std::string &w : manager.warnings())
    std::cerr << tool << ": warning: " << w << "\n";
  if (failed)
    return reportError(tool, failed.withContext("'" + input + "'"));
  Error written = [&] {
    TraceScope scope(trace, "write", "stage");
    return hooks.write ? hooks.write(**m) : writeModuleFile(**m, output.path, output.format);
  }();
  if (written)
    return reportError(tool, written);
  if (Error e = output.writeDepfile(deps))
    return reportError(tool, e);
  whole.reset();
  if (Error e = passManager.timeTrace.write())
    return reportError(tool, e);
  return 0;
}

int StageTool::run(const std::string &tool, std::span<const Phase> phases,
                   const PipelineOptions &options, const Hooks &hooks) {
  PipelineOptions traced = options;
  traced.codegen.emit.trace = passManager.timeTrace.trace();
  std::vector<std::unique_ptr<Pass>> passes;
  for (Phase phase : phases) {
    Expected<std::vector<std::unique_ptr<Pass>>> more = phasePasses(phase, traced);
    if (!more)
      return reportError(tool, more.error());
    for (auto &p : *more)
      passes.push_back(std::move(p));
  }
  return run(tool, std::move(passes), hooks);
}

std::vector<std::string> moduleDependencies(const std::string &file, const Module &m) {
  std::vector<std::string> deps = {file};
  for (const WeightSource &src : m.weightSources())
    if (!src.path.empty())
      deps.push_back(resolvePath(src.path, m.sourceBaseDir()));
  return deps;
}

int reportError(const std::string &tool, const Error &e) {
  std::cerr << tool << ": error: " << e.message() << "\n";
  return 1;
}

bool parseCommandLine(CLI::App &app, int argc, char **argv, int &exitCode) {
  // CLI11 has no single-dash long options; compilers' -MF is spelled
  // --depfile inside.
  std::vector<std::string> args;
  for (int i = argc - 1; i > 0; --i)
    args.push_back(std::string(argv[i]) == "-MF" ? "--depfile" : argv[i]);
  try {
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    exitCode = app.exit(e);
    return false;
  }
  return true;
}

} // namespace gc
