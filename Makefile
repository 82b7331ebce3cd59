# voxa: the README's commands. `make demo`, `make test`; `make build` builds only.
# Everything missing (Debian packages, the .venv) is set up on the way.
PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
BUILD   := build
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps venv build test test-c test-asan test-tsan test-python demo bench install fuzz clean

all: build

deps:
	@bash tools/setup-deps.sh

# The .venv holds the test/benchmark peers; a .pth puts python/ (where the
# extension is built in place) on its path, so `import voxa` works there.
$(VENV)/.stamp: requirements-dev.txt | deps
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements-dev.txt
	$(VPY) -c "import site,os; open(os.path.join(site.getsitepackages()[0],'voxa-dev.pth'),'w').write(os.path.abspath('python')+'\n')"
	touch $@

venv: $(VENV)/.stamp

$(BUILD)/CMakeCache.txt: | deps venv
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(abspath $(VPY)) $(CMAKE_FLAGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test-c: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The C tests again under AddressSanitizer + UBSan (no Python extension).
test-asan: | deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVOXA_SANITIZE=ON -DVOXA_FAILALLOC=ON -DVOXA_PYTHON=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

test-python: build
	PYTHONPATH=$(abspath python) VOXA_CLI=$(abspath $(BUILD)/voxa) $(VPY) -m pytest -q tests/python

# The C tests under ThreadSanitizer: clang + LLVM's libomp with its Archer tool,
# which tells TSan about OpenMP's synchronisation (TSan with gcc's libgomp
# reports false races); no Python extension; 2 threads by default whatever the core
# count. Any report fails the test (exit 66).
test-tsan: | deps
	CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOXA_PYTHON=OFF "-DCMAKE_C_FLAGS=-fsanitize=thread -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
	cmake --build build-tsan -j $(JOBS)
	archer=/usr/lib/llvm-$$(clang -dumpversion | cut -d. -f1)/lib/libarcher.so && test -f $$archer && \
	cd build-tsan && VOXA_NUM_THREADS=2 OMP_TOOL_LIBRARIES=$$archer TSAN_OPTIONS=ignore_noninstrumented_modules=1 ctest --output-on-failure -j $(JOBS)

test: test-c test-asan test-tsan test-python
	python3 tools/check_layers.py

demo: build
	PYTHONPATH=$(abspath python) VOXA_CLI=$(abspath $(BUILD)/voxa) $(VPY) tools/demo.py

bench: build
	PYTHONPATH=$(abspath python) VOXA_CLI=$(abspath $(BUILD)/voxa) $(VPY) bench/run.py

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

fuzz: | deps
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVOXA_FUZZ=ON -DVOXA_PYTHON=OFF -DVOXA_TESTS=OFF -DVOXA_SANITIZE=ON
	cmake --build build-fuzz -j $(JOBS)
	bash fuzz/run.sh build-fuzz

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz python/voxa/_voxa*.so
