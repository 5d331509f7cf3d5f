# tilec: `make` builds the compiler and library, `make check` runs the tests, `make demo` the main job.
# Generated sources (re2c, lemon) and objects go to build/; nothing generated is committed.

.DEFAULT_GOAL := all

# Parallel by default (JOBS=1 for a serial build); one short line per file, V=1 for full commands.
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(JOBS)
endif
MAKEFLAGS += --no-print-directory
V        ?= 0
ifeq ($(V),1)
Q        :=
say      := @:
else
Q        := @
say      := @printf '  %-7s %s\n'
endif

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build
CUDA_HOME ?= /usr/local/cuda
PTXAS    ?= $(shell command -v ptxas 2>/dev/null || echo $(CUDA_HOME)/bin/ptxas)
LLVM_BIN ?= /usr/lib/llvm-19/bin
LIT      ?= python3 /usr/lib/llvm-19/build/utils/lit/lit.py
# The AMD back end is its own shared object, $(BUILD)/libtile_amdgcn.so (codegen_amdgcn/amd_emit.c
# linked with libLLVM-19 from llvm-19-dev), which libtile opens with dlopen on the first AMD compile
# (codegen_amdgcn/amd_load.c): libtile and tilec do not link LLVM. ld.lld-19 (lld-19) makes the code
# objects. AMD=0 does not build the shared object (for machines without libLLVM-19, e.g. a GPU box
# that only runs NVIDIA code): AMD targets then give a clear error.
AMD      ?= 1
LLVM_CONFIG ?= llvm-config-19
LLVM_INC := $(shell $(LLVM_CONFIG) --includedir 2>/dev/null || echo /usr/lib/llvm-19/include)
LLVM_LIBDIR := $(shell $(LLVM_CONFIG) --libdir 2>/dev/null || echo /usr/lib/llvm-19/lib)
LLVM_LIBS := -L$(LLVM_LIBDIR) -Wl,-rpath,$(LLVM_LIBDIR) $(shell $(LLVM_CONFIG) --libs 2>/dev/null || echo -lLLVM-19)
LD_LLD   ?= $(shell command -v ld.lld-19 2>/dev/null || echo /usr/lib/llvm-19/bin/ld.lld)

WARN     = -Wall -Wextra -Wpedantic -Wshadow -Wmissing-prototypes -Werror
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC
CPPFLAGS += -Iinclude -Iir -Ifrontend -Ipasses -Icodegen_ptx -Icodegen_amdgcn -Ilib -Iruntime -Iruntime/sim -Isamples/ref -I$(BUILD)/gen -I$(CUDA_HOME)/include
# amd_emit.c is the back end's shared object, never part of libtile.
AMD_SRC  = $(filter-out codegen_amdgcn/amd_emit.c,$(wildcard codegen_amdgcn/*.c))
override LDLIBS += -lm -ldl -lpthread

GEN      = $(BUILD)/gen
LIB_SRC  = $(wildcard ir/*.c) $(wildcard frontend/*.c) $(wildcard passes/*.c) \
           $(wildcard codegen_ptx/*.c) $(AMD_SRC) $(wildcard runtime/*.c) $(wildcard runtime/sim/*.c) $(wildcard lib/*.c)
GEN_SRC  = $(GEN)/lexer.c $(GEN)/parser.c
LIB_OBJ  = $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC)) $(GEN)/lexer.o $(GEN)/parser.o
HDRS     = $(wildcard include/*.h ir/*.h ir/*.def frontend/*.h passes/*.h codegen_ptx/*.h codegen_amdgcn/*.h runtime/*.h runtime/sim/*.h lib/*.h) $(GEN)/parser.h

# The samples' C references and the run harness (samples/ref): linked into tilec, gpucheck, bench.
REF_SRC  = $(wildcard samples/ref/*.c)
REF_OBJ  = $(patsubst %.c,$(BUILD)/%.o,$(REF_SRC))
CLI_SRC  = $(wildcard cli/*.c)
CLI_OBJ  = $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC))
$(REF_OBJ) $(CLI_OBJ): samples/ref/refs.h

TILEC    = $(BUILD)/tilec
LIBA     = $(BUILD)/libtile.a
LIBSO    = $(BUILD)/libtile.so
AMDSO    = $(BUILD)/libtile_amdgcn.so
AMDDIR   = $(PREFIX)/lib/tilec
ifeq ($(AMD),0)
AMDSO_IF :=
else
AMDSO_IF := $(AMDSO)
endif

.PHONY: all deps check layout unit lit hostile scaling asan demo install clean bench fuzz regen-check gpucheck embed link-check python-test
all: $(TILEC) $(LIBA) $(LIBSO) $(AMDSO_IF)

deps:
	@./scripts/deps.sh

$(BUILD)/.deps-ok: scripts/deps.sh
	@./scripts/deps.sh
	@mkdir -p $(BUILD) && touch $@

$(GEN)/lexer.c: frontend/lexer.re $(GEN)/parser.h | $(BUILD)/.deps-ok
	@mkdir -p $(GEN)
	$(say) RE2C $<
	$(Q)re2c --no-generation-date --no-version -W -Werror -o $@ $<

# lemon writes parser.c/.h next to its input: run it on a copy inside build/gen.
$(GEN)/parser.c $(GEN)/parser.h &: frontend/parser.y | $(BUILD)/.deps-ok
	@mkdir -p $(GEN)
	$(say) LEMON $<
	$(Q)cp frontend/parser.y $(GEN)/parser.y
	$(Q)cd $(GEN) && lemon -l -q parser.y

# The library's objects export only what tile.h marks TILE_API (libtile.so's export list).
LIB_FLAGS = -fvisibility=hidden -DTILE_BUILDING_LIBRARY
$(LIB_OBJ): EXTRA_CFLAGS = $(LIB_FLAGS)

$(GEN)/%.o: $(GEN)/%.c $(HDRS)
	$(say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) -Wno-unused-parameter -Wno-missing-prototypes -Wno-shadow -c $< -o $@

$(BUILD)/%.o: %.c $(HDRS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) -DTILEC_PTXAS='"$(PTXAS)"' -DTILEC_LD_LLD='"$(LD_LLD)"' -c $< -o $@

$(LIBA): $(LIB_OBJ)
	$(say) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSO): $(LIB_OBJ)
	$(say) LD $@
	$(Q)$(CC) -shared -o $@ $^ $(LDLIBS)

$(TILEC): $(CLI_OBJ) $(REF_OBJ) $(LIBA)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# ---- the AMD back end (codegen_amdgcn/amdgcn.h) ----
# The loader and the shared object are stamped with a checksum of the headers whose types cross
# between them; the loader knows where the build tree's copy and the installed one are.
AMD_ABI := $(shell cat ir/*.h ir/*.def codegen_amdgcn/amdgcn.h 2>/dev/null | cksum | cut -d' ' -f1)
$(BUILD)/codegen_amdgcn/amd_emit.o: CPPFLAGS += -isystem $(LLVM_INC) -DAMD_BACKEND_ABI='"$(AMD_ABI)"'
$(BUILD)/codegen_amdgcn/amd_load.o: CPPFLAGS += -DAMD_BACKEND_ABI='"$(AMD_ABI)"' \
  -DTILEC_AMDGCN_SO='"$(abspath $(AMDSO))"' -DTILEC_AMDGCN_DIR='"$(AMDDIR)"'
# amd_emit.o with the members of libtile.a it calls (the IR helpers), those hidden
# (--exclude-libs): the one exported symbol is amd_backend.
$(AMDSO): $(BUILD)/codegen_amdgcn/amd_emit.o $(LIBA)
	$(say) LD $@
	$(Q)$(CC) -shared -o $@ $< $(LIBA) -Wl,--exclude-libs,ALL $(LLVM_LIBS) $(LDLIBS)

# libtile and tilec link no LLVM, a program links libtile (static or shared) with -lm -ldl -lpthread
# only, and the back end is opened from where the search order of amdgcn.h finds it.
link-check: $(TILEC) $(LIBA) $(LIBSO) $(AMDSO_IF)
	@CC="$(CC)" AMD=$(AMD) LIBS="$(LDLIBS)" ./tests/link/run.sh $(BUILD)

# ---- tests ----
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread -lm)
UNIT_SRC = $(wildcard tests/unit/*.c)
# A stand-in libamdhip64 for the hip back end's tests (tests/unit/fake_hip; no AMD GPU here).
FAKE_HIP = $(BUILD)/libfake_amdhip64.so
$(FAKE_HIP): tests/unit/fake_hip/fake_amdhip64.c | $(BUILD)/.deps-ok
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) -Wno-missing-prototypes -shared -fPIC -o $@ $<

$(BUILD)/unit_tests: $(UNIT_SRC) $(LIBA) $(HDRS) $(FAKE_HIP)
	$(say) LD $@
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-missing-prototypes -DTILEC_FAKE_HIP='"$(abspath $(FAKE_HIP))"' \
	  -DTILEC_LLVM_BIN='"$(LLVM_BIN)"' -o $@ $(UNIT_SRC) $(LIBA) $(CHECK_LIBS) $(LDLIBS)

unit: $(BUILD)/unit_tests $(AMDSO_IF)
	$(say) UNIT tests/unit
	$(Q)CK_FORK=no $(BUILD)/unit_tests

lit: $(TILEC) $(FAKE_HIP) $(AMDSO_IF)
	$(say) LIT "tests/lit tests/sim"
	$(Q)TILEC=$(abspath $(TILEC)) PTXAS=$(PTXAS) LLVM_BIN=$(LLVM_BIN) LIT_BUILD=$(abspath $(BUILD)) LIT_EXEC_ROOT=$(abspath $(BUILD))/lit $(LIT) -sv tests/lit tests/sim

# The structure: folders include only along the edges tests/layout/includes.py writes down, and
# libtile.so exports exactly tile.h's TILE_API functions.
layout: $(LIBSO)
	$(Q)python3 tests/layout/includes.py
	$(Q)sh tests/layout/exports.sh $(LIBSO)

# Hostile inputs (tests/hostile/run.py): every case fails with a located error, no signal, no
# sanitizer report, within the time limit. Scaling (tests/scaling/run.py): doubling a large input
# must not triple its time or memory.
HOSTILE_TIMEOUT ?= 10
hostile: $(TILEC) $(AMDSO_IF)
	$(say) HOSTILE tests/hostile
	$(Q)HOSTILE_TIMEOUT=$(HOSTILE_TIMEOUT) python3 tests/hostile/run.py --tilec $(TILEC)

# The scaling tests measure each compile through a small forking helper (see its comment).
$(BUILD)/scaling-measure: tests/scaling/measure.c | $(BUILD)/.deps-ok
	$(say) CC $@
	$(Q)$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<

scaling: $(TILEC) $(AMDSO_IF) $(BUILD)/scaling-measure
	$(say) SCALING tests/scaling
	$(Q)python3 tests/scaling/run.py --tilec $(TILEC) --meter $(BUILD)/scaling-measure

# The Python package (python/tilec) from the build tree and from an install, with Debian's python3
# and NumPy (scripts/deps.sh installs python3-numpy).
PYTHON_NUMPY ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
# a sanitized libtile (make asan) needs the sanitizer runtime loaded before Python (not instrumented)
PY_SAN = $(if $(findstring -fsanitize=address,$(CFLAGS)),LD_PRELOAD=$(shell $(CC) -print-file-name=libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0)
python-test: $(LIBSO)
	$(say) PYTHON tests/python
	$(Q)$(PY_SAN) PYTHONPATH=$(abspath python) TILEC_LIB=$(abspath $(LIBSO)) $(PYTHON_NUMPY) -m unittest discover -s tests/python
	$(Q)rm -rf $(BUILD)/pyinstall && $(MAKE) -s install PREFIX=$(abspath $(BUILD))/pyinstall >/dev/null
	$(Q)cd / && env -u TILEC_LIB $(PY_SAN) PYTHONPATH=$(abspath $(BUILD))/pyinstall/lib/python3/dist-packages $(PYTHON_NUMPY) -c \
	  "import tilec, tilec.gemm, tilec.attention, sys; p = tilec.compile('kernel k(x: f32*) block(32) { x[0] = 1.0; }'); \
	   assert p.kernels == ['k'] and tilec._find_lib().startswith('$(abspath $(BUILD))/pyinstall/'), tilec._find_lib(); \
	   d = tilec.gemm.samples_dir(); assert d == '$(abspath $(BUILD))/pyinstall/share/tilec/samples', d; \
	   ks = [tilec.gemm.kernel(tilec.gemm.Config(kind)).name for kind in tilec.gemm._SAMPLE]; \
	   a = tilec.attention.kernel(tilec.attention.Config()); \
	   print('python: the installed package imports and compiles (' + tilec._find_lib() + '), its kernels too (' + \
	         ', '.join(sorted(set(ks)) + [a.name]) + ')')"

check: all $(BUILD)/unit_tests regen-check layout link-check
	@$(MAKE) lit
	@$(MAKE) unit
	@$(MAKE) python-test
	@$(MAKE) hostile
	@$(MAKE) scaling

# The generated lexer and parser must be reproducible: regenerate into a scratch dir and compare.
regen-check: $(GEN)/lexer.c $(GEN)/parser.c
	@rm -rf $(BUILD)/regen && mkdir -p $(BUILD)/regen
	@cp frontend/parser.y $(BUILD)/regen/ && cd $(BUILD)/regen && lemon -l -q parser.y
	@re2c --no-generation-date --no-version -W -Werror -o $(BUILD)/regen/lexer.c frontend/lexer.re
	@sed -i 's|$(BUILD)/regen/|$(GEN)/|g' $(BUILD)/regen/lexer.c
	@cmp -s $(BUILD)/regen/parser.c $(GEN)/parser.c && cmp -s $(BUILD)/regen/lexer.c $(GEN)/lexer.c \
	  && echo "regen-check: generated lexer and parser are reproducible" \
	  || { echo "regen-check: regenerating changed the output" >&2; exit 1; }

# use_tls=0: LeakSanitizer of clang 14 misreads glibc 2.36's dynamic-TLS vector (the libLLVM that an
# AMD compile dlopens) and its tracer crashes on a bogus DTLS range; leaks are still checked, with
# glibc's thread-local dlerror() buffer suppressed (tests/lsan.supp).
asan:
	LSAN_OPTIONS=use_tls=0:suppressions=$(abspath tests/lsan.supp) $(MAKE) BUILD=build-asan CC=clang CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDLIBS="-fsanitize=address,undefined" HOSTILE_TIMEOUT=60 check

# On the GPU: every sample against its C reference, streams, events, callbacks, checked errors.
# Exit status 77 (and a SKIPPED line) when there is no GPU; GPUCHECK_FLAGS=--sanitize for compute-sanitizer.
$(BUILD)/gpucheck: tests/gpu/gpucheck.c $(REF_OBJ) $(LIBA) samples/ref/refs.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ tests/gpu/gpucheck.c $(REF_OBJ) $(LIBA) $(LDLIBS)

# NVSHMEM: the drivers of samples/multi and the ordering test, one process per GPU.
$(BUILD)/shmem_check: tests/gpu/shmem_check.c $(LIBA)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ tests/gpu/shmem_check.c $(LIBA) $(LDLIBS)

gpucheck: all $(BUILD)/gpucheck
	./tests/gpu/run.sh $(GPUCHECK_FLAGS)

# samples/embed: C programs using only tile.h and the shared library.
$(BUILD)/embed_streams: samples/embed/streams.c include/tile.h $(LIBSO)
	$(CC) -Iinclude $(CFLAGS) -o $@ samples/embed/streams.c -L$(BUILD) -ltile -Wl,-rpath,$(abspath $(BUILD)) $(LDLIBS)

embed: $(BUILD)/embed_streams

demo: all $(BUILD)/compile_time $(BUILD)/embed_streams
	@./scripts/demo.sh $(TILEC)

$(BUILD)/compile_time: bench/compile_time.c $(LIBA)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/compile_time.c $(LIBA) $(LDLIBS)

$(BUILD)/bench_launch: bench/launch.c $(REF_OBJ) $(LIBA) samples/ref/refs.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/launch.c $(REF_OBJ) $(LIBA) $(LDLIBS)

$(BUILD)/bench_tma_copy: bench/tma_copy.c $(REF_OBJ) $(LIBA) samples/ref/refs.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/tma_copy.c $(REF_OBJ) $(LIBA) $(LDLIBS)

# Cluster launch control: dynamic vs static grid vs static persistent (bench/persistent.c).
$(BUILD)/bench_persistent: bench/persistent.c $(REF_OBJ) $(LIBA) samples/ref/refs.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/persistent.c $(REF_OBJ) $(LIBA) $(LDLIBS) -lm

# The simulator's speed (simulated thread-ops/s, one core) on pipelined_rowsum; --check runs every
# sample on the sim device against its C reference under every schedule.
$(BUILD)/bench_sim: bench/sim.c $(REF_OBJ) $(LIBA) samples/ref/refs.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/sim.c $(REF_OBJ) $(LIBA) $(LDLIBS)

# The measured accuracy of the math functions in their two forms (docs/LANGUAGE.md §9).
$(BUILD)/math_accuracy: bench/math_accuracy.c $(LIBA)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/math_accuracy.c $(LIBA) $(LDLIBS) -lm

# bench_launch and bench_tma_copy exit 77 (after saying why) without a GPU; that does not fail the
# compile benchmarks.
bench: $(BUILD)/compile_time $(BUILD)/bench_launch $(BUILD)/bench_tma_copy $(BUILD)/bench_sim
	$(BUILD)/compile_time samples/*.tile
	$(BUILD)/compile_time --target sm_100a samples/*.tile
	$(BUILD)/compile_time --target gfx942 samples/amd/*.tile
	$(BUILD)/bench_launch || [ $$? -eq 77 ]
	$(BUILD)/bench_tma_copy || [ $$? -eq 77 ]
	$(BUILD)/bench_sim

fuzz:
	$(MAKE) -C tests/fuzz

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(TILEC) $(DESTDIR)$(PREFIX)/bin/tilec
	install -m 644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/libtile.a
	install -m 755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/libtile.so
	install -m 644 include/tile.h $(DESTDIR)$(PREFIX)/include/tile.h
	$(if $(AMDSO_IF),install -d $(DESTDIR)$(AMDDIR) && install -m 755 $(AMDSO) $(DESTDIR)$(AMDDIR)/libtile_amdgcn.so)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|0.1.0|g' scripts/tile.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/tile.pc
	install -d $(DESTDIR)$(PREFIX)/lib/python3/dist-packages/tilec
	install -m 644 python/tilec/__init__.py python/tilec/gemm.py python/tilec/attention.py \
		$(DESTDIR)$(PREFIX)/lib/python3/dist-packages/tilec/
	install -d $(DESTDIR)$(PREFIX)/share/tilec/samples
	install -m 644 samples/gemm_sm90.tile samples/gemm_persistent_sm90.tile samples/gemm_pingpong_sm90.tile samples/gemm_cluster_sm90.tile \
		samples/gemm_quad_sm90.tile \
		samples/gemm_splitk_sm90.tile samples/gemm_fp8_scaled_sm90.tile samples/gemm_fp8_narrow_sm90.tile \
		samples/attention_fwd_sm90.tile $(DESTDIR)$(PREFIX)/share/tilec/samples/

clean:
	rm -rf build build-asan
