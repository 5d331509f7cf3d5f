# lit configuration for tilec's golden tests: each test runs `tilec` and checks its output with
# FileCheck (from llvm-19-tools). Tests are .tile sources, .ir files and .test scripts.
import os
import lit.formats

config.name = "tilec"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tile", ".ir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.environ.get("LIT_EXEC_ROOT", "/tmp"), "tilec-lit")

root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
tilec = os.environ.get("TILEC", os.path.join(root, "build", "tilec"))
ptxas = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
llvm_bin = os.environ.get("LLVM_BIN", "/usr/lib/llvm-19/bin")

config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
# Runaway kernels are stopped by the simulator's step budget, which is deterministic; the
# wall-clock limit is raised so that a slow (sanitized or loaded) machine cannot fail a test.
config.environment["TILEC_SIM_TIMEOUT"] = "86400"
config.environment["PTXAS"] = ptxas
config.substitutions.append(("%tilec", tilec))
config.substitutions.append(("%ptxas", ptxas))
config.substitutions.append(("%samples", os.path.join(root, "samples")))
config.substitutions.append(("%python", "python3"))
# the stand-in libamdhip64 the Makefile builds next to tilec (tests/unit/fake_hip)
config.substitutions.append(("%fakehip", os.path.join(os.environ.get("LIT_BUILD", os.path.join(root, "build")),
                                                      "libfake_amdhip64.so")))

# tilec run's .npy outputs are read back with numpy where a Python with numpy exists, and C
# references are built with the system C compiler: tests that need either say REQUIRES: numpy or
# REQUIRES: cc, and without it lit reports them UNSUPPORTED (a skip, never a pass), with a note here.
import shutil
import subprocess

numpy_python = None
for py in ("python3", "/usr/bin/python3"):
    try:
        if subprocess.run([py, "-c", "import numpy"], capture_output=True, timeout=60).returncode == 0:
            numpy_python = py
            break
    except (OSError, subprocess.TimeoutExpired):
        pass
if numpy_python:
    config.available_features.add("numpy")
    config.substitutions.append(("%numpy_python", numpy_python))
else:
    lit_config.note("numpy not found: the tests that read tilec run's .npy files with numpy are UNSUPPORTED (skipped)")
cc = shutil.which(os.environ.get("CC", "cc"))
if cc:
    config.available_features.add("cc")
    config.substitutions.append(("%cc", cc))
    config.substitutions.append(("%include", os.path.join(root, "include")))
else:
    lit_config.note("no C compiler (cc): the tests that build a tilec run --ref shared object are UNSUPPORTED (skipped)")
