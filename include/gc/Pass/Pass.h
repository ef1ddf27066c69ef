//===- Pass.h - Passes and the pass manager ---------------------*- C++ -*-===//
//
// A pass is an object with a name, registered once in Passes.def. Tools
// build a pipeline from names (--passes=a,b,c) and run it through a
// PassManager, which owns the debugging flags every tool shares:
// --print-after=NAME (or all), --time-passes, --verify-each, --stats.
//
//===----------------------------------------------------------------------===//
#ifndef GC_PASS_PASS_H
#define GC_PASS_PASS_H

#include "gc/IR/Module.h"

#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace gc {

class Pass {
public:
  virtual ~Pass() = default;
  /// The name used in --passes and --print-after.
  virtual std::string_view name() const = 0;
  virtual Error run(Module &m) = 0;

  /// Counters a pass bumps as it works ("nodes removed"), printed by --stats.
  std::map<std::string, int64_t> &statistics() { return stats_; }

private:
  std::map<std::string, int64_t> stats_;
};

struct PassInfo {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<Pass> (*create)();
};

/// Every registered pass, in Passes.def order.
std::span<const PassInfo> registeredPasses();
/// Builds passes from a comma-separated list of names; unknown names are an
/// error that lists the known ones.
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
};

class PassManager {
public:
  PassManager(PassManagerOptions options, std::ostream &log)
      : options_(std::move(options)), log_(log) {}
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  /// Runs the passes in order. An error names the pass it came from.
  Error run(Module &m);

private:
  PassManagerOptions options_;
  std::ostream &log_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

} // namespace gc

#endif // GC_PASS_PASS_H
