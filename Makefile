# Una: build, test, install. `make check` is the test command.
CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
PKGS     := bdw-gc readline openblas jansson
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Werror=implicit-function-declaration
CFLAGS   ?= -O2 -g
# -fno-ivopts: GCC's induction-variable pass may keep, of an array walked
# backwards, only a pointer just before its first element; a collection
# during the loop's last call then frees the array while it is still read
# (Boehm GC knows interior pointers, not ones before an object). Found as
# Terms freed under `expand` in frontend/inline.c (docs/cpu.md, Memory).
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fno-ivopts -pthread \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# SLEEF (libsleef-dev), the vector math of sin, cos, tan and tanh
# (backend/vmath.h): no pkg-config file is assumed
LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lsleef -lm -ldl -pthread
TEST_LIBS = $(shell pkg-config --libs check 2>/dev/null)

# Build flavours: the normal build in build/, the sanitizer build in build/asan.
B ?= build
ifeq ($(SAN),1)
B := build/asan
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SMOKE ?= 200
endif
# The sanitizer build with the collector's allocations as malloc blocks
# (tests/gc_as_malloc.h), so that ASan sees overruns inside them.
ifeq ($(HEAP),1)
B := build/asan-heap
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
          -include $(CURDIR)/tests/gc_as_malloc.h
FUZZ_SMOKE ?= 200
endif
# The libFuzzer build (make fuzz-libfuzzer, tests/fuzz/README.md): clang,
# with libFuzzer's coverage, ASan and UBSan, in build/libfuzzer.
ifeq ($(LIBFUZZER),1)
B := build/libfuzzer
CC := clang
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
          -fno-sanitize-recover=undefined -Wno-ignored-optimization-argument -Wno-unused-command-line-argument
endif
# The AFL++ build (make fuzz-afl, tests/fuzz/README.md): afl-clang-fast's
# instrumentation, in build/afl; the libFuzzer harness is linked with
# AFL++'s driver (-fsanitize=fuzzer there means libAFLDriver).
ifeq ($(AFL),1)
B := build/afl
CC := afl-clang-fast
CFLAGS := -O1 -g -Wno-ignored-optimization-argument -Wno-unused-command-line-argument
endif
# The coverage build (make fuzz-coverage): gcov's counters, in build/cov.
ifeq ($(COVERAGE),1)
B := build/cov
CFLAGS := -O1 -g --coverage
endif
# The bundle for the GPU machine (make gpu-bundle, DEVELOPERS.md), in
# build/gpu: Boehm GC, readline (with tinfo) and Check (with subunit) linked
# statically, so that the binaries need only glibc's libraries (libc, libm,
# libdl, libpthread, librt) where they run. NVRTC and libcuda are opened
# with dlopen at run time, as in every build. OpenBLAS is left out (linked
# statically it would add some 25 MB to each binary): there the matrix
# products run as written (backend/blas.h, UNA_NO_BLAS).
# SLEEF is linked statically where its archive is installed; Debian ships
# only the shared library, which the bundle then carries in build/gpu/lib/
# (found through the binaries' run path, for build/gpu/ and build/gpu/bench/).
ifeq ($(STATIC),1)
B := build/gpu
ALL_CFLAGS += -DUNA_NO_BLAS
SLEEF_A  := $(shell $(CC) -print-file-name=libsleef.a)
ifneq ($(SLEEF_A),libsleef.a)
SLEEF_LIBS_STATIC := -lsleef
else
SLEEF_LIBS_DYN := -lsleef -Wl,-rpath,'$$ORIGIN/lib:$$ORIGIN/../lib'
endif
LIBS      = -Wl,-Bstatic -lgc -lreadline -ltinfo -ljansson $(SLEEF_LIBS_STATIC) -Wl,-Bdynamic $(SLEEF_LIBS_DYN) -lm -ldl -lrt -pthread
TEST_LIBS = -Wl,-Bstatic -lcheck_pic -lsubunit -Wl,-Bdynamic
endif

LIB_SRC  := $(filter-out frontend/repl/main.c,$(wildcard frontend/*.c frontend/ir/*.c frontend/repl/*.c frontend/gradbench/*.c backend/*.c backend/plan/*.c backend/cuda/*.c unf/*.c forward/*.c reverse/*.c derive/*.c optimizer/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o) $(B)/gen/prelude.o
# tests/gpu/ is the GPU test binary's (check_gpu, below), not check_una's.
# tests/backend/cuda/fake_*.c are the stand-ins for the driver, NVRTC and
# cuBLAS, shared objects of their own ($(FAKE_CUDA), $(FAKE_NVRTC),
# $(FAKE_CUBLAS)).
FAKE_DIR := tests/backend/cuda
TEST_SRC := $(filter-out tests/gpu/% tests/fuzz/% $(FAKE_DIR)/fake_%,$(wildcard tests/*.c tests/*/*.c tests/*/*/*.c)) \
            tests/fuzz/reduce.c tests/fuzz/test_reduce.c
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)
# check_gpu: tests/gpu/*.c (with its own main) and the helpers it shares with
# check_una (the fixtures, the gradient corpus and its checker, the generator).
GPU_TEST_SRC := $(wildcard tests/gpu/*.c) tests/testlib.c tests/reverse/corpus.c \
                tests/reverse/gradcheck.c tests/reverse/gen.c
GPU_TEST_OBJ := $(GPU_TEST_SRC:%.c=$(B)/%.o)
# fuzz: the program fuzzer (tests/fuzz/README.md), with the generator and
# the gradient checker of the tests.
FUZZ_SRC := $(filter-out tests/fuzz/test_%,$(wildcard tests/fuzz/*.c)) tests/testlib.c tests/reverse/gradcheck.c tests/reverse/gen.c
FUZZ_OBJ := $(FUZZ_SRC:%.c=$(B)/%.o)
FUZZ     := $(B)/fuzz
DEPS     := $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(GPU_TEST_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(B)/frontend/repl/main.d

ifeq ($(B),build)
UNA      := bin/una
else
UNA      := $(B)/una
endif
CHECK_BIN := $(B)/check_una
# Host-only stand-ins for libcuda.so.1 and libnvrtc.so (tests/backend/cuda):
# the driver tests load the first; with both, check_gpu runs its kernels,
# compiled for the host, on the CPU (check-gpu-host below). They are built
# without sanitizers: the driver's threads switch stacks.
FAKE_CUDA := $(B)/fake/libcuda.so.1
FAKE_NVRTC := $(B)/fake/libnvrtc.so
FAKE_CUBLAS := $(B)/fake/libcublas.so
FAKE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -shared -fPIC -pthread
CHECK_GPU := $(B)/check_gpu

.PHONY: all deps demo check test asan asan-heap check-gpu check-gpu-host gpu-bundle bench-grad install uninstall clean fuzz
all: $(UNA)

deps:
	@sh scripts/install-deps.sh

$(UNA): $(B)/frontend/repl/main.o $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

$(B)/libuna.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# --gradbench's modules are found in the source tree by default
$(B)/frontend/gradbench/gradbench.o: ALL_CFLAGS += -DUNA_SOURCE_DIR='"$(CURDIR)"'

$(B)/gen/prelude.c: prelude/prelude.una scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh una_prelude_text $< > $@

$(B)/gen/prelude.o: $(B)/gen/prelude.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags check 2>/dev/null) -MMD -MP -c -o $@ $<

$(CHECK_BIN): $(TEST_OBJ) $(B)/libuna.a | $(FAKE_CUDA) $(FAKE_NVRTC) $(FAKE_CUBLAS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(TEST_LIBS) $(LIBS)

$(FAKE_CUDA): $(FAKE_DIR)/fake_libcuda.c $(FAKE_DIR)/fake_blocks.c $(FAKE_DIR)/fake_blocks.h $(FAKE_DIR)/cuda_host.h
	@mkdir -p $(dir $@)
	$(CC) $(FAKE_CFLAGS) -o $@ $(FAKE_DIR)/fake_libcuda.c $(FAKE_DIR)/fake_blocks.c -ldl

$(FAKE_NVRTC): $(FAKE_DIR)/fake_nvrtc.c
	@mkdir -p $(dir $@)
	$(CC) $(FAKE_CFLAGS) -o $@ $<

$(FAKE_CUBLAS): $(FAKE_DIR)/fake_cublas.c
	@mkdir -p $(dir $@)
	$(CC) $(FAKE_CFLAGS) -o $@ $<

demo: deps
	@$(MAKE) --no-print-directory all
	$(UNA) examples/demo.una

# Every test: the folder layering of the includes (scripts/check-layers.sh),
# the Check unit suites and the script tests (tests/scripts), then the GPU
# tests with their kernels run on the host (check-gpu-host).
check: deps
	@sh scripts/check-layers.sh
	@sh scripts/check-layers.sh --self-test
	@$(MAKE) --no-print-directory $(UNA) $(CHECK_BIN) $(FUZZ)
	UNA_BIN=$(UNA) UNA_ROOT=$(CURDIR) UNA_FAKE_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) $(CHECK_BIN)
	$(FUZZ) --count $(FUZZ_SMOKE)
	$(FUZZ) --bytes --count $(FUZZ_BYTES_SMOKE)
	timeout 60 $(FUZZ) --replay tests/fuzz/regress/budget_every_item.una --budget 0.2
	@$(MAKE) --no-print-directory check-gpu-host

# The fuzzer's run in `make check`: the first FUZZ_SMOKE inputs (a fixed
# set; 200 in the sanitizer builds); `make fuzz` runs FUZZ_S seconds from FUZZ_SEED.
FUZZ_SMOKE ?= 600
FUZZ_BYTES_SMOKE ?= 400
FUZZ_S ?= 600
FUZZ_SEED ?= 1
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ)
	$(FUZZ) --seconds $(FUZZ_S) --seed $(FUZZ_SEED)

$(FUZZ): $(FUZZ_OBJ) $(B)/libuna.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(TEST_LIBS) $(LIBS)

# The byte-level fuzzer over the scripts as seeds (FUZZ_S seconds), and the
# same inputs under libFuzzer where clang has it (FUZZ_S seconds; new
# inputs and crashes are kept in build/libfuzzer/corpus and ./crash-*).
.PHONY: fuzz-bytes fuzz-libfuzzer
fuzz-bytes: deps
	@$(MAKE) --no-print-directory $(FUZZ)
	$(FUZZ) --bytes --seconds $(FUZZ_S) --seed $(FUZZ_SEED)

LIBFUZZER_OBJ := $(B)/tests/fuzz/libfuzzer/harness.o $(B)/tests/fuzz/session_input.o
$(B)/fuzz_libfuzzer: $(LIBFUZZER_OBJ) $(B)/libuna.a
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz-libfuzzer: deps
	@$(MAKE) --no-print-directory LIBFUZZER=1 build/libfuzzer/fuzz_libfuzzer
	@mkdir -p build/libfuzzer/corpus
	ASAN_OPTIONS=detect_leaks=0 build/libfuzzer/fuzz_libfuzzer -max_total_time=$(FUZZ_S) -rss_limit_mb=8192 \
	  -timeout=30 build/libfuzzer/corpus tests/scripts

test: check

# The GPU tests (GPU_TEST_SRC above): they need an NVIDIA GPU, so `make
# check` leaves them out.
$(CHECK_GPU): $(GPU_TEST_OBJ) $(B)/libuna.a
	@test -n "$(wildcard tests/gpu/*.c)" || { echo "make: tests/gpu/ has no tests yet" >&2; exit 1; }
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(TEST_LIBS) $(LIBS)

check-gpu: deps
	@$(MAKE) --no-print-directory $(UNA) $(CHECK_GPU)
	UNA_BIN=$(UNA) UNA_ROOT=$(CURDIR) $(CHECK_GPU)

# check_gpu without a GPU: the stand-in NVRTC compiles the kernels for the
# host and the stand-in driver runs them (tests/backend/cuda/fake_*.c), at
# the lengths up to UNA_CHECK_GPU_MAX_LENGTH. A fresh kernel cache each run.
HOST_GPU_ENV = UNA_ROOT=$(CURDIR) UNA_LIBCUDA=$(CURDIR)/$(FAKE_CUDA) UNA_LIBNVRTC=$(CURDIR)/$(FAKE_NVRTC) \
               UNA_LIBCUBLAS=$(CURDIR)/$(FAKE_CUBLAS) \
               UNA_HOST_INCLUDE=$(CURDIR)/$(FAKE_DIR) UNA_CACHE_DIR=$(CURDIR)/$(B)/fake/cache \
               FAKE_CUDA_MEM=4294967296 UNA_CHECK_GPU_MAX_LENGTH=70000
check-gpu-host: deps
	@$(MAKE) --no-print-directory $(CHECK_GPU) $(FAKE_CUDA) $(FAKE_NVRTC) $(FAKE_CUBLAS) $(FUZZ)
	@rm -rf $(B)/fake/cache
	$(HOST_GPU_ENV) $(CHECK_GPU)
	$(HOST_GPU_ENV) $(FUZZ) --gpu --count $(FUZZ_GPU_SMOKE)

# The program fuzzer with its GPU oracle, the kernels compiled for the host
# and run by the stand-in driver (tests/fuzz/README.md): FUZZ_GPU_N inputs
# from FUZZ_SEED.
FUZZ_GPU_SMOKE ?= 6
FUZZ_GPU_N ?= 1000
# Line coverage of the compiler and the engine reached by the fuzzers
# alone (tests/fuzz/README.md): FUZZ_COV_N program inputs, as many byte
# inputs and FUZZ_COV_GPU inputs through the GPU oracle, in the coverage
# build; scripts/coverage.sh sums gcov's counts by folder.
FUZZ_COV_N ?= 50000
FUZZ_COV_GPU ?= 100
# The byte-level fuzzing under AFL++ (Debian's afl++) for FUZZ_S seconds:
# its queue and crashes in build/afl/out. AFL_FLAGS adds afl-fuzz options.
AFL_FLAGS ?=
.PHONY: fuzz-afl
build/afl/fuzz_afl: $(LIBFUZZER_OBJ) $(B)/libuna.a
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz-afl: deps
	@command -v afl-fuzz > /dev/null || { echo "make: fuzz-afl needs AFL++ (apt-get install afl++)" >&2; exit 1; }
	@$(MAKE) --no-print-directory AFL=1 build/afl/fuzz_afl
	@mkdir -p build/afl/in build/afl/work
	@for f in tests/scripts/*.una; do [ $$(wc -c < $$f) -le 4096 ] && cp $$f build/afl/in/; done; true
	cd build/afl/work && AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
	  afl-fuzz -i ../in -o ../out -V $(FUZZ_S) -t 10000 -m none $(AFL_FLAGS) -- ../fuzz_afl

.PHONY: fuzz-coverage
fuzz-coverage: deps
	@$(MAKE) --no-print-directory $(FAKE_CUDA) $(FAKE_NVRTC) $(FAKE_CUBLAS)
	@$(MAKE) --no-print-directory COVERAGE=1 build/cov/fuzz
	@find build/cov -name '*.gcda' -delete
	build/cov/fuzz --count $(FUZZ_COV_N) --seed $(FUZZ_SEED) --quiet
	build/cov/fuzz --bytes --count $(FUZZ_COV_N) --seed $(FUZZ_SEED)
	$(HOST_GPU_ENV) build/cov/fuzz --gpu --count $(FUZZ_COV_GPU) --seed $(FUZZ_SEED) --quiet
	sh scripts/coverage.sh build/cov frontend unf forward reverse derive optimizer backend

.PHONY: fuzz-gpu-host
fuzz-gpu-host: deps
	@$(MAKE) --no-print-directory $(FAKE_CUDA) $(FAKE_NVRTC) $(FAKE_CUBLAS) $(FUZZ)
	$(HOST_GPU_ENV) $(FUZZ) --gpu --count $(FUZZ_GPU_N) --seed $(FUZZ_SEED)

# The binaries to carry to the GPU machine (DEVELOPERS.md), in build/gpu,
# linked statically but for glibc (STATIC=1 above); fails when one of them
# needs any other shared library. check_gpu and the GPU benchmark's driver
# are built once their sources exist.
GPU_BUNDLE = build/gpu/una build/gpu/check_una \
             $(if $(wildcard tests/gpu/*.c),build/gpu/check_gpu) \
             $(if $(wildcard bench/gpu/una_gpu_bench.c),build/gpu/bench/una_gpu_bench)
gpu-bundle: deps
	@$(MAKE) --no-print-directory STATIC=1 B=build/gpu $(GPU_BUNDLE)
	@rm -rf build/gpu/lib
	@if [ "$$($(CC) -print-file-name=libsleef.a)" = libsleef.a ]; then \
	  mkdir -p build/gpu/lib && cp -L "$$($(CC) -print-file-name=libsleef.so.3)" build/gpu/lib/libsleef.so.3; \
	fi
	@for f in $(GPU_BUNDLE); do \
	  if ldd $$f | grep -v -E 'linux-vdso|ld-linux|/lib(c|m|dl|pthread|rt)\.so|build/gpu/(bench/\.\./)?lib/libsleef\.so'; then \
	    echo "gpu-bundle: $$f needs the shared libraries above (only glibc's, and SLEEF's in build/gpu/lib, may remain)" >&2; exit 1; \
	  fi; \
	done
	@echo "gpu-bundle: $(strip $(GPU_BUNDLE)) need only glibc$$([ -d build/gpu/lib ] && echo ' and build/gpu/lib/libsleef.so.3')"

# The whole suite built and run with AddressSanitizer and UBSan.
asan: deps
	@$(MAKE) --no-print-directory SAN=1 check

# The unit and script tests with AddressSanitizer and every allocation of
# the collector a malloc block that is never freed (tests/gc_as_malloc.h):
# overruns inside IR nodes, arrays and strings become ASan reports.
asan-heap: deps
	@ASAN_OPTIONS=detect_leaks=0 $(MAKE) --no-print-directory HEAP=1 check

# The scaling benchmark of reverse mode (bench/grad_scale/README.md).
$(B)/bench/grad_scale: bench/grad_scale/grad_scale.c bench/bench_util.h $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libuna.a $(LIBS)

bench-grad: deps
	@$(MAKE) --no-print-directory $(B)/bench/grad_scale
	$(B)/bench/grad_scale

# :grad on the shapes that used to blow up (bench/grad_scale/README.md).
$(B)/bench/grad_shapes: bench/grad_scale/shapes.c bench/bench_util.h $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libuna.a $(LIBS)

.PHONY: bench-grad-shapes
bench-grad-shapes: deps
	@$(MAKE) --no-print-directory $(B)/bench/grad_shapes
	$(B)/bench/grad_shapes $(SHAPES)

# GradBench's evals against Una, its manual C++ tool, JAX and PyTorch
# (bench/gradbench/README.md): GRADBENCH_DIR is a copy of GradBench's source
# (git clone https://github.com/gradbench/gradbench); EVALS= a subset;
# GRADBENCH_FULL=1 the evals' full sizes. Writes bench/gradbench/RESULTS.md.
GRADBENCH_DIR ?=
.PHONY: gradbench
gradbench: deps
	@test -n "$(GRADBENCH_DIR)" || { echo "make gradbench: set GRADBENCH_DIR to a copy of GradBench's source (git clone https://github.com/gradbench/gradbench DIR)" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(UNA)
	sh bench/gradbench/setup.sh $(GRADBENCH_DIR) bench/.venv
	UNA=$(CURDIR)/$(UNA) bench/.venv/bin/python bench/gradbench/run.py $(GRADBENCH_DIR) $(EVALS)

# The derivative operators (jvp, vjp, Hessian-vector products next to
# grad) against JAX and PyTorch (bench/deriv/README.md).
$(B)/bench/deriv_bench: bench/deriv/deriv_bench.c bench/bench_util.h $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libuna.a $(LIBS)

.PHONY: bench-deriv
bench-deriv: deps
	@$(MAKE) --no-print-directory $(B)/bench/deriv_bench
	@B=$(B) sh bench/deriv/run.sh

# The CPU benchmark suite: Una against hand-written C, JAX and PyTorch
# (bench/cpu/README.md). BENCH_N, BENCH_PROGRAMS, BENCH_PEERS select a subset.
.PHONY: bench
# The block loops vectorize with gathers (exp's table), which -O2's cost
# model refuses; so do the monoids' loops over blocks (lanes, a carry
# combined into a block), whose trip counts it does not know.
# (GCC's flag: clang, in the libFuzzer and AFL++ builds, has its own cost
# model.)
ifeq ($(LIBFUZZER)$(AFL),)
$(B)/backend/vmath.o $(B)/backend/kernel_run.o $(B)/backend/array_ops.o $(B)/backend/array_int.o: ALL_CFLAGS += -fvect-cost-model=dynamic
endif
# SLEEF's 4-lane functions (sin, cos, tan, tanh), called only where the
# processor has AVX
ifeq ($(shell uname -m),x86_64)
$(B)/backend/vmath_avx.o: ALL_CFLAGS += -mavx
endif

# The hand-written C, twice (bench/cpu/README.md): c_grads.o, gcc -O2
# single-threaded (the earlier baseline; the GPU benchmark takes the
# programs' text and inputs from it, so its bundle needs no libgomp), and
# c_grads_omp.o, as a good C programmer compiles it, with OpenMP on all
# cores (the table's C baseline; una_bench only).
$(B)/bench/c_grads.o: bench/cpu/c_grads.c bench/cpu/c_grads.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -Wno-unknown-pragmas -c -o $@ $<

$(B)/bench/c_grads_omp.o: bench/cpu/c_grads.c bench/cpu/c_grads.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O3 -march=native -fopenmp -g $(WARN) -DC_GRADS_OMP -c -o $@ $<

# The array programs' C (c_arrays.c): the same flags, and OpenBLAS for the
# products.
$(B)/bench/c_arrays.o: bench/cpu/c_arrays.c bench/cpu/c_arrays.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O3 -march=native -fopenmp -g $(WARN) $(shell pkg-config --cflags openblas 2>/dev/null) -c -o $@ $<

$(B)/bench/una_bench: bench/cpu/una_bench.c bench/bench_util.h bench/cpu/c_grads.h bench/cpu/c_arrays.h $(B)/bench/c_grads.o $(B)/bench/c_grads_omp.o $(B)/bench/c_arrays.o $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fopenmp -o $@ $< $(B)/bench/c_grads.o $(B)/bench/c_grads_omp.o $(B)/bench/c_arrays.o $(B)/libuna.a $(LIBS)

bench: deps
	@$(MAKE) --no-print-directory $(B)/bench/una_bench
	@B=$(B) sh bench/cpu/run.sh

# The GPU benchmark: Una's gradients on the GPU against JAX, PyTorch and a
# copy (bench/gpu/README.md); needs an NVIDIA GPU. The driver takes the
# programs' Una text and inputs from c_grads.c. BENCH_N, BENCH_PROGRAMS,
# BENCH_PEERS select a subset.
.PHONY: bench-gpu
$(B)/bench/una_gpu_bench: bench/gpu/una_gpu_bench.c bench/bench_util.h bench/cpu/c_grads.h $(B)/bench/c_grads.o $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/bench/c_grads.o $(B)/libuna.a $(LIBS)

bench-gpu: deps
	@$(MAKE) --no-print-directory $(B)/bench/una_gpu_bench
	@B=$(B) sh bench/gpu/run.sh

install: $(UNA)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/una $(DESTDIR)$(PREFIX)/share/doc/una
	install -m 755 $(UNA) $(DESTDIR)$(PREFIX)/bin/una
	install -m 644 prelude/prelude.una $(DESTDIR)$(PREFIX)/share/una/prelude.una
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/una/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/una
	rm -rf $(DESTDIR)$(PREFIX)/share/una $(DESTDIR)$(PREFIX)/share/doc/una

clean:
	rm -rf build bin

-include $(DEPS)
