# The two set-up commands of the README. Both install what is missing
# (deploy/install-deps.sh), configure and build; `run` then starts mentatd
# on ./data (gRPC on 127.0.0.1:7878, metrics on 127.0.0.1:9090), `test`
# runs every test through CTest.
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

LISTEN ?= 127.0.0.1:7878
HTTP ?= 127.0.0.1:9090

run: build
	$(BUILD_DIR)/server/mentatd --data-dir $(DATA_DIR) --listen $(LISTEN) --http $(HTTP)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

format:
	git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
