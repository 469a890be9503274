#!/usr/bin/env bash
# scripts/test.sh - `npm test`: install what is missing, build, then run
# every suite: C unit tests (ASan+UBSan), the headless CLI checks, the tree
# oracle against btrfs-progs, Vitest, and Playwright in Debian's Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs

bash scripts/setup.sh --test
bash scripts/build.sh

echo "== C unit tests (native, ASan+UBSan)"
make -s -C engine test

echo "== headless CLI (WASM and native)"
node --test cli/

if [ -x engine/tests/oracle/run.sh ]; then
  echo "== tree oracle (btrfs-progs)"
  bash engine/tests/oracle/run.sh
fi

echo "== TypeScript (strict)"
npx tsc -p tsconfig.json --noEmit

echo "== Vitest"
npx vitest run

echo "== Playwright (Debian chromium)"
npx playwright test
