#!/usr/bin/python3
"""Exports the example models to ONNX with PyTorch (Debian python3-torch).

Each model returns its training loss (mean over the batch) as the graph's
only output and has a symbolic batch dimension ("batch"):

  lstm_lm         embedding -> LSTM -> linear, next-token cross-entropy
  gru_lm          the same with a GRU
  transformer_lm  token + position embeddings -> causal transformer
                  encoder layer -> linear, next-token cross-entropy
  wide_deep       wide (per-id weights) + deep (3 embeddings + dense
                  features -> MLP) click model, binary cross-entropy
  cnn             2 x (conv, batch norm, relu, max pool) -> global average
                  pool -> linear, cross-entropy
  mobile_cnn      the blocks torchvision's ResNet and MobileNetV2 reach on
                  32x32 images, on 4x4 ones: 3x3 stride-2 convolutions
                  down to a 1x1 output, an inverted residual (pointwise,
                  depthwise, ReLU6), a depthwise stride-2 convolution

  cnn_train, mobile_cnn_train
                  the same two exported for training (TrainingMode.TRAINING,
                  mobile_cnn_train on 8x8 images): batch norms with batch
                  statistics and running statistics updated every step
  transformer_train
                  transformer_lm with dropout 0.1, exported for training
                  (training data only: its masks are not PyTorch's)
  transformer_lm_train
                  transformer_lm with dropout 0, exported for training
                  (Dropout nodes in training mode, ratio 0)
  shufflenet_train, mobilenet_v3_train
                  torchvision's ShuffleNetV2 (stages of 2 blocks, 8-128
                  channels, 64x64 images) and MobileNetV3-Small (width
                  0.25: hard-swish, squeeze-and-excitation, no dropout;
                  32x32 images), exported for training: small members of
                  the families whose full-size models
                  bench/torchvision_benchmark.py trains. (At 32x32 and 4
                  examples ShuffleNet's last batch norm sees 4 values per
                  channel and training is chaotic: PyTorch's own float32
                  and float64 runs part after 3 steps.)
  resnet_train, mobilenet_v2_train, squeezenet_train, regnet_train,
  densenet_train, mnasnet_train, efficientnet_train
                  one small member of each other torchvision family,
                  built from the family's own classes and blocks at 8-64
                  channels on 32x32 images (TORCHVISION_TRAIN below),
                  exported for training
  resnet_eval, ..., efficientnet_eval, shufflenet_eval, mobilenet_v3_eval
                  the same torchvision modules exported in eval mode
  ctr_bag         a DLRM-style click model: three nn.EmbeddingBag fields
                  (sum, mean and max over bags of 3, 5 and 2 ids) and dense
                  features -> MLP, binary cross-entropy; exported for
                  training (PyTorch writes each bag as a Loop)
  ctr_offsets     ctr_bag's model fed as CTR pipelines feed it: each field
                  1-D ids with offsets (bags of 0-4 ids; field 0 a weighted
                  sum with per-sample weights, field 1 a mean, field 2 a
                  max), tables of 50, 40 and 30 rows; exported for
                  training. Its ids (and weights0) have their own symbolic
                  lengths "ids0", "ids1" and "ids2" (DYNAMIC_AXES below)

Parameters keep their PyTorch names (export without constant folding).
The eval-mode CNNs' batch norms are exported in inference form: their
running statistics are initializers, which parallax imports as trainable
unless frozen (`--freeze features.1.running_mean,...`). In the training
exports they are state the step updates, and the references record them.

Writes MODEL.onnx (opset 17) and MODEL.opset14.onnx, plus the reference
run: data/MODEL/inputs/*.npy (a batch of 4), data/MODEL/loss.npy
(PyTorch's loss on it) and data/MODEL/driver.mlir (an MLIR @main feeding
those inputs to the imported @forward, used by test/e2e/examples.test;
none for ctr_offsets, whose inference program training-embedding-bag.test
checks on them),
and PyTorch's reference training run: data/MODEL/train/*.npy (8 batches
of 4 examples, the training-program data layout: examples along the
first dimension; ctr_offsets' ids, weights0 and offsets are ragged, see
RAGGED below) and, per optimizer, data/MODEL/reference/OPTIMIZER/ with
losses.npy (the loss of each of the 8 steps) and PARAMETER.npy (every
parameter after the 8 steps): SGD for every model, Adagrad for the
language models (TRAINING below), with config.json saying how to build
the same run with parallax-compile (test/e2e/training.test compares; for
ctr_offsets its "bind" gives each ids length's bound, the most ids of a
field in one step's batch). The small files are committed, so tests need
no PyTorch. `--large` writes realistic table sizes (vocabulary 100,000;
CTR id spaces 1,000,000) into large/ for benchmarks; those are
generated, not committed.

Run with Debian's interpreter: /usr/bin/python3 examples/models/export.py
"""

import argparse
import copy
import json
import pathlib

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

HERE = pathlib.Path(__file__).parent
SEQ = 8
BATCH = 4
STEPS = 8
# model -> the optimizers (name and PyTorch keyword arguments) of the
# recorded reference runs. The transformer's key bias has a zero gradient
# in exact arithmetic (softmax ignores a constant shift): from a zero
# accumulator Adagrad would turn its rounding noise into full-size steps,
# so that run starts the accumulator at 0.1 (TensorFlow's default).
TRAINING = {
    "lstm_lm": [("sgd", {"lr": 0.1}), ("adagrad", {"lr": 0.02})],
    "gru_lm": [("sgd", {"lr": 0.1}), ("adagrad", {"lr": 0.02})],
    "transformer_lm": [("sgd", {"lr": 0.1}),
                       ("adagrad", {"lr": 0.02,
                                    "initial_accumulator_value": 0.1})],
    "wide_deep": [("sgd", {"lr": 0.1})],
    "ctr_bag": [("sgd", {"lr": 0.1}), ("adagrad", {"lr": 0.05})],
    "ctr_offsets": [("sgd", {"lr": 0.1}), ("adagrad", {"lr": 0.05})],
    "shufflenet_train": [("sgd", {"lr": 0.01})],
    # At 0.05 its last blocks' ReLU inputs came so near 0 that the rounding
    # of one choice of BLAS kernels took them to the other side.
    "mobilenet_v3_train": [("sgd", {"lr": 0.01})],
    "cnn": [("sgd", {"lr": 0.1})],
    "mobile_cnn": [("sgd", {"lr": 0.1})],
    "cnn_train": [("sgd", {"lr": 0.1})],
    "mobile_cnn_train": [("sgd", {"lr": 0.1})],
    # Dropout draws other masks than PyTorch's: no reference run, only the
    # training data (test/e2e/training-dropout.test: N workers = one).
    "transformer_train": [],
    "transformer_lm_train": [("sgd", {"lr": 0.1}),
                             ("adagrad", {"lr": 0.02,
                                          "initial_accumulator_value": 0.1})],
    # (TORCHVISION_TRAIN's models: SGD, added below.)
}
# Models exported for training (torch.onnx.TrainingMode.TRAINING): batch
# norms normalise with the batch's statistics and update their running
# statistics, as in model.train(); the reference runs train that way.
TRAINING_MODE = {"cnn_train", "mobile_cnn_train", "transformer_train",
                 "transformer_lm_train",
                 "ctr_bag", "shufflenet_train", "mobilenet_v3_train",
                 "ctr_offsets"}
# Each input's symbolic dimensions, where not {0: "batch"} for every input.
DYNAMIC_AXES = {
    "ctr_offsets": {"ids0": {0: "ids0"}, "offsets0": {0: "batch"},
                    "weights0": {0: "ids0"}, "ids1": {0: "ids1"},
                    "offsets1": {0: "batch"}, "ids2": {0: "ids2"},
                    "offsets2": {0: "batch"}, "dense": {0: "batch"},
                    "clicked": {0: "batch"}},
}
# Ragged training data: model -> offsets input -> the inputs it indexes
# (ids, and per-sample weights of the same length). In data/MODEL/train
# offsetsK.npy holds one offset per example (int64, the first 0, never
# decreasing) into the whole data set's idsK.npy: example e's bag is
# idsK[offsetsK[e]:offsetsK[e + 1]], the last example's runs to the end.
# A step's batch of examples [b, b + BATCH) takes the ids
# idsK[offsetsK[b]:offsetsK[b + BATCH] (or the end)] and the offsets
# offsetsK[b:b + BATCH] - offsetsK[b] (step_batch below).
RAGGED = {"ctr_offsets": {"offsets0": ("ids0", "weights0"),
                          "offsets1": ("ids1",), "offsets2": ("ids2",)}}


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim, hidden, cell):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.rnn = cell(dim, hidden, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens, targets):
        hidden, _ = self.rnn(self.embedding(tokens))
        logits = self.decoder(hidden)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))


class TransformerLM(nn.Module):
    def __init__(self, vocab, dim, heads, ffn, dropout=0.0):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(SEQ, dim)
        self.encoder = nn.TransformerEncoderLayer(
            dim, heads, ffn, dropout=dropout, batch_first=True,
            activation="gelu")
        self.decoder = nn.Linear(dim, vocab)
        # A plain array, not a buffer: traced as a Constant node rather than
        # an initializer (which would be imported as a trainable variable).
        self.causal = np.triu(np.full((SEQ, SEQ), -1e9, np.float32), 1)

    def forward(self, tokens, targets):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embedding(tokens) + self.position(positions)
        x = self.encoder(x, src_mask=torch.from_numpy(self.causal).to(tokens.device))
        logits = self.decoder(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))


class WideDeep(nn.Module):
    def __init__(self, ids, dim, dense, hidden):
        super().__init__()
        self.wide = nn.ModuleList(nn.Embedding(n, 1) for n in ids)
        self.deep = nn.ModuleList(nn.Embedding(n, dim) for n in ids)
        self.mlp = nn.Sequential(
            nn.Linear(len(ids) * dim + dense, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, categorical, dense, clicked):
        fields = categorical.unbind(1)
        wide = sum(table(f) for table, f in zip(self.wide, fields))
        deep = torch.cat([table(f) for table, f in zip(self.deep, fields)]
                         + [dense], dim=1)
        # Exported as the Sigmoid / Log / Mul form of binary cross-entropy.
        return F.binary_cross_entropy_with_logits(wide + self.mlp(deep),
                                                  clicked)


class BagCTR(nn.Module):
    """One nn.EmbeddingBag per categorical field, each a bag of ids."""

    MODES = ("sum", "mean", "max")

    def __init__(self, ids, dim, dense, hidden):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(n, dim, mode=mode)
                                  for n, mode in zip(ids, self.MODES))
        self.mlp = nn.Sequential(
            nn.Linear(len(ids) * dim + dense, hidden), nn.ReLU(),
            nn.Linear(hidden, 1))

    def forward(self, field0, field1, field2, dense, clicked):
        fields = (field0, field1, field2)
        pooled = [bag(f) for bag, f in zip(self.bags, fields)]
        return F.binary_cross_entropy_with_logits(
            self.mlp(torch.cat(pooled + [dense], dim=1)), clicked)


class OffsetsCTR(BagCTR):
    """BagCTR with each field's bags as 1-D ids and offsets (PyTorch's
    bag(ids, offsets), include_last_offset=False), field 0's sum weighted
    by one per-sample weight per id."""

    def forward(self, ids0, offsets0, weights0, ids1, offsets1, ids2,
                offsets2, dense, clicked):
        pooled = [self.bags[0](ids0, offsets0, per_sample_weights=weights0),
                  self.bags[1](ids1, offsets1),
                  self.bags[2](ids2, offsets2)]
        return F.binary_cross_entropy_with_logits(
            self.mlp(torch.cat(pooled + [dense], dim=1)), clicked)


def offsets_ctr_data(rows, examples, generator):
    """`examples` examples of OffsetsCTR's inputs with tables of `rows`,
    in its forward's order, offsets from 0 over all of them. Bags hold 0-4
    ids, uniform over the table's rows; field 0's weights are uniform in
    [0, 1). Every example has ids in fields 0 and 2 (the sum and the max);
    field 1's mean bags may be empty, but never both of examples 2k and
    2k + 1, so at 1 and 2 workers every worker's batch has field-1 ids
    (at 4 workers, 1 example each, a worker may see a field-1 batch with
    no ids at all)."""
    data = {}
    for field, n in enumerate(rows):
        sizes = torch.randint(0 if field == 1 else 1, 5, (examples,),
                              generator=generator)
        if field == 1:
            for k in range(0, examples - 1, 2):
                while sizes[k] == 0 and sizes[k + 1] == 0:
                    sizes[k:k + 2] = torch.randint(0, 5, (2,),
                                                   generator=generator)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64),
                             torch.cumsum(sizes, 0)[:-1]])
        data[f"ids{field}"] = torch.randint(0, n, (int(sizes.sum()),),
                                            generator=generator)
        data[f"offsets{field}"] = offsets
        if field == 0:
            data["weights0"] = torch.rand(int(sizes.sum()),
                                          generator=generator)
    data["dense"] = torch.randn(examples, 4, generator=generator)
    data["clicked"] = torch.randint(0, 2, (examples, 1),
                                    generator=generator).float()
    return {name: data[name] for name in
            ("ids0", "offsets0", "weights0", "ids1", "offsets1", "ids2",
             "offsets2", "dense", "clicked")}


class Classifier(nn.Module):
    """A torchvision classifier returning its cross-entropy loss."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, images, labels):
        return F.cross_entropy(self.m(images), labels)


class CNN(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Linear(16, classes)

    def forward(self, images, labels):
        x = self.features(images)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return F.cross_entropy(self.classifier(x), labels)


class MobileCNN(nn.Module):
    def __init__(self, classes):
        super().__init__()

        def conv_bn(cin, cout, kernel, stride, groups=1, act=nn.ReLU):
            layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2,
                                groups=groups, bias=False),
                      nn.BatchNorm2d(cout)]
            return nn.Sequential(*layers, *([act()] if act else []))

        self.stem = conv_bn(3, 8, 3, 2)                      # 4x4 -> 2x2
        self.expand = conv_bn(8, 16, 1, 1, act=nn.ReLU6)
        self.depthwise = conv_bn(16, 16, 3, 1, groups=16, act=nn.ReLU6)
        self.project = conv_bn(16, 8, 1, 1, act=None)
        self.down = conv_bn(8, 16, 3, 2)                     # 2x2 -> 1x1
        self.reduce = nn.Conv2d(16, 16, 3, 2, 1, groups=16)  # 1x1 -> 1x1
        self.classifier = nn.Linear(16, classes)

    def forward(self, images, labels):
        x = self.stem(images)
        x = x + self.project(self.depthwise(self.expand(x)))
        x = self.reduce(self.down(x))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return F.cross_entropy(self.classifier(x), labels)


def tiny_resnet(classes):
    """torchvision's ResNet family from its own BasicBlock at 8-32
    channels: residuals, a projection shortcut, stride-2 convolutions."""
    from torchvision.models.resnet import BasicBlock, conv1x1

    def down(cin, cout):
        return nn.Sequential(conv1x1(cin, cout, 2), nn.BatchNorm2d(cout))

    model = torchvision.models.ResNet(BasicBlock, [1, 1, 1, 1],
                                      num_classes=classes)
    model.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
    model.bn1 = nn.BatchNorm2d(8)
    model.maxpool = nn.Identity()
    model.layer1 = nn.Sequential(BasicBlock(8, 8))
    model.layer2 = nn.Sequential(BasicBlock(8, 16, 2, down(8, 16)))
    model.layer3 = nn.Sequential(BasicBlock(16, 32, 2, down(16, 32)))
    model.layer4 = nn.Identity()
    model.fc = nn.Linear(32, classes)
    return model


def tiny_mobilenet_v2(classes):
    """MobileNetV2 with three stages of its InvertedResidual blocks and a
    64-channel head instead of 1280 (a ReLU6 over 1280 x 64 values a step
    has about one value a step within float32 rounding of 0, where
    PyTorch's and any other summation order can take different sides)."""
    from torchvision.ops.misc import Conv2dNormActivation

    model = torchvision.models.MobileNetV2(
        num_classes=classes, dropout=0.0,
        inverted_residual_setting=[[1, 8, 1, 1], [6, 16, 2, 2],
                                   [6, 24, 1, 2]])
    model.features[-1] = Conv2dNormActivation(24, 64, kernel_size=1,
                                              activation_layer=nn.ReLU6)
    model.classifier[1] = nn.Linear(64, classes)
    nn.init.kaiming_normal_(model.features[-1][0].weight, mode="fan_out")
    nn.init.normal_(model.classifier[1].weight, 0, 0.01)
    nn.init.zeros_(model.classifier[1].bias)
    return model


def tiny_squeezenet(classes):
    """SqueezeNet 1.1's layout from torchvision's Fire modules at 16-32
    channels (no dropout: its masks are not PyTorch's)."""
    from torchvision.models.squeezenet import Fire

    model = torchvision.models.SqueezeNet("1_1", num_classes=classes,
                                          dropout=0.0)
    model.features = nn.Sequential(
        nn.Conv2d(3, 16, 3, 2), nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(16, 4, 8, 8), Fire(16, 4, 8, 8),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(16, 8, 16, 16), Fire(32, 8, 16, 16))
    model.classifier[1] = nn.Conv2d(32, classes, 1)
    for module in model.modules():  # as torchvision initialises them
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_uniform_(module.weight)
            nn.init.constant_(module.bias, 0)
    nn.init.normal_(model.classifier[1].weight, mean=0.0, std=0.01)
    return model


def tiny_mnasnet(classes):
    """MNASNet's stem and torchvision's own stacks of _InvertedResidual
    (3x3 and 5x5 depthwise, expansion 3), 8-64 channels."""
    from torchvision.models.mnasnet import _BN_MOMENTUM as momentum, _stack

    model = torchvision.models.MNASNet(0.5, num_classes=classes, dropout=0.0)

    def bn(channels):
        return nn.BatchNorm2d(channels, momentum=momentum)

    model.layers = nn.Sequential(
        nn.Conv2d(3, 8, 3, 2, 1, bias=False), bn(8), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, 1, 1, groups=8, bias=False), bn(8),
        nn.ReLU(inplace=True), nn.Conv2d(8, 8, 1, bias=False), bn(8),
        _stack(8, 16, 3, 2, 3, 2, momentum),
        _stack(16, 24, 5, 2, 3, 2, momentum),
        nn.Conv2d(24, 64, 1, bias=False), bn(64), nn.ReLU(inplace=True))
    model.classifier[1] = nn.Linear(64, classes)
    for module in model.modules():  # as torchvision initialises them
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out",
                                    nonlinearity="relu")
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Linear):
            nn.init.kaiming_uniform_(module.weight, mode="fan_out",
                                     nonlinearity="sigmoid")
            nn.init.zeros_(module.bias)
    return model


def tiny_efficientnet(classes):
    """EfficientNet from torchvision's MBConv configurations: SiLU,
    squeeze-and-excitation, 3x3 and 5x5 depthwise; stochastic depth 0
    (it is the identity then, and PyTorch 1.13 cannot export it
    otherwise)."""
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig

    setting = [MBConvConfig(1, 3, 1, 16, 8, 1),
               MBConvConfig(4, 3, 2, 8, 16, 2),
               MBConvConfig(4, 5, 2, 16, 24, 1)]
    return EfficientNet(setting, dropout=0.0, stochastic_depth_prob=0.0,
                        num_classes=classes, last_channel=64)


# Small members of torchvision's classification families, exported for
# training on 32x32 images, each built from the family's own classes and
# blocks at a few channels, with every batch norm keeping at least 4
# values per channel and example (so 4 workers of one example each still
# have statistics, and training is not chaotic: PyTorch's own float32 and
# float64 runs agree to 1e-6 over the 8 steps).
TORCHVISION_TRAIN = {
    "resnet_train": lambda: tiny_resnet(10),
    "mobilenet_v2_train": lambda: tiny_mobilenet_v2(10),
    "squeezenet_train": lambda: tiny_squeezenet(10),
    "regnet_train": lambda: torchvision.models.RegNet(
        torchvision.models.regnet.BlockParams.from_init_params(
            depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25),
        num_classes=10, stem_width=8),
    "densenet_train": lambda: torchvision.models.DenseNet(
        growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2,
        num_classes=10),
    "mnasnet_train": lambda: tiny_mnasnet(10),
    "efficientnet_train": lambda: tiny_efficientnet(10),
}
TRAINING.update({name: [("sgd", {"lr": 0.01})] for name in TORCHVISION_TRAIN})
# At 0.01 one of MNASNet's ReLU inputs comes within 3e-7 of 0 in step 7:
# float32 summation orders (2 workers') take either side of it there.
TRAINING["mnasnet_train"] = [("sgd", {"lr": 0.005})]
TRAINING_MODE.update(TORCHVISION_TRAIN)
# The torchvision examples also exported in eval mode, as MODEL_eval: the
# same module, optimizer and training data (data/MODEL_eval/train links to
# the training export's), batch norms with their running statistics,
# which the programs keep frozen.
EVAL_EXPORTS = {name.replace("_train", "_eval"): name
                for name in [*TORCHVISION_TRAIN, "shufflenet_train",
                             "mobilenet_v3_train"]}
TRAINING.update({name: TRAINING[of] for name, of in EVAL_EXPORTS.items()})


def distinct_initial_values(model):
    """The exporter merges initializers with equal contents, so freshly
    initialised ones (all-ones norm weights, all-zero biases, batch-norm
    statistics) would become one shared variable. Perturb constant tensors
    slightly, as training would, so each keeps its own name."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            if tensor.is_floating_point() and tensor.min() == tensor.max():
                tensor.add_(0.01 * torch.rand(tensor.shape, generator=g))
    return model


def models(large):
    vocab = 100_000 if large else 200
    ids = [1_000_000, 100_000, 1_000] if large else [1000, 500, 100]
    g = torch.Generator().manual_seed(0)
    batch = BATCH
    tokens = torch.randint(0, vocab, (batch, SEQ), generator=g)
    targets = torch.randint(0, vocab, (batch, SEQ), generator=g)
    lm_inputs = {"tokens": tokens, "targets": targets}
    built = {
        "lstm_lm": (LanguageModel(vocab, 16, 32, nn.LSTM), lm_inputs),
        "gru_lm": (LanguageModel(vocab, 16, 32, nn.GRU), lm_inputs),
        "transformer_lm": (TransformerLM(vocab, 32, 4, 64), lm_inputs),
        "wide_deep": (WideDeep(ids, 8, 4, 32), {
            "categorical": torch.stack(
                [torch.randint(0, n, (batch,), generator=g) for n in ids], 1),
            "dense": torch.randn(batch, 4, generator=g),
            "clicked": torch.randint(0, 2, (batch, 1), generator=g).float()}),
        "cnn": (CNN(10), {
            "images": torch.randn(batch, 3, 16, 16, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)}),
        "mobile_cnn": (MobileCNN(10), {
            "images": torch.randn(batch, 3, 4, 4, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)}),
        # 8x8 images: every batch norm keeps at least 4 values per channel
        # and example, so one example per worker still has statistics.
        "cnn_train": (CNN(10), {
            "images": torch.randn(batch, 3, 16, 16, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)}),
        "mobile_cnn_train": (MobileCNN(10), {
            "images": torch.randn(batch, 3, 8, 8, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)}),
        "transformer_train": (TransformerLM(vocab, 32, 4, 64, dropout=0.1),
                              lm_inputs),
        "ctr_bag": (BagCTR(ids, 8, 4, 32), {
            **{f"field{i}": torch.randint(0, n, (batch, size), generator=g)
               for i, (n, size) in enumerate(zip(ids, (3, 5, 2)))},
            "dense": torch.randn(batch, 4, generator=g),
            "clicked": torch.randint(0, 2, (batch, 1), generator=g).float()}),
        "shufflenet_train": (Classifier(torchvision.models.ShuffleNetV2(
            [2, 2, 2], [8, 16, 32, 64, 128], num_classes=10)), {
            "images": torch.randn(batch, 3, 64, 64, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)}),
        "mobilenet_v3_train": (Classifier(torchvision.models.mobilenet_v3_small(
            num_classes=10, width_mult=0.25, dropout=0.0)), {
            "images": torch.randn(batch, 3, 32, 32, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)}),
        **{name: (Classifier(build()), {
            "images": torch.randn(batch, 3, 32, 32, generator=g),
            "labels": torch.randint(0, 10, (batch,), generator=g)})
           for name, build in TORCHVISION_TRAIN.items()},
        # Dropout nodes in training mode with ratio 0: PyTorch's run exactly.
        "transformer_lm_train": (TransformerLM(vocab, 32, 4, 64, dropout=0.0),
                                 lm_inputs),
    }
    # The same modules exported in eval mode (batch norms normalising with
    # their running statistics, which the programs keep frozen).
    built.update({name: built[of] for name, of in EVAL_EXPORTS.items()})
    # Built last, so every other model keeps its initial values and inputs.
    # Its inputs: one batch, offsets from 0 into that batch's ids.
    bag_rows = ids if large else [50, 40, 30]
    built["ctr_offsets"] = (OffsetsCTR(bag_rows, 8, 4, 32),
                            offsets_ctr_data(bag_rows, batch, g))
    return built


MLIR_TYPES = {np.dtype("float32"): "f32", np.dtype("int64"): "i64"}


def mlir_scalar(value):
    if isinstance(value, np.floating):
        text = "%.9g" % value
        # MLIR reads "0" as an integer: floats need a dot or an exponent.
        return text if any(c in text for c in ".en") else text + ".0"
    return str(int(value))


def mlir_literal(array):
    """An MLIR dense literal of a float32 or int64 array."""
    if array.ndim == 0:
        return mlir_scalar(array[()])
    return "[" + ", ".join(mlir_literal(a) if a.ndim else mlir_scalar(a)
                           for a in array) + "]"


def write_driver(path, name, inputs, loss):
    """An MLIR @main that calls the imported @forward on PyTorch's inputs
    and prints the loss (spliced into the imported module by the e2e test,
    test/e2e/splice.py)."""
    lines = [f"// The reference run of {name}, written by export.py: PyTorch's",
             "// inputs as constants and its loss.",
             f"// EXPECTED-LOSS: {loss:.9g}",
             "func.func private @printMemrefF32(memref<*xf32>)",
             "func.func @main() {"]
    types = []
    for i, value in enumerate(inputs.values()):
        array = value.numpy()
        ty = "tensor<" + "x".join(map(str, array.shape)) + "x" + MLIR_TYPES[array.dtype] + ">"
        types.append(ty)
        lines.append(f"  %in{i} = arith.constant dense<{mlir_literal(array)}> : {ty}")
    args = ", ".join(f"%in{i}" for i in range(len(types)))
    lines += [f"  %loss = func.call @forward({args}) : ({', '.join(types)}) -> tensor<f32>",
              "  %flat = parallax.reshape %loss : tensor<f32> -> tensor<1xf32>",
              "  %buffer = bufferization.to_buffer %flat read_only : tensor<1xf32> to memref<1xf32>",
              "  %any = memref.cast %buffer : memref<1xf32> to memref<*xf32>",
              "  func.call @printMemrefF32(%any) : (memref<*xf32>) -> ()",
              "  return",
              "}"]
    path.write_text("\n".join(lines) + "\n")


def export(name, model, inputs, out_dir, opset, suffix):
    training = name in TRAINING_MODE
    model.train(training)
    names = list(inputs)
    path = out_dir / f"{name}{suffix}.onnx"
    # Tracing in training mode runs the model once, which moves the running
    # statistics: trace a copy, so every export holds the same values.
    torch.onnx.export(
        copy.deepcopy(model) if training else model, tuple(inputs.values()),
        str(path),
        input_names=names, output_names=["loss"], opset_version=opset,
        dynamic_axes=DYNAMIC_AXES.get(name,
                                      {n: {0: "batch"} for n in names}),
        # Keep parameters as PyTorch names them (no folding of weight
        # reorderings or of batch norm into convolutions): the importer
        # folds what is constant itself.
        do_constant_folding=False,
        training=torch.onnx.TrainingMode.PRESERVE)
    if training:
        restore_initializers(path, model)


def restore_initializers(path, model):
    """Tracing for training runs a step on the traced copy, which moves its
    running statistics, and the exporter writes those: the file at `path`
    gets `model`'s own values back, so every export and PyTorch's run start
    from the same state."""
    exported = onnx.load(str(path))
    state = model.state_dict()
    for init in exported.graph.initializer:
        if init.name in state:
            init.CopyFrom(onnx.numpy_helper.from_array(
                state[init.name].detach().numpy(), init.name))
    onnx.save(exported, str(path))


def training_data(inputs, generator):
    """STEPS batches like `inputs`, drawn as models() draws them."""
    data = {}
    for name, value in inputs.items():
        if value.is_floating_point():
            if name == "clicked":
                fresh = torch.randint(0, 2, (STEPS * BATCH,) + value.shape[1:],
                                      generator=generator).float()
            else:
                fresh = torch.randn((STEPS * BATCH,) + value.shape[1:],
                                    generator=generator)
        else:
            # Integer inputs: ids below each column's observed bound.
            high = int(value.max()) + 1
            fresh = torch.randint(0, high, (STEPS * BATCH,) + value.shape[1:],
                                  generator=generator)
        data[name] = fresh
    return data


def step_batch(data, step, ragged):
    """The inputs of step `step`: examples [step * BATCH, (step + 1) *
    BATCH) of `data`, ragged inputs (RAGGED's) sliced by their offsets."""
    lo, hi = step * BATCH, (step + 1) * BATCH
    batch = {name: value[lo:hi] for name, value in data.items()}
    for offsets_name, names in ragged.items():
        offsets = data[offsets_name]
        start = int(offsets[lo])
        end = int(offsets[hi]) if hi < len(offsets) else len(data[names[0]])
        batch[offsets_name] = offsets[lo:hi] - start
        for name in names:
            batch[name] = data[name][start:end]
    return batch


def reference_training(model, data, optimizer, kwargs, training, ragged):
    """PyTorch's run: the model in the mode it was exported in (eval: no
    dropout, batch norm with its running statistics), STEPS steps of BATCH
    examples."""
    model = copy.deepcopy(model)
    model.train(training)
    make = {"sgd": torch.optim.SGD, "adagrad": torch.optim.Adagrad}[optimizer]
    opt = make(model.parameters(), **kwargs)
    losses = []
    for step in range(STEPS):
        batch = step_batch(data, step, ragged).values()
        opt.zero_grad()
        loss = model(*batch)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    parameters = {n: p.detach().numpy() for n, p in model.named_parameters()}
    if training:
        # The running statistics the steps computed.
        parameters.update({n: b.numpy() for n, b in model.named_buffers()
                           if b.is_floating_point()})
    return np.array(losses, np.float32), parameters


def write_training_reference(name, model, inputs, data_dir):
    g = torch.Generator().manual_seed(1)
    if name == "ctr_offsets":
        data = offsets_ctr_data([bag.num_embeddings for bag in model.bags],
                                STEPS * BATCH, g)
    else:
        data = training_data(inputs, g)
    ragged = RAGGED.get(name, {})
    if name == "wide_deep":
        # Each categorical column has its own id space.
        ids = [int(t.num_embeddings) for t in model.wide]
        data["categorical"] = torch.stack(
            [torch.randint(0, n, (STEPS * BATCH,), generator=g) for n in ids],
            1)
    if name == "ctr_bag":
        for i, bag in enumerate(model.bags):
            shape = (STEPS * BATCH,) + data[f"field{i}"].shape[1:]
            data[f"field{i}"] = torch.randint(0, bag.num_embeddings, shape,
                                              generator=g)
    if name in EVAL_EXPORTS:
        # The same batches as the training export's (the same inputs and
        # generator): link them instead of committing them twice.
        link = data_dir / "train"
        if not link.is_symlink():
            link.symlink_to(pathlib.Path("..") / EVAL_EXPORTS[name] / "train")
    else:
        (data_dir / "train").mkdir(exist_ok=True)
        for input_name, value in data.items():
            np.save(data_dir / "train" / f"{input_name}.npy", value.numpy())
    # Buffers (batch-norm statistics) are initializers in the ONNX model:
    # in an eval-mode export the compiled program must keep them constant;
    # a training-mode export updates them itself.
    training = name in TRAINING_MODE
    frozen = [] if training else [
        n for n, b in model.named_buffers() if b.is_floating_point()]
    for optimizer, kwargs in TRAINING[name]:
        losses, parameters = reference_training(model, data, optimizer, kwargs,
                                                training, ragged)
        out = data_dir / "reference" / optimizer
        out.mkdir(parents=True, exist_ok=True)
        np.save(out / "losses.npy", losses)
        # How to build the same run with parallax-compile.
        config = {"optimizer": optimizer, "batch_size": BATCH,
                  "steps": STEPS, "freeze": frozen,
                  **kwargs}
        if ragged:
            # Each ids length's bound: the most ids of a field in one step.
            config["bind"] = {
                names[0]: max(len(step_batch(data, s, ragged)[names[0]])
                              for s in range(STEPS))
                for names in ragged.values()}
        (out / "config.json").write_text(json.dumps(config, indent=1) + "\n")
        for param_name, value in parameters.items():
            np.save(out / f"{param_name}.npy", value)
        print(f"{name}: {optimizer} losses {losses[0]:.4f} -> {losses[-1]:.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true",
                        help="realistic table sizes, written to large/")
    parser.add_argument("--models",
                        help="comma-separated subset to write (every model "
                        "is still built, so each keeps its initial values)")
    args = parser.parse_args()
    only = set(args.models.split(",")) if args.models else None
    torch.manual_seed(0)
    out_dir = HERE / ("large" if args.large else ".")
    out_dir.mkdir(exist_ok=True)
    for name, (model, inputs) in models(args.large).items():
        if only is not None and name not in only:
            continue
        distinct_initial_values(model)
        export(name, model, inputs, out_dir, 17, "")
        if args.large:
            continue
        export(name, model, inputs, out_dir, 14, ".opset14")
        data = HERE / "data" / name
        (data / "inputs").mkdir(parents=True, exist_ok=True)
        for input_name, value in inputs.items():
            np.save(data / "inputs" / f"{input_name}.npy", value.numpy())
        with torch.no_grad():
            # A copy: a training-mode forward moves the running statistics.
            loss = copy.deepcopy(model)(*inputs.values()).numpy()
        np.save(data / "loss.npy", loss)
        if name not in RAGGED:  # its program takes its bags' ends too
            write_driver(data / "driver.mlir", name, inputs, float(loss))
        print(f"{name}: loss {float(loss):.6f}")
        write_training_reference(name, model, inputs, data)


if __name__ == "__main__":
    main()
