"""gcrt.generate over Hugging Face's own Llama exported through
transformers' static-cache export (utils/make-hf-llama.py;
test/Models/Inputs/hf_llama_tiny and hf_llama_tiny_bf16): the programs take
(input_ids, cache_position) where gc's own decoder takes (tokens, pos),
and generate passes them by position. Its 32 greedy tokens are PyTorch's
(the exported programs run in PyTorch, which match transformers' eager
generate()); the logits match at conftest.assert_close's tolerance in
float32, and at rtol 1e-2 and atol 0.031 in bfloat16 (two bfloat16 steps
at the largest logit, 2.08)."""

import numpy as np
import pytest

import gcrt
from conftest import MODELS, assert_close

CASES = {"float32": MODELS / "hf_llama_tiny", "bfloat16": MODELS / "hf_llama_tiny_bf16"}


@pytest.fixture(scope="module", params=sorted(CASES))
def model(request, tmp_path_factory):
    folder = CASES[request.param]
    out = tmp_path_factory.mktemp("hf_llama")
    packages = tuple(gcrt.load(gcrt.compile(folder / f"{name}.pt2", out / f"{name}.gcpkg"), threads=1)
                     for name in ("prefill", "decode"))
    return request.param, folder, packages


def test_greedy_tokens_and_logits(model):
    dtype, folder, packages = model
    want = np.load(folder / "tokens.npy")
    got = gcrt.generate(*packages, np.load(folder / "prompt.npy"), len(want), keep_logits=True)
    np.testing.assert_array_equal(got.tokens, want)
    for k, (row, expected) in enumerate(zip(got.logits, np.load(folder / "logits.npy"))):
        if dtype == "float32":
            assert_close(row, expected, f"logits of token {k}")
        else:
            np.testing.assert_allclose(row, expected, rtol=1e-2, atol=0.031,
                                       err_msg=f"logits of token {k}")


def test_generation_starts_over(model):
    """A second generation overwrites the first one's cache (and the
    program's cumulative_length buffers, which cache_position sets)."""
    _, folder, packages = model
    prompt = np.load(folder / "prompt.npy")
    first = gcrt.generate(*packages, prompt, 8).tokens
    gcrt.generate(*packages, prompt[::-1].copy(), 8)
    np.testing.assert_array_equal(gcrt.generate(*packages, prompt, 8).tokens, first)


def test_called_by_the_exported_names(model):
    """The packages take transformers' argument names, as the exported
    program does; a decode step so called gives PyTorch's logits (through
    torch tensors in bfloat16, which numpy lacks)."""
    dtype, folder, (prefill, decode) = model
    assert prefill.input_names == ["input_ids", "cache_position"]
    step = folder / "steps" / "run0"
    ids, position, want = (np.load(step / f) for f in ("in0.npy", "in1.npy", "out0.npy"))
    decode.reset()
    if dtype == "float32":
        assert_close(decode(input_ids=ids, cache_position=position), want, "the first step's logits")
    else:
        import torch

        got = decode(input_ids=torch.from_numpy(ids), cache_position=torch.from_numpy(position))
        widened = (want.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        np.testing.assert_allclose(got.float().numpy(), widened, rtol=1e-2, atol=0.031)
    with pytest.raises(gcrt.InputError, match="unexpected argument 'tokens'"):
        decode(tokens=ids, cache_position=position)
