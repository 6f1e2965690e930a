# xpuify build. `make` builds build/xpuify (installing missing dependencies first), `make test` runs every test,
# `make demo` runs xpuify on the bundled example project. See README.md.
CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
XCFLAGS := -I$(CURDIR) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -pthread
PKGS    := tree-sitter libpcre2-8 libcjson yaml-0.1 libgit2
B       := build
TSPY    := node_modules/tree-sitter-python/src

# SAN=1: everything (our code, the grammar, the embedded data, the unit tests) built with AddressSanitizer and
# UndefinedBehaviorSanitizer into build/san; any report aborts the process (no recovery), and the test harness
# fails a test whose run printed a sanitizer report. GCC's sanitizer instrumentation makes -Wformat-truncation
# see a NULL format string in ut_buf_vprintf that cannot be NULL (a known false positive): that one is off here.
ifeq ($(SAN),1)
  CFLAGS  := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all
  XCFLAGS += -Wno-format-truncation
  B       := build/san
endif
SAN_ASAN  := abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
SAN_UBSAN := print_stacktrace=1:halt_on_error=1
SAN_LSAN  := suppressions=$(abspath tests/lsan.supp):print_suppressions=0
ifeq ($(SAN),1)
  export ASAN_OPTIONS  ?= $(SAN_ASAN)
  export UBSAN_OPTIONS ?= $(SAN_UBSAN)
  export LSAN_OPTIONS  ?= $(SAN_LSAN)
endif

# FUZZ=1 (used by `make fuzz` and `make test`, not by hand): clang with libFuzzer coverage, ASan and UBSan into
# build/fuzz, for the fuzz/fz_*.c targets.
ifeq ($(FUZZ),1)
  CC      := clang
  CFLAGS  := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined
  B       := build/fuzz
endif

SRC_UTIL     := $(wildcard util/*.c)
SRC_ANALYZER := $(wildcard analyzer/*/*.c)
SRC_OUTPUT   := $(wildcard output/*.c)
SRC_REWRITE  := $(wildcard rewriters/*.c)
SRC_CONFIG   := $(wildcard config/*.c)
SRC_HARNESS  := $(wildcard harness/*.c)
SRC_LSP      := $(wildcard lsp/*.c)
SRC_CLI      := $(wildcard cli/*.c)
RULE_FILES   := $(sort $(wildcard rules/*/*.yml))
TEMPLATES    := $(sort $(wildcard rewriters/templates/*))

LIB_SRC := $(SRC_UTIL) $(SRC_ANALYZER) $(SRC_OUTPUT) $(SRC_REWRITE) $(SRC_CONFIG) $(SRC_HARNESS) $(SRC_LSP)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/rules_data.o $(B)/obj/gen/rules_docs.o $(B)/obj/gen/templates_data.o $(B)/obj/grammar/parser.o $(B)/obj/grammar/scanner.o
CLI_OBJ := $(SRC_CLI:%.c=$(B)/obj/%.o)
DEPS_STAMP := build/.deps-build

.PHONY: all deps test unit demo try-projects clean docs check-docs api-coverage fuzz fuzz-build san-build install uninstall deb
all: $(B)/xpuify

$(DEPS_STAMP): tools/deps.sh package-lock.json
	@mkdir -p build
	@tools/deps.sh build
	@touch $@

# libclang is dlopen-ed at run time (analyzer/c/an_clang.c): only its headers are needed to build
CLANG_INC ?= /usr/lib/llvm-14/include
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -I$(CLANG_INC)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl

# `xpuify --version` names the commit it was built from (git describe; XPUIFY_COMMIT=... overrides it, e.g. for a
# build from a tarball); the header is rewritten only when that changes, so an unchanged tree relinks nothing
XPUIFY_COMMIT ?= $(shell git -C '$(CURDIR)' describe --always --dirty --abbrev=12 2>/dev/null)
$(B)/gen/xpuify_commit.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define XPUIFY_COMMIT "%s"\n' '$(if $(XPUIFY_COMMIT),commit $(XPUIFY_COMMIT),not built from a git checkout)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(B)/obj/cli/cli_main.o: $(B)/gen/xpuify_commit.h
$(B)/obj/cli/cli_main.o: XCFLAGS += -I$(B)/gen
FORCE:

$(B)/obj/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(B)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -std=c11 -Wall -Wextra -Werror $< -o $@

$(B)/gen/rules_data.c: $(B)/tools/embed $(RULE_FILES)
	@mkdir -p $(dir $@)
	$(B)/tools/embed $@ xp_builtin_rules $(RULE_FILES)

# the rule files' YAML documents, parsed here by libyaml and kept as tables (util/ut_yaml_table.h): the built-in
# catalog is loaded without parsing on every run; a rule file that is not valid YAML fails the build
$(B)/tools/embed_yaml: tools/embed_yaml.c util/ut_yaml_table.h $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -O1 -std=c11 -Wall -Wextra -Werror -I$(CURDIR) $< -o $@ $(shell pkg-config --cflags --libs yaml-0.1 2>/dev/null || echo -lyaml)

$(B)/gen/rules_docs.c: $(B)/tools/embed_yaml $(RULE_FILES)
	@mkdir -p $(dir $@)
	$(B)/tools/embed_yaml $@ xp_builtin_docs $(RULE_FILES)

$(B)/gen/templates_data.c: $(B)/tools/embed $(TEMPLATES)
	@mkdir -p $(dir $@)
	$(B)/tools/embed $@ xp_templates $(TEMPLATES)

$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -I$(CURDIR) $(PKG_CFLAGS) -c $< -o $@

# the grammar is third-party generated code: compiled from node_modules, never committed; its own warnings are
# not ours to fix
$(B)/obj/grammar/%.o: $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -w -I$(TSPY) -c $(TSPY)/$*.c -o $@

$(B)/libxpuify.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/xpuify: $(CLI_OBJ) $(B)/libxpuify.a
	$(CC) $(LDFLAGS) -pthread $(CLI_OBJ) $(B)/libxpuify.a $(PKG_LIBS) -lm -o $@

# maintainer tool for the C API tables (tools/capi.c): extraction from headers, coverage
$(B)/tools/capi: tools/capi.c $(B)/libxpuify.a $(filter-out %/cli_main.o,$(CLI_OBJ))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) $< $(filter-out %/cli_main.o,$(CLI_OBJ)) $(B)/libxpuify.a $(LDFLAGS) $(PKG_LIBS) -o $@

# ---- tests -------------------------------------------------------------------------------------------------
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

$(B)/tests/%: tests/unit/%.c tests/unit/unit_files.h $(B)/libxpuify.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) $< $(B)/libxpuify.a $(LDFLAGS) $(PKG_LIBS) -lcmocka -lm -o $@

unit: $(UNIT_BIN)

build/.deps-test build/.deps-demo: build/.deps-%: tools/deps.sh
	@mkdir -p build
	@tools/deps.sh $*
	@touch $@

# ---- fuzzing (fuzz/fz_*.c, libFuzzer) ---------------------------------------------------------------------------
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fz_*.c))
FUZZ_SECONDS ?= 60

ifeq ($(FUZZ),1)
build/fuzz/fz_%: fuzz/fz_%.c fuzz/fz_common.h build/fuzz/libxpuify.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) $(PKG_CFLAGS) -fsanitize=fuzzer $< build/fuzz/libxpuify.a $(LDFLAGS) $(PKG_LIBS) -o $@
endif

fuzz-build: build/.deps-test
	@$(MAKE) --no-print-directory FUZZ=1 SAN= $(FUZZ_TARGETS:%=build/fuzz/%)

# every target for FUZZ_SECONDS (default 60) each, corpora in build/fuzz/corpus; crashes land in build/fuzz/crashes
fuzz: fuzz-build
	@FUZZ_DIR=$(abspath build/fuzz) fuzz/fz_run.sh run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Under CI (CI=true) the same suites run a second time against the ASan+UBSan build (`make test SAN=1`'s binaries,
# suite names prefixed "san:"), and the one summary line counts both passes.
ifeq ($(CI)$(SAN),true)
TEST_SAN := san-build
TEST_SAN_ENV := SAN_XPUIFY=$(abspath build/san/xpuify) SAN_UNIT_DIR=$(abspath build/san/tests) \
  SAN_ASAN_OPTIONS='$(SAN_ASAN)' SAN_UBSAN_OPTIONS='$(SAN_UBSAN)' SAN_LSAN_OPTIONS='$(SAN_LSAN)'
endif

san-build: build/.deps-test
	@$(MAKE) --no-print-directory SAN=1 build/san/xpuify unit

test: $(B)/xpuify $(UNIT_BIN) build/.deps-test fuzz-build $(TEST_SAN)
	@XPUIFY=$(abspath $(B)/xpuify) UNIT_DIR=$(abspath $(B)/tests) FUZZ_DIR=$(abspath build/fuzz) $(TEST_SAN_ENV) tests/run_all.sh

docs: $(B)/xpuify
	$(B)/xpuify rule --all --format markdown > docs/rules.md
	$(B)/xpuify rule --c-tables > docs/c-api-tables.md

# coverage of the C API tables against the CUDA headers of this machine (docs/c-api-coverage.md)
api-coverage: $(B)/tools/capi
	tools/api_coverage.sh $(B)/tools/capi > docs/c-api-coverage.md

# The real-project regression harness (not part of `make test`; minutes per project): plain `fix` on copies of the
# projects under TRY_CORPUS, then imports, compile, idempotency (tools/try_projects.sh; docs/real-projects.md)
TRY_CORPUS ?= bench/corpus
TRY_MORE ?= $(wildcard bench/heldout bench/trial)
try-projects: $(B)/xpuify
	TRY_MORE="$(TRY_MORE)" tools/try_projects.sh $(TRY_CORPUS) $(B)/xpuify /usr/bin/python3

# The demo (tools/demo.sh) never writes into examples/: it fixes a copy under build/demo and runs it on the CPU.
demo: $(B)/xpuify build/.deps-demo
	@tools/demo.sh $(B)/xpuify

# ---- installation (packaging/: the file list, the man page from --help, completions, the .deb) -----------------
PREFIX ?= /usr/local
install: $(B)/xpuify
	@packaging/install.sh install '$(DESTDIR)' '$(PREFIX)' $(B)/xpuify
uninstall:
	@packaging/install.sh uninstall '$(DESTDIR)' '$(PREFIX)'
# build/xpuify_VERSION_ARCH.deb (apt install ./build/xpuify_*.deb)
deb: $(B)/xpuify
	@packaging/deb.sh $(B)/xpuify build

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
