"""Custom ops from a plugin (docs/plugins.md) through gcrt.compile and
gcrt.load: the model of utils/make-plugin-models.py with the test plugin
that test/Plugin/CMakeLists.txt builds into the build tree. Outputs are
compared as conftest.py says."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gcrt
from conftest import assert_close

NET = Path(__file__).resolve().parents[1] / "Plugin" / "Inputs" / "plugin_net"


@pytest.fixture(scope="module")
def plugin():
    build = os.environ.get("GC_BUILD_DIR")
    if not build:
        pytest.skip("GC_BUILD_DIR is not set: run through utils/run-tests.sh")
    path = Path(build) / "test" / "plugins" / "libgcdemo.so"
    if not path.exists():
        pytest.skip(f"the test plugin {path} is not built")
    return path


@pytest.fixture(scope="module")
def package(plugin, tmp_path_factory):
    out = tmp_path_factory.mktemp("plugin") / "net.gcpkg"
    return gcrt.compile(NET / "model.pt2", out, plugins=[plugin])


def test_plugin_model_runs_at_two_batch_sizes(package, plugin):
    m = gcrt.load(package, plugins=[plugin])
    for suffix in ("", ".set1"):
        outputs = m(np.load(NET / f"in0{suffix}.npy"))
        assert len(outputs) == 3
        for k, y in enumerate(outputs):
            assert_close(y, np.load(NET / f"out{k}{suffix}.npy"), f"out{k}{suffix}")


# Plugins stay loaded for the process, so what happens without one is
# seen in a fresh process.
def fresh_python(script, *args):
    return subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True,
                          text=True)


def test_compiling_without_the_plugin_says_to_pass_it(tmp_path):
    run = fresh_python("import gcrt, sys; gcrt.compile(sys.argv[1], sys.argv[2])",
                       NET / "model.pt2", tmp_path / "none.gcpkg")
    assert run.returncode != 0
    assert "gcdemo.scaled_swish.default" in run.stderr and "--plugin=PATH" in run.stderr
    assert not (tmp_path / "none.gcpkg").exists()


def test_loading_without_the_plugin_names_the_op(package):
    run = fresh_python("import gcrt, sys; gcrt.load(sys.argv[1])", package)
    assert run.returncode != 0
    assert "gcdemo.scaled_swish.default (compiled with libgcdemo.so)" in run.stderr
