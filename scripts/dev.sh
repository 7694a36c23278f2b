#!/usr/bin/env bash
# One entry point for set-up, the demo and the tests (README's two commands, .ci/run).
#   scripts/dev.sh demo     install what is missing, build the default device, run the demo
#   scripts/dev.sh test     install what is missing, ruff, mypy, then the whole test suite
#   scripts/dev.sh setup    only install
#   scripts/dev.sh bench    install, then the benchmarks (writes docs/benchmarks.md)
#   scripts/dev.sh dist     install, then the release sdists and wheels in dist/ (scripts/dist.py)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(g++ gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc clang
  valgrind binutils libcjson-dev libmbedtls-dev mosquitto libmosquitto-dev libwebsockets-dev cmake
  chromium)  # chromium: the console's browser tests
PY=${PYTHON:-python3}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

missing_apt() {
  local missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  # npx runs the MCP conformance suite. Node.js from NodeSource brings its own npm (and
  # conflicts with Debian's npm package), so the command decides, not the package name.
  command -v npx >/dev/null || missing+=(nodejs npm)
  echo "${missing[@]:-}"
}

setup() {
  local missing
  missing=$(missing_apt)
  if [ -n "$missing" ]; then
    log "apt-get install $missing"
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
  fi
  log "pip install -e .[test]: mcpgen (Cython hot path compiled) and the test tools"
  # pyproject.toml names the build requirements (setuptools with bdist_wheel, Cython), so pip
  # builds in isolation on a machine that has neither. The strict editable mode installs a
  # tree of links, so mypy and every tool see the real mcpgen.* packages.
  $PY -m pip install -q --disable-pip-version-check -e ".[test]" --config-settings editable_mode=strict
  # The checkout's mcpgen holds the runtime too: record mcpgen-runtime as installed, so the
  # bindings packages that codegen writes (which depend on it alone) install here as well.
  $PY scripts/dev_runtime_record.py
}

# The test command's passes (scripts/passes.sh): each runs and reports, whatever an earlier one did.
. scripts/passes.sh

case "${1:-}" in
  setup) setup ;;
  demo)  setup; shift; exec codegen demo "$@" ;;
  test)
    setup; shift
    # Every pass runs and reports, whatever an earlier one did: a failure in one must never
    # hide the next (set -e would stop at the first). The exit status is non-zero if any failed.
    scripts_dir="$($PY -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
    # From the repository root, so mypy reads [tool.mypy] in pyproject.toml; it checks the
    # package that setup just installed (a tree of links to this checkout's sources).
    run_pass "ruff" $PY -m ruff check .
    run_pass "ruff format" $PY -m ruff format --check .
    run_pass "mypy" $PY -m mypy
    # The layering of docs/architecture.md, as contracts on the installed package (.importlinter).
    run_pass "import contracts" "$scripts_dir/lint-imports" --no-cache
    # The compiled modules (runtime/_purepy.py COMPILED_MODULES): each .pxd and its .py,
    # with [tool.cython-lint] of pyproject.toml.
    # (cython-lint runs pycodestyle from PATH: the one beside it, for an unactivated interpreter)
    run_pass "Cython lint" env PATH="$scripts_dir:$PATH" bash -c 'git ls-files -z "runtime/*.pxd" | sed -z "p;s/\.pxd\$/.py/" | xargs -0 "$1"' _ "$scripts_dir/cython-lint"
    # The C++ style (.clang-format), with the clang-format the test extra pins (its output
    # differs between major versions). Generated files under tests/golden stay as codegen
    # writes them.
    run_pass "C++ style" bash -c 'git ls-files -z "*.cpp" "*.cc" "*.h" ":!tests/golden" | xargs -0 "$1" --dry-run --Werror' _ "$scripts_dir/clang-format"
    # On every core (pytest-xdist); tests/conftest.py keeps a folder that shares its builds on
    # one worker. Arguments after `test` go to both passes, and a later -n wins (-n 0: serial).
    # --durations: the slowest tests are named at the end of each pass.
    parallel=(-n auto --dist loadgroup --durations=15)
    run_pass "tests: compiled runtime" env MCPGEN_EXPECT_COMPILED=1 $PY -m pytest -q "${parallel[@]}" "$@"
    run_pass "tests: the same runtime as pure Python" env MCPGEN_PURE_PYTHON=1 MCPGEN_EXPECT_COMPILED=0 \
      $PY -m pytest -q "${parallel[@]}" tests/runtime tests/e2e tests/mqtt tests/bridge "$@"
    report_passes
    ;;
  bench) setup; shift; exec $PY -m benchmarks "$@" ;;
  dist)  setup; shift; exec $PY scripts/dist.py "$@" ;;
  *) echo "usage: scripts/dev.sh {demo|test|setup|bench|dist} [args...]" >&2; exit 2 ;;
esac
