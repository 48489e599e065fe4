# The two set-up commands of the README. Both install what is missing
# (deploy/install-deps.sh), configure and build; `run` then starts the
# main program on ./data, `test` runs every test through CTest.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= 2
DATA_DIR ?= ./data

.PHONY: deps configure build run test clean format

deps:
	bash deploy/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/bench/mentat-demo --data-dir $(DATA_DIR)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
