#!/usr/bin/env python3
"""Writes Inputs/depthwise/: a model of three depthwise convolutions over
8x8, 4x4 images (stride 2, then 3x3 and 5x5 windows at stride 1) and a
classifier, exported for training (opset 14), 16 examples, and PyTorch's
weights after two SGD steps of batch 8. Large enough (32
channels, 36,864+ points a window op) for --parallax-channels-innermost
to rewrite every depthwise op. Needs PyTorch; training-depthwise.test only
reads what it writes.
"""

import torch

from make_conv_models import write


class Depthwise(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32, bias=False)
        self.b = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32, bias=False)
        self.c = torch.nn.Conv2d(32, 32, 5, padding=2, groups=32, bias=False)
        self.fc = torch.nn.Linear(32 * 4 * 4, 10)

    def forward(self, x, y):
        h = torch.relu(self.a(x))
        h = torch.relu(self.b(h))
        h = self.c(h)
        return torch.nn.functional.cross_entropy(self.fc(h.flatten(1)), y)


def main():
    torch.manual_seed(0)
    write("depthwise", Depthwise(), (32, 8, 8))


if __name__ == "__main__":
    main()
