"""gcrt: compile torch.export programs with gc and call the packages.

    import gcrt
    gcrt.compile(ep, "model.gcpkg", freeze=True)   # or a .pt2 path
    m = gcrt.load("model.gcpkg")
    y = m(x)                                       # torch tensors or numpy arrays

The compiler and libgcrt run in this process (no subprocess). Loading and
running packages needs libgcrt alone (gcrt._runtime); gcrt.compile brings in
the compiler (gcrt._compiler). torch is only needed to pass an
ExportedProgram or torch tensors, and for training packages. docs/python.md has the
whole guide.
"""

import os
import tempfile
import warnings

from . import _runtime
from ._generate import Generation, generate
from ._module import CompiledModule
from ._tree import Record

Error = _runtime.Error
InputError = _runtime.InputError

__all__ = ["compile", "load", "generate", "CompiledModule", "Generation", "Record", "Error",
           "InputError"]


def _flag_args(flags):
    """gc-compile's command line for keyword flags: freeze=True is --freeze,
    device="cuda" is --device=cuda, gpu_arch=["sm_80", "sm_90"] is
    --gpu-arch=sm_80,sm_90; False and None leave a flag out."""
    args = []
    for key, value in sorted(flags.items()):
        name = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(name)
        elif isinstance(value, (list, tuple)):
            args.append(f"{name}={','.join(str(v) for v in value)}")
        else:
            args.append(f"{name}={value}")
    return args


def compile(program_or_path, out, *, device=None, train=False, weights=None, plugins=(),
            **flags):
    """Compiles a torch.export program (an ExportedProgram, or the path of a
    .pt2 that torch.export.save wrote) into the package `out`, through the
    same pipeline and compile cache as gc-compile. Keyword flags are
    gc-compile's (freeze=True, target="x86-64-v4", ...). Returns `out`.

    plugins: paths of plugin libraries that give the model's custom ops
    (gc-compile --plugin, docs/plugins.md).

    weights="external" leaves the weights in the .pt2: for an
    ExportedProgram it is saved beside the package (`out` with .pt2 for its
    extension), so that the package can find it."""
    out = os.fspath(out)
    flags = dict(flags, device=device, train=train, weights=weights)
    # Repeated, one path each: a path may hold a comma.
    plugin_args = [f"--plugin={os.fspath(p)}" for p in plugins]
    if isinstance(program_or_path, (str, os.PathLike)):
        return _compile_archive(os.fspath(program_or_path), out, flags, plugin_args)
    import torch

    if weights == "external":
        archive = os.path.splitext(out)[0] + ".pt2"
        torch.export.save(program_or_path, archive)
        return _compile_archive(archive, out, flags, plugin_args)
    with tempfile.TemporaryDirectory(prefix="gcrt-") as tmp:
        archive = os.path.join(tmp, "model.pt2")
        torch.export.save(program_or_path, archive)
        return _compile_archive(archive, out, flags, plugin_args)


def _compile_archive(archive, out, flags, plugin_args):
    from . import _compiler  # the compiler: only where something is compiled

    warned = _compiler.compile([archive, "-o", out, *_flag_args(flags), *plugin_args])
    for line in warned.splitlines():
        warnings.warn(line, stacklevel=3)
    return out


def load(path, *, device=None, weights=None, threads=0, cuda_graphs=True, allow_tf32=False,
         early_launch=True, plugins=()):
    """Loads the package at `path` as a callable with the exported program's
    signature (a TrainingModule, a torch.nn.Module, for a package compiled
    with train=True). `weights`: another .pt2 of the same architecture to
    bind instead of the package's own. `device`: "cpu" or "cuda"; it must
    be where the package was compiled for (checked), or None.
    `threads`: CPU worker threads (0: one per hardware thread).
    `early_launch`: on sm_90 and later, gc's kernels start before the one
    ahead of them ends (docs/gpu.md, "Early launches").
    `plugins`: plugin libraries that give the package's custom ops, loaded
    into this process for good (gcrt_plugin_load, docs/plugins.md)."""
    for plugin in plugins:
        _runtime.load_plugin(os.fspath(plugin))
    package = _runtime.Package(os.fspath(path), None if weights is None else os.fspath(weights))
    if device is not None:
        where = "cpu" if package.device == "cpu" else "cuda"
        if str(device).split(":")[0] != where:
            raise Error(f"'{path}' was compiled for {where}, not {device}: "
                        f"compile it again with device='{device}'")
    options = dict(threads=threads, cuda_graphs=cuda_graphs, allow_tf32=allow_tf32,
                   early_launch=early_launch)
    names = [package.graph_name(g) for g in range(package.graph_count)]
    if "backward" in names:
        from ._training import TrainingModule  # needs torch; inference does not

        return TrainingModule(package, path, options)
    return CompiledModule(package, path, options)
