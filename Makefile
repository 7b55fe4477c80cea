# Thin wrapper around CMake. The README's two commands:
#   make bench   build, run the lock comparison and show the results
#   make test    build and run the whole suite (gcc, clang, TSan, ASan+UBSan, lint)
SHELL := /bin/bash
.DEFAULT_GOAL := test
.PHONY: all deps test bench build lint format soak clean install

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@scripts/build.sh gcc

test: deps
	@scripts/test.sh

bench: deps
	@scripts/bench.sh

soak: deps
	@scripts/soak.sh

lint:
	@scripts/lint.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

# PREFIX is set at configure time so that the pkg-config file names it too.
install: deps
	@scripts/build.sh gcc $(if $(PREFIX),-DCMAKE_INSTALL_PREFIX=$(PREFIX))
	cmake --install build/gcc

clean:
	rm -rf build
