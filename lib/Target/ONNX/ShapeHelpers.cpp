//===- ShapeHelpers.cpp - ONNX shape attribute semantics ------------------===//
//
// Part of the Parallax project.
//
// The shape rules of Reshape, Flatten, Squeeze, Unsqueeze, Expand and Slice,
// shared by constant folding and conversion so both agree exactly.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace mlir::parallax;
using namespace mlir::parallax::onnx_import;

using Shape = SmallVector<int64_t>;

std::optional<Shape> onnx_import::reshapeShape(NodeContext &ctx,
                                               ArrayRef<int64_t> input) {
  const Const *shape = ctx.requireConstInput(1, "shape");
  if (!shape)
    return std::nullopt;
  bool allowZero = ctx.attrInt("allowzero", 0) != 0;
  Shape result;
  int64_t inferred = -1, known = 1;
  for (int64_t i = 0, e = shape->size(); i < e; ++i) {
    int64_t dim = shape->ints[i];
    if (dim == 0 && !allowZero) {
      if (i >= static_cast<int64_t>(input.size())) {
        ctx.emitError() << "shape entry " << i
                        << " is 0 (copy the input dimension), but the input "
                           "has rank "
                        << input.size();
        return std::nullopt;
      }
      dim = input[i];
    }
    if (dim == -1) {
      if (inferred >= 0) {
        ctx.emitError() << "shape has more than one -1 entry";
        return std::nullopt;
      }
      inferred = i;
    } else if (dim < 0) {
      ctx.emitError() << "shape entry " << i << " is " << dim;
      return std::nullopt;
    } else {
      known *= dim;
    }
    result.push_back(dim);
  }
  int64_t total = ShapedType::getNumElements(input);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) {
      ctx.emitError() << "cannot infer the -1 entry: " << total
                      << " elements do not divide into parts of " << known;
      return std::nullopt;
    }
    result[inferred] = total / known;
  } else if (known != total) {
    ctx.emitError() << "cannot reshape " << total
                    << " elements into a shape of " << known;
    return std::nullopt;
  }
  return result;
}

std::optional<Shape> onnx_import::flattenShape(NodeContext &ctx,
                                               ArrayRef<int64_t> input) {
  int64_t rank = input.size();
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.emitError() << "axis " << axis << " is out of range for rank " << rank;
    return std::nullopt;
  }
  if (axis < 0)
    axis += rank;
  return Shape{ShapedType::getNumElements(input.take_front(axis)),
               ShapedType::getNumElements(input.drop_front(axis))};
}

/// The `axes` of Squeeze/Unsqueeze: an attribute before opset 13, input 1
/// since. Normalised against `rank`, sorted, checked for duplicates.
static std::optional<Shape> readAxes(NodeContext &ctx, int64_t rank,
                                     bool required) {
  Shape axes;
  if (ctx.opset >= 13) {
    if (ctx.hasInput(1)) {
      const Const *c = ctx.requireConstInput(1, "axes");
      if (!c)
        return std::nullopt;
      axes.assign(c->ints.begin(), c->ints.end());
    }
  } else if (auto attr = ctx.attrInts("axes")) {
    axes = *attr;
  }
  if (axes.empty() && required) {
    ctx.emitError() << "requires axes";
    return std::nullopt;
  }
  for (int64_t &axis : axes) {
    axis = ctx.normalizeAxis(axis, rank);
    if (axis < 0)
      return std::nullopt;
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    ctx.emitError() << "axes contain duplicates";
    return std::nullopt;
  }
  return axes;
}

std::optional<Shape> onnx_import::squeezeShape(NodeContext &ctx,
                                               ArrayRef<int64_t> input) {
  std::optional<Shape> axes = readAxes(ctx, input.size(), /*required=*/false);
  if (!axes)
    return std::nullopt;
  Shape result;
  for (int64_t d = 0, e = input.size(); d < e; ++d) {
    bool listed = llvm::is_contained(*axes, d);
    if (listed && input[d] != 1) {
      ctx.emitError() << "cannot squeeze dimension " << d << " of size "
                      << input[d];
      return std::nullopt;
    }
    if (!listed && !(axes->empty() && input[d] == 1))
      result.push_back(input[d]);
  }
  return result;
}

std::optional<Shape> onnx_import::unsqueezeShape(NodeContext &ctx,
                                                 ArrayRef<int64_t> input) {
  // Axes refer to the output, whose rank is the input's plus their number.
  int64_t count = 0;
  if (ctx.opset >= 13) {
    if (const Const *c = ctx.constInput(1))
      count = c->size();
  } else if (auto attr = ctx.attrInts("axes")) {
    count = attr->size();
  }
  int64_t rank = input.size() + count;
  std::optional<Shape> axes = readAxes(ctx, rank, /*required=*/true);
  if (!axes)
    return std::nullopt;
  Shape result;
  auto next = input.begin();
  for (int64_t d = 0; d < rank; ++d)
    result.push_back(llvm::is_contained(*axes, d) ? 1 : *next++);
  return result;
}

std::optional<Shape> onnx_import::expandShape(NodeContext &ctx,
                                              ArrayRef<int64_t> input) {
  const Const *shape = ctx.requireConstInput(1, "shape");
  if (!shape)
    return std::nullopt;
  Shape result;
  if (!OpTrait::util::getBroadcastedShape(input, shape->ints, result)) {
    ctx.emitError() << "cannot expand a tensor of shape ["
                    << llvm::make_range(input.begin(), input.end())
                    << "] to shape ["
                    << llvm::make_range(shape->ints.begin(), shape->ints.end())
                    << "]";
    return std::nullopt;
  }
  return result;
}

std::optional<SliceParams> onnx_import::sliceParams(NodeContext &ctx,
                                                    ArrayRef<int64_t> input) {
  int64_t rank = input.size();
  const Const *starts = ctx.requireConstInput(1, "starts");
  const Const *ends = ctx.requireConstInput(2, "ends");
  if (!starts || !ends)
    return std::nullopt;
  int64_t n = starts->size();
  if (ends->size() != n) {
    ctx.emitError() << "starts and ends have different lengths";
    return std::nullopt;
  }
  Shape axes, steps(n, 1);
  if (ctx.hasInput(3)) {
    const Const *c = ctx.requireConstInput(3, "axes");
    if (!c)
      return std::nullopt;
    axes.assign(c->ints.begin(), c->ints.end());
  } else {
    for (int64_t i = 0; i < n; ++i)
      axes.push_back(i);
  }
  if (ctx.hasInput(4)) {
    const Const *c = ctx.requireConstInput(4, "steps");
    if (!c)
      return std::nullopt;
    steps.assign(c->ints.begin(), c->ints.end());
  }
  if (static_cast<int64_t>(axes.size()) != n ||
      static_cast<int64_t>(steps.size()) != n) {
    ctx.emitError() << "starts, ends, axes and steps must have equal lengths";
    return std::nullopt;
  }

  SliceParams params;
  params.offsets.assign(rank, 0);
  params.sizes.assign(input.begin(), input.end());
  params.strides.assign(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t axis = ctx.normalizeAxis(axes[i], rank);
    if (axis < 0)
      return std::nullopt;
    if (seen[axis]) {
      ctx.emitError() << "axis " << axis << " is sliced twice";
      return std::nullopt;
    }
    seen[axis] = true;
    int64_t dim = input[axis], step = steps[i];
    if (step == 0) {
      ctx.emitError() << "step of axis " << axis << " is 0";
      return std::nullopt;
    }
    // ONNX: negative positions count from the end, then clamp to [0, dim]
    // for positive steps and [-1, dim-1] for negative ones.
    auto clampPos = [&](int64_t pos) {
      if (pos < 0)
        pos = pos < -dim ? -1 : pos + dim;
      return step > 0 ? std::clamp<int64_t>(pos, 0, dim)
                      : std::clamp<int64_t>(pos, -1, dim - 1);
    };
    int64_t start = clampPos(starts->ints[i]);
    int64_t end = clampPos(ends->ints[i]);
    int64_t size =
        step > 0 ? llvm::divideCeil(std::max<int64_t>(end - start, 0), step)
                 : llvm::divideCeil(std::max<int64_t>(start - end, 0), -step);
    params.offsets[axis] = size > 0 ? start : 0;
    params.sizes[axis] = size;
    params.strides[axis] = step;
  }
  return params;
}
