#!/bin/sh
# Seeds for the graph-file and package fuzzers (docs/fuzzing.md): the graph
# files of small corpus models at every level (aten, core, joint,
# partitioned, loops, kernels), their packages, and the packages' runtime
# plans alone (which the package fuzzer wraps in packages).
#
# usage: make-fuzz-seeds.sh BUILD_DIR OUT_DIR   (writes OUT_DIR/graph, OUT_DIR/package)
set -eu
bin=$1/bin
out=$2
models=$(dirname "$0")/../test/Models/Inputs
mkdir -p "$out/graph" "$out/package"
for m in mlp mlp_dynamic tinylm sdpa_attention convnet; do
  g="$out/graph/$m"
  "$bin/gc-import" "$models/$m/model.pt2" -o "$g.aten.gcm"
  "$bin/gc-opt" "$g.aten.gcm" -o "$g.core.gcm"
  "$bin/gc-lower" "$g.core.gcm" -o "$g.loops.gcm"
  "$bin/gc-codegen" "$g.loops.gcm" -o "$g.kernels.gcm"
  "$bin/gc-package" "$g.kernels.gcm" -o "$out/package/$m.gcpkg"
  python3 -c "import zipfile,sys; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read('plan.gcpl.zst'))" \
    "$out/package/$m.gcpkg" | zstd -dq > "$out/package/$m.gcpl"
done
# The training levels, from mlp.
"$bin/gc-opt" "$out/graph/mlp.aten.gcm" --joint -o "$out/graph/mlp.joint.gcm"
"$bin/gc-partition" "$out/graph/mlp.joint.gcm" -o "$out/graph/mlp.partitioned.gcm"
ls -l "$out/graph" "$out/package"
