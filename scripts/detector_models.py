"""Detector networks of the shapes users ship, written from their published architectures in
plain PyTorch (no ultralytics or PaddleOCR install), for scripts/export_models.py.

  make_yolo_detector  YOLOv8n's layout at 640x640: Conv-BN-SiLU stem, C2f stages (split,
                      bottlenecks, concat), SPPF (three 5x5 stride-1 max pools), a top-down
                      and bottom-up neck of nearest x2 Resize and Concat, and the decoupled
                      head with its exported post-processing (DFL softmax over 16 bins, box
                      decoding against constant anchors, class sigmoid): [1, 84, 8400].
  make_db_detector    a DB text detector as PaddleOCR ships it: MobileNetV3-Large backbone
                      (torchvision's, four stride levels), the DB FPN (1x1 lateral convs, nearest
                      upsampling and adds, 3x3 smoothing convs, upsample to 1/4 and concat) and
                      the probability head (3x3 conv, two ConvTranspose 2x2 stride 2, sigmoid):
                      [1, 1, 640, 640].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBnSilu(nn.Sequential):
    def __init__(self, cin, cout, kernel=1, stride=1):
        super().__init__(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, channels, shortcut):
        super().__init__()
        self.cv1 = ConvBnSilu(channels, channels, 3)
        self.cv2 = ConvBnSilu(channels, channels, 3)
        self.shortcut = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.shortcut else y


class C2f(nn.Module):
    def __init__(self, cin, cout, blocks, shortcut):
        super().__init__()
        self.hidden = cout // 2
        self.cv1 = ConvBnSilu(cin, 2 * self.hidden)
        self.cv2 = ConvBnSilu((2 + blocks) * self.hidden, cout)
        self.blocks = nn.ModuleList(Bottleneck(self.hidden, shortcut) for _ in range(blocks))

    def forward(self, x):
        parts = list(self.cv1(x).split((self.hidden, self.hidden), 1))
        for block in self.blocks:
            parts.append(block(parts[-1]))
        return self.cv2(torch.cat(parts, 1))


class Sppf(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.cv1 = ConvBnSilu(cin, cin // 2)
        self.cv2 = ConvBnSilu(cin // 2 * 4, cout)

    def forward(self, x):
        parts = [self.cv1(x)]
        for _ in range(3):
            parts.append(F.max_pool2d(parts[-1], 5, 1, 2))
        return self.cv2(torch.cat(parts, 1))


class YoloDetector(nn.Module):
    CLASSES, BINS, STRIDES = 80, 16, (8, 16, 32)

    def __init__(self, image_size):
        super().__init__()
        self.backbone = nn.ModuleList([
            ConvBnSilu(3, 16, 3, 2), ConvBnSilu(16, 32, 3, 2), C2f(32, 32, 1, True),
            ConvBnSilu(32, 64, 3, 2), C2f(64, 64, 2, True),
            ConvBnSilu(64, 128, 3, 2), C2f(128, 128, 2, True),
            ConvBnSilu(128, 256, 3, 2), C2f(256, 256, 1, True), Sppf(256, 256)])
        self.top_down4 = C2f(384, 128, 1, False)
        self.top_down3 = C2f(192, 64, 1, False)
        self.down3, self.bottom_up4 = ConvBnSilu(64, 64, 3, 2), C2f(192, 128, 1, False)
        self.down4, self.bottom_up5 = ConvBnSilu(128, 128, 3, 2), C2f(384, 256, 1, False)
        box_width, class_width = 64, 80

        def branch(cin, width, cout):
            return nn.Sequential(ConvBnSilu(cin, width, 3), ConvBnSilu(width, width, 3),
                                 nn.Conv2d(width, cout, 1))

        levels = (64, 128, 256)
        self.box = nn.ModuleList(branch(c, box_width, 4 * self.BINS) for c in levels)
        self.cls = nn.ModuleList(branch(c, class_width, self.CLASSES) for c in levels)
        anchors, strides = [], []
        for stride in self.STRIDES:
            side = image_size // stride
            ys, xs = torch.meshgrid(torch.arange(side) + 0.5, torch.arange(side) + 0.5,
                                    indexing="ij")
            anchors.append(torch.stack((xs.flatten(), ys.flatten())))
            strides.append(torch.full((1, side * side), float(stride)))
        self.register_buffer("anchors", torch.cat(anchors, 1))
        self.register_buffer("strides", torch.cat(strides, 1))
        self.register_buffer("bin_values", torch.arange(self.BINS, dtype=torch.float32))

    def forward(self, x):
        features = []
        for layer in self.backbone:
            x = layer(x)
            features.append(x)
        p3, p4, p5 = features[4], features[6], features[9]
        up = F.interpolate(p5, scale_factor=2.0, mode="nearest")
        n4 = self.top_down4(torch.cat((up, p4), 1))
        up = F.interpolate(n4, scale_factor=2.0, mode="nearest")
        n3 = self.top_down3(torch.cat((up, p3), 1))
        n4 = self.bottom_up4(torch.cat((self.down3(n3), n4), 1))
        n5 = self.bottom_up5(torch.cat((self.down4(n4), p5), 1))
        outputs = []
        for level, feature in enumerate((n3, n4, n5)):
            y = torch.cat((self.box[level](feature), self.cls[level](feature)), 1)
            outputs.append(y.flatten(2))
        y = torch.cat(outputs, 2)
        box, cls = y.split((4 * self.BINS, self.CLASSES), 1)
        # Distribution focal loss decoding: the expected bin of each side's distance.
        bins = box.view(1, 4, self.BINS, -1).transpose(1, 2).softmax(1)
        distances = (bins * self.bin_values.view(1, -1, 1, 1)).sum(1)
        left_top, right_bottom = distances.chunk(2, 1)
        top_left = self.anchors - left_top
        bottom_right = self.anchors + right_bottom
        boxes = torch.cat(((top_left + bottom_right) / 2, bottom_right - top_left), 1)
        return torch.cat((boxes * self.strides, cls.sigmoid()), 1)


class DbDetector(nn.Module):
    INNER, SMOOTHED = 96, 24

    def __init__(self):
        super().__init__()
        import torchvision
        features = torchvision.models.mobilenet_v3_large(weights=None).features
        # Stages ending at strides 4, 8, 16 and 32 (24, 40, 112 and 960 channels).
        self.stages = nn.ModuleList([features[:4], features[4:7], features[7:13],
                                     features[13:]])
        self.lateral = nn.ModuleList(nn.Conv2d(c, self.INNER, 1, bias=False)
                                     for c in (24, 40, 112, 960))
        self.smooth = nn.ModuleList(nn.Conv2d(self.INNER, self.SMOOTHED, 3, padding=1,
                                              bias=False) for _ in range(4))
        width = self.SMOOTHED
        self.head = nn.Sequential(
            nn.Conv2d(self.INNER, width, 3, padding=1, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(), nn.ConvTranspose2d(width, width, 2, 2), nn.BatchNorm2d(width), nn.ReLU(),
            nn.ConvTranspose2d(width, 1, 2, 2), nn.Sigmoid())

    def forward(self, x):
        levels = []
        for stage, lateral in zip(self.stages, self.lateral):
            x = stage(x)
            levels.append(lateral(x))
        for index in (2, 1, 0):
            levels[index] = levels[index] + F.interpolate(levels[index + 1], scale_factor=2.0,
                                                          mode="nearest")
        smoothed = [F.interpolate(smooth(level), scale_factor=float(2 ** index), mode="nearest")
                    if index else smooth(level)
                    for index, (smooth, level) in enumerate(zip(self.smooth, levels))]
        return self.head(torch.cat(smoothed[::-1], 1))


def make_yolo_detector(size=640):
    return YoloDetector(size), (1, 3, size, size)


def make_db_detector(size=640):
    return DbDetector(), (1, 3, size, size)
