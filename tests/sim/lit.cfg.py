# lit configuration for the simulator's tests: each test runs kernels with `tilec run --device sim`
# and checks the outcome with FileCheck: every sample against its C reference under several
# schedules (samples/), and the diagnosis of each classic pipeline bug (hangs/).
import os
import lit.formats

config.name = "tilec-sim"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tile", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.environ.get("LIT_EXEC_ROOT", "/tmp"), "tilec-sim")

root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
tilec = os.environ.get("TILEC", os.path.join(root, "build", "tilec"))
llvm_bin = os.environ.get("LLVM_BIN", "/usr/lib/llvm-19/bin")

config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
# Runaway kernels are stopped by the simulator's step budget, which is deterministic; the
# wall-clock limit is raised so that a slow (sanitized or loaded) machine cannot fail a test.
config.environment["TILEC_SIM_TIMEOUT"] = "86400"
config.substitutions.append(("%tilec", tilec))
config.substitutions.append(("%samples", os.path.join(root, "samples")))
config.substitutions.append(("%python", "python3"))
