"""The zoo's model list: name -> (family, builder). A builder returns (module, example inputs);
every model has random weights (weights.py replaces them by recipe values before export), batch 1
and a small input (images 64x64 unless an architecture needs more, 16-token sequences, 1600-sample
waveforms). Architectures come from torchvision, transformers and timm at their default sizes for
torchvision and timm, and from tiny configurations (hidden size 32 to 64, 2 layers) for transformers.
"""
import torch

IMG = (1, 3, 64, 64)
SEQ = 16
VOCAB = 128


def _image(shape=IMG):
    return (torch.rand(*shape) * 2 - 1,)


def _tokens():
    return (torch.randint(0, VOCAB, (1, SEQ)),)


# --- torchvision -------------------------------------------------------------------------------

def _tv(name, shape=IMG, **kw):
    def build():
        import torchvision
        return torchvision.models.get_model(name, weights=None, **kw).eval(), _image(shape)
    return build


TV_CLASSIFICATION = [
    "resnet18", "resnet50", "resnext50_32x4d", "alexnet", "squeezenet1_0",
    "squeezenet1_1", "densenet121", "googlenet", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
    "mnasnet0_5", "mnasnet1_0", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "efficientnet_b0",
    "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "convnext_tiny", "swin_t", "swin_v2_t",
]
TV_VIDEO = ["r3d_18", "mc3_18", "r2plus1d_18"]
TV_SEGMENTATION = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
TV_DETECTION = ["fasterrcnn_mobilenet_v3_large_320_fpn", "ssdlite320_mobilenet_v3_large", "retinanet_resnet50_fpn",
                "fcos_resnet50_fpn", "maskrcnn_resnet50_fpn", "keypointrcnn_resnet50_fpn"]


class _Segmentation(torch.nn.Module):
    """torchvision's segmentation models return a dict; the zoo keeps its 'out' entry."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class _Detection(torch.nn.Module):
    """A detector on one image; its list of dicts flattens to boxes, scores, labels (and masks or keypoints)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m([x[0]])


def _tv_seg(name):
    def build():
        import torchvision
        m = torchvision.models.get_model(name, weights=None, weights_backbone=None, aux_loss=False) \
            if name != "lraspp_mobilenet_v3_large" else \
            torchvision.models.get_model(name, weights=None, weights_backbone=None)
        return _Segmentation(m).eval(), _image()
    return build


def _tv_det(name):
    def build():
        import torchvision
        kw = dict(weights=None, weights_backbone=None)
        if name.startswith("ssd"):
            shape = (1, 3, 320, 320)
        else:
            kw.update(min_size=128, max_size=128)
            shape = (1, 3, 128, 128)
        return _Detection(torchvision.models.get_model(name, **kw)).eval(), (torch.rand(*shape),)
    return build


# --- transformers -------------------------------------------------------------------------------

class _First(torch.nn.Module):
    """A transformers model called with keyword inputs; returns its first output (logits or last hidden state)."""

    def __init__(self, m, names, extra):
        super().__init__()
        self.m, self.names, self.extra = m, names, extra

    def forward(self, *args):
        out = self.m(**dict(zip(self.names, args)), **self.extra)
        return out[0]


HF_FAMILY = {"encoder": "hf-encoder", "causal": "hf-decoder", "seq2seq": "hf-seq2seq",
             "speech-seq2seq": "hf-seq2seq"}


def _hf(config_name, kind, inputs=("input_ids",), extra=None, attrs=None, **cfg):
    def build():
        import transformers
        config = getattr(transformers, config_name)(**cfg)
        for k, v in (attrs or {}).items():  # choices transformers keeps outside the config's arguments
            setattr(config, k, v)
        auto = {"causal": transformers.AutoModelForCausalLM, "seq2seq": transformers.AutoModelForSeq2SeqLM,
                "speech-seq2seq": transformers.AutoModelForSpeechSeq2Seq}.get(kind, transformers.AutoModel)
        m = auto.from_config(config).eval()
        ex = dict(extra or {})
        if kind in ("causal", "seq2seq", "speech-seq2seq"):
            ex["use_cache"] = False
        values, names = [], list(inputs)
        for name in names:
            if name in ("input_ids", "decoder_input_ids"):
                values.append(torch.randint(0, VOCAB, (1, SEQ if name == "input_ids" else 4)))
            elif name == "pixel_values":
                values.append(torch.rand(1, 3, cfg.get("image_size", 32), cfg.get("image_size", 32)))
            elif name == "input_values":
                values.append(torch.rand(1, 1600) * 2 - 1)
            elif name == "input_features":
                values.append(torch.rand(1, cfg["num_mel_bins"], 2 * cfg["max_source_positions"]))
            elif name == "spectrogram":
                values.append(torch.rand(1, cfg["max_length"], cfg["num_mel_bins"]))
        if names == ["spectrogram"]:  # the audio spectrogram transformer names its input input_values
            names = ["input_values"]
        return _First(m, names, ex).eval(), tuple(values)
    build.family = HF_FAMILY.get(kind, "hf-" + kind)
    return build


ENC = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2, vocab_size=VOCAB,
           max_position_embeddings=64)
DEC = dict(ENC, num_key_value_heads=2)
VIS = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2, image_size=32,
           patch_size=8)
AUD = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2,
           conv_dim=(32, 32, 32), conv_stride=(5, 4, 2), conv_kernel=(10, 4, 2), num_conv_pos_embeddings=16,
           num_conv_pos_embedding_groups=4, vocab_size=VOCAB)
S2S = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
           encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=VOCAB, max_position_embeddings=64,
           decoder_start_token_id=2, pad_token_id=1)
SEQ2SEQ_INPUTS = ("input_ids", "decoder_input_ids")

HF = {
    # encoders
    "bert": _hf("BertConfig", "encoder", **ENC),
    "roberta": _hf("RobertaConfig", "encoder", **ENC),
    "xlm_roberta": _hf("XLMRobertaConfig", "encoder", **ENC),
    "distilbert": _hf("DistilBertConfig", "encoder", dim=32, hidden_dim=64, n_heads=4, n_layers=2,
                      vocab_size=VOCAB, max_position_embeddings=64),
    "albert": _hf("AlbertConfig", "encoder", embedding_size=16, **ENC),
    "electra": _hf("ElectraConfig", "encoder", embedding_size=16, **ENC),
    "deberta": _hf("DebertaConfig", "encoder", **ENC),
    "deberta_v2": _hf("DebertaV2Config", "encoder", **ENC),
    "mpnet": _hf("MPNetConfig", "encoder", **ENC),
    "mobilebert": _hf("MobileBertConfig", "encoder", embedding_size=16, intra_bottleneck_size=16,
                      true_hidden_size=16, num_feedforward_networks=2, **ENC),
    "convbert": _hf("ConvBertConfig", "encoder", embedding_size=32, **ENC),
    "roformer": _hf("RoFormerConfig", "encoder", embedding_size=32, **ENC),
    "esm": _hf("EsmConfig", "encoder", pad_token_id=1, **ENC),
    "squeezebert": _hf("SqueezeBertConfig", "encoder", embedding_size=32, q_groups=2, k_groups=2, v_groups=2,
                       post_attention_groups=2, intermediate_groups=4, output_groups=4, **ENC),
    "ernie": _hf("ErnieConfig", "encoder", **ENC),
    # decoders
    "gpt2": _hf("GPT2Config", "causal", n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB, n_positions=64),
    "gpt_neo": _hf("GPTNeoConfig", "causal", hidden_size=32, num_layers=2, num_heads=4, vocab_size=VOCAB,
                   max_position_embeddings=64, attention_types=[[["global", "local"], 1]], window_size=8),
    "gptj": _hf("GPTJConfig", "causal", n_embd=32, n_layer=2, n_head=4, rotary_dim=4, vocab_size=VOCAB,
                n_positions=64),
    "gpt_neox": _hf("GPTNeoXConfig", "causal", **ENC),
    "opt": _hf("OPTConfig", "causal", hidden_size=32, ffn_dim=64, num_attention_heads=4, num_hidden_layers=2,
               vocab_size=VOCAB, max_position_embeddings=64, word_embed_proj_dim=32),
    "bloom": _hf("BloomConfig", "causal", hidden_size=32, n_layer=2, n_head=4, vocab_size=VOCAB),
    "llama": _hf("LlamaConfig", "causal", **DEC),
    "mistral": _hf("MistralConfig", "causal", sliding_window=None, **DEC),
    "qwen2": _hf("Qwen2Config", "causal", **DEC),
    "qwen3": _hf("Qwen3Config", "causal", head_dim=8, **DEC),
    "phi": _hf("PhiConfig", "causal", **ENC),
    "phi3": _hf("Phi3Config", "causal", pad_token_id=0, **DEC),
    "falcon": _hf("FalconConfig", "causal", hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                  vocab_size=VOCAB),
    "gemma": _hf("GemmaConfig", "causal", head_dim=8, **DEC),
    "gemma2": _hf("Gemma2Config", "causal", head_dim=8, **DEC),
    "stablelm": _hf("StableLmConfig", "causal", **DEC),
    "olmo": _hf("OlmoConfig", "causal", pad_token_id=0, **DEC),
    "starcoder2": _hf("Starcoder2Config", "causal", **DEC),
    "codegen": _hf("CodeGenConfig", "causal", n_embd=32, n_layer=2, n_head=4, rotary_dim=4, vocab_size=VOCAB,
                   n_positions=64, n_ctx=64),
    "granite": _hf("GraniteConfig", "causal", **DEC),
    "mixtral": _hf("MixtralConfig", "causal", num_local_experts=4, num_experts_per_tok=2, **DEC),
    # The same with the experts as one batched product over every expert (no custom op).
    "mixtral_batched_mm": _hf("MixtralConfig", "causal", attrs={"_experts_implementation": "batched_mm"},
                              num_local_experts=4, num_experts_per_tok=2, **DEC),
    # encoder-decoders
    "t5": _hf("T5Config", "seq2seq", SEQ2SEQ_INPUTS, d_model=32, d_kv=8, d_ff=64, num_layers=2,
              num_decoder_layers=2, num_heads=4, vocab_size=VOCAB, decoder_start_token_id=0),
    "bart": _hf("BartConfig", "seq2seq", SEQ2SEQ_INPUTS, **S2S),
    "mbart": _hf("MBartConfig", "seq2seq", SEQ2SEQ_INPUTS, **S2S),
    "marian": _hf("MarianConfig", "seq2seq", SEQ2SEQ_INPUTS, **S2S),
    "pegasus": _hf("PegasusConfig", "seq2seq", SEQ2SEQ_INPUTS, **S2S),
    "m2m_100": _hf("M2M100Config", "seq2seq", SEQ2SEQ_INPUTS, **S2S),
    "blenderbot_small": _hf("BlenderbotSmallConfig", "seq2seq", SEQ2SEQ_INPUTS, **S2S),
    "whisper": _hf("WhisperConfig", "speech-seq2seq", ("input_features", "decoder_input_ids"),
                   d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=VOCAB,
                   num_mel_bins=16, max_source_positions=32, max_target_positions=32, pad_token_id=0,
                   bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
    # vision
    "vit": _hf("ViTConfig", "vision", ("pixel_values",), **VIS),
    "deit": _hf("DeiTConfig", "vision", ("pixel_values",), **VIS),
    "beit": _hf("BeitConfig", "vision", ("pixel_values",), vocab_size=VOCAB, **VIS),
    "dinov2": _hf("Dinov2Config", "vision", ("pixel_values",), **VIS),
    "swin": _hf("SwinConfig", "vision", ("pixel_values",), image_size=32, patch_size=4, embed_dim=16,
                depths=[1, 1], num_heads=[2, 4], window_size=4),
    "convnext": _hf("ConvNextConfig", "vision", ("pixel_values",), image_size=32, hidden_sizes=[16, 32],
                    depths=[1, 1], num_stages=2),
    "convnextv2": _hf("ConvNextV2Config", "vision", ("pixel_values",), image_size=32, hidden_sizes=[16, 32],
                      depths=[1, 1], num_stages=2),
    "resnet_hf": _hf("ResNetConfig", "vision", ("pixel_values",), image_size=32, embedding_size=16,
                     hidden_sizes=[16, 32], depths=[1, 1]),
    "regnet_hf": _hf("RegNetConfig", "vision", ("pixel_values",), image_size=32, embedding_size=16,
                     hidden_sizes=[16, 32], depths=[1, 1], groups_width=8),
    "mobilevit": _hf("MobileViTConfig", "vision", ("pixel_values",), image_size=32, hidden_sizes=[16, 24, 32],
                     neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 48], num_attention_heads=2),
    "segformer": _hf("SegformerConfig", "vision", ("pixel_values",), image_size=32, num_encoder_blocks=2,
                     depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                     num_attention_heads=[1, 2], mlp_ratios=[2, 2]),
    "clip_vision": _hf("CLIPVisionConfig", "vision", ("pixel_values",), **VIS),
    "clip_text": _hf("CLIPTextConfig", "encoder", **ENC),
    "siglip_vision": _hf("SiglipVisionConfig", "vision", ("pixel_values",), **VIS),
    "levit": _hf("LevitConfig", "vision", ("pixel_values",), image_size=64, hidden_sizes=[32, 48, 64],
                 num_attention_heads=[2, 2, 2], depths=[1, 1, 1], key_dim=[8, 8, 8]),
    "poolformer": _hf("PoolFormerConfig", "vision", ("pixel_values",), image_size=32, hidden_sizes=[16, 32, 32, 32],
                      depths=[1, 1, 1, 1]),
    # audio
    "wav2vec2": _hf("Wav2Vec2Config", "audio", ("input_values",), **AUD),
    "hubert": _hf("HubertConfig", "audio", ("input_values",), **AUD),
    "wavlm": _hf("WavLMConfig", "audio", ("input_values",), **AUD),
    "data2vec_audio": _hf("Data2VecAudioConfig", "audio", ("input_values",), **AUD),
    "ast": _hf("ASTConfig", "audio", ("spectrogram",), hidden_size=32, intermediate_size=64, num_attention_heads=4,
               num_hidden_layers=2, max_length=64, num_mel_bins=32, patch_size=8, frequency_stride=8,
               time_stride=8),
}


# --- timm -------------------------------------------------------------------------------------

TIMM = ["vit_tiny_patch16_224", "deit_tiny_patch16_224", "efficientnet_b0", "mobilenetv3_large_100",
        "convnext_atto", "resnet18d", "regnetx_002", "ghostnet_100", "levit_128s"]
TIMM_SIZE = {"vit_tiny_patch16_224": 224, "deit_tiny_patch16_224": 224, "levit_128s": 224}


def _timm(name):
    def build():
        import timm
        size = TIMM_SIZE.get(name, 64)
        return timm.create_model(name, pretrained=False).eval(), _image((1, 3, size, size))
    return build


def zoo():
    """name -> (family, builder), in the table's order."""
    out = {}
    for n in TV_CLASSIFICATION:
        out[n] = ("tv-classification", _tv(n, (1, 3, 96, 96) if n == "googlenet" else IMG))
    out["inception_v3"] = ("tv-classification", _tv("inception_v3", (1, 3, 96, 96), aux_logits=False,
                                                     init_weights=False))
    out["vit_b_32"] = ("tv-classification", _tv("vit_b_32", image_size=64))
    for n in TV_SEGMENTATION:
        out[n] = ("tv-segmentation", _tv_seg(n))
    for n in TV_DETECTION:
        out[n] = ("tv-detection", _tv_det(n))
    for n in TV_VIDEO:
        out[n] = ("tv-video", _tv(n, (1, 3, 4, 32, 32)))
    for n in HF:
        out["hf_" + n] = (HF[n].family, HF[n])
    for n in TIMM:
        out["timm_" + n] = ("timm", _timm(n))
    return out
