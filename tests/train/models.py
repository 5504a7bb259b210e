"""The PyTorch models whose training steps tests/train/test_train.py compares with dlc's."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCnn(nn.Module):
    """Conv + BN + max pool + strided conv + avg pool + linear: BN in training mode."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=1, groups=2)
        self.bn2 = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class TwoBranch(nn.Module):
    """Two branches of different widths meet in a concat; the gradient is split back."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 1)
        self.b = nn.Conv2d(3, 2, 3, padding=1)
        self.fc = nn.Linear(6 * 4 * 4, 5)

    def forward(self, x):
        y = torch.cat([torch.tanh(self.a(x)), torch.sigmoid(self.b(x))], dim=1)
        return self.fc(y.flatten(1))


class SavedForBackward(nn.Module):
    """relu(tanh(.)): at inference relu overwrites tanh's output in place; in training that
    output is saved for tanh's gradient, so the plan must not."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(torch.tanh(self.fc1(x))) * 2.0)


class BasicBlock(nn.Module):
    """ResNet-18's basic block with a downsampling shortcut, then a classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.down = nn.Sequential(nn.Conv2d(4, 8, 1, stride=2, bias=False), nn.BatchNorm2d(8))
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)) + self.down(x))
        return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


class Activations(nn.Module):
    """Differentiable unary activations, each on its own branch of a linear layer's output
    (scaled into each function's domain), summed."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)

    def forward(self, x):
        h = self.fc(x)
        s = torch.tanh(h) * 0.9  # inside (-1, 1) for asin, acos, atanh
        # (PyTorch 1.13 exports no Sinh, Cosh, Asinh, Acosh, Atanh, and HardSwish only from
        # opset 14: those gradients are checked in the unit tests against central differences.)
        return (torch.sin(h) + torch.cos(h) + torch.tan(s) + torch.asin(s) + torch.acos(s) +
                torch.atan(h) + F.softsign(h) + torch.erf(h) + F.softplus(h) +
                torch.sqrt(h * h + 1) + torch.log(h * h + 1) + torch.abs(h) + torch.exp(s) +
                torch.reciprocal(h * h + 1) + torch.sigmoid(h))


class EmbedSlice(nn.Module):
    """An embedding lookup (Gather of a weight by input indices), strided slices and a
    squeeze/unsqueeze on the path."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 6)
        self.fc = nn.Linear(6, 4)

    def forward(self, ids):
        e = self.embed(ids)                    # [2, 5, 6]
        e = e[:, 1:5:2, :] + e.flip(1)[:, ::2, :][:, :2, :]  # slices, one of them reversed
        e = e.sum(dim=1).unsqueeze(1).squeeze(1)
        return self.fc(torch.tanh(e))


class Indexing(nn.Module):
    """GatherElements, ScatterElements (plain, and add with repeated targets) and TopK values on
    the path (opset 16 for the scatter's reduction)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 6)
        self.replacement = nn.Parameter(torch.randn(2, 3))
        self.added = nn.Parameter(torch.randn(2, 6))
        self.head = nn.Linear(6, 3)

    def forward(self, x):                                                   # [4, 5]
        h = self.fc(x)                                                      # [4, 6]
        picked = torch.gather(h, 1, torch.tensor([[0, 2, 5], [1, 1, 3], [4, 0, 2], [5, 5, 1]]))
        h = h.scatter(1, torch.tensor([[1, 3, 5], [0, 2, 4]]), self.replacement)
        h = h.scatter_add(0, torch.tensor([[0, 3, 3, 1, 2, 0], [3, 3, 0, 1, 1, 2]]), self.added)
        best = torch.topk(h, 3, dim=1).values
        return self.head(torch.cat([picked, best], 1))


class Elementwise(nn.Module):
    """Broadcasting binaries, unary ops, reductions and a reshape/transpose on the path."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 5) * 0.5)
        self.scale = nn.Parameter(torch.rand(5) + 0.5)
        self.shift = nn.Parameter(torch.randn(1, 5) * 0.1)

    def forward(self, x):
        h = x @ self.w                      # [3, 5]
        h = h * self.scale - self.shift     # broadcasting
        h = h / (1.0 + torch.exp(-h))       # div, exp
        h = torch.sqrt(h * h + 1.0) + torch.log(torch.sigmoid(h) + 1.0)
        h = torch.maximum(h, self.shift) - torch.minimum(h * 0.5, self.scale)  # Max, Min
        h = h.t().reshape(5, 3).t()         # transpose / reshape
        h = h + h.amax(dim=1, keepdim=True) * 0.3 - h.amin(dim=0) * 0.2  # ReduceMax/Min
        return h - h.mean(dim=1, keepdim=True) + h.sum(dim=0) * 0.1


class Resample(nn.Module):
    """Decoder-style resampling: bilinear and nearest Resize, a transposed convolution, a
    Where-masked activation, Expand and CumSum on the path."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
        self.gate = nn.Parameter(torch.randn(1, 2, 1, 1))
        self.fc = nn.Linear(2 * 12 * 12, 4)

    def forward(self, x):                                                   # [2, 2, 3, 3]
        h = F.interpolate(self.conv(x), scale_factor=2, mode="bilinear", align_corners=False)
        h = self.up(h)                                                      # [2, 2, 12, 12]
        h = torch.where(h > 0, h, 0.2 * h) + self.gate.expand(2, 2, 12, 12)
        h = F.interpolate(h[:, :, ::2, ::2], size=(12, 12), mode="nearest")
        h = torch.cumsum(h, dim=3) * 0.1 + F.interpolate(
            h, scale_factor=0.5, mode="bicubic", align_corners=True).repeat(1, 1, 2, 2)
        return self.fc(h.flatten(1))


class NormAttention(nn.Module):
    """A pre-norm attention block (LayerNormalization at opset 17, scaled dot-product
    attention with a causal mask, erf GELU in the MLP)."""

    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(8), nn.LayerNorm(8)
        self.qkv, self.proj = nn.Linear(8, 24), nn.Linear(8, 8)
        self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))
        self.head = nn.Linear(8, 3)

    def forward(self, x):                                                   # [2, 5, 8]
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / 8 ** 0.5
        causal = torch.ones(5, 5, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        x = x + self.proj(torch.softmax(scores, dim=-1) @ v)
        x = x + self.mlp(self.norm2(x))
        return self.head(x.mean(dim=1))


class Recurrent(nn.Module):
    """A bidirectional LSTM as the first layer, a GRU (linear_before_reset) and a tanh RNN
    over its outputs, classified from the last step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(8, 5, batch_first=True)
        self.rnn = nn.RNN(5, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):                                                   # [2, 6, 3]
        h = self.gru(self.lstm(x)[0])[0]
        return self.head(self.rnn(h.transpose(0, 1))[0][-1])
