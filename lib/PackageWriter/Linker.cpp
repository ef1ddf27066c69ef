//===- Linker.cpp - Kernel object code to a shared library ----------------===//
#include "gc/PackageWriter/Linker.h"

#include "gc/Support/ObjectArchive.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace gc {

namespace {

/// A private directory for the linker's files, removed with everything in
/// it when the link is done.
class ScratchDir {
public:
  static Expected<ScratchDir> create() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gc-package-XXXXXX";
    if (!mkdtemp(pattern.data()))
      return makeError() << "cannot create a temporary directory from '" << pattern
                         << "': " << std::strerror(errno);
    return ScratchDir(std::move(pattern));
  }
  ScratchDir(ScratchDir &&o) noexcept
      : path_(std::move(o.path_)), files_(std::move(o.files_)) {
    o.path_.clear();
  }
  ScratchDir(const ScratchDir &) = delete;
  ~ScratchDir() {
    if (path_.empty())
      return;
    for (const std::string &file : files_)
      unlink(file.c_str());
    rmdir(path_.c_str());
  }
  /// The path of `name` in the directory, removed with it.
  std::string file(const std::string &name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::vector<std::string> files_;
};

Error writeWhole(const std::string &path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return makeError() << "cannot write '" << path << "'";
  return Error::success();
}

std::string readWhole(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The first line of the linker's messages, which names the problem.
std::string firstLine(const std::string &text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "no message" : line;
}

} // namespace

Expected<std::string> linkSharedLibrary(std::string_view objectCode, const std::string &linker) {
  Expected<ScratchDir> dir = ScratchDir::create();
  if (!dir)
    return dir.error();
  Expected<std::vector<std::string_view>> objects = archivedObjects(objectCode);
  if (!objects)
    return objects.error();
  std::string library = dir->file("kernels.so"), log = dir->file("linker.log");
  // No build id: it would be a hash of the output at best and a random
  // value at worst; either way the package gains nothing from it.
  std::vector<std::string> args = {linker,        "-shared", "--build-id=none", "-z",
                                   "noexecstack", "-o",      library};
  // In batch order, so that the library's layout is always the same.
  for (size_t i = 0; i < objects->size(); ++i) {
    args.push_back(dir->file("kernels" + std::to_string(i) + ".o"));
    GC_RETURN_IF_ERROR(writeWhole(args.back(), (*objects)[i]));
  }
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, linker.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return makeError() << "cannot run the linker '" << linker << "': " << std::strerror(rc);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return makeError() << "waiting for the linker '" << linker << "': " << std::strerror(errno);
  if (WIFSIGNALED(status))
    return makeError() << "the linker '" << linker << "' died of signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) != 0)
    return makeError() << "the linker '" << linker << "' failed (exit status "
                       << WEXITSTATUS(status) << "): " << firstLine(readWhole(log));
  std::string bytes = readWhole(library);
  if (bytes.empty())
    return makeError() << "the linker '" << linker << "' wrote no library";
  return bytes;
}

} // namespace gc
