"""gcrt.compile and gcrt.load on numpy arrays: calls, structure, state,
out= buffers, weight swaps and errors. None of it needs torch."""

import numpy as np
import pytest

import gcrt
from conftest import MODELS, assert_close, flat_inputs


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    out = tmp_path_factory.mktemp("mlp") / "mlp.gcpkg"
    gcrt.compile(MODELS / "mlp" / "model.pt2", out, freeze=True)
    return out


def test_mlp_matches_pytorch(mlp):
    m = gcrt.load(mlp)
    (x,) = flat_inputs(MODELS / "mlp")
    y = m(x)
    assert isinstance(y, np.ndarray)
    assert_close(y, np.load(MODELS / "mlp" / "out0.npy"), "mlp out0")


def test_gpu_options_are_accepted_on_the_cpu(mlp):
    # The GPU's switches pass through to the context, which a CPU graph
    # ignores: same outputs.
    m = gcrt.load(mlp, cuda_graphs=False, allow_tf32=True, early_launch=False)
    (x,) = flat_inputs(MODELS / "mlp")
    assert_close(m(x), np.load(MODELS / "mlp" / "out0.npy"), "mlp with the GPU options")


def test_keyword_argument_and_input_names(mlp):
    m = gcrt.load(mlp)
    (name,) = m.input_names
    (x,) = flat_inputs(MODELS / "mlp")
    assert_close(m(**{name: x}), np.load(MODELS / "mlp" / "out0.npy"), "mlp by keyword")


def test_out_buffers_are_filled_in_place(mlp):
    m = gcrt.load(mlp)
    (x,) = flat_inputs(MODELS / "mlp")
    want = np.load(MODELS / "mlp" / "out0.npy")
    out = np.full(want.shape, np.nan, dtype=np.float32)
    y = m(x, out=[out])
    assert y is out
    assert_close(out, want, "mlp out=")


def test_nested_inputs_and_outputs(tmp_path):
    """structured takes nested lists, tuples and dicts and returns them: the
    pytree paths rebuild both sides."""
    pkg = gcrt.compile(MODELS / "structured" / "model.pt2", tmp_path / "s.gcpkg")
    m = gcrt.load(pkg)
    flat = flat_inputs(MODELS / "structured")
    assert len(m.input_names) == len(flat)
    # Rebuild the call from the recorded paths, as a user would write it.
    result = m(**_unflatten(dict(zip(m.input_names, flat))))
    leaves = _leaves(result)
    wants = [np.load(MODELS / "structured" / f"out{i}.npy") for i in range(len(leaves))]
    for i, (got, want) in enumerate(zip(leaves, wants)):
        assert_close(got, want, f"structured out{i}")


def _unflatten(paths):
    """{"pair[0]": a, "extra['k']": b} -> {"pair": [a], "extra": {"k": b}}."""
    from gcrt._tree import INDEX, parse_input

    root = {}
    for path, value in paths.items():
        name, steps = parse_input(path)
        holder, key = root, name
        for kind, step in steps:
            holder = holder.setdefault(key, {})
            key = step
        holder[key] = value

    def fix(node):
        if not isinstance(node, dict):
            return node
        if node and all(isinstance(k, int) for k in node):
            return [fix(node[k]) for k in sorted(node)]
        return {k: fix(v) for k, v in node.items()}

    return {k: fix(v) for k, v in root.items()}


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


@pytest.mark.parametrize("model", ["kv_cache", "bn_train"])
def test_state_carries_between_calls_and_resets(tmp_path, model):
    """kv_cache writes its cache buffers (in place), bn_train its running
    statistics (new values the context copies into its state): each call
    sees the last one's values, buffers() shows them, reset() restores the
    package's."""
    pkg = gcrt.compile(MODELS / model / "model.pt2", tmp_path / "state.gcpkg")
    m = gcrt.load(pkg)
    runs = sorted((MODELS / model).glob("run*"))
    start = m.buffers()
    for run in runs:
        y = m(*flat_inputs(run))
        assert_close(y if not isinstance(y, tuple) else y[0], np.load(run / "out0.npy"),
                     f"{model} {run.name}")
    after = m.buffers()
    for name in after:
        want = MODELS / model / f"buffer_after.{name}.npy"
        assert_close(after[name], np.load(want), f"buffer {name}")
    m.reset()
    for name, value in m.buffers().items():
        assert_close(value, start[name], f"buffer {name} after reset")


def test_weights_swapped_by_name(tmp_path):
    """A state_dict entry replaces a weight without recompiling: with zero
    weights and biases every logit is 0, and the model's log_softmax gives
    -log(10) for each of its ten classes. (A frozen package has folded its
    weights away: swapping needs a package made without freeze=True, or
    with weights="external".)"""
    m = gcrt.load(gcrt.compile(MODELS / "mlp" / "model.pt2", tmp_path / "w.gcpkg"))
    (x,) = flat_inputs(MODELS / "mlp")
    before = m(x)
    uniform = np.full(before.shape, -np.log(10), dtype=np.float32)
    assert np.abs(before - uniform).max() > 0.1
    names = _weight_names(MODELS / "mlp" / "model.pt2")
    m.load_state_dict({n: np.zeros(s, np.float32) for n, s in names.items()})
    np.testing.assert_allclose(m(x), uniform, rtol=1e-6)


def _weight_names(archive):
    """Parameter names and sizes from the archive's weights index."""
    import json
    import zipfile

    with zipfile.ZipFile(archive) as z:
        index = [n for n in z.namelist() if n.endswith("weights_config.json")]
        config = json.loads(z.read(index[0]))
    return {name: [s["as_int"] for s in entry["tensor_meta"]["sizes"]]
            for name, entry in config["config"].items()}


def test_wrong_dtype_names_the_argument(mlp):
    m = gcrt.load(mlp)
    (x,) = flat_inputs(MODELS / "mlp")
    with pytest.raises(gcrt.InputError, match=rf"input '{m.input_names[0]}' is f64"):
        m(x.astype(np.float64))


def test_wrong_shape_names_the_argument(mlp):
    m = gcrt.load(mlp)
    (x,) = flat_inputs(MODELS / "mlp")
    with pytest.raises(gcrt.InputError, match=rf"input '{m.input_names[0]}' has sizes"):
        m(x[:, :-1].copy())


def test_wrong_argument_count(mlp):
    m = gcrt.load(mlp)
    (x,) = flat_inputs(MODELS / "mlp")
    with pytest.raises(gcrt.InputError, match="takes 1 arguments"):
        m(x, x)
    with pytest.raises(gcrt.InputError, match="unexpected argument 'nope'"):
        m(nope=x)


def test_missing_package_is_an_error_naming_it(tmp_path):
    with pytest.raises(gcrt.Error, match="nothing.gcpkg"):
        gcrt.load(tmp_path / "nothing.gcpkg")


def test_compile_error_is_gc_compiles_message(tmp_path):
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip archive")
    with pytest.raises(gcrt.Error, match=r"^gc-compile: error: .*bad.pt2"):
        gcrt.compile(bad, tmp_path / "bad.gcpkg")
    assert not (tmp_path / "bad.gcpkg").exists()


def test_unknown_flag_is_refused(tmp_path):
    with pytest.raises(gcrt.Error, match="no-such-flag"):
        gcrt.compile(MODELS / "mlp" / "model.pt2", tmp_path / "x.gcpkg", no_such_flag=True)


def test_device_mismatch_is_refused(mlp):
    with pytest.raises(gcrt.Error, match="compiled for cpu"):
        gcrt.load(mlp, device="cuda")


def test_compile_is_deterministic(tmp_path):
    a = gcrt.compile(MODELS / "mlp" / "model.pt2", tmp_path / "a.gcpkg", freeze=True, no_cache=True)
    b = gcrt.compile(MODELS / "mlp" / "model.pt2", tmp_path / "b.gcpkg", freeze=True, no_cache=True)
    assert open(a, "rb").read() == open(b, "rb").read()
