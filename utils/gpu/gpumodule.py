"""The exported program as a module on the GPU, as the GPU benchmarks and
checks compare against it (BENCHMARK-PROTOCOL: ops that name the CPU are
pointed at the GPU)."""


def gpu_module(ep):
    """The exported program as a module on the GPU. A program exported on
    the CPU records the CPU in the ops that make tensors (arange, full, a
    device move), and views whose CPU strides another device's kernels need
    not give: those ops are pointed at the GPU and views made reshapes, which
    compute the same values."""
    import torch
    gm = ep.module()
    cpu = torch.device("cpu")
    cuda = torch.device("cuda", 0)  # fake tensors compare "cuda" and "cuda:0" as unequal

    def moved(a):
        return cuda if isinstance(a, torch.device) and a == cpu else a

    # Higher-order ops' regions (a no_grad region) are graph modules too.
    for module in gm.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            if node.op != "call_function":
                continue
            node.args = tuple(moved(a) for a in node.args)
            node.kwargs = {k: moved(v) for k, v in node.kwargs.items()}
            if node.target is torch.ops.aten.view.default:
                node.target = torch.ops.aten.reshape.default
        module.recompile()
    return gm.to("cuda")
