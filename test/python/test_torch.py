"""gcrt beside PyTorch: every corpus model and the three real models,
exported programs compiled with gcrt.compile and called with gcrt.load,
against ep.module() on the same arguments (rule in conftest.py)."""

import dataclasses
import json

import numpy as np
import pytest

import gcrt
from conftest import MODELS, assert_close, flat_inputs

torch = pytest.importorskip("torch")
pytree = pytest.importorskip("torch.utils._pytree")

CORPUS = sorted(json.loads((MODELS / "index.json").read_text()))
# On top of the corpus: a call that takes a tuple and a keyword dict and
# returns a dataclass holding a list and a dict (utils/make-export-models.py).
STRUCTURED = ["structured"]


@dataclasses.dataclass
class StructuredOut:
    """The output type the structured model returns, registered under the
    name its archive records, as torch.export.load needs."""
    total: torch.Tensor
    parts: list


torch.export.register_dataclass(StructuredOut, serialized_type_name="gc_test.StructuredOut")


def call_args(ep, flat):
    """The exported call's (args, kwargs) from its flattened user inputs."""
    tensors = [torch.from_numpy(a) for a in flat]
    return pytree.tree_unflatten(tensors, ep.call_spec.in_spec)


def check_against_module(ep, package, flat, **load):
    args, kwargs = call_args(ep, flat)
    want = ep.module()(*args, **kwargs)
    m = gcrt.load(package, **load)
    got = m(*args, **kwargs)
    want_leaves = pytree.tree_leaves(want)
    got_leaves = pytree.tree_leaves(got)
    assert len(got_leaves) == len(want_leaves)
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        assert isinstance(g, torch.Tensor), f"output {i} is {type(g)}"
        assert_close(g, w, f"output {i}")
    return m


@pytest.mark.parametrize("name", CORPUS + STRUCTURED)
def test_exported_program_matches_module(name, tmp_path):
    ep = torch.export.load(str(MODELS / name / "model.pt2"))
    train = name.endswith("_train")
    package = gcrt.compile(ep, tmp_path / f"{name}.gcpkg", freeze=not train)
    check_against_module(ep, package, flat_inputs(MODELS / name))


@pytest.mark.parametrize("name", ["resnet50", "bert_base", "llama_50m"])
def test_real_model_matches_module(name, realmodels, tmp_path):
    archive = realmodels / name / "model.pt2"
    ep = torch.export.load(str(archive))
    package = gcrt.compile(archive, tmp_path / f"{name}.gcpkg", freeze=True)
    check_against_module(ep, package, flat_inputs(MODELS / "realmodels" / name))


def test_torch_inputs_are_read_in_place(tmp_path):
    """A non-contiguous torch view goes in without a copy (the strides
    travel), and the result equals the contiguous call's."""
    package = gcrt.compile(MODELS / "mlp" / "model.pt2", tmp_path / "mlp.gcpkg", freeze=True)
    m = gcrt.load(package)
    (x,) = flat_inputs(MODELS / "mlp")
    wide = torch.zeros(x.shape[0], x.shape[1] * 2)
    wide[:, ::2] = torch.from_numpy(x)
    view = wide[:, ::2]
    assert not view.is_contiguous()
    assert_close(m(view), m(torch.from_numpy(x)), "strided input")


def test_outputs_share_memory_with_numpy(tmp_path):
    """Outputs come back as torch tensors over memory gcrt allocated, with
    no copy: torch and numpy see the same bytes."""
    package = gcrt.compile(MODELS / "mlp" / "model.pt2", tmp_path / "mlp.gcpkg", freeze=True)
    m = gcrt.load(package)
    (x,) = flat_inputs(MODELS / "mlp")
    y = m(torch.from_numpy(x))
    assert isinstance(y, torch.Tensor)
    view = y.numpy()
    y[0, 0] = 12345.0
    assert view[0, 0] == 12345.0


def test_state_dict_swap_matches_module(tmp_path):
    """Weights from another state_dict, swapped in without recompiling,
    give what ep.module() gives with them."""
    ep = torch.export.load(str(MODELS / "mlp" / "model.pt2"))
    package = gcrt.compile(ep, tmp_path / "mlp.gcpkg")
    m = gcrt.load(package)
    generator = torch.Generator().manual_seed(0)
    module = ep.module()
    state = {k: torch.randn(v.shape, generator=generator) for k, v in module.state_dict().items()}
    module.load_state_dict(state)
    m.load_state_dict(state)
    (x,) = flat_inputs(MODELS / "mlp")
    assert_close(m(torch.from_numpy(x)), module(torch.from_numpy(x)), "swapped weights")
