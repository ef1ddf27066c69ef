"""A training package (gcrt.compile(..., train=True)) as a torch.nn.Module.

The package has a forward graph, whose outputs are the user outputs, the
updated buffers and the values saved for the backward, and a backward graph,
which takes those saved values and the outputs' gradients and returns the
parameters' (and, with grad_inputs=True, the inputs') gradients. A
torch.autograd.Function calls one and then the other, so loss.backward()
fills each parameter's .grad, and any torch optimizer can step them: what
AOTAutograd's runtime wrappers do around a compiled joint graph, here around
a compiled package.

The package's graphs read the parameters as bound weights. When the module's
parameters have changed since the last call (an optimizer step), they are
bound again and the contexts renewed, keeping the buffers' state.
"""

import torch

from . import _runtime
from ._module import _Graph, _Signature, _torch_dtype
from ._tree import OutputTree


def _graph_index(package, name):
    for g in range(package.graph_count):
        if package.graph_name(g) == name:
            return g
    raise _runtime.Error(f"the package has no {name} graph")


class _Call(torch.autograd.Function):
    @staticmethod
    def forward(ctx, module, count, *inputs_and_parameters):
        results = module._forward.run([t.detach() for t in inputs_and_parameters[:count]])
        ctx.module = module
        ctx.count = count
        ctx.save_for_backward(*(results[i] for i in module._saved))
        return tuple(results[i] for i in module._users)

    @staticmethod
    def backward(ctx, *grads):
        module = ctx.module
        saved = ctx.saved_tensors
        inputs = []
        for kind, k in module._backward_inputs:
            if kind == "saved":
                inputs.append(saved[k])
            else:
                g = grads[k]
                info = module._forward.outputs[module._users[k]]
                inputs.append(torch.zeros(info["sizes"], dtype=_torch_dtype(info["dtype"]),
                                          device=saved[0].device if saved else None)
                              if g is None else g)
        results = module._backward.run(inputs)
        by_target = {}
        for info, value in zip(module._backward.outputs, results):
            by_target[(info["role"], info["target"])] = value
        input_grads = [by_target.get(("gradient_to_user_input", info["target"]))
                       for info in module._forward.inputs]
        parameter_grads = [by_target.get(("gradient_to_parameter", name))
                           for name in module._parameter_names]
        return (None, None, *input_grads, *parameter_grads)


class TrainingModule(torch.nn.Module):
    """A loaded training package: call it as the exported model; its
    parameters (named as the model's) start from the package's weights."""

    def __init__(self, package, path, options):
        super().__init__()
        self.path = str(path)
        self._forward = _Graph(package, _graph_index(package, "forward"), options)
        self._backward = _Graph(package, _graph_index(package, "backward"), options)
        self._signature = _Signature(self._forward.inputs)
        outputs = self._forward.outputs
        self._users = [i for i, o in enumerate(outputs) if o["role"] == "user_output"]
        self._saved = [i for i, o in enumerate(outputs) if o["role"] == "saved_for_backward"]
        self._tree = OutputTree([outputs[i]["path"] for i in self._users])
        saved_names = [outputs[i]["name"] for i in self._saved]
        self._backward_inputs = []
        tangent = 0
        for info in self._backward.inputs:
            if info["target"].startswith("saved:"):
                self._backward_inputs.append(("saved", saved_names.index(info["target"][6:])))
            else:
                self._backward_inputs.append(("tangent", tangent))
                tangent += 1
        self._parameter_names = [o["target"] for o in self._backward.outputs
                                 if o["role"] == "gradient_to_parameter"]
        for info in self._backward.outputs:
            if info["role"] == "gradient_to_parameter":
                self._add_parameter(package, info)
        self._bound = self._versions()

    def _add_parameter(self, package, info):
        """The parameter at its model path ("f.0.weight" as submodule f,
        submodule 0, parameter weight), holding the package's value."""
        *owners, leaf = info["target"].split(".")
        holder = self
        for name in owners:
            if not hasattr(holder, name):
                holder.add_module(name, torch.nn.Module())
            holder = getattr(holder, name)
        value = torch.empty(info["sizes"], dtype=_torch_dtype(info["dtype"]))
        package.read_weight(info["target"], value)
        holder.register_parameter(leaf, torch.nn.Parameter(value))

    def _parameters_in_order(self):
        named = dict(self.named_parameters())
        return [named[n] for n in self._parameter_names]

    def _versions(self):
        return [(p.data_ptr(), p._version) for p in self._parameters_in_order()]

    def _bind_parameters(self):
        """The package's weights from the parameters, where they changed."""
        if self._versions() == self._bound:
            return
        package = self._forward.package
        for name, p in zip(self._parameter_names, self._parameters_in_order()):
            package.set_weight(name, p.detach().cpu())
        state = self.buffers_state()
        self._forward.renew()
        self._backward.renew()
        for name, value in state.items():
            self._forward.context.write_buffer(name, value)
        self._bound = self._versions()

    def forward(self, *args, **kwargs):
        self._bind_parameters()
        flat = [torch.as_tensor(v) for v in self._signature.flatten(args, kwargs)]
        outputs = _Call.apply(self, len(flat), *flat, *self._parameters_in_order())
        return self._tree.build(list(outputs))

    def buffers_state(self):
        """Each buffer the forward updates (batch-norm statistics), by name."""
        values = {}
        for o in self._forward.outputs:
            if o["role"] == "buffer_mutation":
                into = torch.empty(o["sizes"], dtype=_torch_dtype(o["dtype"]))
                self._forward.context.read_buffer(o["target"], into)
                values[o["target"]] = into
        return values

