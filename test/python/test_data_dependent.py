"""Data-dependent sizes from Python: a package whose outputs' sizes depend on
the input data (nonzero, masked_select, x[mask]) returns each output at its
true size, for numpy and torch inputs, one package for every data set
(counts of none, some and all). Integer results must be equal; floats are
compared by conftest.assert_close."""

import numpy as np
import pytest

import gcrt
from conftest import MODELS, assert_close

MODELS_AND_INPUTS = [("dd_nonzero", 1), ("dd_bool_index", 1), ("dd_masked_select", 2)]


def data_set(model, inputs, k):
    d = MODELS / model
    ins = [np.load(d / f"in{i}.set{k}.npy") for i in range(inputs)]
    outs = sorted(d.glob(f"out*.set{k}.npy"))
    return ins, [np.load(o) for o in outs]


def check(got, want, what):
    if np.issubdtype(want.dtype, np.integer):
        got = np.asarray(got)
        assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
        assert np.array_equal(got, want), what
    else:
        assert_close(got, want, what)


@pytest.mark.parametrize("model,inputs", MODELS_AND_INPUTS)
def test_true_sizes(tmp_path, model, inputs):
    m = gcrt.load(gcrt.compile(str(MODELS / model / "model.pt2"), str(tmp_path / "m.gcpkg")))
    for k in range(3):
        ins, want = data_set(model, inputs, k)
        got = m(*ins)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        assert len(got) == len(want)
        for j, (g, w) in enumerate(zip(got, want)):
            check(g, w, f"{model} set {k} output {j}")


def test_true_sizes_torch(tmp_path):
    torch = pytest.importorskip("torch")
    m = gcrt.load(gcrt.compile(str(MODELS / "dd_nonzero" / "model.pt2"), str(tmp_path / "m.gcpkg")))
    for k in range(3):
        ins, want = data_set("dd_nonzero", 1, k)
        got = m(torch.from_numpy(ins[0]))
        got = got[0] if isinstance(got, (list, tuple)) else got
        assert isinstance(got, torch.Tensor)
        check(got.numpy(), want[0], f"dd_nonzero set {k} (torch)")
