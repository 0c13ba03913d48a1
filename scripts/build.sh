#!/usr/bin/env bash
# Configures and builds aotirt into build/ (or $AOTIRT_BUILD_DIR) with Ninja.
# Extra arguments go to CMake, e.g. ./scripts/build.sh -DAOTIRT_BUILD_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${AOTIRT_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
ninja -C "$BUILD_DIR" ${AOTIRT_NINJA_FLAGS:-}
