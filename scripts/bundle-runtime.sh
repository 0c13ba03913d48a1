#!/usr/bin/env bash
# Copies the shared libraries a build needs beyond the C/C++ runtime (fmt,
# zlib, libelf, OpenBLAS, SLEEF,
# OpenMP, ...) into <build>/lib/deps, so the
# build can run on a machine that lacks them. Use with
#   LD_LIBRARY_PATH=<build>/lib/deps <build>/bin/aotirt ...
set -euo pipefail
BUILD_DIR="${1:-build}"
DEPS="$BUILD_DIR/lib/deps"
mkdir -p "$DEPS"
# Libraries every Linux has, or that must come from the target machine
# (the GPU driver and CUDA libraries).
skip='^(libaotirt|linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libcuda\.|libcudart|libcublas|libcudnn|libnv)'
{
  for f in "$BUILD_DIR"/lib/libaotirt.so "$BUILD_DIR"/bin/*; do
    [ -f "$f" ] && ldd "$f" 2>/dev/null
  done
  # Loaded with dlopen at run time, so ldd cannot see them. Only CPU models
  # load SLEEF and OpenBLAS (the OpenMP build where it is installed); a
  # CUDA-only deployment may leave them and their dependencies out.
  for extra in libsleef.so.3 libgomp.so.1; do
    # awk reads to the end: leaving early would kill ldconfig with SIGPIPE,
    # which pipefail turns into this script's failure, now and then.
    p=$(ldconfig -p | awk -v n="$extra" '$1 == n && /x86-64/ && !found {print $NF; found = 1}')
    [ -n "$p" ] && echo "$extra => $p (0x0)"
  done
  arch_dir=/usr/lib/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
  if [ -f "$arch_dir/openblas-openmp/libopenblas.so.0" ]; then
    echo "libopenblas.so.0 => $arch_dir/openblas-openmp/libopenblas.so.0 (0x0)"
  else
    p=$(ldconfig -p | awk '$1 == "libopenblas.so.0" && /x86-64/ && !found {print $NF; found = 1}')
    [ -n "$p" ] && echo "libopenblas.so.0 => $p (0x0)"
  fi
} | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
  if [[ ! "$name" =~ $skip ]]; then
    cp -L "$path" "$DEPS/$name"
    # Their own dependencies (libgfortran for OpenBLAS, ...).
    ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r n2 p2; do
      [[ "$n2" =~ $skip ]] || cp -L "$p2" "$DEPS/$n2"
    done
  fi
done
ls "$DEPS"
