//===- Compile.cpp - The whole chain in one process -----------------------===//
#include "gc/Driver/Compile.h"

#include "gc/ModuleIO/ModuleIO.h"
#include "gc/IR/Fields.h"
#include "gc/IR/Verifier.h"
#include "gc/Import/Importer.h"
#include "gc/Ops/PluginOps.h"
#include "gc/Pass/Pass.h"
#include "gc/Runtime/RuntimePlan.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/TimeTrace.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>

namespace gc {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Reports each run of the pass it wraps, so that one timing report covers
/// the passes of every stage.
class TimedPass final : public Pass {
public:
  TimedPass(std::unique_ptr<Pass> inner, std::function<void(std::string_view, double)> report)
      : inner_(std::move(inner)), report_(std::move(report)) {}
  std::string_view name() const override { return inner_->name(); }
  Error run(Module &m) override {
    auto start = std::chrono::steady_clock::now();
    Error e = inner_->run(m);
    report_(inner_->name(), secondsSince(start));
    return e;
  }

private:
  std::unique_ptr<Pass> inner_;
  std::function<void(std::string_view, double)> report_;
};

/// Reports the time from its creation to its end as one step.
class StepClock {
public:
  StepClock(std::span<CompileObserver *const> observers, Phase phase,
            std::string_view name)
      : observers_(observers), phase_(phase), name_(name) {}
  ~StepClock() {
    for (CompileObserver *o : observers_)
      o->stepTimed(phase_, name_, secondsSince(start_));
  }

private:
  std::span<CompileObserver *const> observers_;
  Phase phase_;
  std::string_view name_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// One run of compileModel.
class Compilation {
public:
  Compilation(const std::string &input, const CompileOptions &options,
              std::span<CompileObserver *const> observers)
      : input_(input), options_(options), observers_(observers) {}

  Expected<CompileResult> run();

private:
  /// Runs `step`, reporting its time as `name` of `phase`.
  template <typename Step> auto timed(Phase phase, std::string_view name, Step &&step) {
    StepClock clock(observers_, phase, name);
    return step();
  }
  Expected<std::unique_ptr<Module>> runPhase(Phase phase, std::unique_ptr<Module> m);
  Error package(const Module &m);
  Error runPasses(Phase phase, Module &m, std::vector<std::unique_ptr<Pass>> passes);
  Expected<std::unique_ptr<Module>> handOff(Phase phase, std::unique_ptr<Module> m);
  Expected<std::unique_ptr<Module>> handOffInMemory(std::unique_ptr<Module> m,
                                                    const std::string &path);

  const std::string &input_;
  const CompileOptions &options_;
  std::span<CompileObserver *const> observers_;
  std::shared_ptr<MappedFile> archive_;
  std::vector<std::string> warnings_;
};

Expected<CompileResult> Compilation::run() {
  // Weights stay in the archive, referenced in place, as gc-import's default.
  if (input_ == "-")
    return makeError() << "the archive's weights are referenced in place, so it must be a file, "
                          "not stdin";
  GC_RETURN_IF_ERROR(loadCompilerPlugins(options_.plugins));
  Expected<std::shared_ptr<MappedFile>> archive = MappedFile::open(input_);
  if (!archive)
    return archive.error();
  archive_ = *archive;

  CompileResult result;
  ObjectCache store = options_.useCache ? ObjectCache::fromEnvironment() : ObjectCache::disabled();
  if (!store.warning().empty())
    warnings_.push_back(store.warning());
  CompileCache cache(store);
  std::optional<std::string> key;
  if (cache.enabled())
    key = timed(Phase::Package, "cache key",
                [&] { return compileCacheKey(*archive_, options_); });
  if (key) {
    Expected<bool> hit = timed(Phase::Package, "cache lookup",
                               [&] { return cache.lookup(*key, options_.packagePath); });
    if (!hit)
      return hit.error();
    if (*hit) {
      result.cacheHit = true;
      result.warnings = std::move(warnings_);
      return result;
    }
  }

  std::unique_ptr<Module> m;
  for (Phase phase : pipelinePhases(options_.last, options_.train)) {
    for (CompileObserver *o : observers_)
      o->phaseStarted(phase);
    if (phase == Phase::Package) {
      if (Error e = timed(phase, "package", [&] { return package(*m); }))
        return e;
      // The cache copies the package file in pieces, as it lies on disk.
      if (key)
        if (Error e = timed(phase, "cache store",
                            [&] { return cache.store(*key, options_.packagePath); }))
          warnings_.push_back("the compile cache: " + e.message());
    } else {
      Expected<std::unique_ptr<Module>> next = runPhase(phase, std::move(m));
      if (!next)
        return next.error();
      m = next.take();
      if (phase != options_.last) {
        Expected<std::unique_ptr<Module>> handed = handOff(phase, std::move(m));
        if (!handed)
          return handed.error();
        m = handed.take();
      } else if (options_.writeStages) {
        // The caller writes the result; the stage file is a copy of it.
        if (Error e = writeModuleFile(*m, options_.stagePath(*phaseInfo(phase).level),
                                      FileFormat::Binary))
          return e;
      }
    }
    for (CompileObserver *o : observers_)
      o->phaseFinished(phase);
  }
  result.module = std::move(m);
  result.warnings = std::move(warnings_);
  return result;
}

/// Writes the package to options_.packagePath, straight from the weights'
/// sources.
Error Compilation::package(const Module &m) {
  Expected<std::unique_ptr<OutputFile>> out = OutputFile::create(options_.packagePath);
  if (!out)
    return out.error();
  if (Error e = writePackage(m, options_.package, **out))
    return e.withContext("package");
  return (*out)->commit();
}

Expected<std::unique_ptr<Module>> Compilation::runPhase(Phase phase, std::unique_ptr<Module> m) {
  std::string_view name = phaseInfo(phase).name;
  if (phase == Phase::Import) {
    ImportOptions import;
    import.modelName = options_.modelName;
    // The digests serve a module written to a file; the packager here reads
    // the weights from the archive this process mapped.
    import.hashWeights = options_.writeStages || options_.last != Phase::Package;
    Expected<ImportResult> imported =
        timed(phase, "import", [&] { return importArchive(archive_, import); });
    if (!imported)
      return imported.error().withContext(std::string(name));
    return std::move(imported->module);
  }
  PipelineOptions pipeline = options_.pipeline;
  // Training graphs are differentiated: only inference keeps the calls the
  // CPU runs whole, as gc-opt without --joint does.
  pipeline.core.keepWholeCalls = !options_.train;
  pipeline.codegen.useCache = pipeline.codegen.useCache && options_.useCache;
  Expected<std::vector<std::unique_ptr<Pass>>> passes = phasePasses(phase, pipeline);
  if (!passes)
    return passes.error();
  if (Error e = runPasses(phase, *m, passes.take()))
    return e.withContext(std::string(name) + " of '" + input_ + "'");
  return m;
}

Error Compilation::runPasses(Phase phase, Module &m, std::vector<std::unique_ptr<Pass>> passes) {
  // Nothing is printed: no --print-after, --stats or per-phase timing.
  std::ostringstream unused;
  PassManager manager(PassManagerOptions{}, unused);
  for (auto &p : passes)
    manager.add(std::make_unique<TimedPass>(std::move(p), [this, phase](std::string_view name,
                                                                        double seconds) {
      for (CompileObserver *o : observers_)
        o->stepTimed(phase, name, seconds);
    }));
  Error e = manager.run(m);
  warnings_.insert(warnings_.end(), manager.warnings().begin(), manager.warnings().end());
  return e;
}

Expected<std::unique_ptr<Module>> Compilation::handOff(Phase phase,
                                                       std::unique_ptr<Module> m) {
  std::string path = options_.stagePath(*phaseInfo(phase).level);
  return timed(phase, "hand-off", [&]() -> Expected<std::unique_ptr<Module>> {
    if (!options_.writeStages)
      return handOffInMemory(std::move(m), path);
    if (Error e = writeModuleFile(*m, path, FileFormat::Binary))
      return e;
    return readModuleFile(path);
  });
}

/// The module the next stage would read from a graph file written at `path`:
/// weight paths rebased to the file's directory as writeModuleFile rebases
/// them, and constants still in memory named as the blob it would write
/// beside the file. Their bytes stay in memory (loadWeights and the
/// packager read them from there), so nothing touches the disk. Nothing else
/// reads `m`, so it is changed in place rather than copied.
Expected<std::unique_ptr<Module>>
Compilation::handOffInMemory(std::unique_ptr<Module> m, const std::string &path) {
  std::string dir = parentDirectory(path);
  for (WeightSource &s : m->weightSources())
    if (!s.path.empty())
      s.path = relativePath(resolvePath(s.path, m->sourceBaseDir()), dir);
  if (const auto &pending = m->pendingBlob())
    if (std::string &blob = m->weightSources()[pending->source].path; blob.empty())
      blob = relativePath(path + ".weights", dir);
  m->setSourceBaseDir(dir);
  if (Error e = verifyModule(*m))
    return e.withContext("'" + path + "'");
  return m;
}

std::string hex(const std::array<uint8_t, 32> &digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

} // namespace

std::string CompileOptions::stagePath(Level level) const {
  return stageDir + "/" + stem + "." + std::string(levelName(level)) + ".gc";
}

Expected<CompileResult> compileModel(const std::string &input, const CompileOptions &options,
                                     std::span<CompileObserver *const> observers) {
  return Compilation(input, options, observers).run();
}

std::optional<std::string> compileCacheKey(const MappedFile &archive,
                                           const CompileOptions &options) {
  const PipelineOptions &p = options.pipeline;
  if (options.last != Phase::Package || options.writeStages || options.packagePath == "-" ||
      p.target.cpuLevels == "native")
    return std::nullopt;
  SHA256 h;
  // Length-prefixed fields: no two different option sets hash the same text.
  auto field = [&h](std::string_view name, std::string_view value) {
    h.update(name);
    h.update("=" + std::to_string(value.size()) + ":");
    h.update(value);
    h.update("\n");
  };
  auto flag = [&field](std::string_view name, bool on) { field(name, on ? "1" : "0"); };
  field("entry", "gc-compile package 1");
  field("gc", GC_VERSION);
  // A build that writes another package or plan format must not be handed
  // packages of the old one.
  field("package-format", std::to_string(kPackageMajor) + "." + std::to_string(kPackageMinor));
  field("plan-format", std::to_string(kPlanMajor) + "." + std::to_string(kPlanMinor));
  field("model", options.modelName);
  field("passes", p.passes ? "list:" + *p.passes : "core");
  flag("freeze", p.core.freeze);
  flag("retarget-cpu", p.core.retargetCPU);
  flag("train", options.train);
  flag("grad-inputs", p.joint.gradUserInputs);
  field("partition", partitionStrategyName(p.partition));
  flag("no-fallback", p.lower.noFallback);
  field("max-inline-ops", std::to_string(p.lower.maxInlineOps));
  field("layout", layoutModeName(p.lower.layout));
  // An unset flag takes its default, or (the device) what the archive's
  // inputs say, which the archive's bytes cover.
  auto given = [](const std::optional<std::string> &v) { return v ? "=" + *v : "default"; };
  field("target", given(p.target.cpuLevels));
  field("device", !p.target.device ? "model"
                  : *p.target.device == TargetDevice::CUDA ? "cuda" : "cpu");
  field("gpu-arch", given(p.target.gpuArchs));
  field("precision", EnumInfo<Precision>::name(p.target.precision.value_or(Precision::Exact)));
  field("conv-algorithm",
        EnumInfo<ConvAlgorithm>::name(p.target.convAlgorithm.value_or(ConvAlgorithm::Auto)));
  flag("fuse", p.codegen.schedule.fuse);
  flag("extern-post-ops", p.codegen.schedule.externPostOps);
  flag("share-kernels", p.codegen.schedule.shareKernels);
  field("linker", options.package.linker);
  WeightsMode weights = p.target.weights.value_or(WeightsMode::Embed);
  field("weights", weightsModeName(weights));
  // An external package names the archive relative to its own directory.
  if (weights == WeightsMode::External)
    field("archive-path", relativePath(archive.path(), options.package.outputDir));
  // Every byte of the archive counts; the tree hash spreads it over the
  // emitter's threads and keeps the archive's pages from staying resident.
  field("archive-sha256-tree", hex(sha256Tree(archive, p.codegen.emit.jobs)));
  // A plugin's shape functions decide the package; its file name is
  // recorded in it.
  for (const std::string &path : options.plugins) {
    Expected<std::shared_ptr<MappedFile>> plugin = MappedFile::open(path);
    if (!plugin)
      return std::nullopt;
    field("plugin", std::filesystem::path(path).filename().string() + ":" +
                        sha256Hex(**plugin, 0, (*plugin)->bytes().size()));
  }
  return hex(h.finish());
}

Expected<bool> CompileCache::lookup(const std::string &key, const std::string &outputPath) const {
  return store_.lookupInto(key, outputPath);
}

Error CompileCache::store(const std::string &key, const std::string &packagePath) const {
  Error e = store_.storeFile(key, packagePath);
  // Once per compile: a compile stores one package and many kernels.
  store_.evict();
  return e;
}

void StepTimer::stepTimed(Phase phase, std::string_view step, double seconds) {
  entries_.push_back({phase, std::string(step), seconds});
}

void StepTimer::print(std::ostream &out) const {
  std::vector<TimingRow> rows;
  for (const Entry &e : entries_) {
    char label[160];
    std::string_view stage = phaseInfo(e.phase).name;
    std::snprintf(label, sizeof label, "%-8.*s %s", static_cast<int>(stage.size()), stage.data(),
                  e.step.c_str());
    rows.push_back({label, e.seconds});
  }
  printTimingReport(out, "gc-compile execution timing report", "Stage    Step", rows);
}

void PhaseTracer::phaseStarted(Phase) { phaseStart_ = std::chrono::steady_clock::now(); }

void PhaseTracer::phaseFinished(Phase phase) {
  trace_.record(std::string(phaseInfo(phase).name), "stage", phaseStart_);
}

void PhaseTracer::stepTimed(Phase, std::string_view step, double seconds) {
  // Steps are reported as they end.
  auto took = std::chrono::duration_cast<TimeTrace::Clock::duration>(
      std::chrono::duration<double>(seconds));
  trace_.record(std::string(step), "pass", TimeTrace::Clock::now() - took);
}

ProgressReporter::ProgressReporter(std::ostream &out, std::string what,
                                   std::chrono::milliseconds threshold)
    : out_(out), what_(std::move(what)), threshold_(threshold), thread_([this] { watch(); }) {}

ProgressReporter::~ProgressReporter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProgressReporter::phaseStarted(Phase phase) {
  {
    std::lock_guard lock(mutex_);
    running_ = phase;
    started_ = std::chrono::steady_clock::now();
    announced_ = false;
  }
  wake_.notify_all();
}

void ProgressReporter::phaseFinished(Phase phase) {
  {
    std::lock_guard lock(mutex_);
    if (announced_) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", secondsSince(started_));
      out_ << what_ << ": " << phaseInfo(phase).name << " done in " << seconds << " s"
           << std::endl;
    }
    running_.reset();
  }
  wake_.notify_all();
}

void ProgressReporter::watch() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (!running_ || announced_) {
      wake_.wait(lock);
      continue;
    }
    auto due = started_ + threshold_;
    if (std::chrono::steady_clock::now() < due) {
      wake_.wait_until(lock, due);
      continue;
    }
    out_ << what_ << ": " << phaseInfo(*running_).name << "..." << std::endl;
    announced_ = true;
  }
}

} // namespace gc
