"""Outputs in the graph's own layout, and tensors of any strides in GPU
memory on the caller's stream. The layout query runs on the CPU; what needs
a GPU skips without one (utils/gpu/python-check.py runs it on the device
machine). Outputs compared by the rule in conftest.py."""

import numpy as np
import pytest

import gcrt
from gcrt import _runtime
from gcrt._module import _NUMPY
from conftest import MODELS, assert_close, flat_inputs

torch = pytest.importorskip("torch")


def row_major(sizes):
    strides, step = [], 1
    for s in reversed(sizes):
        strides.insert(0, step)
        step *= max(s, 1)
    return strides


@pytest.fixture(scope="module")
def convnet_train(tmp_path_factory):
    out = tmp_path_factory.mktemp("train") / "convnet_train.gcpkg"
    return gcrt.compile(MODELS / "convnet_train" / "model.pt2", out, train=True)


def test_output_strides_give_the_graphs_layout(convnet_train):
    """The backward's weight gradients come out of a permuted view
    ('permute_12'); the query says so, outputs given in those strides get
    the same values as row-major ones, and torch's outputs are made in them."""
    package = _runtime.Package(str(convnet_train))
    graph = [package.graph_name(g) for g in range(package.graph_count)].index("backward")
    infos = package.inputs(graph)
    generator = np.random.default_rng(0)
    inputs = [(0.5 + generator.random(i["sizes"])).astype(_NUMPY[i["dtype"]])
              if i["dtype"].startswith("f") else np.zeros(i["sizes"], _NUMPY[i["dtype"]])
              for i in infos]
    context = _runtime.Context(package, graph)
    outputs = package.outputs(graph)
    strides = context.output_strides(inputs)
    assert len(strides) == len(outputs)
    permuted = [k for k, (o, s) in enumerate(zip(outputs, strides))
                if o["sizes"] and s != row_major(o["sizes"])]
    assert permuted, f"every output is row-major: {strides}"
    dense = context.run(inputs)
    assert all(np.isfinite(d).all() for d in dense)
    own = []
    for o, s in zip(outputs, strides):
        t = torch.empty_strided(o["sizes"], s, dtype=torch.float32)
        own.append(t)
    context.run(inputs, own)
    for k, (a, b) in enumerate(zip(own, dense)):
        assert list(a.stride()) == strides[k]
        assert_close(a, b, outputs[k]["name"])
    # torch inputs: torch makes the outputs, in those strides.
    made = context.run([torch.from_numpy(a) for a in inputs])
    for k, (a, b) in enumerate(zip(made, dense)):
        assert list(a.stride()) == strides[k], outputs[k]["name"]
        assert_close(a, b, outputs[k]["name"])


def gpu_or_skip():
    if _runtime.cuda_device_count() == 0 or not torch.cuda.is_available():
        pytest.skip("no NVIDIA GPU")


@pytest.fixture(scope="module")
def mlp_cuda(tmp_path_factory):
    gpu_or_skip()
    out = tmp_path_factory.mktemp("cuda") / "mlp.gcpkg"
    try:
        return gcrt.compile(MODELS / "mlp" / "model.pt2", out, device="cuda", freeze=True)
    except gcrt.Error as e:
        # A GPU machine without the CUDA toolkit (python-check.py's place).
        if "needs the CUDA toolkit" in str(e):
            pytest.skip(str(e))
        raise


def test_strided_gpu_inputs_on_a_side_stream(mlp_cuda):
    """A non-contiguous CUDA input, the call enqueued on a torch stream
    other than the default: after synchronizing, the result is the
    contiguous call's."""
    m = gcrt.load(mlp_cuda, device="cuda")
    (x,) = flat_inputs(MODELS / "mlp")
    dense = torch.from_numpy(x).cuda()
    want = m(dense)
    wide = torch.zeros(x.shape[0], x.shape[1] * 2, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        wide[:, ::2] = dense
        got = m(wide[:, ::2])
        doubled = got * 2
    stream.synchronize()
    assert_close(got, want, "strided input on a side stream")
    assert_close(doubled, want * 2, "work after the call on its stream")
