//===- DebugDump.cpp - gc-compile --debug-dump ----------------------------===//
#include "gc/Driver/DebugDump.h"

#include "gc/Codegen/GpuKernelEmitter.h"
#include "gc/Codegen/KernelEmitter.h"
#include "gc/IR/Level.h"
#include "gc/ModuleIO/ModuleIO.h"
#include "gc/Support/FileSystem.h"
#include "gc/Support/Target.h"

#include <filesystem>
#include <sstream>

namespace gc {

namespace {

/// `arg` as a POSIX shell reads it back.
std::string shellQuoted(const std::string &arg) {
  bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "0123456789-_./=:,+@%") == std::string::npos;
  if (plain)
    return arg;
  std::string out = "'";
  for (char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

} // namespace

Expected<DebugDump> DebugDump::create(std::string dir, std::vector<std::string> commandLine) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return makeError() << "--debug-dump: cannot create '" << dir << "': " << ec.message();
  std::string command = "# gc " GC_VERSION "\n";
  for (size_t i = 0; i < commandLine.size(); ++i)
    command += (i ? " " : "") + shellQuoted(commandLine[i]);
  GC_RETURN_IF_ERROR(writeFileAtomic(dir + "/command.txt", command + "\n"));
  return DebugDump(std::move(dir));
}

Error DebugDump::finish(const CompileOptions &options, const std::vector<std::string> &warnings,
                       const Error *failure) const {
  // The stages that completed, each beside its text form.
  for (const LevelInfo &level : levelInfos()) {
    std::string file = options.stagePath(level.level);
    if (!std::filesystem::exists(file))
      continue;
    Expected<std::unique_ptr<Module>> m = readModuleFile(file);
    if (!m)
      return m.error().withContext("--debug-dump");
    std::string text = file.substr(0, file.size() - 3) + ".gcir";
    GC_RETURN_IF_ERROR(writeModuleFile(**m, text, FileFormat::Text));
    if (level.level == Level::Kernels)
      GC_RETURN_IF_ERROR(writeKernelSources(file));
  }
  std::ostringstream times;
  timer_.print(times);
  GC_RETURN_IF_ERROR(writeFileAtomic(dir_ + "/time-passes.txt", times.str()));
  std::string warned;
  for (const std::string &w : warnings)
    warned += w + "\n";
  GC_RETURN_IF_ERROR(writeFileAtomic(dir_ + "/warnings.txt", warned));
  std::string error = dir_ + "/error.txt";
  if (failure)
    return writeFileAtomic(error, failure->message() + "\n");
  std::error_code ec;
  std::filesystem::remove(error, ec);
  return Error::success();
}

/// kernels/<graph>.ll (the optimized LLVM IR of the plan's first CPU level)
/// or kernels/<graph>.ptx, made again from the kernels stage file.
Error DebugDump::writeKernelSources(const std::string &kernelsFile) const {
  Expected<std::unique_ptr<Module>> read = readModuleFile(kernelsFile);
  if (!read)
    return read.error().withContext("--debug-dump");
  const Module &m = **read;
  std::string dir = dir_ + "/kernels";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return makeError() << "--debug-dump: cannot create '" << dir << "': " << ec.message();
  for (const auto &g : m.loopGraphs()) {
    std::string source;
    EmitOptions emit;
    std::string path = dir + "/" + g->name;
    if (targetDevice(g->plan.target) == TargetDevice::CUDA) {
      emit.target = g->plan.target;
      emit.ptx = &source;
      Expected<std::string> object = emitGpuKernels(m, *g, emit);
      if (!object)
        return object.error().withContext("--debug-dump: graph @" + g->name);
      path += ".ptx";
    } else {
      Expected<std::vector<std::string>> targets = cpuTargetList(g->plan.target);
      if (!targets)
        return targets.error().withContext("--debug-dump: graph @" + g->name);
      emit.target = targets->front();
      emit.optimizedLLVMIR = &source;
      Expected<std::string> object = emitKernels(m, *g, emit);
      if (!object)
        return object.error().withContext("--debug-dump: graph @" + g->name);
      path += ".ll";
    }
    GC_RETURN_IF_ERROR(writeFileAtomic(path, source));
  }
  return Error::success();
}

} // namespace gc
