//===- Oracle.h - What makes a candidate interesting ------------*- C++ -*-===//
//
// gc-reduce keeps a smaller module only if the failure it shrinks is still
// there. An oracle judges that for a candidate written to a file: a user's
// script (exit status 0 means interesting, as llvm-reduce's --test), or a
// stage command run on the candidate whose failure must look like the
// original's (an error matching a pattern, a crash). The mismatch oracle,
// which runs the stage's result against the reference interpreter, lives
// with the runners (gc/Tools/ReduceMismatch.h).
//
//===----------------------------------------------------------------------===//
#ifndef GC_REDUCE_ORACLE_H
#define GC_REDUCE_ORACLE_H

#include "gc/IR/Module.h"
#include "gc/Support/Error.h"

#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace gc {

/// What an oracle said about a candidate, and why, for the user when the
/// original input turns out not to be interesting.
struct Verdict {
  bool interesting = false;
  std::string detail;
};

class Oracle {
public:
  virtual ~Oracle() = default;
  /// Judges the candidate `m`, written to `path`. An error means the test
  /// itself could not run (a missing program), not that the candidate is
  /// uninteresting.
  virtual Expected<Verdict> judge(const std::string &path, const Module &m) = 0;
  /// The lines of a lit test whose RUN line reproduces the failure on the
  /// file itself (%s), each starting "// ".
  virtual std::string litLines() const = 0;
};

/// How a command ended.
struct CommandResult {
  int exitCode = 0; ///< when it exited
  int signal = 0;   ///< when a signal ended it (then exitCode is -1)
  bool timedOut = false;
  std::string stderrText; ///< the first 64 KiB of what it wrote to stderr
  /// "exit status 1", "signal 11", "timed out after 60 s".
  std::string describe() const;
};

/// Runs `argv` (argv[0] looked up in PATH when it has no '/') with stdin
/// and stdout on /dev/null and stderr captured through `stderrPath`; kills
/// it (and what it started) after `timeoutSeconds`.
Expected<CommandResult> runCommand(const std::vector<std::string> &argv,
                                   const std::string &stderrPath, double timeoutSeconds);

/// `command` as one shell word list for a lit RUN line: words with
/// characters the shell reads are single-quoted.
std::string shellQuote(const std::vector<std::string> &command);

/// --test CMD --test-arg ARG...: runs CMD ARG... <candidate>; exit status 0
/// means interesting.
class ScriptOracle : public Oracle {
public:
  /// `display` is the command as the user wrote it (for lit lines), `argv`
  /// the same with the program resolved.
  ScriptOracle(std::vector<std::string> display, std::vector<std::string> argv,
               std::string workDir, double timeoutSeconds)
      : display_(std::move(display)), argv_(std::move(argv)), workDir_(std::move(workDir)),
        timeout_(timeoutSeconds) {}
  Expected<Verdict> judge(const std::string &path, const Module &m) override;
  std::string litLines() const override;

private:
  std::vector<std::string> display_, argv_;
  std::string workDir_;
  double timeout_;
};

/// --run 'CMD ARGS': runs CMD ARGS <candidate> -o <file> (every gc stage
/// tool takes that form) and looks at how it ended.
class StageCommand {
public:
  /// `display` is the command as the user wrote it (for lit lines), `argv`
  /// the same with the program resolved.
  StageCommand(std::vector<std::string> display, std::vector<std::string> argv,
               std::string workDir, double timeoutSeconds);
  /// Runs it on `path`; the result file is output().
  Expected<CommandResult> run(const std::string &path) const;
  const std::string &output() const { return output_; }
  const std::vector<std::string> &display() const { return display_; }

private:
  std::vector<std::string> display_, argv_;
  std::string workDir_, output_;
  double timeout_;
};

/// --expect-error REGEX and/or --expect-crash: the stage fails (with an
/// error exit, or by a signal when `crash`) and its stderr matches the
/// pattern (ECMAScript syntax, searched anywhere; any text when empty).
class StageFailureOracle : public Oracle {
public:
  StageFailureOracle(StageCommand command, std::string pattern, bool crash);
  Expected<Verdict> judge(const std::string &path, const Module &m) override;
  std::string litLines() const override;

private:
  StageCommand command_;
  std::string pattern_;
  std::regex regex_;
  bool crash_;
};

} // namespace gc

#endif // GC_REDUCE_ORACLE_H
