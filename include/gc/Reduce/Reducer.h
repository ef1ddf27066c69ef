//===- Reducer.h - Shrinking a module while a failure stays -----*- C++ -*-===//
//
// The reducer tries edits (Edits.h) of one kind at a time, in chunks that
// halve, as delta debugging does: a chunk whose candidate is smaller and
// still interesting to the oracle is kept, and the edits are proposed again
// for the new module. It goes round the kinds until no single edit of any
// kind keeps the failure, so the result is 1-minimal for those edits.
// Everything is tried in a fixed order, so the same input and the same test
// give the same result.
//
//===----------------------------------------------------------------------===//
#ifndef GC_REDUCE_REDUCER_H
#define GC_REDUCE_REDUCER_H

#include "gc/Reduce/Edits.h"
#include "gc/Reduce/Oracle.h"

#include <ostream>

namespace gc {

struct ReduceOptions {
  /// Where candidates are written (a directory the caller owns).
  std::string workDir;
  /// Stop after this many seconds with the smallest module so far (0: none).
  double timeLimitSeconds = 0;
  /// Progress lines ("gc-reduce: 40 nodes, 12 tests, 1.5 s"), or null.
  std::ostream *progress = nullptr;
};

struct ReduceStats {
  ModuleSize start, end;
  size_t tests = 0;
  double seconds = 0;
  /// The time limit cut the search short: the result may not be 1-minimal.
  bool timedOut = false;
  /// The input failed the verifier, so candidates were not verified either.
  bool unverified = false;
};

/// Whether `m` is valid as gc-reduce sees it: the verifier passes and every
/// node's recorded result types agree with its shape function's (dtype and
/// sizes). The error names the node.
Error checkCandidate(Module &m);

/// Shrinks `m` while `oracle` finds it interesting. An error when the input
/// itself is not interesting (with the oracle's reason), or when the oracle
/// cannot run.
Expected<std::unique_ptr<Module>> reduceModule(std::unique_ptr<Module> m, Oracle &oracle,
                                               const ReduceOptions &options, ReduceStats &stats);

} // namespace gc

#endif // GC_REDUCE_REDUCER_H
