"""An exported test case written the way gc's tests read it: the program
(without stack traces, so that the archive does not depend on where the
checkout lies), its inputs and torch's outputs as .npy files, bfloat16 as
numpy's '|V2' bits. Imported by the make-*-models.py scripts beside it."""
import os

import numpy as np
import torch


def bits(t):
    """A tensor as numpy, bfloat16 as '|V2' bits."""
    t = t.detach().contiguous()
    return t.view(torch.int16).numpy().view("V2") if t.dtype == torch.bfloat16 else t.numpy()


def save_case(out, model, inputs):
    """Exports `model` on `inputs` into OUT/model.pt2, with OUT/in<i>.npy and
    OUT/out<i>.npy."""
    os.makedirs(out, exist_ok=True)
    ep = torch.export.export(model, inputs)
    for n in ep.graph.nodes:
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    with torch.no_grad():
        results = model(*inputs)
    for i, t in enumerate(inputs):
        np.save(os.path.join(out, f"in{i}.npy"), bits(t))
    for i, t in enumerate(results):
        np.save(os.path.join(out, f"out{i}.npy"), bits(t))
