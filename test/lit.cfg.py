# -*- Python -*-
# Lit configuration for the Parallax regression suite.

import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PARALLAX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.parallax_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "ONNXTestData", "Inputs", "splice.py", "expect_close.py", "npy_close.py", "edit_npy.py", "compare_targets.py", "check_interruptions.py", "check_full_disk.py", "make_odd_names_model.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# lit runs tests side by side, one per core: each program computes on one
# thread unless its test says otherwise (results do not depend on the
# count; training-threads.test runs several).
config.environment["PARALLAX_THREADS"] = "1"
config.substitutions.append(("%parallax_src", config.parallax_src_root))
config.substitutions.append(("%parallax_obj", config.parallax_obj_root))
config.substitutions.append(("%python", sys.executable))
# ONNX text has `#` comments: split .onnxtext test files on "# -----". The
# marker cannot appear literally in a RUN line, which would be split too.
config.substitutions.append(("%split_onnx", "--split-input-file='# ""-----'"))
# Launches N ranks of a distributed program on this machine: as root too,
# more ranks than cores, shared memory between the ranks.
config.substitutions.append((
    "%mpirun",
    "mpirun --oversubscribe --allow-run-as-root --mca btl self,vader",
))
# Tests of full disks mount a small tmpfs: only where that is allowed.
def _can_mount_tmpfs():
    import subprocess
    import tempfile
    if os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory() as where:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k",
                                  "tmpfs", where], capture_output=True)
        if mounted.returncode != 0:
            return False
        subprocess.run(["umount", where], capture_output=True)
        return True
if _can_mount_tmpfs():
    config.available_features.add("tmpfs-mount")
# Tests over an emulated cluster make network namespaces
# (scripts/emulated-cluster.sh): only as root, with iproute2.
def _can_make_namespaces():
    import shutil
    import subprocess
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        return False
    name = "parallax-lit-probe-%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode:
        return False
    subprocess.run(["ip", "netns", "delete", name], capture_output=True)
    return True
if _can_make_namespaces():
    config.available_features.add("netns")
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()
cpu_flags = _cpu_flags()
# OpenBLAS's Haswell kernels (PARALLAX_BLAS_CORE=Haswell) need AVX2 and FMA.
if {"avx2", "fma"} <= cpu_flags:
    config.available_features.add("blas-haswell")
# What oneDNN's avx512_core kernels need (else it runs AVX2 ones, and the
# runtime routes some tiles differently).
if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= cpu_flags:
    config.available_features.add("cpu-avx512")
# Transparent huge pages given on request ("madvise" or "always"): the
# programs then run with glibc's heap on them (lib/Runtime/HeapPages.cpp).
def _huge_pages_on_request():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as modes:
            text = modes.read()
    except OSError:
        return False
    return "[madvise]" in text or "[always]" in text
if _huge_pages_on_request():
    config.available_features.add("thp")
# oneDNN (Debian's libdnnl2), which the runtime multiplies large tiles with.
def _has_onednn():
    import ctypes.util
    return ctypes.util.find_library("dnnl") is not None
if _has_onednn():
    config.available_features.add("onednn")
# --target cuda builds kernels with the CUDA toolkit's ptxas and
# fatbinary: only where Parallax was configured with one. Running them
# needs a GPU, which these tests never do (scripts/gpu-check.sh does).
config.substitutions.append(("%cuda_toolkit", config.parallax_cuda_toolkit))
if config.parallax_cuda_toolkit and os.path.exists(
        os.path.join(config.parallax_cuda_toolkit, "bin", "ptxas")):
    config.available_features.add("cuda-toolkit")
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# FileCheck, not, count, split-file come from the LLVM 22 prefix: put it
# first so Debian's older /usr/bin/FileCheck-14 is never picked up.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.parallax_tools_dir, append_path=True)

tools = [
    ToolSubst("parallax-opt", unresolved="fatal"),
    ToolSubst("parallax-translate", unresolved="fatal"),
    ToolSubst("parallax-compile", unresolved="fatal"),
    ToolSubst("mlir-runner", unresolved="fatal"),
]
# Runs a module lowered with --parallax-lower-to-llvm and its @main.
config.substitutions.append((
    "%run_main",
    "mlir-runner -e main -entry-point-result=void -shared-libs={0}/libmlir_runner_utils.so,{0}/libmlir_c_runner_utils.so,{0}/libomp.so,{1}/lib/libparallax_runner_utils.so".format(config.llvm_lib_dir, config.parallax_obj_root),
))
llvm_config.add_tool_substitutions(
    tools, [config.parallax_tools_dir, config.llvm_tools_dir]
)
