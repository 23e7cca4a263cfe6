#!/usr/bin/env bash
# make deps: install everything the build and the tests need, idempotently.
# Each step checks first and does nothing when its inputs are already satisfied,
# so a second run takes a second or two.
#   scripts/deps.sh                 everything (make deps: make test, make lint, the CI jobs)
#   scripts/deps.sh --bench         only what builds bin/ and runs `make bench` (make deps-bench):
#                                   no browser, linters, perf, sandbox, npm, act, actionlint,
#                                   inferno or requirements-dev.txt, which only the tests, lint
#                                   and `hftbench ab` use
#   scripts/deps.sh --apt-packages  the Debian packages it needs, one a line (hft/runner/provision-host)
#   scripts/deps.sh --tools [DIR]   only the pinned tools (actionlint, act, inferno) into DIR/bin
#                                   (default .deps): provision-host builds them once for a runner
# The pinned tools come from $HFT_TOOLS_DIR/bin when it has them at these versions (a runner's,
# set in its jobs' .env by install-runner.sh): linked into .deps/bin, not built from the network.
# Otherwise they are built once into the user's cache ($HFT_USER_TOOLS, default
# ~/.cache/hft-bench/tools), shared by every checkout like cargo's registry and Go's module
# cache, and linked from there: a fresh clone's make test spent 67 s rebuilding them.
set -euo pipefail
START=$PWD
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=$ROOT/.deps
USER_TOOLS=${HFT_USER_TOOLS-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/hft-bench/tools}
ACTIONLINT_VERSION=v1.7.12
INFERNO_VERSION=0.12.8
ACT_VERSION=v0.2.89

BENCH_APT_PACKAGES=(
  build-essential pkg-config cmake
  python3 python3-venv python3-dev              # .venv (hdrhistogram builds its C extension)
  libcurl4-openssl-dev libnuma-dev zlib1g-dev   # C / C++ / HFT clients
  libmimalloc-dev                               # client-c allocator (falls back to glibc without it)
  iproute2 procps util-linux curl               # tuning checks (setup_hft_system.sh --check)
)
APT_PACKAGES=(
  "${BENCH_APT_PACKAGES[@]}"
  wrk                                           # reference load generator
  valgrind                                      # HFT client memory checks
  clang-tidy shellcheck jq                      # linters, scripts
  clang libclang-rt-dev                         # client-hft's reply-parser fuzzer (libFuzzer: make -C clients/hft fuzz)
  linux-perf                                    # ab's differential profile (perf record -e cpu-clock)
  bubblewrap                                    # the sandbox of a PR's build and server (measure/sandbox.py)
  libseccomp-dev                                # its seccomp filter (hft/sandbox, make build)
  chromium fonts-dejavu-core fonts-noto-color-emoji  # dashboard browser tests, screenshots
)
if [ "${1:-}" = --apt-packages ]; then
  printf '%s\n' "${APT_PACKAGES[@]}"
  exit 0
fi

log() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root to run '$*': run 'make deps' as root or install sudo"; fi
}

apt_step() { # apt_step PACKAGE...
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "apt-get not found; install by hand: ${missing[*]}"
  log "apt-get install ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

toolchain_step() { # toolchain_step [--bench]: npm and the linters' components only for everything
  # Debian 12's rustc (1.63) and go (1.19) are too old for axum 0.8 / our go.mod;
  # the machine image provides rustup's cargo and go in /usr/local/go.
  command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (https://rustup.rs), then re-run make deps"
  command -v go >/dev/null || die "go not found: install Go >= 1.22 to /usr/local/go, then re-run make deps"
  [ "${1:-}" = --bench ] && return 0
  command -v npm >/dev/null || die "npm not found: apt-get install nodejs npm (Node >= 18), then re-run make deps"
  if ! cargo clippy --version >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null; then
      rustup component add clippy rustfmt >/dev/null 2>&1 || log "could not add clippy/rustfmt; make lint needs them"
    fi
  fi
}

# A step is redone when any of its input files is newer than its stamp.
stale() { # stale STAMP INPUT...
  local stamp=$1; shift
  [ -f "$stamp" ] || return 0
  for f in "$@"; do [ -e "$f" ] && [ "$f" -nt "$stamp" ] && return 0; done
  return 1
}

# The interpreter of .venv: HFTBENCH_PYTHON if set, else Debian's /usr/bin/python3 (built
# with PGO and LTO, libpython linked in) before whatever python3 comes first on PATH. A
# pyenv build without --enable-optimizations costs client-python ~13% more CPU per request
# (81 vs 93 us, clients/python/README.md), which would be measured as client latency.
venv_python() {
  if [ -n "${HFTBENCH_PYTHON:-}" ]; then
    "$HFTBENCH_PYTHON" -c 'import venv' 2>/dev/null ||
      die "HFTBENCH_PYTHON=$HFTBENCH_PYTHON is not a python3 with the venv module; point it at one, or unset it for /usr/bin/python3"
    echo "$HFTBENCH_PYTHON"
  elif [ -x /usr/bin/python3 ]; then echo /usr/bin/python3
  else command -v python3 || die "python3 not found: apt-get install python3 python3-venv"; fi
}

# The real executable behind an interpreter (or a venv's base interpreter).
base_executable() {
  "$1" -c 'import os, sys; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))'
}

# python_step [--bench]: .venv with requirements.txt (hftbench, the Python client) and, unless
# --bench, requirements-dev.txt (pytest and its plugins, ruff, zizmor: a fifth of pip's time
# in a fresh venv, 2026-11-30), each behind its own stamp.
python_step() {
  local stamp=.venv/.deps-stamp dev_stamp=.venv/.deps-dev-stamp py
  py=$(venv_python)
  if [ -x .venv/bin/python ] && [ "$(base_executable .venv/bin/python)" != "$(base_executable "$py")" ]; then
    log "python venv .venv was made with $(base_executable .venv/bin/python); rebuilding it with $py"
    rm -rf .venv
  fi
  if stale "$stamp" requirements.txt scripts/pyproject.toml; then
    [ -x .venv/bin/python ] || { log "python venv .venv ($py)"; "$py" -m venv .venv; }
    log "pip install -r requirements.txt"
    .venv/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements.txt
    if [ -f scripts/pyproject.toml ]; then
      .venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e scripts/
    fi
    touch "$stamp"
  fi
  [ "${1:-}" = --bench ] && return 0
  stale "$dev_stamp" requirements-dev.txt requirements.txt || return 0
  log "pip install -r requirements-dev.txt"
  # With requirements.txt again: hash-checking mode wants the dev tools' own dependencies
  # (packaging) pinned, and they are pinned there.
  .venv/bin/pip install -q --disable-pip-version-check --require-hashes -r requirements.txt -r requirements-dev.txt
  touch "$dev_stamp"
}

rust_step() {
  local stamp=target/.deps-stamp
  stale "$stamp" Cargo.lock Cargo.toml || return 0
  log "cargo fetch"
  cargo fetch --locked --quiet
  mkdir -p target && touch "$stamp"
}

go_step() {
  [ -f clients/go/go.mod ] || return 0
  local stamp=clients/go/.deps-stamp
  stale "$stamp" clients/go/go.mod clients/go/go.sum || return 0
  log "go mod download"
  (cd clients/go && go mod download && go mod verify)
  touch "$stamp"
}

npm_step() {
  [ -f gh-pages/package-lock.json ] || return 0
  local stamp=gh-pages/node_modules/.deps-stamp
  stale "$stamp" gh-pages/package-lock.json || return 0
  log "npm ci --ignore-scripts (gh-pages)"
  (cd gh-pages && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  touch "$stamp"
}

# linked NAME OK_FN DIR BIN...: link BIN... from DIR/bin into $DEPS/bin when OK_FN says the
# copy there is the pinned version.
linked() {
  local name=$1 ok=$2 dir=$3 bin
  shift 3
  [ -n "$dir" ] && [ "$dir" != "$DEPS" ] && "$ok" "$dir" || return 1
  mkdir -p "$DEPS/bin"
  for bin in "$@"; do ln -sfn "$dir/bin/$bin" "$DEPS/bin/$bin"; done
  log "$name from $dir"
}

# tool_step NAME OK_FN BUILD_FN BIN...: the pinned tool in $DEPS/bin: already there, else linked
# from the runner's $HFT_TOOLS_DIR (provision-host) or the user's cache, else built by
# BUILD_FN INTO_DIR into the user's cache (then linked) or, when that cannot be written, $DEPS.
# The cache's build holds $USER_TOOLS/.lock: a second checkout waits, then links what it built.
tool_step() {
  local name=$1 ok=$2 build=$3
  shift 3
  "$ok" "$DEPS" && return 0
  linked "$name" "$ok" "${HFT_TOOLS_DIR:-}" "$@" && return 0
  linked "$name" "$ok" "$USER_TOOLS" "$@" && return 0
  if [ -n "$USER_TOOLS" ] && [ "$USER_TOOLS" != "$DEPS" ] && mkdir -p "$USER_TOOLS/bin" 2>/dev/null &&
    [ -w "$USER_TOOLS/bin" ] && command -v flock >/dev/null; then
    (
      flock 9
      linked "$name" "$ok" "$USER_TOOLS" "$@" && exit 0
      "$build" "$USER_TOOLS"
      linked "$name" "$ok" "$USER_TOOLS" "$@"
    ) 9>"$USER_TOOLS/.lock"
  else
    mkdir -p "$DEPS/bin"
    "$build" "$DEPS"
  fi
}

# actionlint (make test-ci), a Go module at a pinned version.
actionlint_ok() { [ -x "$1/bin/actionlint" ] && "$1/bin/actionlint" -version | grep -qx "$ACTIONLINT_VERSION"; }
actionlint_build() {
  log "go install actionlint $ACTIONLINT_VERSION into $1/bin"
  GOBIN=$1/bin go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
}
actionlint_step() { tool_step actionlint actionlint_ok actionlint_build actionlint; }

# inferno (ab's differential flame graph: collapse-perf, diff-folded, flamegraph), a crate at
# a pinned version.
inferno_ok() { [ -x "$1/bin/inferno-flamegraph" ] && [ "$(cat "$1/inferno.version" 2>/dev/null)" = "$INFERNO_VERSION" ]; }
inferno_build() {
  log "cargo install inferno $INFERNO_VERSION into $1/bin"
  cargo install --quiet --locked --root "$1" inferno --version "$INFERNO_VERSION"
  echo "$INFERNO_VERSION" >"$1/inferno.version"
}
inferno_step() {
  tool_step inferno inferno_ok inferno_build inferno-collapse-perf inferno-diff-folded inferno-flamegraph
  echo "$INFERNO_VERSION" >"$DEPS/inferno.version"
}

# nektos/act (the workflow tests of make test-ci), a Go module at a pinned version, like actionlint.
act_ok() { [ -x "$1/bin/act" ] && "$1/bin/act" --version | grep -qx "act version ${ACT_VERSION#v}"; }
act_build() {
  log "go install act $ACT_VERSION into $1/bin"
  GOBIN=$1/bin go install "github.com/nektos/act@$ACT_VERSION"
}
act_step() { tool_step act act_ok act_build act; }

if [ "${1:-}" = --tools ]; then
  DEPS=${2:-$DEPS}
  [[ $DEPS == /* ]] || DEPS=$START/$DEPS
  # provision-host wants the tools themselves in DIR, not links into root's cache.
  USER_TOOLS=${HFT_USER_TOOLS-}
  mkdir -p "$DEPS/bin"
  actionlint_step
  inferno_step
  act_step
  log "ok: actionlint, inferno, act in $DEPS/bin"
  exit 0
fi

if [ "${1:-}" = --bench ]; then
  apt_step "${BENCH_APT_PACKAGES[@]}"
  toolchain_step --bench
  python_step --bench
  rust_step
  go_step
  log "ok (make bench's part; make deps installs the rest)"
  exit 0
fi

apt_step "${APT_PACKAGES[@]}"
toolchain_step
python_step
rust_step
go_step
npm_step
actionlint_step
inferno_step
act_step
log "ok"
