// How ONNX shape and data-movement ops (views, slices, concats, gathers, pads) become dlc ops.
#include "compiler/import/Builders.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;

namespace dlc {
namespace {

OpImport identity() {
  return {{}, [](NodeImporter &n) { return n.input(0); }};
}

// BitCast: the same bytes read as another type of the same width (a view, like Reshape).
OpImport bitCast() {
  return {{}, [](NodeImporter &n) -> Value {
            int64_t to = n.intAttr("to", 0);
            Type from = n.inputType(0).getElementType(),
                 element = elementTypeFor(*n.b.getContext(), to);
            if (!element)
              throw ImportError("bit cast to " + dtypeName(to) + " is not supported");
            // ONNX's widths: a bool is a byte.
            auto bits = [](Type t) { return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth(); };
            if (bits(from) != bits(element))
              throw ImportError("bit cast between types of different widths (" +
                                std::to_string(bits(from)) + " and " +
                                std::to_string(bits(element)) + " bits)");
            return n.b.create<ReshapeOp>(n.loc(), n.inputType(0).clone(element), n.input(0));
          }};
}

OpImport flatten() {
  return {{}, [](NodeImporter &n) {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            int64_t axis = n.intAttr("axis", 1);
            if (axis < -rank || axis > rank)
              throw ImportError("axis " + std::to_string(axis) + " is out of range for rank " +
                                std::to_string(rank));
            if (axis < 0)
              axis += rank;
            auto [outer, inner] = flattenedAt(shape, axis);
            return reshape(n, n.input(0), {outer, inner});
          }};
}

// Reshape's target: 0 copies the input's dim (unless allowzero, opset 14), -1 takes what is
// left.
OpImport reshapeOp() {
  return {{1}, [](NodeImporter &n) {
            auto in = n.inputType(0).getShape();
            std::vector<int64_t> target =
                n.version < 5 ? n.intsAttr("shape") : n.constInput(1).asInts();
            bool allowZero = n.version >= 14 && n.intAttr("allowzero", 0) != 0;
            SmallVector<int64_t> out;
            int inferred = -1;
            int64_t known = 1;
            for (size_t i = 0; i < target.size(); ++i) {
              int64_t d = target[i];
              if (d == 0 && !allowZero) {
                if (i >= in.size())
                  throw ImportError("shape entry " + std::to_string(i) +
                                    " is 0 (copy the input's dim) but the input has rank " +
                                    std::to_string(in.size()));
                d = in[i];
              } else if (d == -1) {
                if (inferred >= 0)
                  throw ImportError("shape has more than one -1");
                inferred = i;
                out.push_back(-1);
                continue;
              } else if (d < -1) {
                throw ImportError("shape entry " + std::to_string(d) + " is invalid");
              }
              auto next = checkedMul(known, d);
              if (!next)
                throw ImportError("shape " + dimsString(target) + " is too large");
              known = *next;
              out.push_back(d);
            }
            int64_t count = n.inputType(0).getNumElements();
            if (inferred >= 0) {
              if (known == 0 || count % known != 0)
                throw ImportError("cannot reshape " + dimsString(in) + " to " + dimsString(target));
              out[inferred] = count / known;
            } else if (known != count) {
              throw ImportError("cannot reshape " + dimsString(in) + " (" + std::to_string(count) +
                                " elements) to " + dimsString(out));
            }
            return reshape(n, n.input(0), out);
          }};
}

// Squeeze and Unsqueeze: the axes are an attribute before opset 13, a constant input after.
template <bool isSqueeze> OpImport squeezeLike() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0).getShape();
            std::vector<int64_t> axes = n.version >= 13 ? (n.hasInput(1) ? n.constInput(1).asInts()
                                                                         : std::vector<int64_t>())
                                                        : n.intsAttr("axes");
            int64_t rank = isSqueeze ? in.size() : in.size() + axes.size();
            std::vector<char> marked(rank, 0);
            for (int64_t axis : axes) {
              int64_t a = normalizeAxis(axis, rank);
              if (marked[a]++)
                throw ImportError("axis " + std::to_string(axis) + " is given twice");
              if (isSqueeze && in[a] != 1)
                throw ImportError("cannot squeeze axis " + std::to_string(axis) + " of size " +
                                  std::to_string(in[a]));
            }
            SmallVector<int64_t> out;
            if (isSqueeze) {
              for (int64_t d = 0; d < rank; ++d)
                if (axes.empty() ? in[d] != 1 : !marked[d])
                  out.push_back(in[d]);
            } else {
              auto next = in.begin();
              for (int64_t d = 0; d < rank; ++d)
                out.push_back(marked[d] ? 1 : *next++);
            }
            return reshape(n, n.input(0), out);
          }};
}

// Ops whose value import needs before it can type them (importTimeValue): reaching the import
// means an input was not known then.
OpImport notFolded() {
  return {{}, [](NodeImporter &n) -> Value {
            for (int i = 0; i < n.node.input_size(); ++i)
              if (n.hasInput(i) && !n.constantOrNull(i) && n.node.op_type() != "Shape" &&
                  n.node.op_type() != "Size")
                n.constInput(i); // throws, saying why the input is not a constant
            throw ImportError("its value depends on a tensor whose shape is not static");
          }};
}

// The value (one element; a float 0 when absent) broadcast to the shape the input gives. The
// evaluator folds integer results (shape arithmetic) and small float ones into constants;
// larger float tensors stay a run-time broadcast instead of weights of zeros.
OpImport constantOfShape() {
  return {{0}, [](NodeImporter &n) -> Value {
            std::vector<int64_t> dims = n.constInput(0).asInts();
            if (n.constInput(0).shape.size() != 1)
              throw ImportError("the shape input must be 1-D");
            ConstTensor value;
            value.dtype = onnx::TensorProto::FLOAT;
            value.bytes.assign(4, 0);
            if (const auto *attr = n.typedAttr("value", onnx::AttributeProto::TENSOR))
              value = constFromProto(attr->t());
            if (value.numElements() != 1)
              throw ImportError("value must hold one element");
            Type element = elementTypeFor(*n.b.getContext(), value.dtype);
            if (!element)
              throw ImportError("value has unsupported element type " + dtypeName(value.dtype));
            for (int64_t d : dims)
              if (d < 0)
                throw ImportError("shape " + dimsString(dims) + " has a negative dim");
            auto type = RankedTensorType::get(dims, element);
            if (!checkedTensorBytes(type))
              throw ImportError("shape " + dimsString(dims) + " exceeds dlc's limit of " +
                                kMaxTensorBytesText);
            Value one = ConstantOp::fromBytes(n.b, n.loc(), RankedTensorType::get({}, element),
                                              value.bytes, "value");
            return broadcastTo(n, one, dims);
          }};
}

OpImport transpose() {
  return {{}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0).getShape();
            int64_t rank = in.size();
            std::vector<int64_t> reversed;
            for (int64_t i = rank - 1; i >= 0; --i)
              reversed.push_back(i);
            std::vector<int64_t> perm = n.intsAttr("perm", reversed);
            std::vector<char> seen(rank, 0);
            SmallVector<int64_t> shape;
            for (int64_t p : perm) {
              if ((int64_t)perm.size() != rank || p < 0 || p >= rank || seen[p]++)
                throw ImportError("perm " + dimsString(perm) + " is not a permutation of " +
                                  std::to_string(rank) + " axes");
              shape.push_back(in[p]);
            }
            return n.b.create<TransposeOp>(n.loc(), n.inputType(0).clone(shape), n.input(0), perm);
          }};
}

OpImport concat() {
  return {{}, [](NodeImporter &n) -> Value {
            SmallVector<Value> inputs;
            auto first = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), first.getRank());
            SmallVector<int64_t> shape(first.getShape());
            shape[axis] = 0;
            for (int i = 0; i < n.node.input_size(); ++i) {
              auto type = n.inputType(i);
              bool fits = type.getRank() == first.getRank() &&
                          type.getElementType() == first.getElementType();
              for (int64_t d = 0; fits && d < first.getRank(); ++d)
                fits = d == axis || type.getDimSize(d) == first.getDimSize(d);
              if (!fits)
                throw ImportError("input #" + std::to_string(i) + " " +
                                  dimsString(type.getShape()) + " does not fit input #0 " +
                                  dimsString(first.getShape()) + " along axis " +
                                  std::to_string(axis));
              shape[axis] += type.getDimSize(axis);
              inputs.push_back(n.input(i));
            }
            return n.b.create<ConcatOp>(n.loc(), first.clone(shape), inputs, axis);
          }};
}

OpImport gather() {
  return {{}, [](NodeImporter &n) -> Value {
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), n.inputType(0).getRank());
            int64_t size = n.inputType(0).getDimSize(axis);
            if (const ConstTensor *indices = n.constantOrNull(1))
              for (int64_t i : indices->asInts())
                if (i < -size || i >= size)
                  throw ImportError("index " + std::to_string(i) + " is out of range for axis " +
                                    std::to_string(axis) + " of size " + std::to_string(size));
            auto data = n.inputType(0).getShape();
            SmallVector<int64_t> shape(data.begin(), data.begin() + axis);
            llvm::append_range(shape, n.inputType(1).getShape());
            shape.append(data.begin() + axis + 1, data.end());
            return n.b.create<GatherOp>(n.loc(), n.inputType(0).clone(shape), n.input(0),
                                        n.input(1), axis);
          }};
}

OpImport slice() {
  return {{1, 2, 3, 4}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t rank = shape.size();
            std::vector<int64_t> starts, ends, axes, steps;
            if (n.version < 10) {
              starts = n.intsAttr("starts");
              ends = n.intsAttr("ends");
              axes = n.intsAttr("axes");
            } else {
              starts = n.constInput(1).asInts();
              ends = n.constInput(2).asInts();
              if (n.hasInput(3))
                axes = n.constInput(3).asInts();
              if (n.hasInput(4))
                steps = n.constInput(4).asInts();
            }
            if (axes.empty())
              for (size_t i = 0; i < starts.size(); ++i)
                axes.push_back(i);
            if (steps.empty())
              steps.assign(starts.size(), 1);
            if (ends.size() != starts.size() || axes.size() != starts.size() ||
                steps.size() != starts.size())
              throw ImportError("starts, ends, axes and steps differ in length");
            std::vector<int64_t> outStart(rank, 0), outStep(rank, 1);
            SmallVector<int64_t> outShape(shape);
            for (size_t i = 0; i < axes.size(); ++i) {
              int64_t axis = normalizeAxis(axes[i], rank), dim = shape[axis], step = steps[i];
              if (step == 0)
                throw ImportError("slice step must be non-zero");
              int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
              int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
              // Start and end are clamped to the dim, so only the step can be huge: the
              // count is formed from the distance without adding the step to anything.
              if (step > 0) {
                start = std::clamp<int64_t>(start, 0, dim);
                end = std::clamp<int64_t>(end, 0, dim);
              } else {
                start = std::clamp<int64_t>(start, -1, dim - 1);
                end = std::clamp<int64_t>(end, -1, dim - 1);
              }
              uint64_t distance = step > 0 ? end - start : start - end;
              uint64_t stride = step > 0 ? uint64_t(step) : uint64_t(-(step + 1)) + 1;
              int64_t size =
                  (step > 0 ? end > start : start > end) ? int64_t((distance - 1) / stride + 1) : 0;
              outStart[axis] = size ? start : 0;
              outStep[axis] = step;
              outShape[axis] = size;
            }
            auto type = n.inputType(0).clone(outShape);
            return n.b.create<SliceOp>(n.loc(), type, n.input(0), outStart, outStep);
          }};
}

// Expand: numpy broadcast of the input and the shape (either may have the larger dims).
OpImport expand() {
  return {{1}, [](NodeImporter &n) -> Value {
            std::vector<int64_t> target = n.constInput(1).asInts();
            for (int64_t d : target)
              if (d < 0)
                throw ImportError("shape " + dimsString(target) + " has a negative dim");
            auto shape = broadcastShapes(n.inputType(0).getShape(), target);
            if (failed(shape))
              throw ImportError("input " + dimsString(n.inputType(0).getShape()) +
                                " does not broadcast to " + dimsString(target));
            auto type = n.inputType(0).clone(*shape);
            if (!checkedTensorBytes(type))
              throw ImportError("result " + dimsString(*shape) + " exceeds dlc's limit of " +
                                kMaxTensorBytesText);
            if (type == n.inputType(0))
              return n.input(0);
            if (type.getNumElements() == n.inputType(0).getNumElements())
              return reshape(n, n.input(0), *shape);
            return n.b.create<BroadcastOp>(n.loc(), type, n.input(0));
          }};
}

// ---- Search, scans and data movement built from slices, concats and broadcasts.

OpImport gatherElementsOp() {
  return {{}, [](NodeImporter &n) -> Value {
            auto data = n.inputType(0), idx = n.inputType(1);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), data.getRank());
            bool fits = data.getRank() == idx.getRank();
            for (int64_t d = 0; fits && d < data.getRank(); ++d)
              fits = d == axis || idx.getDimSize(d) <= data.getDimSize(d);
            if (!fits)
              throw ImportError("indices " + dimsString(idx.getShape()) + " do not fit data " +
                                dimsString(data.getShape()));
            if (const ConstTensor *c = n.constantOrNull(1))
              for (int64_t i : c->asInts())
                if (i < -data.getDimSize(axis) || i >= data.getDimSize(axis))
                  throw ImportError("index " + std::to_string(i) + " is out of range for axis " +
                                    std::to_string(axis) + " of size " +
                                    std::to_string(data.getDimSize(axis)));
            return gatherElements(n, n.input(0), n.input(1), axis);
          }};
}

// Outputs along `axis`: sizes from the `split` input (opset 13) or attribute, else
// num_outputs (opset 18) parts of ceil(dim / n), else equal parts for each output.
OpImport split() {
  return {{1}, [](NodeImporter &n) -> OpImport::Results {
            auto in = n.inputType(0);
            int64_t axis = normalizeAxis(n.intAttr("axis", 0), in.getRank());
            int64_t dim = in.getDimSize(axis), outputs = n.node.output_size();
            std::vector<int64_t> sizes;
            if (n.version >= 13 && n.hasInput(1))
              sizes = n.constInput(1).asInts();
            else if (n.version < 13)
              sizes = n.intsAttr("split");
            if (sizes.empty()) {
              int64_t parts =
                  n.version >= 18 && n.attr("num_outputs") ? n.intAttr("num_outputs", 0) : outputs;
              if (parts <= 0 || parts != outputs)
                throw ImportError("num_outputs " + std::to_string(parts) + " differs from the " +
                                  std::to_string(outputs) + " outputs");
              int64_t each = n.attr("num_outputs") ? (dim + parts - 1) / parts : dim / parts;
              if (!n.attr("num_outputs") && dim % parts)
                throw ImportError("axis of size " + std::to_string(dim) + " does not split into " +
                                  std::to_string(parts) + " equal parts");
              for (int64_t i = 0, left = dim; i < parts; ++i, left -= each)
                sizes.push_back(std::max<int64_t>(0, std::min(each, left)));
            }
            int64_t total = 0;
            for (int64_t size : sizes) {
              if (size < 0 || size > dim)
                throw ImportError("split size " + std::to_string(size) + " is outside [0, " +
                                  std::to_string(dim) + "]");
              total += size;
            }
            if (total != dim || (int64_t)sizes.size() != outputs)
              throw ImportError("split sizes " + dimsString(sizes) + " do not cover axis " +
                                std::to_string(axis) + " of size " + std::to_string(dim) +
                                " with " + std::to_string(outputs) + " outputs");
            OpImport::Results results;
            int64_t offset = 0;
            for (int64_t size : sizes) {
              results.push_back(sliceAxis(n, n.input(0), axis, offset, 1, size));
              offset += size;
            }
            return results;
          }};
}

// Tile: x viewed [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], merged.
OpImport tile() {
  return {{1}, [](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            std::vector<int64_t> repeats = n.constInput(1).asInts();
            if (repeats.size() != shape.size())
              throw ImportError("repeats has " + std::to_string(repeats.size()) +
                                " entries for rank " + std::to_string(shape.size()));
            SmallVector<int64_t> spread, tiled, result;
            for (size_t d = 0; d < shape.size(); ++d) {
              if (repeats[d] < 0)
                throw ImportError("repeats must be non-negative");
              spread.append({1, shape[d]});
              tiled.append({repeats[d], shape[d]});
              auto product = checkedMul(repeats[d], shape[d]);
              if (!product)
                throw ImportError("the result is too large");
              result.push_back(*product);
            }
            if (!checkedTensorBytes(n.inputType(0).clone(result)))
              throw ImportError("result " + dimsString(result) + " exceeds dlc's limit of " +
                                kMaxTensorBytesText);
            Value spreadOut = reshape(n, n.input(0), spread);
            return reshape(n, broadcastTo(n, spreadOut, tiled), result);
          }};
}

// Trilu: the elements on and above (upper) or below the k-th diagonal; others 0. A constant k
// makes the mask a constant; a run-time k (it never changes the shape) is compared with a
// table of column-minus-row offsets.
OpImport trilu() {
  return {{}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            if (in.getRank() < 2)
              throw ImportError("input must have rank >= 2");
            bool upper = n.intAttr("upper", 1) != 0;
            int64_t rows = in.getDimSize(in.getRank() - 2), cols = in.getDimSize(in.getRank() - 1);
            Value zero = scalar(n, 0, in.getElementType());
            auto select = [&](Value mask) {
              return n.b.create<WhereOp>(n.loc(), in, mask, n.input(0), zero);
            };
            const ConstTensor *k = n.hasInput(1) ? n.constantOrNull(1) : nullptr;
            if (k && k->numElements() != 1)
              throw ImportError("k must be a scalar");
            if (!n.hasInput(1) || k) {
              int64_t diagonalK = k ? k->asInts()[0] : 0;
              return select(boolMask(n, {rows, cols}, [&](int64_t i) {
                int64_t diagonal = i % cols - i / cols;
                return upper ? diagonal >= diagonalK : diagonal <= diagonalK;
              }));
            }
            auto kType = n.inputType(1);
            if (kType.getNumElements() != 1 || !kType.getElementType().isInteger(64))
              throw ImportError("k must be an int64 scalar");
            Value runtimeK = reshape(n, n.input(1), {});
            Value diagonal =
                bin<SubOp>(n, classIndices(n, cols, 1, 2), classIndices(n, rows, 0, 2));
            return select(upper ? comparison<GreaterEqualOp>(n, diagonal, runtimeK)
                                : comparison<LessEqualOp>(n, diagonal, runtimeK));
          }};
}

// Pad, by axis: negative pads slice; constant pads concat filled blocks; edge broadcasts the
// border element; reflect and wrap concat slices of the input.
OpImport pad() {
  return {{1, 3}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            int64_t rank = in.getRank();
            std::string mode = n.stringAttr("mode", "constant");
            std::vector<int64_t> pads = n.version >= 11
                                            ? n.constInput(1).asInts()
                                            : n.intsAttr(n.version < 2 ? "paddings" : "pads");
            std::vector<int64_t> axes;
            if (n.version >= 18 && n.hasInput(3)) {
              for (int64_t a : n.constInput(3).asInts())
                axes.push_back(normalizeAxis(a, rank));
            } else {
              axes = trailingAxes(0, rank);
            }
            if (pads.size() != 2 * axes.size())
              throw ImportError("pads has " + std::to_string(pads.size()) + " entries for " +
                                std::to_string(axes.size()) + " axes");
            Value fill;
            if (mode == "constant") {
              if (n.version >= 11 && n.hasInput(2)) { // a constant or a run-time scalar
                if (n.inputType(2).getNumElements() != 1 ||
                    n.inputType(2).getElementType() != in.getElementType())
                  throw ImportError("constant_value must be one element of the input's type");
                fill = reshape(n, n.input(2), {});
              } else
                fill = scalar(n, n.version < 11 ? n.floatAttr("value", 0.0f) : 0.0,
                              in.getElementType());
            } else if (mode != "reflect" && mode != "edge" && mode != "wrap") {
              throw ImportError("unknown mode '" + mode + "'");
            }
            Value x = n.input(0);
            for (size_t i = 0; i < axes.size(); ++i) {
              int64_t axis = axes[i], before = pads[i], after = pads[i + axes.size()];
              if (before <= -kMaxTensorBytes || before >= kMaxTensorBytes ||
                  after <= -kMaxTensorBytes || after >= kMaxTensorBytes)
                throw ImportError("pads " + dimsString(pads) + " are out of range");
              int64_t dim = typeOf(x).getDimSize(axis);
              if (before < 0 || after < 0) { // crop first
                int64_t start = std::max<int64_t>(0, -before),
                        end = dim - std::max<int64_t>(0, -after);
                if (end < start)
                  throw ImportError("negative pads remove more than axis " + std::to_string(axis) +
                                    " holds");
                x = sliceAxis(n, x, axis, start, 1, end - start);
                dim = end - start;
                before = std::max<int64_t>(0, before);
                after = std::max<int64_t>(0, after);
              }
              if (!before && !after)
                continue;
              if (mode != "constant" && dim == 0)
                throw ImportError("cannot pad an empty axis in mode '" + mode + "'");
              if ((mode == "reflect" && (before >= dim || after >= dim)) ||
                  (mode == "wrap" && (before > dim || after > dim)))
                throw ImportError("pads larger than axis " + std::to_string(axis) + " of size " +
                                  std::to_string(dim) + " in mode '" + mode + "'");
              auto block = [&](int64_t size, bool atStart) -> Value {
                SmallVector<int64_t> shape(typeOf(x).getShape());
                shape[axis] = size;
                if (mode == "constant")
                  return broadcastTo(n, fill, shape);
                if (mode == "edge")
                  return broadcastTo(n, sliceAxis(n, x, axis, atStart ? 0 : dim - 1, 1, 1), shape);
                if (mode == "reflect") // mirrored, without the border element
                  return atStart ? sliceAxis(n, x, axis, size, -1, size)
                                 : sliceAxis(n, x, axis, dim - 2, -1, size);
                return atStart ? sliceAxis(n, x, axis, dim - size, 1, size) // wrap
                               : sliceAxis(n, x, axis, 0, 1, size);
              };
              SmallVector<Value> parts;
              if (before)
                parts.push_back(block(before, true));
              parts.push_back(x);
              if (after)
                parts.push_back(block(after, false));
              x = concatAxis(n, parts, axis);
            }
            return x;
          }};
}

// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape.
OpImport depthToSpace(bool toSpace) {
  return {{}, [toSpace](NodeImporter &n) -> Value {
            auto shape = n.inputType(0).getShape();
            int64_t b = n.intAttr("blocksize", 0);
            if (shape.size() != 4 || b <= 0)
              throw ImportError("needs a 4-D input and a positive blocksize");
            int64_t bb = dimsProduct({b, b});
            int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
            // DCR orders the output (input, for SpaceToDepth) channels block-major, CRD
            // channel-major.
            std::string mode = n.stringAttr("mode", "DCR");
            if (mode != "DCR" && mode != "CRD")
              throw ImportError("mode must be DCR or CRD, got '" + mode + "'");
            bool crd = mode == "CRD";
            if (toSpace) {
              if (C % bb)
                throw ImportError("channels " + std::to_string(C) +
                                  " are not divisible by blocksize^2");
              Value v = reshape(n, n.input(0),
                                crd ? SmallVector<int64_t>{N, C / bb, b, b, H, W}
                                    : SmallVector<int64_t>{N, b, b, C / bb, H, W});
              v = transposeValue(n, v,
                                 crd ? ArrayRef<int64_t>{0, 1, 4, 2, 5, 3}
                                     : ArrayRef<int64_t>{0, 3, 4, 1, 5, 2});
              return reshape(n, v, {N, C / bb, dimsProduct({H, b}), dimsProduct({W, b})});
            }
            if (H % b || W % b)
              throw ImportError("spatial dims are not divisible by blocksize");
            Value v = reshape(n, n.input(0), {N, C, H / b, b, W / b, b});
            v = transposeValue(n, v,
                               crd ? ArrayRef<int64_t>{0, 1, 3, 5, 2, 4}
                                   : ArrayRef<int64_t>{0, 3, 5, 1, 2, 4});
            return reshape(n, v, {N, dimsProduct({C, b, b}), H / b, W / b});
          }};
}

// OneHot: (indices with a unit dim at axis) == classes, then on or off values.
OpImport oneHot() {
  return {{1}, [](NodeImporter &n) -> Value {
            const ConstTensor &depthValue = n.constInput(1);
            if (depthValue.numElements() != 1)
              throw ImportError("depth must be a scalar");
            double depthValueAsDouble = depthValue.asDoubles()[0];
            if (!(depthValueAsDouble >= 1 && depthValueAsDouble <= double(kMaxTensorBytes)))
              throw ImportError("depth must be positive and at most 2^40");
            int64_t depth = int64_t(depthValueAsDouble);
            int64_t rank = n.inputType(0).getRank() + 1;
            int64_t axis = normalizeAxis(n.intAttr("axis", -1), rank);
            Value idx = castTo(n, n.input(0), n.b.getI64Type());
            Value depthScalar = intScalar(n, depth, n.b.getI64Type());
            Value negative = comparison<LessOp>(n, idx, intScalar(n, 0, n.b.getI64Type()));
            Value wrapped = bin<AddOp>(n, idx, depthScalar);
            idx = n.b.create<WhereOp>(n.loc(), typeOf(idx), negative, wrapped, idx);
            Value hot = comparison<EqualOp>(n, insertUnitDim(n, idx, axis),
                                            classIndices(n, depth, axis, rank));
            if (n.inputType(2).getNumElements() != 2)
              throw ImportError("values must hold [off, on]");
            Value values = reshape(n, n.input(2), {2});
            Value off = reshape(n, sliceAxis(n, values, 0, 0, 1, 1), {});
            Value on = reshape(n, sliceAxis(n, values, 0, 1, 1, 1), {});
            return n.b.create<WhereOp>(n.loc(), typeOf(hot).clone(typeOf(on).getElementType()), hot,
                                       on, off);
          }};
}

// EyeLike: ones on the k-th diagonal of the input's 2-D shape, in `dtype` (or the input's).
OpImport eyeLike() {
  return {{}, [](NodeImporter &n) -> Value {
            auto in = n.inputType(0);
            if (in.getRank() != 2)
              throw ImportError("input must be 2-D");
            Type element = in.getElementType();
            if (n.attr("dtype")) {
              element = elementTypeFor(*n.b.getContext(), n.intAttr("dtype", 0));
              if (!element)
                throw ImportError("dtype " + dtypeName(n.intAttr("dtype", 0)) +
                                  " is not supported");
            }
            int64_t k = n.intAttr("k", 0), cols = in.getDimSize(1);
            Value mask =
                boolMask(n, in.getShape(), [&](int64_t i) { return i % cols - i / cols == k; });
            return castTo(n, mask, element);
          }};
}

} // namespace

// Each batch entry's first sequence_lens[b] steps reversed, the rest kept: a GatherElements
// along the time axis with indices computed from the (possibly run-time) lengths.
OpImport reverseSequence() {
  return {{}, [](NodeImporter &n) -> Value {
            auto x = n.inputType(0);
            int64_t rank = x.getRank();
            if (rank < 2)
              throw ImportError("input must have rank >= 2");
            int64_t timeAxis = normalizeAxis(n.intAttr("time_axis", 0), rank),
                    batchAxis = normalizeAxis(n.intAttr("batch_axis", 1), rank);
            if (timeAxis > 1 || batchAxis > 1 || timeAxis == batchAxis)
              throw ImportError("time_axis and batch_axis must be 0 and 1 in some order");
            int64_t steps = x.getDimSize(timeAxis), batch = x.getDimSize(batchAxis);
            if (n.inputType(1).getShape() != ArrayRef<int64_t>{batch} ||
                !n.inputType(1).getElementType().isSignlessInteger(64))
              throw ImportError("sequence_lens must be int64 [" + std::to_string(batch) + "]");
            Type i64 = n.b.getI64Type();
            SmallVector<int64_t> lineShape(rank, 1), timeShape(rank, 1);
            lineShape[batchAxis] = batch;
            timeShape[timeAxis] = steps;
            Value lengths = reshape(n, n.input(1), lineShape);
            Value t = reshape(n, classIndices(n, steps, 0, 1), timeShape);
            Value reversed = bin<SubOp>(n, bin<SubOp>(n, lengths, intScalar(n, 1, i64)), t);
            Value inside = comparison<LessOp>(n, t, lengths);
            SmallVector<int64_t> indexShape(rank, 1);
            indexShape[timeAxis] = steps;
            indexShape[batchAxis] = batch;
            Value index = n.b.create<WhereOp>(n.loc(), RankedTensorType::get(indexShape, i64),
                                              inside, reversed, t);
            return gatherElements(n, n.input(0), broadcastTo(n, index, x.getShape()), timeAxis);
          }};
}

// The slices along the axis (of the flattened input without one) where the condition holds;
// the condition must be known at compile time (it decides the shape).
OpImport compress() {
  return {{1}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            int64_t axis = 0;
            if (n.attr("axis"))
              axis = normalizeAxis(n.intAttr("axis", 0), typeOf(x).getRank());
            else
              x = reshape(n, x, {typeOf(x).getNumElements()});
            std::vector<int64_t> kept, condition = n.constInput(1).asInts();
            if ((int64_t)condition.size() > typeOf(x).getDimSize(axis))
              throw ImportError("condition is longer than the axis");
            for (size_t i = 0; i < condition.size(); ++i)
              if (condition[i])
                kept.push_back(i);
            SmallVector<int64_t> shape(typeOf(x).getShape());
            shape[axis] = kept.size();
            std::vector<char> bytes(kept.size() * 8);
            std::memcpy(bytes.data(), kept.data(), bytes.size());
            Value table = ConstantOp::fromBytes(
                n.b, n.loc(), RankedTensorType::get({(int64_t)kept.size()}, n.b.getI64Type()),
                bytes, "compress_indices");
            return n.b.create<GatherOp>(n.loc(), typeOf(x).clone(shape), x, table, axis);
          }};
}

// Each listed axis cropped or zero-padded to the target size, centered (the odd element
// goes to the end).
OpImport centerCropPad() {
  return {{1}, [](NodeImporter &n) -> Value {
            Value x = n.input(0);
            int64_t rank = typeOf(x).getRank();
            std::vector<int64_t> targets = n.constInput(1).asInts(), axes;
            for (int64_t a : n.intsAttr("axes", trailingAxes(0, rank)))
              axes.push_back(normalizeAxis(a, rank));
            if (targets.size() != axes.size())
              throw ImportError("shape has " + std::to_string(targets.size()) + " entries for " +
                                std::to_string(axes.size()) + " axes");
            for (size_t i = 0; i < axes.size(); ++i) {
              int64_t axis = axes[i], dim = typeOf(x).getDimSize(axis), target = targets[i];
              if (target < 0 || target > kMaxTensorBytes)
                throw ImportError("target size " + std::to_string(target) + " is out of range");
              if (target < dim) {
                x = sliceAxis(n, x, axis, (dim - target) / 2, 1, target);
              } else if (target > dim) {
                int64_t before = (target - dim) / 2, after = target - dim - before;
                SmallVector<int64_t> shape(typeOf(x).getShape());
                Value zero = scalar(n, 0.0, typeOf(x).getElementType());
                SmallVector<Value> parts;
                for (int64_t size : {before, int64_t(-1), after}) {
                  if (size < 0) {
                    parts.push_back(x);
                  } else if (size > 0) {
                    shape[axis] = size;
                    parts.push_back(broadcastTo(n, zero, shape));
                  }
                }
                x = concatAxis(n, parts, axis);
              }
            }
            return x;
          }};
}

void addDataMovementImports(ImportTable &table) {
  table.insert({
      {"Expand", expand()},
      {"GatherElements", gatherElementsOp()},
      {"ReverseSequence", reverseSequence()},
      {"Compress", compress()},
      {"CenterCropPad", centerCropPad()},
      {"Split", split()},
      {"Tile", tile()},
      {"Trilu", trilu()},
      {"Pad", pad()},
      {"DepthToSpace", depthToSpace(true)},
      {"SpaceToDepth", depthToSpace(false)},
      {"OneHot", oneHot()},
      {"EyeLike", eyeLike()},
      {"Reshape", reshapeOp()},
      {"Flatten", flatten()},
      {"Squeeze", squeezeLike<true>()},
      {"Unsqueeze", squeezeLike<false>()},
      {"Identity", identity()},
      {"BitCast", bitCast()},
      {"Transpose", transpose()},
      {"Concat", concat()},
      {"Gather", gather()},
      {"Slice", slice()},
      {"Constant", notFolded()},
      {"Shape", notFolded()},
      {"Size", notFolded()},
      {"ConstantOfShape", constantOfShape()},
      {"Range", notFolded()},
      {"NonZero", notFolded()},
      {"NonMaxSuppression", notFolded()},
  });
}

} // namespace dlc
