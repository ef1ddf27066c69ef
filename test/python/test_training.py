"""A training package from Python: five SGD steps through the loaded
package give the parameters (and batch-norm statistics) that five steps
through ep.module() give, within 1e-4."""

import numpy as np
import pytest

import gcrt
from conftest import MODELS

torch = pytest.importorskip("torch")


def test_five_sgd_steps_match_exported_module(tmp_path):
    archive = MODELS / "convnet_train" / "model.pt2"
    ep = torch.export.load(str(archive))
    reference = ep.module()
    package = gcrt.compile(ep, tmp_path / "cnn.gcpkg", train=True, grad_inputs=True)
    m = gcrt.load(package)
    assert isinstance(m, torch.nn.Module)
    ours = dict(m.named_parameters())
    theirs = dict(reference.named_parameters())
    assert sorted(ours) == sorted(theirs)
    for name in ours:  # the package starts from the exported weights
        torch.testing.assert_close(ours[name].detach(), theirs[name].detach(), rtol=0, atol=0)

    x0 = torch.from_numpy(np.load(MODELS / "convnet_train" / "in0.npy"))
    generator = torch.Generator().manual_seed(0)
    inputs = [x0 + 0.1 * torch.randn(x0.shape, generator=generator) for _ in range(5)]
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.05),
                  torch.optim.SGD(reference.parameters(), lr=0.05)]
    for x in inputs:
        for module, optimizer in zip([m, reference], optimizers):
            optimizer.zero_grad()
            xr = x.clone().requires_grad_(True)
            loss = (module(xr) ** 2).mean()
            loss.backward()
            optimizer.step()
    for name in ours:
        torch.testing.assert_close(ours[name].detach(), theirs[name].detach(),
                                   rtol=1e-4, atol=1e-4, msg=f"parameter {name}")
    buffers = m.buffers_state()
    for name, value in reference.named_buffers():
        if name in buffers:
            torch.testing.assert_close(buffers[name], value, rtol=1e-4, atol=1e-4,
                                       msg=f"buffer {name}")


def test_input_gradient_matches(tmp_path):
    ep = torch.export.load(str(MODELS / "convnet_train" / "model.pt2"))
    reference = ep.module()
    m = gcrt.load(gcrt.compile(ep, tmp_path / "cnn.gcpkg", train=True, grad_inputs=True))
    x = torch.from_numpy(np.load(MODELS / "convnet_train" / "in0.npy"))
    grads = []
    for module in (m, reference):
        xr = x.clone().requires_grad_(True)
        module(xr).sum().backward()
        grads.append(xr.grad)
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-4)
