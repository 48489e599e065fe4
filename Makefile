# The two set-up commands of the README. Both install what is missing
# (deploy/install-deps.sh), configure and build. `run` installs and builds
# only what it runs (mentatd and mentat-cli, no test-only packages) and
# starts mentatd on ./data (gRPC on 127.0.0.1:7878, metrics on
# 127.0.0.1:7879); `test` builds everything and runs every test through
# CTest.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
DATA_DIR ?= ./data

.PHONY: deps deps-run configure build build-run run test clean format

# Everything `make test` needs (deps-run's packages and the test-only ones).
deps:
	bash deploy/install-deps.sh test

# Only what building mentatd and mentat-cli needs.
deps-run:
	bash deploy/install-deps.sh run

configure:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps
	$(MAKE) configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

build-run: deps-run
	$(MAKE) configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target mentatd mentat-cli

LISTEN ?= 127.0.0.1:7878
HTTP ?= 127.0.0.1:7879

run: build-run
	$(BUILD_DIR)/server/mentatd --data-dir $(DATA_DIR) --listen $(LISTEN) --http $(HTTP)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)

# Sanitizer builds (docs/testing.md): every test under ASan+UBSan
# (build-asan), then under TSan (build-tsan, with TSan-instrumented abseil
# from tools/sanitizers/absl-tsan.sh). SAN_TARGETS limits what is built
# (default: everything), SAN_TESTS which tests run (a ctest -R regex).
SAN_TARGETS ?= all
SAN_TESTS ?= .
# ASan builds at -O0: its instrumentation made -O1 four times the compile
# time (base, edn, storage and the fuzz replays: about 3,800 CPU seconds
# against 970), while the tests' run time is mostly RocksDB's and the
# system's, uninstrumented either way (storage_test 315 CPU seconds). TSan
# keeps -O1 (it is not in CI; -O0 was not measured for it).
ASAN_OPT ?= -O0
TSAN_OPT ?= -O1
SAN_CMAKE = -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMENTAT_WERROR=OFF
SAN_DIR = $(CURDIR)/tools/sanitizers
# quarantine_size_mb: ASan's default 256 MB of held-back freed blocks counts
# against server_test's constant-memory stream check (RSS growth < 64 MB).
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_init_order=1:quarantine_size_mb=16 \
	LSAN_OPTIONS=suppressions=$(SAN_DIR)/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# TSan writes its reports to files (log_path, one per process) so that a
# report from a child (mentatd started by a test, then killed) is not lost:
# check-tsan fails if any appeared and prints them.
# ignore_noninstrumented_modules: what uninstrumented libraries (gRPC,
# protobuf, RocksDB) read and write through intercepted calls (memcpy,
# free, sendmsg) is not checked; their internal synchronisation is
# invisible to TSan (tools/sanitizers/tsan.supp). history_size=4: enough
# history that the earlier access of a race between gRPC threads still
# has its stack (else "failed to restore the stack", which no suppression
# can match). The instrumented abseil
# is on the executables' RPATH (the top-level CMakeLists.txt), so the
# Python tests' uninstrumented interpreter keeps Debian's.
TSAN_REPORTS = $(CURDIR)/build-tsan/tsan-reports
TSAN_ENV = TSAN_OPTIONS=suppressions=$(SAN_DIR)/tsan.supp:second_deadlock_stack=1:print_suppressions=0:ignore_noninstrumented_modules=1:history_size=4:log_path=$(TSAN_REPORTS)/tsan

.PHONY: build-asan check-asan check-tsan check-sanitizers check-threads fuzz

# clang's -Wthread-safety over every .cc (tools/thread_safety_check.sh):
# the ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations, which
# GCC ignores, checked. Reads $(BUILD_DIR)'s compile commands; builds
# nothing but the generated gRPC code the sources include.
check-threads: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target mentat_proto
	JOBS=$(JOBS) bash tools/thread_safety_check.sh $(BUILD_DIR)

# The ASan build alone (CI builds it while the Release tests run).
build-asan: deps
	cmake -S . -B build-asan $(SAN_CMAKE) -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(ASAN_OPT) \
	  -DMENTAT_SANITIZE=address
	cmake --build build-asan -j $(JOBS) --target $(SAN_TARGETS)

check-asan: build-asan
	cd build-asan && $(ASAN_ENV) ctest --output-on-failure -j $(JOBS) -R '$(SAN_TESTS)'

check-tsan: deps
	bash tools/sanitizers/absl-tsan.sh build-tsan/absl-tsan
	cmake -S . -B build-tsan $(SAN_CMAKE) -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(TSAN_OPT) \
	  -DMENTAT_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS) --target $(SAN_TARGETS)
	rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	cd build-tsan && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) -R '$(SAN_TESTS)'; \
	  status=$$?; \
	  if [ -n "$$(ls -A $(TSAN_REPORTS))" ]; then \
	    cat $(TSAN_REPORTS)/*; \
	    echo "check-tsan: reports in $(TSAN_REPORTS): $$(ls $(TSAN_REPORTS) | tr '\n' ' ')"; \
	    status=1; \
	  fi; \
	  exit $$status

check-sanitizers: check-asan check-tsan

# libFuzzer: build build-fuzz (clang) and fuzz every target FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
fuzz: deps
	bash tools/fuzz/run.sh $(FUZZ_SECONDS)
