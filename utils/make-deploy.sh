#!/bin/sh
# Gathers what running gc packages on another machine needs into one
# folder: the runner gcrt-run, libgcrt, its optional fallback component
# (loaded only for packages with fallback steps) and the shared libraries
# they load that a bare Linux system may lack (oneDNN: Debian's libdnnl.so.2,
# or GC_DNNL_ROOT's libdnnl.so.3; zstd, OpenMP's runtime and, for Debian's
# oneDNN, the OpenCL loader). Copy the folder and the packages over, then
#   LD_LIBRARY_PATH=DIR/lib DIR/bin/gcrt-run model.gcpkg -o OUT in0.npy ...
# It prints each file's size and the total (docs/package.md, "Deploying").
#
# usage: make-deploy.sh BUILD_DIR OUT_DIR
set -eu
build=$1
out=$2
mkdir -p "$out/bin" "$out/lib"
strip --strip-debug -o "$out/bin/gcrt-run" "$build/bin/gcrt-run"
strip --strip-debug -o "$out/lib/libgcrt.so" "$build/lib/libgcrt.so"
strip --strip-debug -o "$out/lib/libgcrt_fallback.so" "$build/lib/libgcrt_fallback.so"
copied=""
for lib in libdnnl.so.2 libdnnl.so.3 libzstd.so.1 libgomp.so.1 libOpenCL.so.1; do
  path=$(ldd "$build/bin/gcrt-run" | awk -v l="$lib" '$1 == l { print $3 }')
  [ -z "$path" ] || { cp -L "$path" "$out/lib/"; copied="$copied $lib"; }
done
for need in 'libdnnl.so.[23]' libzstd.so.1 libgomp.so.1; do
  case "$copied " in
    *" "$need" "*) ;;
    *) echo "make-deploy.sh: gcrt-run does not load $need" >&2; exit 1 ;;
  esac
done
(cd "$out" && du -h bin/* lib/*)
echo "$out: $(du -sh "$out" | cut -f1)"
