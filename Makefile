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

install: build
	cmake --install build/gcc $(if $(PREFIX),--prefix $(PREFIX))

clean:
	rm -rf build
