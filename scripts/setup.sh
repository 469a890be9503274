#!/usr/bin/env bash
# scripts/setup.sh [--test] - install what is missing, and nothing else.
#
# Idempotent and quick when everything is there: it asks dpkg and compares
# the npm lock file with node_modules before doing any work.
#   always:  Debian packages emscripten, node-acorn (emcc's optimiser needs it)
#            and make/gcc; the npm dependencies from package-lock.json
#   --test:  also chromium (Playwright drives Debian's browser; a browser
#            download cannot work here), btrfs-progs (the tree oracle), and
#            clang with its runtimes (libFuzzer, ASan, UBSan: the fuzz
#            targets of engine/fuzz/, whose corpus `npm test` replays)
set -euo pipefail
cd "$(dirname "$0")/.."

want=(emscripten node-acorn make gcc)
if [ "${1:-}" = "--test" ]; then
  want+=(chromium btrfs-progs clang libclang-rt-dev)
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# npm dependencies: reinstall only when the lock file changed since the last
# install (npm writes node_modules/.package-lock.json on every install).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
