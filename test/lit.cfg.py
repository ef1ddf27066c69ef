# lit configuration for gc. Tools come from the build tree; FileCheck and
# `not` from LLVM 16.
import os
import sys

import lit.formats

config.name = "gc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".gcir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gc_obj_root, "test")

path = os.pathsep.join([config.gc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false --dump-input=fail"

config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%utils", os.path.join(config.gc_src_root, "utils")))
config.substitutions.append(("%models", os.path.join(config.gc_src_root, "test", "Models", "Inputs")))
# The real models' archives, rebuilt into the build tree (test/CMakeLists.txt).
config.substitutions.append(("%realmodels", config.gc_realmodels_dir))

# The test plugins (test/Plugin/CMakeLists.txt); `cuda-plugin` where the one
# with CUDA kernels was built.
plugins = os.path.join(config.gc_obj_root, "test", "plugins")
config.substitutions.append(("%plugins", plugins))
if os.path.exists(os.path.join(plugins, "libgcdemo_cuda.so")):
    config.available_features.add("cuda-plugin")

# gc-codegen's object cache lives in the build tree, never in the user's home.
config.environment["GC_CACHE_DIR"] = os.path.join(config.gc_obj_root, "test", "gc-cache")

# CUDA: `cuda-toolkit` where gc-codegen finds ptxas ($CUDA_HOME, else the
# toolkit CMake found), so that tests compiling for cuda run in CI without a
# GPU; the tests see the same toolkit through CUDA_HOME.
cuda_home = os.environ.get("CUDA_HOME") or config.gc_cuda_home
if cuda_home and os.path.exists(os.path.join(cuda_home, "bin", "ptxas")):
    config.available_features.add("cuda-toolkit")
    config.environment["CUDA_HOME"] = cuda_home

# cuda-gpu: libgcrt can run packages on an NVIDIA GPU here, as gcrt-run
# --list-devices reports (its first line names device 0, or says why none).
import subprocess

try:
    devices = subprocess.run([os.path.join(config.gc_tools_dir, "gcrt-run"), "--list-devices"],
                             capture_output=True, text=True, timeout=120).stdout
except (OSError, subprocess.SubprocessError):
    devices = ""
if devices.startswith("cuda device 0: "):
    config.available_features.add("cuda-gpu")

# x86-64-v4: this CPU runs AVX-512 kernels (the flags /proc/cpuinfo lists for
# the level's AVX-512 subsets), so tests may load a package's v4 kernels.
try:
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
except OSError:
    flags = []
if {"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"} <= set(flags):
    config.available_features.add("x86-64-v4")
