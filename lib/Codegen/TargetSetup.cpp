//===- TargetSetup.cpp - LLVM target machines for gc's targets ------------===//
#include "TargetSetup.h"

#include "CudaToolkit.h"

#include "gc/Codegen/KernelEmitter.h"
#include "gc/Support/Target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <mutex>
#include <string>

namespace gc {

namespace {
constexpr const char *kTriple = "x86_64-unknown-linux-gnu";

/// The host's CPU features as LLVM's "+avx2,-avx512f,..." string, sorted so
/// that the same host always gives the same text.
std::string hostFeatures() {
  llvm::StringMap<bool> features;
  llvm::sys::getHostCPUFeatures(features);
  std::vector<std::string> items;
  for (const auto &entry : features)
    items.push_back((entry.second ? "+" : "-") + entry.first().str());
  std::sort(items.begin(), items.end());
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ",") + item;
  return text;
}
} // namespace

std::string resolvedTargetName(const std::string &target) {
  if (targetDevice(target) == TargetDevice::CUDA)
    return target + " " + cudaToolkitVersion();
  if (target != "native")
    return target;
  return "native " + llvm::sys::getHostCPUName().str() + " " + hostFeatures();
}

void initializeX86Target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(std::string_view target) {
  if (targetDevice(target) == TargetDevice::CUDA)
    return makeError() << "'" << target << "' is a CUDA target, not a CPU one";
  std::string cpu, features;
  if (target == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    features = hostFeatures();
  } else if (std::find(kCpuLevels.begin(), kCpuLevels.end(), target) != kCpuLevels.end()) {
    cpu = std::string(target);
  } else {
    return makeError() << "unknown CPU target '" << target
                       << "' (expected x86-64, x86-64-v3, x86-64-v4 or native)";
  }
  initializeX86Target();
  std::string message;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(kTriple, message);
  if (!llvmTarget)
    return makeError() << "LLVM has no x86-64 target: " << message;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      llvmTarget->createTargetMachine(kTriple, cpu, features, options, llvm::Reloc::PIC_,
                                      llvm::CodeModel::Small, llvm::CodeGenOpt::Aggressive));
  if (!machine)
    return makeError() << "cannot create an LLVM target machine for '" << target << "'";
  return machine;
}

Expected<std::unique_ptr<llvm::TargetMachine>> createGpuTargetMachine(int arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  constexpr const char *kGpuTriple = "nvptx64-nvidia-cuda";
  std::string message;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(kGpuTriple, message);
  if (!llvmTarget)
    return makeError() << "LLVM has no NVPTX target: " << message;
  std::string cpu = "sm_" + std::to_string(arch);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      kGpuTriple, cpu, "+ptx78", options, std::nullopt, std::nullopt,
      llvm::CodeGenOpt::Aggressive));
  if (!machine)
    return makeError() << "cannot create an LLVM target machine for " << cpu;
  return machine;
}

} // namespace gc
