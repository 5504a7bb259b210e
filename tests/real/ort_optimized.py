#!/usr/bin/env python3
"""Transformers as users make them fast before they look for a compiler: small Hugging Face
models (from configs, seeded random weights; no downloads) exported by torch.onnx, then saved
by ONNX Runtime's transformer optimizer, which writes com.microsoft ops (Attention,
MultiHeadAttention, EmbedLayerNormalization, SkipLayerNormalization and its simplified form,
BiasGelu, FastGelu, QuickGelu, FusedMatMul, FusedGemm) and default-domain ops ONNX does not
define at the model's opset (LayerNormalization at opset 14, SimplifiedLayerNormalization).
Each optimized model is compiled and run by dlc and compared with ONNX Runtime running the
same optimized model on the same seeded inputs. Contrib ops the optimizer does not write for
these models (RotaryEmbedding, Gelu, some Attention mask forms) are checked as single nodes.

    build/real-venv/bin/python tests/real/ort_optimized.py --dlc build/tools/dlc --work DIR
"""
import argparse
import functools
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from cases import Cases  # noqa: E402  (tests/testlib/cases.py)
from realcheck import compare, dlc_outputs, relative_error  # noqa: E402  (tests/real/)

CASES = Cases()
TOLERANCE = 1e-4
VOCAB, HIDDEN, HEADS = 1000, 64, 4
# The pins of the symbolic dims the exports declare.
BATCH, SEQ, PAST = 2, 16, 5
TEXT = ["input_ids", "attention_mask"]
failures = []
passes = []


def check(condition, what):
    (passes if condition else failures).append(what)
    print(("PASS  " if condition else "FAIL  ") + what)
    sys.stdout.flush()


class Exporter:
    """Exports each model once into `folder` (torch and transformers are imported here only)."""

    def __init__(self, folder):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)

    def export(self, module, args, name, inputs, outputs, opset):
        import torch
        axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                "token_type_ids": {0: "batch", 1: "seq"}, "position_ids": {0: "batch", 1: "seq"},
                "pixel_values": {0: "batch"}}
        path = os.path.join(self.folder, name + ".onnx")
        module.eval()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs,
                              dynamic_axes={n: axes[n] for n in inputs if n in axes},
                              opset_version=opset, do_constant_folding=True)
        return path


def tokens():
    import torch
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=torch.Generator().manual_seed(0))
    return ids, torch.ones(BATCH, SEQ, dtype=torch.int64)


def outputs_of(model, inputs, keys):
    """A module taking `inputs` positionally (passed by name) and returning `keys` of the
    model's output as a tuple."""
    import torch

    class Outputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            result = self.model(**dict(zip(inputs, args)), return_dict=True)
            return tuple(result[k] for k in keys)
    return Outputs()


def bert(e):
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    config = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
                        num_attention_heads=HEADS, intermediate_size=128,
                        max_position_embeddings=128)
    ids, mask = tokens()
    inputs = ["input_ids", "attention_mask", "token_type_ids"]
    outputs = ["last_hidden_state", "pooler_output"]
    return e.export(outputs_of(BertModel(config), inputs, outputs),
                    (ids, mask, torch.zeros_like(ids)), "bert", inputs, outputs, 14)


def distilbert(e):
    import torch
    from transformers import DistilBertConfig, DistilBertModel
    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=VOCAB, dim=HIDDEN, hidden_dim=128, n_layers=2,
                              n_heads=HEADS, max_position_embeddings=128)
    return e.export(outputs_of(DistilBertModel(config), TEXT, ["last_hidden_state"]), tokens(),
                    "distilbert", TEXT, ["last_hidden_state"], 17)


def gpt2(e):
    import torch
    from transformers import GPT2Config, GPT2Model
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=2, n_head=HEADS, n_positions=128,
                        use_cache=False)
    return e.export(outputs_of(GPT2Model(config), TEXT, ["last_hidden_state"]), tokens(), "gpt2",
                    TEXT, ["last_hidden_state"], 14)


def gpt2_past(e):
    """GPT-2 with past and present as ONNX Runtime's own GPT-2 export writes them: one
    [2, batch, heads, past, head size] tensor per layer."""
    import torch
    from transformers import GPT2Config, GPT2Model
    torch.manual_seed(0)
    model = GPT2Model(GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=2, n_head=HEADS,
                                 n_positions=128))

    class WithPast(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, position_ids, attention_mask, past_0, past_1):
            result = self.model(input_ids=input_ids, position_ids=position_ids,
                                attention_mask=attention_mask,
                                past_key_values=tuple((p[0], p[1]) for p in (past_0, past_1)),
                                use_cache=True, return_dict=True)
            return (result.last_hidden_state,
                    *[torch.stack(kv) for kv in result.past_key_values])
    g = torch.Generator().manual_seed(0)
    seq = 3
    args = (torch.randint(0, VOCAB, (BATCH, seq), generator=g),
            torch.arange(PAST, PAST + seq).unsqueeze(0).expand(BATCH, seq),
            torch.ones(BATCH, PAST + seq, dtype=torch.int64),
            *[torch.randn(2, BATCH, HEADS, PAST, HIDDEN // HEADS, generator=g)
              for _ in range(2)])
    path = os.path.join(e.folder, "gpt2_past.onnx")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(WithPast().eval(), args, path,
                          input_names=["input_ids", "position_ids", "attention_mask", "past_0",
                                       "past_1"],
                          output_names=["last_state", "present_0", "present_1"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                        "position_ids": {0: "batch", 1: "seq"},
                                        "attention_mask": {0: "batch", 1: "total_seq"},
                                        "past_0": {1: "batch", 3: "past_seq"},
                                        "past_1": {1: "batch", 3: "past_seq"},
                                        "last_state": {0: "batch", 1: "seq"},
                                        "present_0": {1: "batch", 3: "total_seq"},
                                        "present_1": {1: "batch", 3: "total_seq"}},
                          opset_version=14, do_constant_folding=True)
    return path


def vit(e):
    import torch
    from transformers import ViTConfig, ViTModel
    torch.manual_seed(0)
    config = ViTConfig(image_size=32, patch_size=8, hidden_size=HIDDEN, num_hidden_layers=2,
                       num_attention_heads=HEADS, intermediate_size=128)
    x = torch.randn(BATCH, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    outputs = ["last_hidden_state", "pooler_output"]
    return e.export(outputs_of(ViTModel(config), ["pixel_values"], outputs), (x,), "vit",
                    ["pixel_values"], outputs, 17)


def t5_encoder(e):
    import torch
    from transformers import T5Config, T5EncoderModel
    torch.manual_seed(0)
    config = T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=16, d_ff=128, num_layers=2,
                      num_heads=HEADS, relative_attention_num_buckets=32)
    return e.export(outputs_of(T5EncoderModel(config), TEXT, ["last_hidden_state"]), tokens(),
                    "t5_encoder", TEXT, ["last_hidden_state"], 14)


def clip_text(e):
    import torch
    from transformers import CLIPTextConfig, CLIPTextModel
    torch.manual_seed(0)
    config = CLIPTextConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128,
                            num_hidden_layers=2, num_attention_heads=HEADS,
                            max_position_embeddings=77, hidden_act="quick_gelu")
    outputs = ["last_hidden_state", "pooler_output"]
    return e.export(outputs_of(CLIPTextModel(config), TEXT, outputs), tokens(), "clip_text", TEXT,
                    outputs, 14)


def llama(e):
    import torch
    from transformers import LlamaConfig, LlamaModel
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=HEADS, num_key_value_heads=HEADS,
                         max_position_embeddings=128)
    config._attn_implementation = "eager"
    model = LlamaModel(config)

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, position_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              position_ids=position_ids, use_cache=False,
                              return_dict=True).last_hidden_state
    ids, mask = tokens()
    positions = torch.arange(SEQ).unsqueeze(0).expand_as(ids)
    return e.export(Decoder(), (ids, mask, positions), "llama",
                    ["input_ids", "attention_mask", "position_ids"], ["last_hidden_state"], 14)


# What the optimizer is asked, per export: (model type, {variant: extra flags}). The variants
# together make every op and input form named in the module's docstring.
ONNXRUNTIME_ONLY = ["--only_onnxruntime", "--opt_level", "2"]
MODELS = {
    "bert": (bert, "bert", {"": [], "raw_mask": ["--use_raw_attention_mask"],
                            "mha": ["--use_multi_head_attention"],
                            "gelu_approximation": ["--enable_gelu_approximation"],
                            "onnxruntime_only": ONNXRUNTIME_ONLY}),
    "distilbert": (distilbert, "bert", {"": []}),
    "gpt2": (gpt2, "gpt2", {"": [], "onnxruntime_only": ONNXRUNTIME_ONLY}),
    "gpt2_past": (gpt2_past, "gpt2", {"": []}),
    "vit": (vit, "vit", {"": []}),
    "t5_encoder": (t5_encoder, "t5", {"": []}),
    "clip_text": (clip_text, "clip", {"": []}),
    "llama": (llama, "gpt2", {"onnxruntime_only": ONNXRUNTIME_ONLY}),
}


class Context:
    def __init__(self, dlc, work):
        self.dlc, self.work = dlc, work
        self.exporter = Exporter(os.path.join(work, "exports"))

    @functools.lru_cache(maxsize=None)
    def exported(self, name):
        return MODELS[name][0](self.exporter)

    def optimized(self, name, variant):
        _, model_type, variants = MODELS[name]
        out = os.path.join(self.work, "optimized", "%s_%s.onnx" % (name, variant or "default"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "onnxruntime.transformers.optimizer",
                            "--input", self.exported(name), "--output", out,
                            "--model_type", model_type, "--num_heads", str(HEADS),
                            "--hidden_size", str(HIDDEN), *variants[variant]],
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError("the optimizer failed: " + r.stderr.strip()[-500:])
        return out


def feeds_for(path):
    """Seeded inputs: token ids, masks with padding on both sides (row 0 left, row 1 right),
    positions counting from the past, images and past states from a normal distribution."""
    rng = np.random.default_rng(0)
    model = onnx.load(path, load_external_data=False)
    past = any(i.name.startswith("past_") for i in model.graph.input)
    seq = 3 if past else SEQ
    sizes = dict(batch=BATCH, seq=seq, total_seq=PAST + seq, past_seq=PAST)
    feeds = {}
    for i in model.graph.input:
        t = i.type.tensor_type
        shape = [d.dim_value or sizes[d.dim_param] for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        if i.name == "input_ids":
            value = rng.integers(0, VOCAB, size=shape)
        elif i.name == "attention_mask":
            value = np.ones(shape)
            if not past:
                value[0, :2] = 0
                value[1, shape[1] - 5:] = 0
        elif i.name == "token_type_ids":
            value = np.zeros(shape)
        elif i.name == "position_ids":
            value = np.broadcast_to(np.arange(shape[1]) + (PAST if past else 0), shape)
        else:
            value = rng.standard_normal(shape)
        feeds[i.name] = np.ascontiguousarray(value.astype(dtype))
    pins = sum([["--dim", "%s=%d" % (k, v)] for k, v in sizes.items()
                if any(d.dim_param == k for i in model.graph.input
                       for d in i.type.tensor_type.shape.dim)], [])
    return feeds, pins


def contrib_ops(path):
    model = onnx.load(path, load_external_data=False)
    return sorted({n.op_type for n in model.graph.node if n.domain == "com.microsoft"})


def optimized_case(name, variant):
    def run(c):
        path = c.optimized(name, variant)
        feeds, pins = feeds_for(path)
        label = "%s_%s" % (name, variant or "default")
        error, text = compare(c.dlc, path, feeds, os.path.join(c.work, "runs", label), pins)
        check(error < TOLERANCE, "%s (%s) matches ONNX Runtime: %s"
              % (label, ", ".join(contrib_ops(path)) or "no contrib ops", text))
    return run


for _name, (_, _, _variants) in MODELS.items():
    for _variant in _variants:
        CASES.add("%s_%s" % (_name, _variant or "default"), optimized_case(_name, _variant))


def single_node(c, label, op, inputs, attrs, names=None, expected=None):
    """A model of one com.microsoft `op` node reading graph inputs (name -> array; `names`,
    when given, lists the node's inputs with "" for absent optional ones), compared with ONNX
    Runtime, or with `expected` (ops ONNX Runtime has no CPU kernel for: their schema's
    formula in numpy)."""
    node = helper.make_node(op, names or list(inputs), ["y"], name=label,
                            domain="com.microsoft", **attrs)
    graph = helper.make_graph(
        [node], label,
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs.items()], [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    path = os.path.join(c.work, "nodes", label + ".onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)
    work = os.path.join(c.work, "runs", label)
    if expected is None:
        error, text = compare(c.dlc, path, inputs, work)
        check(error < TOLERANCE, "%s (%s) matches ONNX Runtime: %s" % (label, op, text))
        return
    got, text = dlc_outputs(c.dlc, path, inputs, work)
    error = relative_error(got["y"], expected) if got else float("inf")
    check(error < TOLERANCE, "%s (%s) matches its formula: relative error %.2e %s"
          % (label, op, error, text))


@CASES.case("node_rotary_embedding")
def _(c):
    rng = np.random.default_rng(1)
    angles = rng.uniform(0, 6, size=(32, 4)).astype(np.float32)
    cos, sin = np.cos(angles), np.sin(angles)
    for interleaved in (0, 1):
        x = rng.standard_normal((2, 5, 3 * 8)).astype(np.float32)
        positions = rng.integers(0, 32, size=(2, 5)).astype(np.int64)
        single_node(c, "rotary_3d_interleaved%d" % interleaved, "RotaryEmbedding",
                    dict(x=x, position_ids=positions, cos_cache=cos, sin_cache=sin),
                    dict(interleaved=interleaved))
    x = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
    single_node(c, "rotary_4d_offset", "RotaryEmbedding",
                dict(x=x, position_ids=np.array([7], np.int64), cos_cache=cos, sin_cache=sin), {})
    # Only the first 4 of 16 features turn (rotary_embedding_dim); num_heads says the heads.
    x = rng.standard_normal((2, 5, 2 * 16)).astype(np.float32)
    single_node(c, "rotary_partial", "RotaryEmbedding",
                dict(x=x, position_ids=rng.integers(0, 32, size=(2, 5)).astype(np.int64),
                     cos_cache=cos[:, :2].copy(), sin_cache=sin[:, :2].copy()),
                dict(rotary_embedding_dim=4, num_heads=2))


@CASES.case("node_attention_masks")
def _(c):
    """The mask forms the optimizer's BERT and GPT-2 outputs do not use: [2B] ends and starts,
    [B, S, T], mask_filter_value, scale and attention_bias, unidirectional without past."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 6, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 48)) / 4).astype(np.float32)
    b = rng.standard_normal(48).astype(np.float32)
    single_node(c, "attention_ends_starts", "Attention",
                dict(x=x, w=w, b=b, mask=np.array([6, 4, 1, 0], np.int32)),
                dict(num_heads=2))
    mask3 = (rng.uniform(size=(2, 6, 6)) > 0.3).astype(np.int32)
    mask3[1, 2] = 0  # a query whose keys are all padding
    single_node(c, "attention_3d_mask", "Attention", dict(x=x, w=w, b=b, mask=mask3),
                dict(num_heads=4, mask_filter_value=-1e9, scale=0.3))
    single_node(c, "attention_unidirectional", "Attention", dict(x=x, w=w, b=b),
                dict(num_heads=2, unidirectional=1))
    bias = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    single_node(c, "attention_with_bias", "Attention", dict(x=x, w=w, b=b, attention_bias=bias),
                dict(num_heads=2), names=["x", "w", "b", "", "", "attention_bias"])


@CASES.case("node_activations_and_products")
def _(c):
    rng = np.random.default_rng(3)
    x = (3 * rng.standard_normal((2, 3, 8))).astype(np.float32)
    single_node(c, "gelu", "Gelu", dict(x=x), {})
    # transBatchA: A [4, 2, 3, 5] is read as [2, 3, 4, 5]; transB: B [2, 3, 6, 5] as [2, 3, 5, 6].
    a = rng.standard_normal((4, 2, 3, 5)).astype(np.float32)
    b = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    single_node(c, "fused_matmul_trans_batch", "FusedMatMul", dict(a=a, b=b),
                dict(alpha=0.5, transA=0, transB=1, transBatchA=1, transBatchB=0))
    x, skip = rng.standard_normal((2, 3, 8)).astype(np.float32), x
    bias = rng.standard_normal(8).astype(np.float32)
    single_node(c, "bias_add", "BiasAdd", dict(x=x, bias=bias, skip=skip), {},
                expected=x + bias + skip)
    w = rng.standard_normal((8, 6)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    z = (x @ w + bias).astype(np.float64)
    fast_gelu = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z ** 3)))
    single_node(c, "gemm_fast_gelu", "GemmFastGelu", dict(x=x, w=w, bias=bias), {},
                expected=fast_gelu.astype(np.float32))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dlc", help="the dlc to test (required unless --list)")
    p.add_argument("--work", help="a scratch folder (required unless --list)")
    args = CASES.parse_args(p, required=["--dlc", "--work"])
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    CASES.run(args, Context(os.path.abspath(args.dlc), work))
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
