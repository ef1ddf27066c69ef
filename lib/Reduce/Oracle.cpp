//===- Oracle.cpp - What makes a candidate interesting --------------------===//
#include "gc/Reduce/Oracle.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace gc {

std::string CommandResult::describe() const {
  std::ostringstream s;
  if (timedOut)
    s << "timed out";
  else if (signal)
    s << "ended by signal " << signal << " (" << strsignal(signal) << ")";
  else
    s << "exit status " << exitCode;
  std::string text = stderrText.substr(0, stderrText.find('\n'));
  if (!text.empty())
    s << ": " << text;
  return s.str();
}

Expected<CommandResult> runCommand(const std::vector<std::string> &argv,
                                   const std::string &stderrPath, double timeoutSeconds) {
  if (argv.empty())
    return makeError() << "empty command";
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  // The child reports a failed exec through a pipe that closes on a
  // successful one, so that a missing program is an error, not a verdict.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0)
    return makeError() << "cannot create a pipe: " << std::strerror(errno);
  pid_t pid = fork();
  if (pid < 0)
    return makeError() << "cannot start '" << argv[0] << "': " << std::strerror(errno);
  if (pid == 0) {
    setpgid(0, 0);
    int null = open("/dev/null", O_RDWR);
    int err = open(stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err < 0 ? null : err, 2);
    execvp(args[0], args.data());
    int code = errno;
    (void)!write(report[1], &code, sizeof code);
    _exit(127);
  }
  close(report[1]);
  int code = 0;
  ssize_t got = read(report[0], &code, sizeof code);
  close(report[0]);
  if (got == sizeof code) {
    waitpid(pid, nullptr, 0);
    return makeError() << "cannot run '" << argv[0] << "': " << std::strerror(code);
  }
  CommandResult result;
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(100);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (timeoutSeconds > 0 && std::chrono::steady_clock::now() - start >
                                  std::chrono::duration<double>(timeoutSeconds)) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.timedOut = true;
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
  if (!result.timedOut) {
    if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
      result.exitCode = -1;
    } else {
      result.exitCode = WEXITSTATUS(status);
    }
  }
  std::ifstream in(stderrPath, std::ios::binary);
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  result.stderrText = std::move(text);
  return result;
}

std::string shellQuote(const std::vector<std::string> &command) {
  std::string out;
  for (const std::string &word : command) {
    if (!out.empty())
      out += ' ';
    bool plain = !word.empty() &&
                 word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_=./:,+%@") == std::string::npos;
    if (plain) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

Expected<Verdict> ScriptOracle::judge(const std::string &path, const Module &) {
  std::vector<std::string> argv = argv_;
  argv.push_back(path);
  Expected<CommandResult> r = runCommand(argv, workDir_ + "/test.stderr", timeout_);
  if (!r)
    return r.error();
  return Verdict{!r->timedOut && !r->signal && r->exitCode == 0,
                 "the test command " + r->describe()};
}

std::string ScriptOracle::litLines() const {
  return "// RUN: " + shellQuote(display_) + " %s\n";
}

StageCommand::StageCommand(std::vector<std::string> display, std::vector<std::string> argv,
                           std::string workDir, double timeoutSeconds)
    : display_(std::move(display)), argv_(std::move(argv)), workDir_(std::move(workDir)),
      output_(workDir_ + "/stage.out"), timeout_(timeoutSeconds) {}

Expected<CommandResult> StageCommand::run(const std::string &path) const {
  std::vector<std::string> argv = argv_;
  argv.insert(argv.end(), {path, "-o", output_});
  return runCommand(argv, workDir_ + "/stage.stderr", timeout_);
}

StageFailureOracle::StageFailureOracle(StageCommand command, std::string pattern, bool crash)
    : command_(std::move(command)), pattern_(std::move(pattern)), regex_(pattern_), crash_(crash) {}

Expected<Verdict> StageFailureOracle::judge(const std::string &path, const Module &) {
  Expected<CommandResult> r = command_.run(path);
  if (!r)
    return r.error();
  bool failed = crash_ ? r->signal != 0 : (!r->timedOut && !r->signal && r->exitCode != 0);
  bool matches = std::regex_search(r->stderrText, regex_);
  std::string detail = "'" + command_.display()[0] + "' " + r->describe();
  if (failed && !matches)
    detail += " (its error does not match '" + pattern_ + "')";
  return Verdict{failed && matches, detail};
}

std::string StageFailureOracle::litLines() const {
  std::string run = shellQuote(command_.display()) + " %s -o %t";
  if (crash_ && pattern_.empty())
    return "// RUN: not --crash " + run + "\n";
  // FileCheck takes the pattern as a regular expression between {{ }};
  // ECMAScript and FileCheck's POSIX syntax agree on the common forms.
  return "// RUN: not " + std::string(crash_ ? "--crash " : "") + run +
         " 2>&1 | FileCheck %s\n// CHECK: {{" + pattern_ + "}}\n";
}

} // namespace gc
