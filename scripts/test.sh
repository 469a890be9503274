#!/usr/bin/env bash
# scripts/test.sh - `npm test`: install what is missing, build, then run
# every suite: C unit tests (ASan+UBSan), the fuzzers' seed corpus
# replayed (engine/fuzz/; with CI=true also a minute of fuzzing per
# target), the headless CLI checks on both
# builds, the tree oracle against btrfs-progs (inside the C suite), that
# the committed device fit is what engine/tools/fit-device.mjs writes, the
# docs (their paths, commands and parameters exist; the tables generated
# from the engine are current), the TypeScript typecheck, Vitest, and
# Playwright in Debian's Chromium.
# Every suite runs even if an earlier one failed, so one run shows all
# failures; the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs

bash scripts/setup.sh --test || exit 1
bash scripts/build.sh || exit 1

failed=()
suite() {
  local name="$1"; shift
  echo "== $name"
  if "$@"; then echo "== $name: ok"; else echo "== $name: FAILED"; failed+=("$name"); fi
}

suite "C unit tests (native, ASan+UBSan)" make -s -C engine test
suite "fuzz corpus replay (libFuzzer targets, ASan+UBSan)" make -s -C engine fuzz-replay
total=8
# CI also fuzzes each target for a minute from the committed corpus (a
# finding fails the run; its input is in build/fuzz/crashes/)
if [ "${CI:-}" = true ]; then
  suite "fuzz (60 s per target)" node scripts/fuzz.mjs --per-target 60 --seed 1
  total=9
fi
suite "headless CLI (WASM and native)" node --test cli/
suite "device fit (the committed profiles are the script's)" node --test engine/tools/
suite "docs (paths, commands, parameters; generated tables current)" node --test scripts/
suite "TypeScript (strict)" npx tsc -p tsconfig.json --noEmit
suite "Vitest" npx vitest run
suite "Playwright (Debian chromium)" npx playwright test

echo "suites: $((total - ${#failed[@]})) passed, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed suite: %s\n' "${failed[@]}"
  exit 1
fi
