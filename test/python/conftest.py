"""Shared fixtures of the gcrt package's tests.

Outputs are compared at rtol 1e-3 and atol max(1e-3, 2e-5 * max|expected|):
float32 error grows with the magnitude of what is summed, so the absolute
floor grows with the output's largest value (docs/python.md)."""

import os
from pathlib import Path

import numpy as np
import pytest

MODELS = Path(__file__).resolve().parents[1] / "Models" / "Inputs"


def assert_close(got, want, what=""):
    got = np.asarray(got, dtype=np.float64) if not hasattr(got, "numpy") else \
        got.detach().double().cpu().numpy()
    want = np.asarray(want, dtype=np.float64) if not hasattr(want, "numpy") else \
        want.detach().double().cpu().numpy()
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    peak = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=max(1e-3, 2e-5 * peak), err_msg=what)


def flat_inputs(model_dir):
    """in0.npy, in1.npy, ... of a corpus model."""
    files = [p for p in Path(model_dir).glob("in*.npy") if p.stem[2:].isdigit()]
    files.sort(key=lambda p: int(p.stem[2:]))
    return [np.load(f) for f in files]


@pytest.fixture(scope="session", autouse=True)
def compile_cache(tmp_path_factory):
    """A compile cache of the test session's own, so that no test reads a
    package another run left in ~/.cache/gc."""
    os.environ["GC_CACHE_DIR"] = str(tmp_path_factory.mktemp("gc-cache"))


@pytest.fixture(scope="session")
def realmodels():
    """The full-size archives the build rebuilt (test/CMakeLists.txt)."""
    build = os.environ.get("GC_BUILD_DIR")
    if not build:
        pytest.skip("GC_BUILD_DIR is not set: run through utils/run-tests.sh")
    return Path(build) / "test" / "realmodels"
