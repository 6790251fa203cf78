//===- RecurrentOps.cpp - ONNX LSTM and GRU, unrolled ---------------------===//
//
// Part of the Parallax project.
//
// LSTM and GRU are decomposed at import into primitive ops over the static
// sequence length: one matmul projects the whole input sequence, then each
// time step is a matmul with the recurrent weights and elementwise gate
// arithmetic. Autodiff and lowering then need no recurrent op of their own.
//
//===----------------------------------------------------------------------===//

#include "ConversionUtils.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

namespace {

/// Shapes and attributes shared by LSTM and GRU, and the ops they build.
class Recurrence {
public:
  Recurrence(NodeContext &ctx, int64_t gates) : ctx(ctx), gates(gates) {}

  /// Reads and checks inputs 0-2 (X, W, R), B, sequence_lens and the
  /// attributes every recurrent op has.
  LogicalResult readCommon() {
    x = ctx.input(0);
    w = ctx.input(1);
    r = ctx.input(2);
    if (!x || !w || !r)
      return failure();
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    auto rType = cast<RankedTensorType>(r.getType());
    elementType = xType.getElementType();
    if (xType.getRank() != 3 || wType.getRank() != 3 || rType.getRank() != 3)
      return ctx.emitError() << "X, W and R must have rank 3";
    layout = ctx.attrInt("layout", 0);
    if (layout == 1)
      x = createInferred<TransposeOp>(ctx, x, SmallVector<int64_t>{1, 0, 2});
    xType = cast<RankedTensorType>(x.getType());
    seq = xType.getDimSize(0);
    batch = xType.getDimSize(1);
    inputSize = xType.getDimSize(2);
    directions = wType.getDimSize(0);
    hidden = rType.getDimSize(2);
    if (int64_t declared = ctx.attrInt("hidden_size", hidden);
        declared != hidden)
      return ctx.emitError()
             << "hidden_size " << declared << " does not match R " << rType;
    if (wType.getShape() !=
            ArrayRef<int64_t>{directions, gates * hidden, inputSize} ||
        rType.getShape() !=
            ArrayRef<int64_t>{directions, gates * hidden, hidden})
      return ctx.emitError()
             << "W " << wType << " and R " << rType << " do not match " << gates
             << " gates of hidden size " << hidden << " and input size "
             << inputSize;
    std::string direction = ctx.attrString("direction", "forward");
    if (direction == "bidirectional")
      reverse = {false, true};
    else if (direction == "forward" || direction == "reverse")
      reverse = {direction == "reverse"};
    else
      return ctx.emitError() << "unknown direction '" << direction << "'";
    if (static_cast<int64_t>(reverse.size()) != directions)
      return ctx.emitError()
             << "direction '" << direction << "' needs " << reverse.size()
             << " weight sets, W has " << directions;
    if (ctx.attr("clip"))
      return ctx.emitError() << "cell clipping ('clip') is not supported";
    if (ctx.attr("activations"))
      return ctx.emitError()
             << "custom activations are not supported (only the defaults)";
    if (ctx.hasInput(3)) {
      bias = ctx.input(3);
      if (!bias)
        return failure();
    }
    if (ctx.hasInput(4)) {
      const Const *lens = ctx.constInput(4);
      if (!lens ||
          llvm::any_of(lens->ints, [&](int64_t n) { return n != seq; }))
        return ctx.emitError() << "sequence_lens other than the full "
                                  "sequence length are not supported";
    }
    return success();
  }

  /// Row `d` of a [D, ...] weight tensor, without its leading dimension.
  Value direction(Value v, int64_t d) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape());
    SmallVector<int64_t> strides(type.getRank(), 1);
    offsets[0] = d;
    sizes[0] = 1;
    Value row = createInferred<SliceOp>(ctx, v, offsets, sizes, strides);
    return row ? reshape(ctx, row, type.getShape().drop_front()) : row;
  }

  /// Columns [gate*hidden, (gate+count)*hidden) of the last dimension.
  Value gateSlice(Value v, int64_t gate, int64_t count = 1) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape());
    SmallVector<int64_t> strides(type.getRank(), 1);
    offsets.back() = gate * hidden;
    sizes.back() = count * hidden;
    return createInferred<SliceOp>(ctx, v, offsets, sizes, strides);
  }

  /// Time step `t` of the projected input [S, B, G*H], as [B, G*H].
  Value step(Value projected, int64_t t) {
    SmallVector<int64_t> offsets{t, 0, 0}, sizes{1, batch, gates * hidden};
    Value s = createInferred<SliceOp>(ctx, projected, offsets, sizes,
                                      SmallVector<int64_t>{1, 1, 1});
    return reshape(ctx, s, {batch, gates * hidden});
  }

  /// The initial state of direction `d` from input `index`, or zeros.
  Value initialState(unsigned index, int64_t d) {
    if (ctx.hasInput(index)) {
      Value v = ctx.input(index);
      return v ? direction(v, d) : v;
    }
    auto type = RankedTensorType::get({batch, hidden}, elementType);
    return arith::ConstantOp::create(
        ctx.builder, ctx.loc, cast<TypedAttr>(ctx.builder.getZeroAttr(type)));
  }

  Value transposed(Value matrix) {
    return createInferred<TransposeOp>(ctx, matrix, SmallVector<int64_t>{1, 0});
  }

  Value add(Value a, Value b) { return createInferred<AddOp>(ctx, a, b); }
  Value mul(Value a, Value b) { return createInferred<MulOp>(ctx, a, b); }
  Value sigmoid(Value v) { return SigmoidOp::create(ctx.builder, ctx.loc, v); }
  Value tanh(Value v) { return TanhOp::create(ctx.builder, ctx.loc, v); }

  /// Assembles Y from each direction's hidden states in time order, and
  /// Y_h / Y_c from each direction's final states, in ONNX's layout.
  LogicalResult finish(ArrayRef<SmallVector<Value>> timeOrdered,
                       ArrayRef<Value> lastHidden, ArrayRef<Value> lastCells) {
    auto concat = [&](ArrayRef<Value> parts, uint64_t axis) {
      return parts.size() == 1
                 ? parts.front()
                 : createInferred<ConcatOp>(ctx, ValueRange(parts), axis);
    };
    auto stack = [&](ArrayRef<Value> states, ArrayRef<int64_t> shape,
                     uint64_t axis) {
      SmallVector<Value> parts;
      for (Value v : states)
        parts.push_back(reshape(ctx, v, shape));
      return concat(parts, axis);
    };
    SmallVector<Value> perDirection;
    for (const SmallVector<Value> &steps : timeOrdered)
      perDirection.push_back(stack(steps, {1, 1, batch, hidden}, 0));
    Value y = concat(perDirection, 1);
    Value yh = stack(lastHidden, {1, batch, hidden}, 0);
    Value yc =
        lastCells.empty() ? Value() : stack(lastCells, {1, batch, hidden}, 0);
    if (layout == 1) {
      y = createInferred<TransposeOp>(ctx, y, SmallVector<int64_t>{2, 0, 1, 3});
      yh = createInferred<TransposeOp>(ctx, yh, SmallVector<int64_t>{1, 0, 2});
      if (yc)
        yc =
            createInferred<TransposeOp>(ctx, yc, SmallVector<int64_t>{1, 0, 2});
    }
    if (!y || !yh || (!lastCells.empty() && !yc))
      return failure();
    ctx.setOutput(0, y);
    ctx.setOutput(1, yh);
    if (yc)
      ctx.setOutput(2, yc);
    return success();
  }

  NodeContext &ctx;
  int64_t gates;
  Value x, w, r, bias;
  Type elementType;
  int64_t layout = 0, seq = 0, batch = 0, inputSize = 0, hidden = 0,
          directions = 0;
  SmallVector<bool> reverse;
};

/// Time indices in processing order.
SmallVector<int64_t> timeOrder(int64_t seq, bool reverse) {
  SmallVector<int64_t> order;
  for (int64_t t = 0; t < seq; ++t)
    order.push_back(reverse ? seq - 1 - t : t);
  return order;
}

} // namespace

LogicalResult onnx_import::convertLSTM(NodeContext &ctx) {
  // Gate order in W, R and B: input, output, forget, cell.
  Recurrence rnn(ctx, 4);
  if (failed(rnn.readCommon()))
    return failure();
  if (ctx.attrInt("input_forget", 0))
    return ctx.emitError() << "coupled input-forget gates are not supported";
  if (ctx.hasInput(7))
    return ctx.emitError() << "peephole weights (P) are not supported";

  SmallVector<SmallVector<Value>> timeOrdered;
  SmallVector<Value> lastHidden, lastCells;
  for (int64_t d = 0; d < rnn.directions; ++d) {
    Value projected = createInferred<MatMulOp>(
        ctx, rnn.x, rnn.transposed(rnn.direction(rnn.w, d)));
    Value recurrent = rnn.transposed(rnn.direction(rnn.r, d));
    if (rnn.bias) {
      Value b = rnn.direction(rnn.bias, d);
      projected = rnn.add(
          projected, rnn.add(rnn.gateSlice(b, 0, 4), rnn.gateSlice(b, 4, 4)));
    }
    Value hState = rnn.initialState(5, d), cState = rnn.initialState(6, d);
    if (!projected || !recurrent || !hState || !cState)
      return failure();
    SmallVector<Value> steps(rnn.seq);
    for (int64_t t : timeOrder(rnn.seq, rnn.reverse[d])) {
      Value gates = rnn.add(rnn.step(projected, t),
                            createInferred<MatMulOp>(ctx, hState, recurrent));
      Value in = rnn.sigmoid(rnn.gateSlice(gates, 0));
      Value out = rnn.sigmoid(rnn.gateSlice(gates, 1));
      Value forget = rnn.sigmoid(rnn.gateSlice(gates, 2));
      Value cell = rnn.tanh(rnn.gateSlice(gates, 3));
      cState = rnn.add(rnn.mul(forget, cState), rnn.mul(in, cell));
      hState = rnn.mul(out, rnn.tanh(cState));
      if (!hState)
        return failure();
      steps[t] = hState;
    }
    timeOrdered.push_back(steps);
    lastHidden.push_back(hState);
    lastCells.push_back(cState);
  }
  return rnn.finish(timeOrdered, lastHidden, lastCells);
}

LogicalResult onnx_import::convertGRU(NodeContext &ctx) {
  // Gate order in W, R and B: update, reset, hidden.
  Recurrence rnn(ctx, 3);
  if (failed(rnn.readCommon()))
    return failure();
  if (ctx.outputUsed(2))
    return ctx.emitError() << "GRU has no output 2";
  bool linearBeforeReset = ctx.attrInt("linear_before_reset", 0) != 0;

  SmallVector<SmallVector<Value>> timeOrdered;
  SmallVector<Value> lastHidden;
  Value one = scalar(ctx, rnn.elementType, 1.0);
  for (int64_t d = 0; d < rnn.directions; ++d) {
    Value projected = createInferred<MatMulOp>(
        ctx, rnn.x, rnn.transposed(rnn.direction(rnn.w, d)));
    Value recurrentT = rnn.transposed(rnn.direction(rnn.r, d));
    Value recurrentBias;
    if (rnn.bias) {
      Value b = rnn.direction(rnn.bias, d);
      projected = rnn.add(projected, rnn.gateSlice(b, 0, 3));
      recurrentBias = rnn.gateSlice(b, 3, 3);
    }
    Value hState = rnn.initialState(5, d);
    if (!projected || !recurrentT || !hState)
      return failure();
    SmallVector<Value> steps(rnn.seq);
    for (int64_t t : timeOrder(rnn.seq, rnn.reverse[d])) {
      Value x = rnn.step(projected, t);
      Value hr = createInferred<MatMulOp>(ctx, hState, recurrentT);
      if (recurrentBias)
        hr = rnn.add(hr, recurrentBias);
      Value update =
          rnn.sigmoid(rnn.add(rnn.gateSlice(x, 0), rnn.gateSlice(hr, 0)));
      Value reset =
          rnn.sigmoid(rnn.add(rnn.gateSlice(x, 1), rnn.gateSlice(hr, 1)));
      Value candidate;
      if (linearBeforeReset) {
        candidate = rnn.mul(reset, rnn.gateSlice(hr, 2));
      } else {
        // (r * H) @ Rh^T + Rbh
        candidate = createInferred<MatMulOp>(ctx, rnn.mul(reset, hState),
                                             rnn.gateSlice(recurrentT, 2));
        if (recurrentBias)
          candidate = rnn.add(candidate, rnn.gateSlice(recurrentBias, 2));
      }
      Value hidden = rnn.tanh(rnn.add(rnn.gateSlice(x, 2), candidate));
      // H = (1 - z) * h + z * H
      hState = rnn.add(rnn.mul(createInferred<SubOp>(ctx, one, update), hidden),
                       rnn.mul(update, hState));
      if (!hState)
        return failure();
      steps[t] = hState;
    }
    timeOrdered.push_back(steps);
    lastHidden.push_back(hState);
  }
  return rnn.finish(timeOrdered, lastHidden, {});
}
