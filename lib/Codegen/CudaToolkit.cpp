//===- CudaToolkit.cpp - The CUDA toolkit's tools, run as programs --------===//
#include "CudaToolkit.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#ifndef GC_CUDA_HOME
#define GC_CUDA_HOME "/usr/local/cuda"
#endif

namespace gc {

namespace {

/// A private directory for the toolkit's files, removed with everything in
/// it when done.
class ScratchDir {
public:
  static Expected<ScratchDir> create() {
    llvm::SmallString<128> path;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("gc-cuda", path))
      return makeError() << "cannot create a temporary directory for the CUDA toolkit's files: "
                         << ec.message();
    return ScratchDir(std::string(path));
  }
  ScratchDir(ScratchDir &&o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  ScratchDir(const ScratchDir &) = delete;
  ~ScratchDir() {
    if (!path_.empty())
      llvm::sys::fs::remove_directories(path_);
  }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

Error writeWhole(const std::string &path, std::string_view bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec) {
    out << bytes;
    out.close();
    if (out.has_error())
      ec = out.error();
  }
  if (ec)
    return makeError() << "cannot write '" << path << "': " << ec.message();
  return Error::success();
}

Expected<std::string> readWhole(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError() << "cannot read '" << path << "': " << buffer.getError().message();
  return (*buffer)->getBuffer().str();
}

/// The tool's messages, without trailing blank lines, cut to a size that
/// still reads as one error.
std::string messagesOf(const std::string &log) {
  constexpr size_t kMaxMessage = 4000;
  std::string text = log.substr(0, kMaxMessage);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  if (log.size() > kMaxMessage)
    text += "\n...";
  return text.empty() ? "no message" : text;
}

/// Runs a toolkit program with `args`, its output into a log in `dir`;
/// `command` names the step in messages ("ptxas -arch=sm_90").
Error runTool(const std::string &program, const std::string &command,
              const std::vector<std::string> &args, const ScratchDir &dir) {
  std::string log = dir.file("tool.log");
  std::vector<llvm::StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string failure;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0, &failure);
  if (rc == 0)
    return Error::success();
  Expected<std::string> messages = readWhole(log);
  std::string text = messages ? messagesOf(*messages) : "no message";
  if (rc < 0)
    return makeError() << "cannot run the CUDA toolkit's '" << program
                       << "': " << (failure.empty() ? text : failure);
  return makeError() << command << " failed (exit status " << rc << "): " << text;
}

} // namespace

std::string cudaToolkitDir() {
  const char *home = std::getenv("CUDA_HOME");
  return home && *home ? home : GC_CUDA_HOME;
}

Expected<std::string> cudaToolkitFile(std::string_view relative, std::string_view what) {
  std::string dir = cudaToolkitDir();
  std::string path = dir + "/" + std::string(relative);
  if (!llvm::sys::fs::exists(path)) {
    std::string parent = path.substr(0, path.rfind('/'));
    return makeError() << "compiling for cuda needs the CUDA toolkit's " << what
                       << ": not found in " << parent << "; set CUDA_HOME";
  }
  return path;
}

std::string cudaToolkitVersion() {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  std::string dir = cudaToolkitDir();
  auto [it, inserted] = versions.try_emplace(dir);
  if (!inserted)
    return it->second;
  Expected<std::string> ptxas = cudaToolkitFile("bin/ptxas", "ptxas");
  Expected<ScratchDir> scratch = ScratchDir::create();
  if (!ptxas || !scratch || runTool(*ptxas, "ptxas --version", {"--version"}, *scratch))
    return it->second;
  if (Expected<std::string> text = readWhole(scratch->file("tool.log")))
    it->second = *text;
  return it->second;
}

Error checkCudaAssemblers() {
  for (const char *tool : {"ptxas", "fatbinary"})
    if (Expected<std::string> path = cudaToolkitFile(std::string("bin/") + tool, tool); !path)
      return path.error();
  return Error::success();
}

Expected<std::string> assembleFatbinary(const std::string &ptx, std::span<const int> archs) {
  Expected<std::string> ptxas = cudaToolkitFile("bin/ptxas", "ptxas");
  if (!ptxas)
    return ptxas.error();
  Expected<std::string> fatbinary = cudaToolkitFile("bin/fatbinary", "fatbinary");
  if (!fatbinary)
    return fatbinary.error();
  Expected<ScratchDir> dir = ScratchDir::create();
  if (!dir)
    return dir.error();
  std::string ptxFile = dir->file("kernels.ptx"), output = dir->file("kernels.fatbin");
  GC_RETURN_IF_ERROR(writeWhole(ptxFile, ptx));
  std::vector<std::string> bundle = {"--64", "--create=" + output};
  for (int arch : archs) {
    std::string sm = "sm_" + std::to_string(arch);
    std::string cubin = dir->file(sm + ".cubin");
    GC_RETURN_IF_ERROR(
        runTool(*ptxas, "ptxas -arch=" + sm, {"-arch=" + sm, "-O3", ptxFile, "-o", cubin}, *dir));
    bundle.push_back("--image3=kind=elf,sm=" + std::to_string(arch) + ",file=" + cubin);
  }
  bundle.push_back("--image3=kind=ptx,sm=" + std::to_string(archs.front()) + ",file=" + ptxFile);
  GC_RETURN_IF_ERROR(runTool(*fatbinary, "fatbinary", bundle, *dir));
  return readWhole(output);
}

} // namespace gc
