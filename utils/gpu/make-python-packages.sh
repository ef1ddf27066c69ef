#!/usr/bin/env bash
# Compiles, here, the CUDA packages that utils/gpu/python-check.py checks
# from Python on a GPU machine that has no compiler: every corpus model
# (inference, frozen), convnet_train for training, and the three real models,
# each with its weights left in its archive (--weights=external: the
# corpus's archives travel with the tree, weightgen.py rebuilds the real
# models' there), so that the packages are small enough to carry.
#   utils/gpu/make-python-packages.sh BUILD_DIR OUT_DIR [GPU_ARCH]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 out=$2 arch=${3:-sm_90}
models=$src/test/Models/Inputs
mkdir -p "$out"
compile() { "$build/bin/gc-compile" --device cuda --gpu-arch "$arch" "$@"; }
for m in $(python3 -c "import json,sys; print(' '.join(sorted(json.load(open(sys.argv[1])))))" "$models/index.json") structured; do
  if [ "$m" = convnet_train ]; then
    compile "$models/$m/model.pt2" --train --grad-inputs --weights=external -o "$out/$m.train.gcpkg"
  else
    compile "$models/$m/model.pt2" --freeze --weights=external -o "$out/$m.gcpkg"
  fi
done
for m in resnet50 bert_base llama_50m; do
  compile "$build/test/realmodels/$m/model.pt2" --freeze --weights=external -o "$out/$m.gcpkg"
done
