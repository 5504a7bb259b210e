#!/usr/bin/python3
"""Export reference models to ONNX together with an input and PyTorch's output.

Usage: export_models.py OUTDIR [--models mlp,resnet18,mobilenetv2] [--force]

For each model writes
  OUTDIR/<model>/model.onnx    opset 13, do_constant_folding=True, fixed shapes,
                               input "input", output "output"
  OUTDIR/<model>/input.npy     seeded float32 input
  OUTDIR/<model>/expected.npy  PyTorch's (eval-mode) output for that input

Models (random weights, torch.manual_seed(0); no pretrained downloads):
  mlp          Linear(784,512)-ReLU-Linear(512,256)-ReLU-Linear(256,10), input [8,784]
  resnet18     torchvision.models.resnet18(weights=None), input [1,3,224,224]
  resnet18_bn  the same, exported keeping its BatchNormalization nodes
  mobilenetv2  torchvision.models.mobilenet_v2(weights=None), input [1,3,224,224]
  squeezenet   torchvision.models.squeezenet1_1(weights=None), input [1,3,224,224]
               (Fire modules: channel concats of two branches)
  resnet50     torchvision.models.resnet50(weights=None), input [1,3,224,224]
               (not exported by default: used by bench/memory)
  densenet121  torchvision.models.densenet121(weights=None), input [1,3,96,96]
  shufflenetv2 torchvision.models.shufflenet_v2_x0_5(weights=None), input [1,3,224,224]
  mobilenetv3  torchvision.models.mobilenet_v3_small(weights=None), input [1,3,224,224]
  convnext     a small torchvision ConvNeXt (3 stages of 1 block, 32-64-128 channels),
               input [2,3,64,64] (LayerNorm over channels, GELU, layer scale)
  vit          a small torchvision VisionTransformer (32x32 images, 8x8 patches, 2 layers,
               4 heads, width 64), input [2,3,32,32]
  transformer  nn.TransformerEncoder (2 layers, d_model 64, 4 heads, batch_first),
               input [2,10,64]
  Benchmark-size networks (bench/compare.py; not exported by default), batch 1:
  mobilenetv3_large, efficientnet_b0, convnext_tiny, regnet (RegNetY-800MF): torchvision,
               input [1,3,224,224]
  deit_small   a torchvision VisionTransformer of DeiT-S's size (224, patch 16, 12 layers,
               6 heads, width 384), input [1,3,224,224]
  bert_encoder nn.TransformerEncoder of DistilBERT's size (6 layers, d_model 768, 12 heads,
               GELU), input [1,128,768]
  whisper_encoder  Whisper-tiny's encoder shape (two conv1d, 1500 positions, 4 pre-norm
               layers of width 384), input [1,80,3000]
  hf_bert_128, hf_bert_512, hf_gpt2, hf_llama  Hugging Face transformers (4.36, from
               configs, random weights; scripts/bench_setup.sh installs it) fed embeddings
               instead of token ids: BERT-base (12 layers) at 128 and 512 tokens, GPT-2
               (width 768, 6 layers, causal) at 128, a LLaMA-style decoder (width 768, 6
               layers, RMSNorm, rotary embeddings, 12 query and 4 key/value heads) at 256;
               output the last hidden state
  yolo_detector, db_detector  YOLOv8n's and a PaddleOCR-style DB text detector's layouts
               (scripts/detector_models.py), input [1,3,640,640]
  yolo_small, db_small  the same at [1,3,128,128] (exported by default: tests)
  unet         a small UNet (3 levels, 16-32-64 channels): max-pool down, one level up by
               ConvTranspose, one by bilinear Resize (half-pixel), one by nearest Resize to
               the skip's size; skip connections concatenated; input [2,3,32,32]
  lstm_tagger  a bidirectional LSTM as the first layer (16 features, hidden 32, batch first)
               tagging every step through a Linear, input [2,12,16]
  gru          a 2-layer GRU (16 features, hidden 24, batch first) classifying from the last
               layer's final state, input [2,10,16]

The models from densenet121 on are exported with a symbolic batch dim ("batch"), the way
exported models usually come; tests pin it with `dlc run --dim batch=N`.

BatchNorm running_mean/running_var/weight/bias are set to seeded, non-trivial
values (var > 0) so inference-mode BN is really exercised.

A model is skipped when its three files exist and are all newer than this
script (cheap ctest reruns); --force re-exports regardless.
"""
import argparse
import os
import sys
import time

import numpy as np

# torch is imported lazily (see _import_torch) so that an all-up-to-date run,
# e.g. a ctest rerun, does not pay for importing it.
torch = None
nn = None

OPSET = 13
SEED = 0
FILES = ("model.onnx", "input.npy", "expected.npy")


def _import_torch():
    global torch, nn
    if torch is None:
        import torch as _torch
        import torch.nn as _nn
        torch, nn = _torch, _nn


def make_mlp():
    return nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(),
        nn.Linear(512, 256), nn.ReLU(),
        nn.Linear(256, 10),
    ), (8, 784)


def make_resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)


def make_mobilenetv2():
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)


def make_squeezenet():
    import torchvision
    return torchvision.models.squeezenet1_1(weights=None), (1, 3, 224, 224)


def make_resnet50():
    import torchvision
    return torchvision.models.resnet50(weights=None), (1, 3, 224, 224)


def make_densenet121():
    import torchvision
    return torchvision.models.densenet121(weights=None), (1, 3, 96, 96)


def make_shufflenetv2():
    import torchvision
    return torchvision.models.shufflenet_v2_x0_5(weights=None), (1, 3, 224, 224)


def make_mobilenetv3():
    import torchvision
    return torchvision.models.mobilenet_v3_small(weights=None), (1, 3, 224, 224)


def make_convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    blocks = [CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 1), CNBlockConfig(128, None, 1)]
    return ConvNeXt(blocks, num_classes=10), (2, 3, 64, 64)


def make_vit():
    from torchvision.models.vision_transformer import VisionTransformer
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                              hidden_dim=64, mlp_dim=128, num_classes=10)
    # torchvision zero-initialises the classifier, which would make every output 0.
    nn.init.normal_(model.heads.head.weight, std=0.5)
    return model, (2, 3, 32, 32)


def make_transformer():
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                       batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2), (2, 10, 64)


def make_mobilenetv3_large():
    import torchvision
    return torchvision.models.mobilenet_v3_large(weights=None), (1, 3, 224, 224)


def make_efficientnet_b0():
    import torchvision
    return torchvision.models.efficientnet_b0(weights=None), (1, 3, 224, 224)


def make_convnext_tiny():
    import torchvision
    return torchvision.models.convnext_tiny(weights=None), (1, 3, 224, 224)


def make_regnet():
    import torchvision
    return torchvision.models.regnet_y_800mf(weights=None), (1, 3, 224, 224)


def make_deit_small():
    from torchvision.models.vision_transformer import VisionTransformer
    model = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=6,
                              hidden_dim=384, mlp_dim=1536, num_classes=1000)
    nn.init.normal_(model.heads.head.weight, std=0.05)
    return model, (1, 3, 224, 224)


def make_bert_encoder():
    layer = nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, dropout=0.0,
                                       activation="gelu", batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=6), (1, 128, 768)


class _HiddenStates(object):
    """A Hugging Face model fed embeddings (float, [1, S, width]) in place of token ids,
    returning its last hidden state: the exported graph is the transformer stack as
    transformers writes it (masks, rotary embeddings, grouped-query attention), without the
    embedding lookup."""

    @staticmethod
    def wrap(model):
        class Wrapped(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, embeddings):
                return self.model(inputs_embeds=embeddings).last_hidden_state
        return Wrapped()


def make_hf_bert(seq):
    from transformers import BertConfig, BertModel
    config = BertConfig(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                        intermediate_size=3072, attn_implementation="eager")
    return _HiddenStates.wrap(BertModel(config, add_pooling_layer=False)), (1, seq, 768)


def make_hf_gpt2():
    from transformers import GPT2Config, GPT2Model
    config = GPT2Config(n_embd=768, n_layer=6, n_head=12, attn_implementation="eager")
    return _HiddenStates.wrap(GPT2Model(config)), (1, 128, 768)


def make_hf_llama():
    from transformers import LlamaConfig, LlamaModel
    config = LlamaConfig(hidden_size=768, intermediate_size=2048, num_hidden_layers=6,
                         num_attention_heads=12, num_key_value_heads=4,
                         attn_implementation="eager")
    return _HiddenStates.wrap(LlamaModel(config)), (1, 256, 768)


def make_whisper_encoder():
    class AudioEncoder(nn.Module):
        """Whisper-tiny's encoder shape: two conv1d over 80 mel bins (the second halves 3000
        frames to 1500 positions), a learned position table, 4 pre-norm layers of width 384."""

        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(80, 384, 3, padding=1)
            self.conv2 = nn.Conv1d(384, 384, 3, stride=2, padding=1)
            self.positions = nn.Parameter(torch.randn(1500, 384) * 0.02)
            layer = nn.TransformerEncoderLayer(d_model=384, nhead=6, dim_feedforward=1536,
                                               dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.layers = nn.TransformerEncoder(layer, num_layers=4)
            self.norm = nn.LayerNorm(384)

        def forward(self, mel):
            F = torch.nn.functional
            x = F.gelu(self.conv2(F.gelu(self.conv1(mel))))
            return self.norm(self.layers(x.transpose(1, 2) + self.positions))

    return AudioEncoder(), (1, 80, 3000)


def make_yolo_detector(size=640):
    import detector_models
    return detector_models.make_yolo_detector(size)


def make_db_detector(size=640):
    import detector_models
    return detector_models.make_db_detector(size)


def make_unet():
    F = torch.nn.functional

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down1, self.down2, self.bottom = block(3, 16), block(16, 32), block(32, 64)
            self.up_transposed = nn.ConvTranspose2d(64, 32, 2, stride=2)
            self.up2, self.up1 = block(64, 32), block(48, 16)
            self.head = nn.Conv2d(16 + 3, 4, 1)

        def forward(self, x):
            d1 = self.down1(x)                                   # 16 x 32 x 32
            d2 = self.down2(F.max_pool2d(d1, 2))                 # 32 x 16 x 16
            b = self.bottom(F.max_pool2d(d2, 2))                 # 64 x 8 x 8
            u2 = self.up2(torch.cat([self.up_transposed(b), d2], 1))
            u1 = F.interpolate(u2, scale_factor=2, mode="bilinear", align_corners=False)
            u1 = self.up1(torch.cat([u1, d1], 1))
            # Nearest to a size read from the input's shape (folded at compile time).
            skip = F.interpolate(x, size=u1.shape[-2:], mode="nearest")
            return self.head(torch.cat([u1, skip], 1))

    return UNet(), (2, 3, 32, 32)


def make_lstm_tagger():
    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(16, 32, batch_first=True, bidirectional=True)
            self.tags = nn.Linear(64, 5)

        def forward(self, x):
            return self.tags(self.lstm(x)[0])

    return Tagger(), (2, 12, 16)


def make_gru():
    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(16, 24, num_layers=2, batch_first=True)
            self.head = nn.Linear(24, 3)

        def forward(self, x):
            return self.head(self.gru(x)[1][-1])

    return Classifier(), (2, 10, 16)


# Exported keeping BatchNormalization nodes (PyTorch folds them into Conv by default), so
# dlc's own batch-norm folding and kernel meet a real network.
KEEP_BATCHNORM = {"resnet18_bn"}

MODELS = {
    "mlp": make_mlp,
    "resnet18": make_resnet18,
    "resnet18_bn": make_resnet18,
    "mobilenetv2": make_mobilenetv2,
    "squeezenet": make_squeezenet,
    "resnet50": make_resnet50,
    "densenet121": make_densenet121,
    "shufflenetv2": make_shufflenetv2,
    "mobilenetv3": make_mobilenetv3,
    "convnext": make_convnext,
    "vit": make_vit,
    "transformer": make_transformer,
    "unet": make_unet,
    "mobilenetv3_large": make_mobilenetv3_large,
    "efficientnet_b0": make_efficientnet_b0,
    "convnext_tiny": make_convnext_tiny,
    "regnet": make_regnet,
    "deit_small": make_deit_small,
    "bert_encoder": make_bert_encoder,
    "whisper_encoder": make_whisper_encoder,
    "hf_bert_128": lambda: make_hf_bert(128),
    "hf_bert_512": lambda: make_hf_bert(512),
    "hf_gpt2": make_hf_gpt2,
    "hf_llama": make_hf_llama,
    "yolo_detector": make_yolo_detector,
    "db_detector": make_db_detector,
    "yolo_small": lambda: make_yolo_detector(128),
    "db_small": lambda: make_db_detector(128),
    "lstm_tagger": make_lstm_tagger,
    "gru": make_gru,
}
DEFAULT_MODELS = ["mlp", "resnet18", "resnet18_bn", "mobilenetv2", "squeezenet", "densenet121",
                  "shufflenetv2", "mobilenetv3", "convnext", "vit", "transformer", "unet", "lstm_tagger",
                  "gru", "yolo_small", "db_small"]
# Exported with a symbolic batch dim named "batch".
SYMBOLIC_BATCH = {"densenet121", "shufflenetv2", "mobilenetv3", "convnext", "vit", "transformer",
                  "unet", "lstm_tagger", "gru"}
ALIASES = {"mobilenet_v2": "mobilenetv2", "resnet": "resnet18"}


def randomize_batchnorm(model, gen):
    """Give every BatchNorm non-trivial (but well-scaled) statistics and affine params."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            c = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.5)   # [0.5, 2.0)
                if m.affine:
                    m.weight.copy_(torch.rand(c, generator=gen) * 0.75 + 0.5)   # [0.5, 1.25)
                    m.bias.copy_(torch.randn(c, generator=gen) * 0.1)


def up_to_date(outdir, script_mtime):
    paths = [os.path.join(outdir, f) for f in FILES]
    return all(os.path.isfile(p) and os.path.getmtime(p) > script_mtime for p in paths)


def export_one(name, outdir):
    torch.manual_seed(SEED)
    model, in_shape = MODELS[name]()
    gen = torch.Generator().manual_seed(SEED + 1)
    randomize_batchnorm(model, gen)
    model.eval()

    rng = np.random.default_rng(SEED)
    x = rng.standard_normal(in_shape).astype(np.float32)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy().astype(np.float32)

    os.makedirs(outdir, exist_ok=True)
    # Write to temporaries and rename, so an interrupted run never leaves a
    # half-written file that looks up to date.
    onnx_path = os.path.join(outdir, "model.onnx")
    torch.onnx.export(
        model, torch.from_numpy(x), onnx_path + ".tmp",
        opset_version=OPSET, do_constant_folding=True,
        input_names=["input"], output_names=["output"],
        dynamic_axes=({"input": {0: "batch"}, "output": {0: "batch"}}
                      if name in SYMBOLIC_BATCH else None),
        training=(torch.onnx.TrainingMode.PRESERVE if name in KEEP_BATCHNORM
                  else torch.onnx.TrainingMode.EVAL))
    for fname, arr in (("input.npy", x), ("expected.npy", y)):
        with open(os.path.join(outdir, fname + ".tmp"), "wb") as f:
            np.save(f, arr)
    for fname in FILES:
        os.replace(os.path.join(outdir, fname + ".tmp"), os.path.join(outdir, fname))
    return x.shape, y.shape, float(y.min()), float(y.max())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated subset of: " + ", ".join(MODELS))
    ap.add_argument("--force", action="store_true", help="re-export even if up to date")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    args = ap.parse_args()

    names = []
    for n in (s.strip().lower() for s in args.models.split(",")):
        if not n:
            continue
        n = ALIASES.get(n, n)
        if n not in MODELS:
            ap.error(f"unknown model '{n}' (known: {', '.join(MODELS)})")
        if n not in names:
            names.append(n)

    script_mtime = os.path.getmtime(os.path.abspath(__file__))
    for name in names:
        outdir = os.path.join(args.outdir, name)
        if not args.force and up_to_date(outdir, script_mtime):
            print(f"{name}: up to date in {outdir}, skipped")
            continue
        _import_torch()
        torch.set_num_threads(max(1, args.threads))
        t0 = time.time()
        xs, ys, lo, hi = export_one(name, outdir)
        print(f"{name}: exported to {outdir} (input {list(xs)}, output {list(ys)}, "
              f"output range [{lo:.4g}, {hi:.4g}]) in {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
