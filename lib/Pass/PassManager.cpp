//===- PassManager.cpp - Running pipelines of passes ----------------------===//
#include "gc/Pass/Pass.h"

#include "gc/IR/Printer.h"
#include "gc/IR/Verifier.h"
#include "gc/Transforms/Passes.h"

#include <cstdio>

namespace gc {

namespace {
template <std::unique_ptr<Pass> (*Create)()> std::unique_ptr<Pass> make() { return Create(); }

constexpr PassInfo kPasses[] = {
#define GC_PASS(NAME, CREATE, SUMMARY) {NAME, SUMMARY, &make<&CREATE>},
#include "gc/Transforms/Passes.def"
#undef GC_PASS
};
} // namespace

std::span<const PassInfo> registeredPasses() { return kPasses; }

Expected<std::vector<std::unique_ptr<Pass>>> parsePassPipeline(std::string_view pipeline) {
  std::vector<std::unique_ptr<Pass>> passes;
  size_t start = 0;
  while (start <= pipeline.size()) {
    size_t end = pipeline.find(',', start);
    if (end == std::string_view::npos)
      end = pipeline.size();
    std::string_view name = pipeline.substr(start, end - start);
    start = end + 1;
    if (name.empty())
      continue;
    const PassInfo *info = nullptr;
    for (const PassInfo &p : kPasses)
      if (p.name == name)
        info = &p;
    if (!info) {
      ErrorBuilder e;
      e << "unknown pass '" << name << "'; the passes are:";
      for (const PassInfo &p : kPasses)
        e << " " << p.name;
      return Error(e);
    }
    passes.push_back(info->create());
  }
  return passes;
}

Error PassManager::run(Module &m) {
  struct Timing {
    std::string_view name;
    double seconds;
  };
  std::vector<Timing> timings;
  for (const auto &p : passes_) {
    auto start = std::chrono::steady_clock::now();
    Error e = p->run(m);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timings.push_back({p->name(), seconds});
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
  if (options_.timePasses) {
    double total = 0;
    for (const Timing &t : timings)
      total += t.seconds;
    char line[160];
    log_ << "===-------------------------------------------------------------------------===\n"
         << "                          ... Pass execution timing report ...\n"
         << "===-------------------------------------------------------------------------===\n";
    std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds\n\n", total);
    log_ << line << "   Wall Time  Name\n";
    for (const Timing &t : timings) {
      std::snprintf(line, sizeof line, "  %.4f (%5.1f%%)  %.*s\n", t.seconds,
                    total > 0 ? 100 * t.seconds / total : 0.0,
                    static_cast<int>(t.name.size()), t.name.data());
      log_ << line;
    }
    std::snprintf(line, sizeof line, "  %.4f (100.0%%)  Total\n", total);
    log_ << line;
  }
  return Error::success();
}

} // namespace gc
