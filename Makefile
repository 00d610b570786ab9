# Una: build, test, install. `make check` is the test command.
CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
PKGS     := bdw-gc readline
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Werror=implicit-function-declaration
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -pthread \
             $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -ldl -pthread
TEST_LIBS = $(shell pkg-config --libs check 2>/dev/null)

# Build flavours: the normal build in build/, the sanitizer build in build/asan.
B ?= build
ifeq ($(SAN),1)
B := build/asan
CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
endif

LIB_SRC  := $(filter-out frontend/main.c,$(wildcard frontend/*.c backend/*.c unf/*.c reverse/*.c optimizer/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o) $(B)/gen/prelude.o
TEST_SRC := $(wildcard tests/*.c tests/*/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(B)/%.o)
DEPS     := $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(B)/frontend/main.d

ifeq ($(B),build)
UNA      := bin/una
else
UNA      := $(B)/una
endif
CHECK_BIN := $(B)/check_una

.PHONY: all deps demo check test asan bench-grad install uninstall clean
all: $(UNA)

deps:
	@sh scripts/install-deps.sh

$(UNA): $(B)/frontend/main.o $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

$(B)/libuna.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/gen/prelude.c: prelude/prelude.una scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh una_prelude_text $< > $@

$(B)/gen/prelude.o: $(B)/gen/prelude.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags check 2>/dev/null) -MMD -MP -c -o $@ $<

$(CHECK_BIN): $(TEST_OBJ) $(B)/libuna.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(TEST_LIBS) $(LIBS)

demo: deps
	@$(MAKE) --no-print-directory all
	$(UNA) examples/demo.una

# Every test: the Check unit suites and the script tests (tests/scripts).
check: deps
	@$(MAKE) --no-print-directory $(UNA) $(CHECK_BIN)
	UNA_BIN=$(UNA) UNA_ROOT=$(CURDIR) $(CHECK_BIN)

test: check

# The whole suite built and run with AddressSanitizer and UBSan.
asan: deps
	@$(MAKE) --no-print-directory SAN=1 check

# The scaling benchmark of reverse mode (bench/grad_scale/README.md).
$(B)/bench/grad_scale: bench/grad_scale/grad_scale.c bench/bench_util.h $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libuna.a $(LIBS)

bench-grad: deps
	@$(MAKE) --no-print-directory $(B)/bench/grad_scale
	$(B)/bench/grad_scale

# The CPU benchmark suite: Una against hand-written C, JAX and PyTorch
# (bench/cpu/README.md). BENCH_N, BENCH_PROGRAMS, BENCH_PEERS select a subset.
.PHONY: bench
$(B)/bench/c_grads.o: bench/cpu/c_grads.c bench/cpu/c_grads.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -c -o $@ $<

$(B)/bench/una_bench: bench/cpu/una_bench.c bench/bench_util.h bench/cpu/c_grads.h $(B)/bench/c_grads.o $(B)/libuna.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/bench/c_grads.o $(B)/libuna.a $(LIBS)

bench: deps
	@$(MAKE) --no-print-directory $(B)/bench/una_bench
	@B=$(B) sh bench/cpu/run.sh

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
