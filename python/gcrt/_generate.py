"""Text generation over two loaded packages of one decoder: a prefill
package, run once on the prompt, and a decode package, run once per new
token (utils/make-llm-models.py and utils/make-hf-llama.py export both;
docs/llm.md).

Each package keeps the KV cache as its own state (the buffers its graph
mutates), so after the prefill its cache is copied into the decode package
once per generation; the decode steps then carry it from call to call."""

import time
from dataclasses import dataclass

import numpy as np

from ._module import _NUMPY, _torch_dtype


@dataclass
class Generation:
    """What gcrt.generate returns: the new tokens, the float32 logits each
    was chosen from (one row per token, when keep_logits=True), the time
    to the first token (the prefill) and the decode steps' total time."""

    tokens: np.ndarray
    logits: np.ndarray
    time_to_first_token: float
    decode_seconds: float

    @property
    def tokens_per_second(self):
        steps = len(self.tokens) - 1
        return steps / self.decode_seconds if steps and self.decode_seconds else 0.0


def _empty(info):
    """Memory for one of a package's outputs: numpy, or torch for bfloat16."""
    if info["dtype"] in _NUMPY:
        return np.empty(info["sizes"], dtype=_NUMPY[info["dtype"]])
    import torch

    return torch.empty(info["sizes"], dtype=_torch_dtype(info["dtype"]))


def _hand_over(prefill, decode):
    """The prefill package's cache becomes the decode package's."""
    for info in prefill._forward.outputs:
        if info["role"] == "buffer_mutation":
            value = _empty(info)
            prefill._forward.context.read_buffer(info["target"], value)
            decode._forward.context.write_buffer(info["target"], value)


def _choose(row, temperature, top_k, rng):
    if temperature <= 0:
        return int(np.argmax(row))
    scaled = (row - row.max()) / temperature
    if top_k and top_k < len(row):
        cut = np.partition(row, -top_k)[-top_k]
        scaled = np.where(row >= cut, scaled, -np.inf)
    weights = np.exp(scaled)
    return int(rng.choice(len(row), p=weights / weights.sum()))


def _input_maker(package):
    """How tokens and positions (numpy arrays) go in: as they are, or as
    torch tensors over the same memory when the package returns bfloat16,
    which numpy lacks (outputs come in the inputs' framework)."""
    if all(o["dtype"] != "bf16" for o in package._forward.outputs if o["role"] == "user_output"):
        return lambda a: a
    import torch

    return torch.from_numpy


def _last_row(logits):
    row = logits[0, -1]
    if not isinstance(row, np.ndarray):  # a torch tensor (bfloat16 logits)
        row = row.float().numpy()
    return row.astype(np.float32)


def generate(prefill, decode, prompt, max_new_tokens, *, temperature=0.0, top_k=None, seed=0,
             keep_logits=False):
    """Generates max_new_tokens tokens after `prompt` (token ids) with two
    loaded packages of one decoder, each taking (tokens [1, T], positions
    [T]) by position, whatever their names, and returning logits [1, T,
    vocab]. Greedy when temperature is 0;
    otherwise sampled from softmax(logits / temperature), over the top_k
    largest when given, with numpy's generator seeded by `seed`."""
    prompt = np.asarray(prompt, dtype=np.int64).reshape(-1)
    if prompt.size == 0 or max_new_tokens < 1:
        raise ValueError("generate needs a prompt of at least one token and max_new_tokens >= 1")
    rng = np.random.default_rng(seed)
    tokens, rows = [], []

    into_prefill, into_decode = _input_maker(prefill), _input_maker(decode)
    start = time.perf_counter()
    logits = prefill(into_prefill(prompt[None]), into_prefill(np.arange(prompt.size, dtype=np.int64)))
    row = _last_row(logits)
    tokens.append(_choose(row, temperature, top_k, rng))
    first = time.perf_counter()
    rows.append(row)
    _hand_over(prefill, decode)

    decode_start = time.perf_counter()
    token, position = np.empty((1, 1), np.int64), np.empty(1, np.int64)
    inputs = into_decode(token), into_decode(position)  # views of token and position
    for k in range(1, max_new_tokens):
        token[0, 0], position[0] = tokens[-1], prompt.size + k - 1
        row = _last_row(decode(*inputs))
        tokens.append(_choose(row, temperature, top_k, rng))
        if keep_logits:
            rows.append(row)
    end = time.perf_counter()
    return Generation(np.array(tokens, dtype=np.int64), np.stack(rows) if keep_logits else None,
                      first - start, end - decode_start)
