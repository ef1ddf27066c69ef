"""The callables gcrt.load returns."""

import threading

import numpy as np

from . import _runtime
from ._tree import OutputTree, follow, parse_input

_NUMPY = {"bool": np.bool_, "u8": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32,
          "i64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64}


def _torch_dtype(name):
    """torch's dtype for gc's short name (the buffers a module reads back)."""
    import torch

    return {"bool": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16,
            "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
            "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}[name]


def _is_torch(value):
    return type(value).__module__.startswith("torch")


def _current_stream(device):
    """The handle of torch's current CUDA stream on `device`. torch's raw
    handle query, where it has one, costs a tenth of building the Stream
    object that torch.cuda.current_stream returns."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device.index if device.index is not None else torch.cuda.current_device())
    return torch.cuda.current_stream(device).cuda_stream


class _Signature:
    """How a call's arguments become the graph's inputs: each input's
    parameter and the steps inside it, from the package's pytree paths,
    parsed once."""

    def __init__(self, infos):
        self.paths = [info["path"] for info in infos]
        if all(self.paths):
            self.inputs = [parse_input(p) for p in self.paths]
            self.params = list(dict.fromkeys(name for name, _ in self.inputs))
        else:
            # No record (a hand-made graph): positional, in order.
            self.inputs = None
            self.params = None
        # Every input a whole parameter, each once, in order: a call's
        # positional arguments are then the inputs themselves.
        self.plain = self.inputs is not None and \
            [name for name, _ in self.inputs] == self.params and \
            not any(steps for _, steps in self.inputs)

    def flatten(self, args, kwargs):
        if self.plain and not kwargs and len(args) == len(self.params):
            return list(args)
        if self.inputs is None:
            if kwargs:
                raise _runtime.InputError("this package records no argument names: pass its "
                                       "inputs positionally")
            if len(args) != len(self.paths):
                raise _runtime.InputError(f"the package takes {len(self.paths)} inputs, "
                                       f"{len(args)} were given")
            return list(args)
        if len(args) > len(self.params):
            raise _runtime.InputError(f"the package takes {len(self.params)} arguments "
                                   f"({', '.join(self.params)}), {len(args)} were given")
        bound = dict(zip(self.params, args))
        for name, value in kwargs.items():
            if name not in self.params:
                raise _runtime.InputError(f"unexpected argument '{name}': the package takes "
                                       f"{', '.join(self.params)}")
            if name in bound:
                raise _runtime.InputError(f"argument '{name}' given twice")
            bound[name] = value
        flat = []
        for (name, steps), path in zip(self.inputs, self.paths):
            if name not in bound:
                raise _runtime.InputError(f"missing argument '{name}'")
            try:
                flat.append(follow(bound[name], steps))
            except (KeyError, IndexError, AttributeError, TypeError) as e:
                raise _runtime.InputError(f"input '{path}' is not in the arguments given: "
                                       f"{type(e).__name__}: {e}") from None
        return flat


class _Graph:
    """One graph of a package with its context: runs flat lists."""

    def __init__(self, package, graph, options):
        self.package = package
        self.graph = graph
        self.options = options
        self.inputs = package.inputs(graph)
        self.outputs = package.outputs(graph)
        self.cuda = package.device != "cpu"
        self.context = _runtime.Context(package, graph, **options)
        self.lock = threading.Lock()
        self._numpy_answers = None

    def _numpy_for_torch(self, results):
        """Whether the runtime answers torch inputs with numpy arrays (a torch
        without DLPack's exchange table): the same for every call, so asked
        once."""
        if self._numpy_answers is None:
            given = [r for r in results if r is not None]
            if not given:
                return False
            self._numpy_answers = not _is_torch(given[0])
        return self._numpy_answers

    def renew(self):
        """A context with the package's current weights."""
        self.context = _runtime.Context(self.package, self.graph, **self.options)

    def run(self, flat, out=None, buffers=True):
        """The graph's outputs for the flat inputs: tensors of the inputs'
        framework (numpy arrays for numpy inputs), or `out` filled.
        buffers=False: None for the mutated buffers' new values, which the
        context keeps (no copy of a KV cache per call)."""
        stream = None
        torch_in = bool(flat) and _is_torch(flat[0])
        if self.cuda and torch_in and flat[0].is_cuda:
            # Enqueued on torch's current stream, after the work that wrote
            # the inputs and before the work that reads the outputs, as a
            # torch op would be; nothing waits.
            stream = _current_stream(flat[0].device)
        with self.lock:
            results = self.context.run(flat, out, stream, buffers)
        if out is not None:
            return list(out)
        if results and torch_in and self._numpy_for_torch(results):
            # A torch without DLPack's exchange table (before 2.10): its
            # inputs came through __dlpack__, and numpy made the outputs.
            import torch

            results = [r if r is None else torch.from_numpy(r) for r in results]
        return results


class CompiledModule:
    """A loaded inference package, called with the exported program's
    signature: m(*args, **kwargs) returns the outputs in the structure the
    model returned (torch tensors for torch inputs, numpy arrays otherwise).
    out=[...] gives every output's memory (user outputs, then mutated
    buffers, as `output_names` lists them)."""

    def __init__(self, package, path, options):
        self.path = str(path)
        self._forward = _Graph(package, 0, options)
        self._signature = _Signature(self._forward.inputs)
        self._users = [i for i, o in enumerate(self._forward.outputs)
                       if o["role"] == "user_output"]
        self._tree = OutputTree([self._forward.outputs[i]["path"] for i in self._users])

    @property
    def device(self):
        return self._forward.package.device

    @property
    def input_names(self):
        return list(self._signature.paths)

    @property
    def output_names(self):
        return [o["path"] or o["name"] for o in self._forward.outputs]

    def __call__(self, *args, out=None, **kwargs):
        # The buffers' new values stay in the context (buffers() reads them).
        results = self._forward.run(self._signature.flatten(args, kwargs), out, buffers=False)
        return self._tree.build([results[i] for i in self._users])

    def buffers(self):
        """The state carried between calls: each mutated buffer's current
        value, by name, as numpy arrays."""
        values = {}
        for o in self._forward.outputs:
            if o["role"] == "buffer_mutation":
                if o["dtype"] == "bf16":
                    raise _runtime.Error(f"buffer '{o['target']}' is bf16, which numpy lacks")
                into = np.empty(o["sizes"], dtype=_NUMPY[o["dtype"]])
                self._forward.context.read_buffer(o["target"], into)
                values[o["target"]] = into
        return values

    def set_buffer(self, name, value):
        self._forward.context.write_buffer(name, value)

    def reset(self):
        """Every buffer back to the package's value."""
        self._forward.context.reset_buffers()

    def load_state_dict(self, state_dict):
        """Swaps weights by name (a parameter, buffer or constant of the
        exported program) without recompiling; the next call uses them."""
        for name, value in state_dict.items():
            self._forward.package.set_weight(name, _host(value))
        self._renew()

    def load_weights(self, archive):
        """Binds every weight from another .pt2 of the same architecture."""
        self._forward.package.set_weights_file(str(archive))
        self._renew()

    def _renew(self):
        self._forward.renew()


def _host(value):
    if _is_torch(value):
        return value.detach().cpu()
    return value

