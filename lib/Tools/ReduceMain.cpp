//===- ReduceMain.cpp - The gc-reduce driver ------------------------------===//
//
// gc-reduce shrinks a graph file (or a .pt2 archive, imported first) while a
// test still finds it interesting, as llvm-reduce does for LLVM IR: the test
// is a script (--test) or a stage command with what its failure must look
// like (--run with --expect-error, --expect-crash or --expect-mismatch).
// docs/debugging.md, "gc-reduce".
//
//===----------------------------------------------------------------------===//
#include "gc/Tools/ReduceMain.h"

#include "gc/Import/Importer.h"
#include "gc/IR/Printer.h"
#include "gc/Reduce/Reducer.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ReduceMismatch.h"
#include "gc/Tools/ToolSupport.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace gc {

namespace {

const std::string kTool = "gc-reduce";

/// Splits `--run`'s text into words as a shell would for plain words,
/// '...' and "..." quotes and backslash escapes (no expansions).
Expected<std::vector<std::string>> splitWords(const std::string &text) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size())
        word += text[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      inWord = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      inWord = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord)
        words.push_back(std::move(word));
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote)
    return makeError() << "--run '" << text << "': unterminated quote";
  if (inWord)
    words.push_back(std::move(word));
  if (words.empty())
    return makeError() << "--run needs a command";
  return words;
}

/// A program named without a directory is first looked for beside
/// gc-reduce, so that `--run gc-lower` runs the gc-lower of the same build.
std::string resolveProgram(const std::string &name) {
  if (name.find('/') != std::string::npos)
    return name;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path beside = self.parent_path() / name;
    if (access(beside.c_str(), X_OK) == 0)
      return beside.string();
  }
  return name;
}

bool isArchive(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::string_view(magic, 4) == std::string_view("PK\3\4", 4);
}

Expected<std::unique_ptr<Module>> readInput(const std::string &path) {
  if (path != "-" && isArchive(path)) {
    Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
    if (!file)
      return file.error();
    Expected<ImportResult> imported = importArchive(*file, ImportOptions{});
    if (!imported)
      return imported.error();
    return std::move(imported->module);
  }
  return readModuleFileUnverified(path);
}

/// A directory for candidates, removed with everything in it at the end.
class WorkDir {
public:
  static Expected<WorkDir> create() {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "gc-reduce-XXXXXX").string();
    if (ec || !mkdtemp(pattern.data()))
      return makeError() << "cannot create a temporary directory for candidates (TMPDIR)";
    return WorkDir(pattern);
  }
  WorkDir(WorkDir &&o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  ~WorkDir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }

private:
  explicit WorkDir(std::string p) : path_(std::move(p)) {}
  std::string path_;
};

/// The lit test: a header, the oracle's RUN and CHECK lines, then the
/// module's text, written where its weight paths hold.
Error writeLitTest(Module &m, const std::string &path, const std::string &header,
                   const Oracle &oracle) {
  std::string body = path + ".body";
  GC_RETURN_IF_ERROR(writeModuleFile(m, body, FileFormat::Text));
  std::ifstream in(body, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(body.c_str());
  return writeFileAtomic(path, header + oracle.litLines() + "\n" + text.str());
}

} // namespace

int reduceMain(int argc, char **argv) {
  CLI::App app("Shrink a graph file while a test still fails on it (docs/debugging.md)", kTool);
  std::string input;
  app.add_option("input", input, "Graph file of any graph level, binary or text, or a .pt2 "
                                 "archive (imported first)")
      ->required();
  OutputOptions output;
  output.addTo(app);
  std::vector<std::string> script;
  app.add_option("--test", script,
                 "A command run with the candidate's path appended; exit status 0 means the "
                 "candidate still shows the failure")
      ->expected(1);
  std::vector<std::string> scriptArgs;
  app.add_option("--test-arg", scriptArgs, "An argument for --test's command (repeatable)");
  std::string runText;
  app.add_option("--run", runText,
                 "A stage command, run as CMD <candidate> -o <file>, for --expect-error, "
                 "--expect-crash or --expect-mismatch (gc tools are found beside gc-reduce)");
  std::optional<std::string> expectError;
  app.add_option("--expect-error", expectError,
                 "Interesting: --run fails and its stderr matches this regular expression");
  bool expectCrash = false;
  app.add_flag("--expect-crash", expectCrash, "Interesting: --run is ended by a signal");
  bool expectMismatch = false;
  app.add_flag("--expect-mismatch", expectMismatch,
               "Interesting: --run's result, run on deterministic random inputs, differs from "
               "the reference interpreter's outputs for the candidate");
  double rtol = 1e-3, atol = 1e-3;
  app.add_option("--rtol", rtol, "--expect-mismatch: relative tolerance")->capture_default_str();
  app.add_option("--atol", atol,
                 "--expect-mismatch: absolute tolerance, times max(1, the output's largest "
                 "magnitude)")
      ->capture_default_str();
  double timeLimit = 0;
  app.add_option("--time-limit", timeLimit,
                 "Stop after this many seconds with the smallest graph found so far");
  double testTimeout = 60;
  app.add_option("--test-timeout", testTimeout,
                 "Seconds one test may run; a test that runs longer is not interesting")
      ->capture_default_str();
  std::string litTest;
  app.add_option("--lit-test", litTest,
                 "Also write a lit test: a RUN line reproducing the failure, then the reduced "
                 "graph's text");
  bool check = false;
  app.add_flag("--check", check,
               "Only test the input: exit status 0 if it is interesting, 1 if not");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;

  int expectations = (expectError || expectCrash ? 1 : 0) + (expectMismatch ? 1 : 0);
  if (script.empty() == runText.empty())
    return reportError(kTool, makeError()
                                  << (script.empty() ? "no test: give --test CMD (exit status 0 "
                                                       "means interesting), or --run CMD with "
                                                       "--expect-error, --expect-crash or "
                                                       "--expect-mismatch"
                                                     : "give either --test or --run, not both"));
  if (!runText.empty() && expectations != 1)
    return reportError(kTool, makeError() << "--run needs one expectation: --expect-error REGEX "
                                             "and/or --expect-crash, or --expect-mismatch");
  if (runText.empty() && expectations)
    return reportError(kTool, makeError() << "--expect-error, --expect-crash and "
                                             "--expect-mismatch go with --run, not --test");
  if (script.empty() && !scriptArgs.empty())
    return reportError(kTool, makeError() << "--test-arg goes with --test");

  Expected<std::unique_ptr<Module>> module = readInput(input);
  if (!module)
    return reportError(kTool, module.error());
  Expected<WorkDir> work = WorkDir::create();
  if (!work)
    return reportError(kTool, work.error());

  std::unique_ptr<Oracle> oracle;
  if (!script.empty()) {
    std::vector<std::string> display = {script[0]};
    display.insert(display.end(), scriptArgs.begin(), scriptArgs.end());
    std::vector<std::string> argv = display;
    argv[0] = resolveProgram(argv[0]);
    oracle = std::make_unique<ScriptOracle>(std::move(display), std::move(argv), work->path(),
                                            testTimeout);
  } else {
    Expected<std::vector<std::string>> words = splitWords(runText);
    if (!words)
      return reportError(kTool, words.error());
    std::vector<std::string> argv = *words;
    argv[0] = resolveProgram(argv[0]);
    StageCommand command(*words, std::move(argv), work->path(), testTimeout);
    if (expectMismatch)
      oracle = std::make_unique<MismatchOracle>(std::move(command), rtol, atol);
    else
      try {
        oracle = std::make_unique<StageFailureOracle>(std::move(command),
                                                      expectError.value_or(""), expectCrash);
      } catch (const std::regex_error &e) {
        return reportError(kTool, makeError() << "--expect-error '" << *expectError
                                              << "' is not a valid regular expression: "
                                              << e.what());
      }
  }

  if (check) {
    std::string path = work->path() + "/candidate.gcm";
    if (Error e = writeModuleFile(**module, path, FileFormat::Binary))
      return reportError(kTool, e);
    Expected<Verdict> verdict = oracle->judge(path, **module);
    if (!verdict)
      return reportError(kTool, verdict.error());
    std::cerr << kTool << ": " << (verdict->interesting ? "interesting" : "not interesting")
              << ": " << verdict->detail << "\n";
    return verdict->interesting ? 0 : 1;
  }
  ReduceOptions options{work->path(), timeLimit, &std::cerr};
  ReduceStats stats;
  Expected<std::unique_ptr<Module>> reduced =
      reduceModule(std::move(*module), *oracle, options, stats);
  if (!reduced)
    return reportError(kTool, reduced.error().withContext("'" + input + "'"));
  std::ostringstream summary;
  summary << stats.start.nodes << " -> " << stats.end.nodes << " nodes, " << stats.tests
          << " tests";
  // The lit test first: if the graph cannot be written, it goes again, so
  // no output is left half made.
  if (!litTest.empty()) {
    std::string header = "// Reduced by gc-reduce from " +
                         std::filesystem::path(input).filename().string() + ": " +
                         summary.str() + ".\n";
    if (Error e = writeLitTest(**reduced, litTest, header, *oracle))
      return reportError(kTool, e);
  }
  Error written = writeModuleFile(**reduced, output.path, output.format);
  if (!written)
    written = output.writeDepfile({input});
  if (written) {
    if (!litTest.empty())
      std::remove(litTest.c_str());
    return reportError(kTool, written);
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, ", %.1f s", stats.seconds);
  std::cerr << kTool << ": done: " << summary.str() << seconds
            << (stats.timedOut ? " (time limit reached: the result may not be minimal)" : "")
            << "\n";
  return 0;
}

} // namespace gc
