# Thin wrapper around CMake.
#   make               build (gcc, into build/gcc) with what is installed
#   make install       build, then install (PREFIX=/usr/local, or PREFIX=DIR
#                      for this install only)
#   make deps          install the Debian packages of every part, saying
#                      which and why first (as root)
#   make test          install what the suite uses (saying which and why),
#                      then build and run it (gcc, clang, TSan, ASan+UBSan, lint)
#   make bench         install what the benchmark uses (saying which and
#                      why), then build, run the lock comparison, show results
# Only deps, test, bench and soak install packages (scripts/install-deps.sh).
SHELL := /bin/bash
.DEFAULT_GOAL := all
.PHONY: all deps test bench build lint format soak clean install

all: build

deps:
	@scripts/install-deps.sh all

build:
	@scripts/build.sh gcc

test:
	@scripts/install-deps.sh test
	@scripts/test.sh

bench:
	@scripts/install-deps.sh bench
	@scripts/bench.sh

soak:
	@scripts/install-deps.sh build
	@scripts/soak.sh

lint:
	@scripts/lint.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

# The prefix is given to `cmake --install` only, never stored in the build's
# cache: PREFIX applies to this install, and the next `make install` without
# it installs to the configured default (/usr/local) again. The installed
# pkg-config and CMake files locate the prefix from where they lie.
install: build
	cmake --install build/gcc $(if $(PREFIX),--prefix "$(PREFIX)")

clean:
	rm -rf build
