#!/usr/bin/env bash
# scripts/build.sh - build the engine (native and WASM) and the web app.
# make and a stamp file make it a no-op when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # emcc's optimiser loads acorn from here

make -s -C engine native wasm >&2

# The web app: rebuild when any input is newer than the last build.
stamp=dist/.build-stamp
if [ ! -f "$stamp" ] || [ -n "$(find web lessons build/wasm build/wasm-web vite.config.ts package-lock.json \
      -newer "$stamp" -type f 2>/dev/null | head -n 1)" ]; then
  echo "build: web app (vite build)" >&2
  npx vite build --logLevel warn >&2
  touch "$stamp"
fi
