# hft-bench: `make bench` (the main job), `make test` (all tests) and `make check` (the quick
# tier). Each runs `make deps` first, so a fresh Debian 12 machine needs nothing else.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
# Under CI (HFT_CI=true, set by bench.yml) the runner's PATH comes first: a job must not pick
# up a cargo that an earlier job left in the runner user's writable ~/.cargo/bin
# (hft/runner/README.md re-seeds the toolchains from read-only root paths).
ifeq ($(HFT_CI),true)
export PATH := $(PATH):/usr/local/go/bin
else
export PATH := $(HOME)/.cargo/bin:/usr/local/go/bin:$(PATH)
endif

VENV    := .venv
PY      := $(VENV)/bin/python
# pytest keeps its assert-rewritten test modules in __pycache__ (git-ignored) even where the
# shell sets PYTHONDONTWRITEBYTECODE: rewriting all of them again cost each pytest process
# about 2 s of CPU (collection 5.2 s -> 3.3 s).
PYTEST  := PYTHONDONTWRITEBYTECODE= $(VENV)/bin/pytest
BIN     := bin
SUITE   ?= standard
JOBS    ?= $(shell nproc)
# pytest-xdist workers of the parallel pass (make check, make test): the tests that neither
# measure nor run act. The measuring and act tests always run one at a time. Work stealing
# rather than whole files a worker: test_compare.py alone is about 23 s, and an idle worker
# takes the rest of the other's queue (make check 0.937x the wall time of --dist loadfile,
# 3 runs each alternated, 2026-11-29). Two workers more than the CPUs: a fifth of the pass
# waits on a child process or a sleep, and the spare workers fill it (the `make check` pass on
# 2 CPUs, `make check PYTEST_WORKERS=N`, 2026-11-29: 83 s with 2, 67-74 s with 3, 64-68 s with 4).
PYTEST_WORKERS ?= $(shell echo $$(( $(JOBS) + 2 )))
PYTEST_DIST    ?= --dist worksteal
# make test's parallel pass adds the slow tests, whose runner-loop world costs seconds a worker:
# loadgroup sends each module of conftest.py's ONE_WORKER_MODULES whole to one worker, the rest
# one test at a time (`make test-python PYTEST_DIST_ALL=...`, alternated, 2026-11-30: loadgroup
# 97 s and 81 s, 179 and 149 CPU-s; worksteal 107 s and 90 s, 177 and 168 CPU-s). In `make check`,
# without that world, worksteal stays faster (71-72 s against 78-82 s).
PYTEST_DIST_ALL ?= --dist loadgroup

# Components are built when their folder exists, so the tree builds at every stage.
# One HAVE_<NAME>_CLIENT and one build-<name> per client of bench-config/clients.yaml (the
# roster; make reads no YAML): bench-config/tests/test_roster_agreement.py checks that they agree.
HAVE_RUST_CLIENT   := $(wildcard clients/rust/Cargo.toml)
HAVE_GO_CLIENT     := $(wildcard clients/go/go.mod)
HAVE_C_CLIENT      := $(wildcard clients/c/Makefile)
HAVE_CPP_CLIENT    := $(wildcard clients/cpp/CMakeLists.txt)
HAVE_PYTHON_CLIENT := $(wildcard clients/python/hft_client/__main__.py)
HAVE_HFT_CLIENT    := $(wildcard clients/hft/Makefile)
HAVE_LINKEM        := $(wildcard hft/linkem/Makefile)
HAVE_SANDBOX       := $(wildcard hft/sandbox/Makefile)
HAVE_HFTBENCH      := $(wildcard scripts/pyproject.toml)
HAVE_DASHBOARD     := $(wildcard gh-pages/package.json)

.PHONY: help deps deps-bench build check test lint bench clean fuzz \
        build-rust build-go build-c build-cpp build-python build-hft build-linkem build-sandbox \
        test-rust test-python test-go test-c test-hft test-dashboard test-ci \
        test-measuring test-serial test-beside build-rust-tests check-dashboard lint-ci \
        test-beside-build test-hft-fuzz test-hft-builds test-dashboard-synth test-dashboard-real

help:
	@echo "make bench   set up, build, run the '$(SUITE)' suite and write results/run_<UTC>_<hex>/report.md"
	@echo "make check   the quick tier: the pytest tests that neither measure, run act nor are slow, in parallel,"
	@echo "             and the dashboard's unit tests; no build (README, Tests)"
	@echo "make test    set up, build, run every test (unit, integration, conformance, measuring, act)"
	@echo "make deps    install system packages, .venv, cargo/go/npm dependencies, act and the linters (idempotent)"
	@echo "make deps-bench  only what make build and make bench need (make build runs it)"
	@echo "make build   fill bin/ with the server and every client"
	@echo "make lint    rustfmt, clippy, ruff, go vet, gofmt, C warnings, shellcheck, actionlint, zizmor"
	@echo "make fuzz    fuzz the server's order parser and HTTP layer for about 5 minutes"

deps:
	@scripts/deps.sh

# What building bin/ and `make bench` need, nothing of the tests' (scripts/deps.sh --bench).
deps-bench:
	@scripts/deps.sh --bench

build: deps-bench
	@mkdir -p $(BIN)
	@$(MAKE) --no-print-directory build-rust build-go build-c build-cpp build-python build-hft build-linkem build-sandbox

build-rust:
	cargo build --locked --release --quiet -p hft-server $(if $(HAVE_RUST_CLIENT),-p hft-client-rust)
	install -m 755 target/release/hft-server $(BIN)/hft-server
	$(if $(HAVE_RUST_CLIENT),install -m 755 target/release/client-rust $(BIN)/client-rust)

build-go:
	$(if $(HAVE_GO_CLIENT),cd clients/go && go mod verify >/dev/null && go build -mod=readonly -trimpath -o ../../$(BIN)/client-go ./cmd/client-go)

build-c:
	$(if $(HAVE_C_CLIENT),$(MAKE) --no-print-directory -C clients/c BIN=$(abspath $(BIN)))

build-cpp:
	$(if $(HAVE_CPP_CLIENT),cmake -S clients/cpp -B build/cpp -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build/cpp -j $(JOBS) >/dev/null && install -m 755 build/cpp/client-cpp $(BIN)/client-cpp)

build-python:
	$(if $(HAVE_PYTHON_CLIENT),install -m 755 clients/python/client-python $(BIN)/client-python)

build-hft:
	$(if $(HAVE_HFT_CLIENT),$(MAKE) --no-print-directory -C clients/hft BIN=$(abspath $(BIN)))

# The sandbox's seccomp filter, build/sandbox/seccomp.bpf (hft/sandbox/README.md): said and
# skipped where libseccomp-dev is missing.
build-sandbox:
	$(if $(HAVE_SANDBOX),$(MAKE) --no-print-directory -C hft/sandbox)

# The tiers (README, "Tests"; the root conftest.py marks each test from the fixtures it takes).
# make check: the pytest tests that neither measure nor run act (markers measuring, act; slow
# left out too), in parallel, and the dashboard's unit tests. make test: build (a no-op after make bench), the languages' own
# tests, the same parallel pass with the slow tests, the dashboard, lint-ci, then every
# measuring and act test one at a time: they time things, and must not time each other.
check: deps
	$(PYTEST) -m "not measuring and not act and not slow" -n $(PYTEST_WORKERS) $(PYTEST_DIST) -q
	@$(MAKE) --no-print-directory check-dashboard

# make test: deps, then the build with test-beside-build beside it, then three streams at once
# (make -j3), then cargo's tests, built:
# - test-beside-build, at normal priority beside the build (nothing there times anything): the
#   dashboard's tests that need no bin/ (its unit tests, the browser on a synthetic store), the
#   HFT client's sanitized and valgrind builds, then its 20 s of fuzzing. They were steps of the
#   serial stream, 40 of its seconds, the sanitized build 5 more (a clean clone, 2026-12-03);
#   beside the build they cost it what they take from its CPUs;
# - test-serial, at normal priority, one step at a time: go test, the C and HFT clients' tests
#   (the HFT client's valgrind duet check), the dashboard's browser test over a store of real
#   runs (test/*-real.*: it runs bin/), lint-ci, then the serial pass (test-measuring). The
#   browser tests run before the serial pass, not beside it: test_network's veths made Chromium
#   abort its loads (net::ERR_NETWORK_CHANGED, a clean clone's make test, 2026-11-29);
# - test-beside, under $(BESIDE): the parallel pass (test-python), which times nothing (a test
#   with a deadline is measuring: conftest.py). Its output goes to build/test-beside.log,
#   printed whole when it ends, so the serial stream reads in order;
# - build-rust-tests: cargo's build of the test binaries, under $(BESIDE).
# BESIDE takes what the serial stream leaves idle (a third of both cores in the measuring pass,
# 2026-11-29) and yields the rest at once. SCHED_IDLE rather than nice 19: a task of normal
# priority that wakes preempts an idle-policy one at once, and the kernel places wakeups on a
# CPU that runs only idle-policy tasks as on an idle one, where at nice 19 a waking server
# could wait out the niced task's slice. At nice 19 the serial pass's sequential tests needed
# more rounds (bisect 27 -> 44 s, the push path 28 -> 64 s; a clean clone, 2026-11-29). Beside
# cargo's build at normal priority and a busy core, the valgrind duet check read the unslowed
# side 6x slower than the slowed one (make -j2 tried 2026-11-28).
BESIDE ?= $(shell chrt --idle 0 true 2>/dev/null && echo chrt --idle 0 || echo nice -n 19)
# The build runs one step at a time, as `make build`: a shell's job beside it, not make -j2,
# whose jobserver the build's own sub-make would share.
test: deps
	@$(MAKE) --no-print-directory test-beside-build & beside=$$!; \
	  $(MAKE) --no-print-directory build; rc=$$?; wait $$beside || rc=1; exit $$rc
	@$(MAKE) --no-print-directory -j3 test-serial test-beside build-rust-tests
	@$(MAKE) --no-print-directory test-rust

test-beside-build:
	@mkdir -p build; rc=0; \
	  { $(MAKE) --no-print-directory test-dashboard-synth && $(MAKE) --no-print-directory test-hft-builds && \
	    $(MAKE) --no-print-directory test-hft-fuzz; } >build/test-beside-build.log 2>&1 || rc=$$?; \
	  printf '\n--- test-beside-build (the dashboard without bin/, the HFT test builds, fuzzing), exit %s:\n' $$rc; \
	  cat build/test-beside-build.log; exit $$rc

test-serial:
	@for step in test-go test-c test-hft test-dashboard-real lint-ci test-measuring; do \
	  $(MAKE) --no-print-directory $$step || exit 1; done

test-beside:
	@mkdir -p build; rc=0; \
	  $(BESIDE) $(MAKE) --no-print-directory test-python >build/test-beside.log 2>&1 || rc=$$?; \
	  printf '\n--- test-beside (test-python; under %s), exit %s:\n' '$(BESIDE)' $$rc; \
	  cat build/test-beside.log; exit $$rc

# Without make's jobserver (not handed to a plain recipe): cargo runs its own jobs.
build-rust-tests:
	MAKEFLAGS= $(BESIDE) cargo test --locked --workspace --no-run --quiet

test-rust:
	MAKEFLAGS= cargo test --locked --workspace --quiet

test-go:
	$(if $(HAVE_GO_CLIENT),cd clients/go && go test ./...)

# bin/hft-linkem: the link emulator of the network scenarios (hft/linkem/README.md).
build-linkem:
	$(if $(HAVE_LINKEM),$(MAKE) --no-print-directory -C hft/linkem BIN=$(abspath $(BIN)))

test-c:
	$(if $(HAVE_C_CLIENT),$(MAKE) --no-print-directory -C clients/c test)

test-hft:
	$(if $(HAVE_HFT_CLIENT),$(MAKE) --no-print-directory -C clients/hft test-runs)
	$(if $(HAVE_LINKEM),$(MAKE) --no-print-directory -C hft/linkem test)

# pytest (pytest.ini has the paths: schema, clients' conformance, hftbench, the CI scripts) in
# two passes: test-python, every test that neither measures nor runs act, in parallel
# (pytest-xdist); test-measuring, the measuring and act tests, one at a time.
# test-ci: lint-ci and the CI tests (marker ci) alone, both kinds, by hand.
test-python:
	$(PYTEST) -m "not measuring and not act" -n $(PYTEST_WORKERS) $(PYTEST_DIST_ALL) --durations=10

test-measuring:
	$(PYTEST) -m "measuring or act" --durations=15

test-hft-fuzz:
	$(if $(HAVE_HFT_CLIENT),$(MAKE) --no-print-directory -C clients/hft fuzz)

test-hft-builds:
	$(if $(HAVE_HFT_CLIENT),$(MAKE) --no-print-directory -C clients/hft test-builds)

test-dashboard:
	$(if $(HAVE_DASHBOARD),cd gh-pages && npm test)

# make test's two halves of test-dashboard: the tests that need no bin/, and those over real runs.
test-dashboard-synth:
	$(if $(HAVE_DASHBOARD),cd gh-pages && node --test $$(ls test/*.test.mjs | grep -v -- '-real\.'))

test-dashboard-real:
	$(if $(HAVE_DASHBOARD),cd gh-pages && node --test test/*-real.*test.mjs)

check-dashboard:
	$(if $(HAVE_DASHBOARD),cd gh-pages && node --test $$(ls test/*.test.mjs | grep -v '\.browser\.'))

# actionlint, zizmor and shellcheck of the workflows and CI scripts; then bench.yml and
# ci.yml under nektos/act for every event, the push path's issue life cycle and the runner
# installer (pytest -m ci: scripts/tests/ci/: test_workflows_act.py, test_ci_push_path.py,
# test_install_runner.py).
test-ci: lint-ci
	$(PYTEST) -m ci

lint-ci:
	scripts/ci/lint-ci

lint: deps
	cargo fmt --all -- --check
	cargo clippy --locked --workspace --all-targets --quiet -- -D warnings
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(if $(HAVE_GO_CLIENT),cd clients/go && test -z "$$(gofmt -l .)" && go vet ./...)
	$(if $(HAVE_C_CLIENT),$(MAKE) --no-print-directory -C clients/c lint)
	$(if $(HAVE_HFT_CLIENT),$(MAKE) --no-print-directory -C clients/hft lint)
	$(if $(HAVE_LINKEM),$(MAKE) --no-print-directory -C hft/linkem lint)
	$(if $(HAVE_SANDBOX),$(MAKE) --no-print-directory -C hft/sandbox lint)
	shellcheck scripts/*.sh .ci/run $(wildcard hft/scripts/*.sh hft/runner/*.sh scripts/ci/* \
	  scripts/experiments/*.sh clients/*/tests/*.sh server/bench/*.sh scripts/tests/fixtures/*/*.sh)
	scripts/ci/lint-ci

# Fuzzing on stable Rust with proptest (server/README.md, "Fuzzing"): hft-server's four
# fuzz tests, one at a time, each for FUZZ_SECONDS_EACH seconds (4 x 75 s = 5 minutes).
# Each prints its executions per second; the total comes last. `cargo test` runs the same
# tests for a second or two each.
FUZZ_SECONDS_EACH ?= 75
fuzz:
	@mkdir -p target
	HFT_FUZZ_SECONDS=$(FUZZ_SECONDS_EACH) cargo test -p hft-server --quiet -- fuzz_ --nocapture --test-threads=1 2>&1 | tee target/fuzz.log
	@awk 'match($$0, /fuzz [a-z_]+: [0-9]+ executions in [0-9.]+ s/) { \
	         split(substr($$0, RSTART, RLENGTH), f, " "); n += f[3]; s += f[6] } \
	     END { if (s == 0) exit 1; printf "fuzz total: %d executions in %.0f s, %.0f/s\n", n, s, n / s }' target/fuzz.log

bench: build
	$(if $(HAVE_HFTBENCH),$(VENV)/bin/hftbench run --suite $(SUITE),@echo "hftbench is not built yet (scripts/pyproject.toml missing)"; exit 1)

clean:
	rm -rf $(BIN) build target/release/hft-server
