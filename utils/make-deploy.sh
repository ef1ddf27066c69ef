#!/bin/sh
# Gathers what running gc packages on another machine needs into one
# folder: the example runner, libgcrt and the shared libraries they load
# that a bare Linux system may lack (oneDNN, zstd, OpenMP's runtime and
# oneDNN's OpenCL loader). Copy the folder and the packages over, then
#   LD_LIBRARY_PATH=DIR/lib DIR/bin/run_package model.gcpkg -o OUT in0.npy ...
#
# usage: make-deploy.sh BUILD_DIR OUT_DIR
set -eu
build=$1
out=$2
mkdir -p "$out/bin" "$out/lib"
cp "$build/bin/run_package" "$out/bin/"
strip --strip-debug -o "$out/lib/libgcrt.so" "$build/lib/libgcrt.so"
for lib in libdnnl.so.2 libzstd.so.1 libgomp.so.1 libOpenCL.so.1; do
  path=$(ldd "$build/bin/run_package" | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] || { echo "make-deploy.sh: run_package does not load $lib" >&2; exit 1; }
  cp -L "$path" "$out/lib/"
done
echo "$out: $(du -sh "$out" | cut -f1)"
