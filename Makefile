# ukai top-level Makefile: the two set-up commands (`make run`, `make test`) and helpers.
# Dependencies are Debian packages only, listed in tools/debian-packages.txt.

JOBS        ?= $(shell nproc)
BUILD       ?= build
ASAN_BUILD  ?= build-asan
CLANG_BUILD ?= build-clang
CMAKE_FLAGS ?=
PACKAGES    := $(shell sed -e 's/\#.*//' tools/debian-packages.txt)
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
FORMAT_SRC   = $(shell git ls-files '*.h' '*.cc' '*.hpp' 2>/dev/null)

.PHONY: all deps build build-ukai run test test-unit test-asan test-clang format format-check \
        bench clean reproduce reproduce-detour-ud reproduce-fullmesh reproduce-gateway reproduce-sss

all: build

# Installs only the packages that are missing (apt-get update runs only if something is).
deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "make deps: all Debian packages present"; fi

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Only the `ukai` command (what `make run` and the reproductions need; `make test` builds
# the rest).
build-ukai: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target ukai_exe

# The default experiment: DOR vs Duato on a 10x10 torus, uniform and transpose traffic.
run: build-ukai
	$(BUILD)/src/cli/ukai sim run experiments/quickstart.toml

# Every test: the full suite in the release build, the unit tests again under ASan+UBSan,
# the clang build (compile only) and the formatting check.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600
	$(MAKE) test-asan
	$(MAKE) test-clang
	$(MAKE) format-check

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

# The unit tests again under ASan+UBSan (Debug); the integration tests and benchmarks are
# not built there, since only the unit tests run. Nor is the installable libukai (a second,
# position-independent compile of the runtime): the release build builds and tests it. Every
# target is a unity build (sources compiled in batches: tests/CMakeLists.txt says why).
test-asan: deps
	[ -f $(ASAN_BUILD)/build.ninja ] || cmake -S . -B $(ASAN_BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=Debug -DUKAI_SANITIZE=ON -DUKAI_BUILD_BENCH=OFF \
	  -DUKAI_BUILD_INTEGRATION_TESTS=OFF -DUKAI_INSTALL=OFF -DCMAKE_UNITY_BUILD=ON $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan-suppressions.txt UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -L unit --timeout 600

# The libraries, the CLI, the examples and the fuzz targets built with Debian's clang so
# that they keep building with clang as well as gcc (fuzz/CMakeLists.txt). Tests and
# benchmarks are left to the two gcc builds above (they are most of the compile time, and
# the fuzz targets' inputs are replayed by the gcc unit tests), and so is the installable
# libukai (the same sources again). Compile and link only, -O0, no debug info and a unity
# build to keep it cheap; nothing is run.
test-clang: deps
	[ -f $(CLANG_BUILD)/build.ninja ] || CC=clang CXX=clang++ cmake -S . -B $(CLANG_BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-O0 -DCMAKE_CXX_FLAGS=-O0 -DUKAI_FUZZ=ON \
	  -DUKAI_BUILD_TESTS=OFF -DUKAI_BUILD_BENCH=OFF -DUKAI_INSTALL=OFF -DCMAKE_UNITY_BUILD=ON \
	  $(CMAKE_FLAGS)
	cmake --build $(CLANG_BUILD) -j $(JOBS)

format:
	clang-format -i $(FORMAT_SRC)

format-check:
	clang-format --dry-run -Werror $(FORMAT_SRC)
	@echo "format-check: clean"

# The reproductions (experiments/*/REPORT.md): each writes its CSVs and PNGs beside its
# REPORT. Their plots need a Python with matplotlib: tools/find_python.sh finds it (PYTHON
# overrides; Debian python3-matplotlib is installed by `make deps`).
reproduce: reproduce-detour-ud reproduce-fullmesh reproduce-gateway reproduce-sss

# Figs. 7-12 of the Detour-UD paper and the ablation of its table read: CSVs and PNGs in
# experiments/detour-ud/results/.
reproduce-detour-ud: build-ukai
	experiments/detour-ud/run.sh $(BUILD)/src/cli/ukai experiments/detour-ud/results

# The gateway NIC experiments (experiments/gateway/REPORT.md): results.csv and the PNGs.
reproduce-gateway: build-ukai
	python=$$(tools/find_python.sh) && "$$python" experiments/gateway/run.py --ukai $(BUILD)/src/cli/ukai

# The SSS-CORE network's experiments (experiments/sss/REPORT.md): CSVs, PNGs and tables.md
# in experiments/sss/results/.
reproduce-sss: build-ukai
	experiments/sss/run.sh $(BUILD)/src/cli/ukai experiments/sss/results

# Every benchmark driver in bench/ (each prints its own table of figures).
bench: build
	@set -e; for b in $(BUILD)/bench/ukai_*_bench; do echo "== $$b"; $$b; done
	@echo "== bench/gateway_bench.sh"; sh bench/gateway_bench.sh $(BUILD)
	@echo "== bench/booksim/compare.py"; python3 bench/booksim/compare.py $(BUILD)/src/cli/ukai

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(CLANG_BUILD)

# The full-mesh reproduction (experiments/fullmesh/REPORT.md): every figure's CSVs, PNGs and
# summary.md from the built `ukai`; 10-30 s on 2 cores after the build.
reproduce-fullmesh: build-ukai
	UKAI=$(BUILD)/src/cli/ukai experiments/fullmesh/run.sh
