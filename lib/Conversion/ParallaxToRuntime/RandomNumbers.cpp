//===- RandomNumbers.cpp - Counter-based random draws ---------------------===//
//
// Part of the Parallax project.
//
//===----------------------------------------------------------------------===//

#include "parallax/Conversion/ParallaxToRuntime/RandomNumbers.h"
#include "parallax/Conversion/ParallaxToRuntime/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::parallax;

namespace {

/// Philox4x32-10's constants.
constexpr uint32_t kMultiplier0 = 0xD2511F53, kMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;

Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
}

struct Philox {
  OpBuilder &b;
  Location loc;

  Value i32(uint32_t value) {
    return arith::ConstantOp::create(b, loc,
                                     b.getI32IntegerAttr(int32_t(value)));
  }
  Value low32(Value v) {
    return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
  }
  Value high32(Value v) {
    return low32(arith::ShRUIOp::create(b, loc, v, i64Constant(b, loc, 32)));
  }
  Value xorOf(Value a, Value c) { return arith::XOrIOp::create(b, loc, a, c); }

  /// The first output word of the ten rounds on `counter` under `key`.
  Value firstWord(std::array<Value, 4> c, std::array<Value, 2> k) {
    for (int round = 0; round < 10; ++round) {
      auto p0 = arith::MulUIExtendedOp::create(b, loc, i32(kMultiplier0), c[0]);
      auto p1 = arith::MulUIExtendedOp::create(b, loc, i32(kMultiplier1), c[2]);
      c = {xorOf(xorOf(p1.getHigh(), c[1]), k[0]), p1.getLow(),
           xorOf(xorOf(p0.getHigh(), c[3]), k[1]), p0.getLow()};
      if (round < 9) {
        k[0] = arith::AddIOp::create(b, loc, k[0], i32(kWeyl0));
        k[1] = arith::AddIOp::create(b, loc, k[1], i32(kWeyl1));
      }
    }
    return c[0];
  }
};

} // namespace

Value mlir::parallax::emitRandomUniform(OpBuilder &b, ModuleOp module,
                                        RandomUniformOp op) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Type i64 = b.getI64Type();
  Value seed =
      callRuntime(b, module, loc, abi::Function::random_seed,
                  {i64Constant(b, loc, static_cast<int64_t>(op.getSeed()))})
          .getResult(0);
  Value firstExample =
      callRuntime(b, module, loc, abi::Function::first_example, {})
          .getResult(0);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        Philox philox{nb, nloc};
        auto index = [&](int64_t d) -> Value {
          return arith::IndexCastUIOp::create(
              nb, nloc, i64, linalg::IndexOp::create(nb, nloc, d));
        };
        // The element's row-major position within its row. One op per
        // statement: the IR's order must not follow the compiler's order of
        // evaluating arguments.
        Value element = i64Constant(nb, nloc, 0);
        for (int64_t d = 1; d < rank; ++d) {
          Value position = index(d);
          Value scaled = arith::MulIOp::create(
              nb, nloc, element, i64Constant(nb, nloc, type.getDimSize(d)));
          element = arith::AddIOp::create(nb, nloc, scaled, position);
        }
        Value example = index(0);
        Value firstRow = arith::MulIOp::create(
            nb, nloc, firstExample,
            i64Constant(nb, nloc, op.getRowsPerExample()));
        Value row = arith::AddIOp::create(nb, nloc, firstRow, example);
        Value salted = arith::XOrIOp::create(
            nb, nloc, seed,
            i64Constant(nb, nloc, static_cast<int64_t>(op.getSalt())));
        Value word = philox.firstWord(
            {philox.low32(element), philox.low32(row), philox.high32(row),
             philox.i32(static_cast<uint32_t>(op.getStream()))},
            {philox.low32(salted), philox.high32(salted)});
        // 24 bits: exactly representable in f32, and strictly below 1.
        Value bits = arith::ShRUIOp::create(nb, nloc, word, philox.i32(8));
        Value unit = arith::ConstantOp::create(
            nb, nloc, nb.getF32FloatAttr(1.0f / (1 << 24)));
        Value value = arith::MulFOp::create(
            nb, nloc, arith::UIToFPOp::create(nb, nloc, nb.getF32Type(), bits),
            unit);
        linalg::YieldOp::create(nb, nloc, value);
      });
  return generic.getResult(0);
}
