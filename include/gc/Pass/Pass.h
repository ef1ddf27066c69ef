//===- Pass.h - Passes and the pass manager ---------------------*- C++ -*-===//
//
// A pass is an object with a name. The library that defines passes
// registers them (registerPasses; lib/Driver's registerAllPasses calls every
// library's); the pass manager knows none of them. Tools build a pipeline
// from names (--passes=a,b,c) or take a phase's passes (Driver/Pipeline.h)
// and run it through a PassManager, which owns the debugging flags every
// tool shares: --print-after=NAME (or all), --time-passes, --time-trace,
// --verify-each, --stats.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PASS_PASS_H
#define GC_PASS_PASS_H

#include "gc/IR/Module.h"

#include <chrono>
#include <span>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace gc {

class TimeTrace;

class Pass {
public:
  virtual ~Pass() = default;
  /// The name used in --passes and --print-after.
  virtual std::string_view name() const = 0;
  virtual Error run(Module &m) = 0;
  /// Takes the options written after the pass's name in a pipeline
  /// (`name{key=value,key=value}`). A pass without options refuses any.
  virtual Error setOptions(std::string_view options);

  /// Counters a pass bumps as it works ("nodes removed"), printed by --stats.
  std::map<std::string, int64_t> &statistics() { return stats_; }
  /// What the user should hear about although the pass succeeded ("node
  /// 'x': aten.cumsum.default has no lowering"); the pass manager collects
  /// them for the tool to print.
  std::vector<std::string> &warnings() { return warnings_; }

private:
  std::map<std::string, int64_t> stats_;
  std::vector<std::string> warnings_;
};

struct PassInfo {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Pass> (*create)();
  /// A pass that exists for gc's own tests (a deliberate miscompile that
  /// gc-reduce's tests shrink): it runs when named in a pipeline but is left
  /// out of --list-passes, the unknown-pass message and docs/passes.md.
  bool testOnly = false;
};

/// Adds passes to the registry (a name already there is kept as it is).
void registerPasses(std::span<const PassInfo> passes);
/// Every registered pass, in registration order.
std::span<const PassInfo> registeredPasses();
/// Builds passes from a comma-separated list of names, each optionally
/// followed by its options in braces (`a,b{k=v,k2=v2},c`); unknown names are
/// an error that lists the known ones.
Expected<std::vector<std::unique_ptr<Pass>>> parsePassPipeline(std::string_view pipeline);

/// One row of a timing report: what ran, and for how long.
struct TimingRow {
  std::string label;
  double seconds = 0;
};
/// Prints the report --time-passes prints (the layout of LLVM's): a title,
/// the total, then each row with its share of the total.
void printTimingReport(std::ostream &out, std::string_view title, std::string_view header,
                       const std::vector<TimingRow> &rows);

struct PassManagerOptions {
  /// Pass names after which to print the module's text ("all" for every).
  std::set<std::string> printAfter;
  bool timePasses = false;
  bool verifyEach = true;
  bool statistics = false;
  /// Records one event per pass run (--time-trace).
  TimeTrace *trace = nullptr;
};

class PassManager {
public:
  PassManager(PassManagerOptions options, std::ostream &log)
      : options_(std::move(options)), log_(log) {}
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  /// Runs the passes in order. An error names the pass it came from.
  Error run(Module &m);
  /// The passes' warnings so far, in the order they ran.
  const std::vector<std::string> &warnings() const { return warnings_; }

private:
  PassManagerOptions options_;
  std::ostream &log_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<std::string> warnings_;
};

} // namespace gc

#endif // GC_PASS_PASS_H
