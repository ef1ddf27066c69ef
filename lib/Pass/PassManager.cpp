//===- PassManager.cpp - Running pipelines of passes ----------------------===//
#include "gc/Pass/Pass.h"

#include "gc/IR/Printer.h"
#include "gc/IR/Verifier.h"
#include "gc/Support/TimeTrace.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace gc {

namespace {
/// Filled by the libraries that define passes (registerPasses), in the
/// order they register; the pass manager itself knows no concrete pass.
std::vector<PassInfo> &passRegistry() {
  static std::vector<PassInfo> registry;
  return registry;
}
} // namespace

void registerPasses(std::span<const PassInfo> passes) {
  std::vector<PassInfo> &registry = passRegistry();
  for (const PassInfo &p : passes)
    if (std::none_of(registry.begin(), registry.end(),
                     [&](const PassInfo &r) { return r.name == p.name; }))
      registry.push_back(p);
}

std::span<const PassInfo> registeredPasses() { return passRegistry(); }

Error Pass::setOptions(std::string_view options) {
  return makeError() << "pass '" << name() << "' takes no options, got {" << options << "}";
}

Expected<std::vector<std::unique_ptr<Pass>>> parsePassPipeline(std::string_view pipeline) {
  std::vector<std::unique_ptr<Pass>> passes;
  size_t start = 0;
  while (start <= pipeline.size()) {
    // A comma inside a pass's braces separates its options, not passes.
    size_t end = start;
    for (int depth = 0; end < pipeline.size() && (depth > 0 || pipeline[end] != ','); ++end)
      depth += pipeline[end] == '{' ? 1 : pipeline[end] == '}' ? -1 : 0;
    std::string_view item = pipeline.substr(start, end - start);
    start = end + 1;
    if (item.empty())
      continue;
    std::string_view name = item.substr(0, item.find('{'));
    std::optional<std::string_view> options;
    if (name.size() < item.size()) {
      if (item.back() != '}')
        return makeError() << "pass '" << name << "': options must be written {key=value,...}";
      options = item.substr(name.size() + 1, item.size() - name.size() - 2);
    }
    const PassInfo *info = nullptr;
    for (const PassInfo &p : registeredPasses())
      if (p.name == name)
        info = &p;
    if (!info) {
      ErrorBuilder e;
      e << "unknown pass '" << name << "'; the passes are:";
      for (const PassInfo &p : registeredPasses())
        if (!p.testOnly)
          e << " " << p.name;
      return Error(e);
    }
    passes.push_back(info->create());
    if (options)
      GC_RETURN_IF_ERROR(passes.back()->setOptions(*options));
  }
  return passes;
}

void printTimingReport(std::ostream &out, std::string_view title, std::string_view header,
                       const std::vector<TimingRow> &rows) {
  double total = 0;
  for (const TimingRow &r : rows)
    total += r.seconds;
  // Centred in the 80 columns of the rules, as LLVM's report is.
  std::string heading = "... " + std::string(title) + " ...";
  char line[256];
  out << "===-------------------------------------------------------------------------===\n"
      << std::string((80 - std::min<size_t>(80, heading.size())) / 2, ' ') << heading << "\n"
      << "===-------------------------------------------------------------------------===\n";
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds\n\n", total);
  out << line << "   Wall Time  " << header << "\n";
  for (const TimingRow &r : rows) {
    std::snprintf(line, sizeof line, "  %.4f (%5.1f%%)  %s\n", r.seconds,
                  total > 0 ? 100 * r.seconds / total : 0.0, r.label.c_str());
    out << line;
  }
  std::snprintf(line, sizeof line, "  %.4f (100.0%%)  Total\n", total);
  out << line;
}

Error PassManager::run(Module &m) {
  std::vector<TimingRow> timings;
  for (const auto &p : passes_) {
    auto start = std::chrono::steady_clock::now();
    Error e = p->run(m);
    if (options_.trace)
      options_.trace->record(std::string(p->name()), "pass", start);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timings.push_back({std::string(p->name()), seconds});
    for (std::string &w : p->warnings())
      warnings_.push_back(std::move(w));
    p->warnings().clear();
    if (e)
      return e.withContext("pass '" + std::string(p->name()) + "'");
    if (options_.verifyEach)
      if (Error v = verifyModule(m))
        return v.withContext("pass '" + std::string(p->name()) + "' left an invalid module");
    if (options_.printAfter.count("all") || options_.printAfter.count(std::string(p->name())))
      log_ << "// -----// IR after " << p->name() << " //----- //\n" << printModule(m);
  }
  if (options_.statistics)
    for (const auto &p : passes_)
      for (const auto &[stat, count] : p->statistics())
        log_ << count << " " << p->name() << " - " << stat << "\n";
  if (options_.timePasses)
    printTimingReport(log_, "Pass execution timing report", "Name", timings);
  return Error::success();
}

} // namespace gc
