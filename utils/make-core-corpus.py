# Makes core-ATen versions of corpus models and small NN op samples, with
# torch's own outputs, to check gc's reference kernels against.
# Run where torch is installed (the device machine), beside a copy of the
# corpus in ./corpus: python3 make-core-corpus.py. It writes /tmp/nnwork;
# test/Models/Inputs/core_aten/ holds the core graphs of the small models
# (their inputs and outputs are the corpus's own) and, for convnet_train,
# the buffers after one training-mode forward (buffer_after1.*.npy).
import os, sys, json, tarfile, traceback
import numpy as np
import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
out = "/tmp/nnwork"
os.makedirs(out, exist_ok=True)
report = {}


def save_np(path, t):
    np.save(path, t.detach().cpu().contiguous().numpy())


def ops(ep):
    h = {}
    for n in ep.graph.nodes:
        if n.op == "call_function":
            h[str(n.target)] = h.get(str(n.target), 0) + 1
    return h


# Core graphs of corpus models.
for m in sorted(os.listdir(os.path.join(here, "corpus"))):
    d = os.path.join(out, "core_" + m)
    os.makedirs(d, exist_ok=True)
    try:
        ep = torch.export.load(os.path.join(here, "corpus", m, "model.pt2"))
        core = ep.run_decompositions()
        torch.export.save(core, os.path.join(d, "model.pt2"))
        report["core_" + m] = ops(core)
        if m == "convnet_train":
            # buffers after ONE training forward, from a fresh load
            ep1 = torch.export.load(os.path.join(here, "corpus", m, "model.pt2"))
            mod = ep1.module()
            x = torch.from_numpy(np.load(os.path.join(here, "corpus", m, "in0.npy")))
            mod(x)
            for n, b in mod.named_buffers():
                if b.is_floating_point():
                    save_np(os.path.join(d, f"buffer_after1.{n}.npy"), b)
    except Exception as e:
        report["core_" + m] = repr(e)
        traceback.print_exc()


class Fn(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *a):
        return self.f(*a)


def sample(name, f, *args):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    try:
        ep = torch.export.export(Fn(f), args)
        for n in ep.graph.nodes:
            n.meta.pop("stack_trace", None)
        torch.export.save(ep, os.path.join(d, "model.pt2"))
        core = ep.run_decompositions()
        torch.export.save(core, os.path.join(d, "core.pt2"))
        for i, a in enumerate(args):
            save_np(os.path.join(d, f"in{i}.npy"), a)
        res = f(*args)
        res = res if isinstance(res, (tuple, list)) else (res,)
        for i, r in enumerate(res):
            save_np(os.path.join(d, f"out{i}.npy"), r)
        report[name] = {"aten": ops(ep), "core": ops(core)}
    except Exception as e:
        report[name] = repr(e)
        traceback.print_exc()


torch.manual_seed(0)
r = torch.randn
# Losses
logits = r(4, 5)
tgt = torch.tensor([0, 3, 4, 1])
w5 = torch.rand(5) + 0.5
sample("ce_weight_ignore_smooth", lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=3, label_smoothing=0.2), logits, tgt, w5)
sample("ce_smooth_none", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.3, reduction="none"), logits, tgt)
sample("ce_spatial_sum", lambda x, t: F.cross_entropy(x, t, reduction="sum"), r(2, 3, 4, 5), torch.randint(0, 3, (2, 4, 5)))
sample("ce_probs_smooth_weight", lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1), logits, torch.softmax(r(4, 5), 1), w5)
sample("ce_all_ignored", lambda x, t: F.cross_entropy(x, t, ignore_index=2), logits, torch.tensor([2, 2, 2, 2]))
sample("nll_weight", lambda x, t, w: F.nll_loss(x, t, weight=w, reduction="none"), torch.log_softmax(logits, 1), tgt, w5)
sample("nll_2d_mean", lambda x, t: F.nll_loss(x, t, ignore_index=1), torch.log_softmax(r(2, 3, 4, 5), 1), torch.randint(0, 3, (2, 4, 5)))
sample("mse_none", lambda a, b: F.mse_loss(a, b, reduction="none"), r(3, 4), r(3, 4))
sample("mse_sum", lambda a, b: F.mse_loss(a, b, reduction="sum"), r(3, 4), r(3, 4))
# Attention
q, k, v = r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8)
bm = torch.rand(4, 6) > 0.4
bm[1] = False
sample("sdpa_boolmask_fullrow", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), q, k, v, bm)
sample("sdpa_floatmask_scale", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3), q, k, v, r(3, 1, 6))
sample("sdpa_causal_LneS", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
sample("sdpa_gqa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), r(1, 4, 3, 8), r(1, 2, 5, 8), r(1, 2, 5, 6))
sample("sdpa_bcast", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), r(2, 1, 3, 8), r(1, 2, 5, 8), r(1, 2, 5, 8))
# Normalization
sample("bn_train", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=True, momentum=0.3), r(4, 3, 5, 5), torch.zeros(3), torch.ones(3), r(3), r(3))
sample("bn_eval_noaffine", lambda x, m, v: F.batch_norm(x, m, v, training=False, eps=1e-3), r(4, 3, 5), r(3), torch.rand(3) + 0.5)
sample("ln_bf16", lambda x, w, b: F.layer_norm(x, (4, 6), w, b), r(3, 4, 6).bfloat16(), r(4, 6).bfloat16(), r(4, 6).bfloat16())
sample("ln_f32", lambda x, w: F.layer_norm(x, (6,), w), r(3, 4, 6), r(6))
sample("gn", lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-4), r(2, 6, 4, 3), r(6), r(6))
# Convolution
sample("conv_same_even", lambda x, w, b: F.conv2d(x, w, b, padding="same", dilation=(1, 2)), r(2, 3, 7, 8), r(4, 3, 2, 4), r(4))
sample("conv_valid_groups", lambda x, w: F.conv2d(x, w, padding="valid", groups=2, stride=(2, 1)), r(1, 4, 7, 8), r(6, 2, 3, 3))
sample("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), r(2, 3, 11), r(5, 3, 3), r(5))
sample("conv3d", lambda x, w: F.conv3d(x, w, padding=1), r(1, 2, 4, 5, 3), r(3, 2, 3, 3, 2))
sample("conv2d_unbatched_dw", lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=4), r(4, 9, 9), r(8, 1, 3, 3))
sample("conv2d_nc", lambda x, w: F.conv2d(x.transpose(2, 3), w, padding=(1, 0)), r(1, 2, 6, 5), r(3, 2, 3, 3))
# Pooling
sample("maxpool_pad_dil_ceil", lambda x: F.max_pool2d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True, return_indices=True), r(2, 3, 10, 9))
sample("maxpool_3d_in", lambda x: F.max_pool2d(x, (2, 3), stride=(1, 2)), r(3, 6, 7))
sample("avgpool_variants", lambda x: (F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), F.avg_pool2d(x, (2, 3), (3, 2), (1, 1), ceil_mode=True, divisor_override=5)), r(2, 3, 8, 9))
sample("adaptive_avg", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), r(2, 3, 7, 10))
# Softmax
sample("softmax_dtype", lambda x: torch.softmax(x, 0, dtype=torch.float64), r(4, 5))
sample("log_softmax_nc", lambda x: torch.log_softmax(x.transpose(0, 1), -1), r(4, 5))
# Matrix products
sample("matmul_bcast", lambda a, b: torch.matmul(a, b), r(2, 1, 3, 4), r(5, 4, 2))
sample("matmul_vec_batched", lambda a, b: torch.matmul(a, b), r(4), r(3, 4, 2))
sample("linear_3d", lambda x, w, b: F.linear(x, w, b), r(2, 3, 4), r(5, 4), r(5))
sample("baddbmm_ab", lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=2.0), r(3, 1, 5), r(3, 2, 4), r(3, 4, 5))
sample("mm_int", lambda a, b: a @ b, torch.randint(-5, 5, (3, 4)), torch.randint(-5, 5, (4, 2)))

with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f, indent=1)
with tarfile.open(os.path.join(os.environ.get("OUT", "/tmp/out"), "nn.tar"), "w") as t:
    t.add(out, arcname="work")
print(json.dumps({k: (v if isinstance(v, str) else "ok") for k, v in report.items()}, indent=0))
