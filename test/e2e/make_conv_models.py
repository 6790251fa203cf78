#!/usr/bin/env python3
"""Writes Inputs/conv1d/ and Inputs/conv3d/: models of 1-d convolutions
over sequences of 32 (a strided one with a bias; a strided, dilated
depthwise one; a grouped one; a strided one with a bias) and of 3-d
convolutions over 8x8x8 volumes (a strided one with a bias; a strided,
dilated depthwise one; a grouped one), each with a classifier, exported
for training (opset 14), 16 examples, and PyTorch's weights after two SGD
steps of batch 8. gpu-sim-convolutions-nd.test trains them through
cuda-sim, where every convolution and gradient is a call of the runtime's
2-d convolutions (on unit-height views) or 3-d ones. Needs PyTorch; the
test only reads what it writes.
"""

import copy
import pathlib

import numpy as np
import torch

BATCH, STEPS, LR = 8, 2, 0.1


class Conv1d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv1d(4, 8, 3, stride=2, padding=1)
        self.b = torch.nn.Conv1d(8, 8, 3, stride=2, padding=2, dilation=2, groups=8, bias=False)
        self.c = torch.nn.Conv1d(8, 6, 5, padding=2, groups=2, bias=False)
        self.d = torch.nn.Conv1d(6, 6, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(6 * 4, 10)

    def forward(self, x, y):
        h = torch.relu(self.a(x))
        h = torch.relu(self.b(h))
        h = torch.relu(self.c(h))
        h = self.d(h)
        return torch.nn.functional.cross_entropy(self.fc(h.flatten(1)), y)


class Conv3d(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv3d(2, 4, 3, stride=2, padding=1)
        self.b = torch.nn.Conv3d(4, 4, 3, stride=2, padding=2, dilation=2, groups=4, bias=False)
        self.c = torch.nn.Conv3d(4, 6, 3, padding=1, groups=2, bias=False)
        self.fc = torch.nn.Linear(6 * 2 * 2 * 2, 10)

    def forward(self, x, y):
        h = torch.relu(self.a(x))
        h = torch.relu(self.b(h))
        h = self.c(h)
        return torch.nn.functional.cross_entropy(self.fc(h.flatten(1)), y)


def write(name, model, example_shape):
    out = pathlib.Path(__file__).parent / "Inputs" / name
    (out / "train").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(exist_ok=True)
    x = torch.randn(BATCH * STEPS, *example_shape)
    y = torch.randint(0, 10, (BATCH * STEPS,))
    torch.onnx.export(copy.deepcopy(model), (x[:BATCH], y[:BATCH]), str(out / "model.onnx"),
                      input_names=["x", "y"], output_names=["loss"], opset_version=14,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
    np.save(out / "train" / "x.npy", x.numpy())
    np.save(out / "train" / "y.npy", y.numpy())
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = model(x[step * BATCH:(step + 1) * BATCH], y[step * BATCH:(step + 1) * BATCH])
        loss.backward()
        optimizer.step()
    for parameter_name, parameter in model.named_parameters():
        np.save(out / "reference" / f"{parameter_name}.npy", parameter.detach().numpy())


def main():
    torch.manual_seed(0)
    write("conv1d", Conv1d(), (4, 32))
    torch.manual_seed(0)
    write("conv3d", Conv3d(), (2, 8, 8, 8))


if __name__ == "__main__":
    main()
