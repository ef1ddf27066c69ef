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

/// A toolkit program running in the background, its output going to a
/// log file; finish() waits for it and turns a failure into an error.
class RunningTool {
public:
  /// Starts `program` with `args`, its output into `dir`'s file `logName`;
  /// `command` names the step in messages ("ptxas -arch=sm_90").
  RunningTool(const std::string &program, std::string command,
              const std::vector<std::string> &args, const ScratchDir &dir,
              const std::string &logName)
      : program_(program), command_(std::move(command)), log_(dir.file(logName)) {
    std::vector<llvm::StringRef> argv = {program};
    for (const std::string &a : args)
      argv.push_back(a);
    std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log_),
                                                  llvm::StringRef(log_)};
    process_ = llvm::sys::ExecuteNoWait(program, argv, std::nullopt, redirects, 0, &failure_);
  }

  Error finish() {
    int rc = -1;
    if (process_.Pid != llvm::sys::ProcessInfo::InvalidPid)
      rc = llvm::sys::Wait(process_, std::nullopt, &failure_).ReturnCode;
    if (rc == 0)
      return Error::success();
    Expected<std::string> messages = readWhole(log_);
    std::string text = messages ? messagesOf(*messages) : "no message";
    if (rc < 0)
      return makeError() << "cannot run the CUDA toolkit's '" << program_
                         << "': " << (failure_.empty() ? text : failure_);
    return makeError() << command_ << " failed (exit status " << rc << "): " << text;
  }

private:
  std::string program_, command_, log_, failure_;
  llvm::sys::ProcessInfo process_;
};

/// Runs a toolkit program and waits for it (RunningTool's arguments).
Error runTool(const std::string &program, const std::string &command,
              const std::vector<std::string> &args, const ScratchDir &dir) {
  return RunningTool(program, command, args, dir, "tool.log").finish();
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

Expected<std::string> assembleFatbinary(std::span<const PtxImage> images,
                                        std::span<const int> archs, int optimization) {
  Expected<std::string> ptxas = cudaToolkitFile("bin/ptxas", "ptxas");
  if (!ptxas)
    return ptxas.error();
  Expected<std::string> fatbinary = cudaToolkitFile("bin/fatbinary", "fatbinary");
  if (!fatbinary)
    return fatbinary.error();
  Expected<ScratchDir> dir = ScratchDir::create();
  if (!dir)
    return dir.error();
  std::vector<std::string> ptxFiles;
  for (const PtxImage &image : images) {
    ptxFiles.push_back(dir->file("kernels_sm" + std::to_string(image.arch) + ".ptx"));
    GC_RETURN_IF_ERROR(writeWhole(ptxFiles.back(), image.text));
  }
  std::string output = dir->file("kernels.fatbin");
  std::vector<std::string> bundle = {"--64", "--create=" + output};
  // ptxas is single-threaded and the architectures are independent: one
  // process each, all at once.
  std::vector<RunningTool> assemblers;
  assemblers.reserve(archs.size());
  for (int arch : archs) {
    size_t from = 0;
    while (from + 1 < images.size() && images[from + 1].arch <= arch)
      ++from;
    std::string sm = "sm_" + std::to_string(arch);
    std::string cubin = dir->file(sm + ".cubin");
    assemblers.emplace_back(
        *ptxas, "ptxas -arch=" + sm,
        std::vector<std::string>{"-arch=" + sm, "-O" + std::to_string(optimization), ptxFiles[from],
                                 "-o", cubin},
        *dir,
        sm + ".log");
    bundle.push_back("--image3=kind=elf,sm=" + std::to_string(arch) + ",file=" + cubin);
  }
  // Every process is waited for, even after one fails; the first failure
  // (in architecture order) is the error.
  Error first = Error::success();
  for (RunningTool &assembler : assemblers)
    if (Error e = assembler.finish(); e && !first)
      first = std::move(e);
  if (first)
    return first;
  for (size_t i = 0; i < images.size(); ++i)
    bundle.push_back("--image3=kind=ptx,sm=" + std::to_string(images[i].arch) +
                     ",file=" + ptxFiles[i]);
  GC_RETURN_IF_ERROR(runTool(*fatbinary, "fatbinary", bundle, *dir));
  return readWhole(output);
}

} // namespace gc
