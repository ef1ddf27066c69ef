//===- Reducer.cpp - Shrinking a module while a failure stays -------------===//
#include "gc/Reduce/Reducer.h"

#include "gc/IR/Printer.h"
#include "gc/IR/Verifier.h"
#include "gc/ModuleIO/ModuleIO.h"
#include "gc/Ops/ShapeInference.h"

#include <chrono>
#include <cstdio>

namespace gc {

Error checkCandidate(Module &m) {
  GC_RETURN_IF_ERROR(verifyModule(m));
  // verifyModule is structural; a reduction must also not leave a node whose
  // recorded type its op would not compute (shape-check's rule).
  SymContext &syms = m.syms();
  for (const auto &g : m.graphs())
    for (const auto &n : g->nodes()) {
      std::string where = "graph @" + g->name() + ", node " +
                          (n->results().empty() ? "" : "%" + n->results()[0]->name() + " ") +
                          "(" + opString(n->op()) + ")";
      Expected<std::vector<Type>> types = inferResultTypes(n->op(), n->args(), syms, &m);
      if (!types)
        return types.error().withContext(where);
      bool same = types->size() == n->results().size();
      for (size_t i = 0; same && i < types->size(); ++i) {
        const Type &want = n->results()[i]->type(), &got = (*types)[i];
        same = want.kind == got.kind &&
               (!want.isTensor() ||
                (want.tensor.dtype == got.tensor.dtype && want.tensor.sizes == got.tensor.sizes));
      }
      if (!same)
        return makeError() << where << ": the recorded result types are not the inferred ones";
    }
  return Error::success();
}

namespace {

/// The order kinds are tried in each round: the cheap, large cuts first.
constexpr EditKind kKinds[] = {EditKind::DropOutput,    EditKind::CutToInput,
                               EditKind::HoistOutput,   EditKind::WeightToInput,
                               EditKind::CutToZeros,    EditKind::CutToOnes,
                               EditKind::HalveSize,     EditKind::HalveDim};

class Search {
public:
  Search(Oracle &oracle, const ReduceOptions &options, ReduceStats &stats)
      : oracle_(oracle), options_(options), stats_(stats),
        start_(std::chrono::steady_clock::now()) {}

  /// Judges `m` as a candidate: written to the work directory, then tested.
  Expected<Verdict> test(const Module &m) {
    std::string path = options_.workDir + "/candidate.gcm";
    std::unique_ptr<Module> copy = m.clone();
    GC_RETURN_IF_ERROR(writeModuleFile(*copy, path, FileFormat::Binary));
    ++stats_.tests;
    return oracle_.judge(path, m);
  }

  Expected<std::unique_ptr<Module>> run(std::unique_ptr<Module> m) {
    stats_.start = moduleSize(*m);
    stats_.unverified = static_cast<bool>(checkCandidate(*m));
    if (stats_.unverified && options_.progress)
      *options_.progress << "gc-reduce: the input does not verify; candidates are not verified "
                            "either, the test decides\n";
    Expected<Verdict> first = test(*m);
    if (!first)
      return first.error();
    if (!first->interesting)
      return makeError() << "the input is not interesting to the test: " << first->detail
                         << "; check the test on the input first";
    current_ = std::move(m);
    say("");
    bool progress = true;
    while (progress && !outOfTime()) {
      progress = false;
      for (EditKind kind : kKinds) {
        Expected<bool> changed = reduceKind(kind);
        if (!changed)
          return changed.error();
        progress = progress || *changed;
      }
    }
    stats_.timedOut = outOfTime();
    stats_.end = moduleSize(*current_);
    stats_.seconds = elapsed();
    return std::move(current_);
  }

private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool outOfTime() const {
    return options_.timeLimitSeconds > 0 && elapsed() >= options_.timeLimitSeconds;
  }
  void say(const std::string &what) {
    if (!options_.progress)
      return;
    char line[160];
    std::snprintf(line, sizeof line, "gc-reduce: %zu nodes, %zu tests, %.1f s",
                  current_ ? moduleSize(*current_).nodes : stats_.start.nodes, stats_.tests,
                  elapsed());
    *options_.progress << line << (what.empty() ? "" : " (" + what + ")") << "\n";
  }

  /// Tries the edits of `kind` in chunks: halves of the list, then quarters,
  /// down to single edits. Returns whether any was kept.
  Expected<bool> reduceKind(EditKind kind) {
    bool changed = false;
    std::vector<Edit> edits = proposeEdits(*current_, kind);
    size_t chunk = std::max<size_t>(1, edits.size() / 2);
    while (!edits.empty() && !outOfTime()) {
      bool keptAny = false;
      for (size_t at = 0; at < edits.size() && !outOfTime();) {
        size_t n = std::min(chunk, edits.size() - at);
        Expected<bool> kept = tryEdits(std::span(edits).subspan(at, n));
        if (!kept)
          return kept.error();
        if (!*kept) {
          at += n;
          continue;
        }
        keptAny = changed = true;
        say(std::string(editKindName(kind)));
        // Indices changed: propose again and go on from the same place.
        edits = proposeEdits(*current_, kind);
      }
      if (chunk == 1 && !keptAny)
        break;
      chunk = std::max<size_t>(1, chunk / 2);
    }
    return changed;
  }

  /// Keeps the candidate `edits` make if it is valid, smaller and still
  /// interesting.
  Expected<bool> tryEdits(std::span<const Edit> edits) {
    Expected<std::unique_ptr<Module>> candidate = applyEdits(*current_, edits);
    if (!candidate)
      return false; // the edits leave no valid graph: not a candidate // the edits leave no valid graph: not a candidate
    if (!(moduleSize(**candidate) < moduleSize(*current_)))
      return false;
    if (!stats_.unverified && checkCandidate(**candidate))
      return false;
    Expected<Verdict> verdict = test(**candidate);
    if (!verdict)
      return verdict.error();
    if (!verdict->interesting)
      return false;
    current_ = std::move(*candidate);
    return true;
  }

  Oracle &oracle_;
  const ReduceOptions &options_;
  ReduceStats &stats_;
  std::chrono::steady_clock::time_point start_;
  std::unique_ptr<Module> current_;
};

} // namespace

Expected<std::unique_ptr<Module>> reduceModule(std::unique_ptr<Module> m, Oracle &oracle,
                                               const ReduceOptions &options, ReduceStats &stats) {
  if (m->graphs().empty())
    return makeError() << "gc-reduce shrinks graphs of the levels aten to partitioned; this "
                          "module is at level "
                       << levelName(m->level()) << " and holds loop graphs: reduce the graph "
                       << "the stage before it read, with the stage in the test";
  return Search(oracle, options, stats).run(std::move(m));
}

} // namespace gc
