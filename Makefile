# voxa: the README's commands. `make demo`, `make test`; `make build` builds only.
# Everything missing (Debian packages, the .venv) is set up on the way.
PY      ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
BUILD   := build
JOBS    ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps venv build test test-c test-asan test-python demo bench install fuzz clean

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
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVOXA_SANITIZE=ON -DVOXA_PYTHON=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

test-python: build
	PYTHONPATH=$(abspath python) VOXA_CLI=$(abspath $(BUILD)/voxa) $(VPY) -m pytest -q tests/python

test: test-c test-asan test-python
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
	rm -rf $(BUILD) build-asan build-fuzz python/voxa/_voxa*.so
