//===- NN.cpp - Shapes of matmuls, convolutions, pooling, norms, losses ---===//
//
// Output sizes of convolution and pooling follow torch's formulas, with
// floor division on symbolic sizes. Convolution, pooling and batch norm keep
// a channels_last input channels_last, as torch does on CPU; everything else
// here is contiguous.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

#include <cctype>
#include <map>

namespace gc {
namespace {

using namespace shape;

/// The memory format torch suggests for `like`, applied to a new tensor.
TensorType suggestedLayoutType(SymContext &syms, DType dtype, Sizes sizes, const TensorType &like) {
  if (sizes.size() == 4 && suggestsChannelsLast(syms, like))
    return channelsLastType(syms, dtype, std::move(sizes), like.device);
  return contiguousType(syms, dtype, std::move(sizes), like.device);
}

/// The dtype of a norm's saved statistics: CUDA keeps them in float32 for
/// 16-bit inputs, the CPU kernels in the input's dtype.
DType statsDType(const TensorType &input) {
  bool half = input.dtype == DType::Float16 || input.dtype == DType::BFloat16;
  return half && input.device.kind == DeviceKind::CUDA ? DType::Float32 : input.dtype;
}

void checkSameSize(SymContext &syms, const SymExpr *a, const SymExpr *b, const std::string &what) {
  std::optional<int> same = compareSizes(syms, a, b);
  if (same && *same != 0)
    shapeFail(what + ": sizes " + a->str() + " and " + b->str() + " do not match");
}

void checkRank(const TensorType &t, size_t rank, const char *what) {
  if (t.rank() != rank)
    shapeFail(std::string(what) + " needs a " + std::to_string(rank) + "-d tensor, not " +
              std::to_string(t.rank()) + "-d");
}

//===----------------------------------------------------------------------===//
// Matmuls
//===----------------------------------------------------------------------===//

TensorType mmType(SymContext &syms, const TensorType &a, const TensorType &b) {
  checkRank(a, 2, "mm");
  checkRank(b, 2, "mm");
  checkSameSize(syms, a.sizes[1], b.sizes[0], "mm");
  return contiguousType(syms, a.dtype, {a.sizes[0], b.sizes[1]}, a.device);
}

TensorType bmmType(SymContext &syms, const TensorType &a, const TensorType &b) {
  checkRank(a, 3, "bmm");
  checkRank(b, 3, "bmm");
  checkSameSize(syms, a.sizes[0], b.sizes[0], "bmm batch");
  checkSameSize(syms, a.sizes[2], b.sizes[1], "bmm");
  return contiguousType(syms, a.dtype, {a.sizes[0], a.sizes[1], b.sizes[2]}, a.device);
}

std::vector<Type> mm(const ShapeContext &ctx) {
  return one(mmType(ctx.syms(), ctx.tensor("self"), ctx.tensor("mat2")));
}

std::vector<Type> bmm(const ShapeContext &ctx) {
  return one(bmmType(ctx.syms(), ctx.tensor("self"), ctx.tensor("mat2")));
}

/// addmm, baddbmm: the product's type; self must broadcast to it.
std::vector<Type> plusSelf(const ShapeContext &ctx, TensorType product) {
  if (broadcastSizes(ctx.syms(), ctx.tensor("self").sizes, product.sizes) != product.sizes)
    shapeFail("self does not broadcast to the product's shape");
  return one(std::move(product));
}

std::vector<Type> addmm(const ShapeContext &ctx) {
  return plusSelf(ctx, mmType(ctx.syms(), ctx.tensor("mat1"), ctx.tensor("mat2")));
}

std::vector<Type> baddbmm(const ShapeContext &ctx) {
  return plusSelf(ctx, bmmType(ctx.syms(), ctx.tensor("batch1"), ctx.tensor("batch2")));
}

/// matmul: vectors become matrices for the product and lose that dimension
/// after; batch dimensions broadcast.
Sizes matmulSizes(SymContext &syms, const TensorType &a, const TensorType &b) {
  if (a.rank() == 0 || b.rank() == 0)
    shapeFail("matmul needs tensors of at least one dimension");
  const SymExpr *k = a.sizes.back();
  const SymExpr *kb = b.rank() == 1 ? b.sizes[0] : b.sizes[b.rank() - 2];
  checkSameSize(syms, k, kb, "matmul");
  Sizes batchA(a.sizes.begin(), a.sizes.end() - std::min<size_t>(a.rank(), 2));
  Sizes batchB(b.sizes.begin(), b.sizes.end() - std::min<size_t>(b.rank(), 2));
  Sizes sizes = broadcastSizes(syms, batchA, batchB);
  if (a.rank() >= 2)
    sizes.push_back(a.sizes[a.rank() - 2]);
  if (b.rank() >= 2)
    sizes.push_back(b.sizes.back());
  return sizes;
}

std::vector<Type> matmul(const ShapeContext &ctx) {
  const TensorType &a = ctx.tensor("self"), &b = ctx.tensor("other");
  return one(contiguousType(ctx.syms(), a.dtype, matmulSizes(ctx.syms(), a, b), a.device));
}

/// linear: input @ weight.T (+ bias).
std::vector<Type> linear(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input"), &weight = ctx.tensor("weight");
  if (weight.rank() != 1 && weight.rank() != 2)
    shapeFail("linear needs a 1-d or 2-d weight");
  TensorType wt = weight;
  std::reverse(wt.sizes.begin(), wt.sizes.end());
  return one(contiguousType(ctx.syms(), input.dtype, matmulSizes(ctx.syms(), input, wt),
                            input.device));
}

/// One operand's or the output's subscripts: a letter per dimension, and
/// "..." at most once for the broadcast dimensions.
struct Subscripts {
  std::string before, after; ///< letters before and after the ellipsis
  bool ellipsis = false;
};

Subscripts parseSubscripts(std::string_view term) {
  Subscripts out;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.substr(i, 3) == "...") {
      if (out.ellipsis)
        shapeFail("einsum: '...' appears twice in one term");
      out.ellipsis = true;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      (out.ellipsis ? out.after : out.before) += term[i];
    } else {
      shapeFail("einsum: unexpected '" + std::string(1, term[i]) + "' in the equation");
    }
  }
  return out;
}

/// einsum: each subscript's size comes from the operands (size 1
/// broadcasts); the output lists its subscripts after "->", or else has the
/// ellipsis dimensions and then the subscripts used once, in order.
std::vector<Type> einsum(const ShapeContext &ctx) {
  SymContext &syms = ctx.syms();
  std::string equation;
  for (char ch : ctx.string("equation", ""))
    if (ch != ' ')
      equation += ch;
  std::vector<const TensorType *> tensors = ctx.tensors("tensors");
  if (tensors.empty())
    shapeFail("einsum needs at least one operand");
  size_t arrow = equation.find("->");
  std::string_view lhs = std::string_view(equation).substr(0, arrow);
  std::map<char, const SymExpr *> sizes;
  std::map<char, int> uses;
  Sizes ellipsis;
  size_t operand = 0;
  for (size_t start = 0; start <= lhs.size(); ++operand) {
    size_t comma = std::min(lhs.find(',', start), lhs.size());
    if (operand >= tensors.size())
      shapeFail("einsum: more terms than operands");
    Subscripts sub = parseSubscripts(lhs.substr(start, comma - start));
    const TensorType &t = *tensors[operand];
    size_t letters = sub.before.size() + sub.after.size();
    if (t.rank() < letters || (!sub.ellipsis && t.rank() != letters))
      shapeFail("einsum: operand " + std::to_string(operand) + " has " +
                std::to_string(t.rank()) + " dimensions, its subscripts " +
                std::to_string(letters));
    size_t middle = t.rank() - letters;
    auto bind = [&](char letter, const SymExpr *size) {
      ++uses[letter];
      auto [it, fresh] = sizes.emplace(letter, size);
      if (fresh || size == it->second || size == syms.constant(1))
        return;
      if (it->second == syms.constant(1))
        it->second = size;
      else
        checkSameSize(syms, it->second, size, "einsum subscript " + std::string(1, letter));
    };
    for (size_t i = 0; i < sub.before.size(); ++i)
      bind(sub.before[i], t.sizes[i]);
    ellipsis = broadcastSizes(
        syms, ellipsis,
        Sizes(t.sizes.begin() + sub.before.size(), t.sizes.begin() + sub.before.size() + middle));
    for (size_t i = 0; i < sub.after.size(); ++i)
      bind(sub.after[i], t.sizes[sub.before.size() + middle + i]);
    start = comma + 1;
  }
  if (operand != tensors.size())
    shapeFail("einsum: fewer terms than operands");
  Sizes out;
  if (arrow != std::string::npos) {
    Subscripts sub = parseSubscripts(std::string_view(equation).substr(arrow + 2));
    auto append = [&](const std::string &letters) {
      for (char letter : letters) {
        auto it = sizes.find(letter);
        if (it == sizes.end())
          shapeFail("einsum: output subscript '" + std::string(1, letter) +
                    "' names no operand dimension");
        out.push_back(it->second);
      }
    };
    append(sub.before);
    if (sub.ellipsis)
      out.insert(out.end(), ellipsis.begin(), ellipsis.end());
    append(sub.after);
  } else {
    out = ellipsis;
    for (const auto &[letter, count] : uses)
      if (count == 1)
        out.push_back(sizes[letter]);
  }
  const TensorType &first = *tensors.front();
  return one(contiguousType(syms, first.dtype, out, first.device));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// torch's pooling output size: windows of `kernel` dilated by `dilation`,
/// every `stride`, over the padded input; with ceil_mode a last partial
/// window counts if it starts inside the input or left padding.
const SymExpr *pooledSize(SymContext &syms, const SymExpr *in, int64_t kernel, int64_t stride,
                          int64_t pad, int64_t dilation, bool ceilMode) {
  if (stride <= 0 || kernel <= 0 || dilation <= 0)
    shapeFail("kernel, stride and dilation must be positive");
  const SymExpr *span = syms.sub(syms.add(in, syms.constant(2 * pad)),
                                 syms.constant(dilation * (kernel - 1) + 1));
  if (ceilMode)
    span = syms.add(span, syms.constant(stride - 1));
  const SymExpr *out = syms.add(syms.floorDiv(span, syms.constant(stride)), syms.constant(1));
  if (ceilMode) {
    const SymExpr *lastStart = syms.mul(syms.sub(out, syms.constant(1)), syms.constant(stride));
    std::optional<int> past = compareSizes(syms, lastStart, syms.add(in, syms.constant(pad)));
    if (!past)
      shapeFail("ceil_mode pooling of a symbolic size " + in->str() + " is not supported");
    if (*past >= 0)
      out = syms.sub(out, syms.constant(1));
  }
  if (out->isConst() && out->constant() < 0)
    shapeFail("the input is too small for the kernel");
  return out;
}

/// The number of spatial dimensions and whether the input has a batch
/// dimension, for an op whose input is [N,] C, spatial...
bool isBatched(const TensorType &input, size_t spatial, const char *what) {
  if (input.rank() != spatial + 1 && input.rank() != spatial + 2)
    shapeFail(std::string(what) + " needs a " + std::to_string(spatial + 1) + "-d or " +
              std::to_string(spatial + 2) + "-d input, not " + std::to_string(input.rank()) +
              "-d");
  return input.rank() == spatial + 2;
}

/// The convolution's result, from explicit per-dimension parameters.
TensorType convolved(const ShapeContext &ctx, const std::vector<int64_t> &stride,
                     const std::vector<int64_t> &padding, const std::vector<int64_t> &dilation,
                     bool transposed, const std::vector<int64_t> &outputPadding, int64_t groups) {
  SymContext &syms = ctx.syms();
  const TensorType &input = ctx.tensor("input"), &weight = ctx.tensor("weight");
  if (weight.rank() < 3)
    shapeFail("convolution needs a weight of at least 3 dimensions");
  size_t spatial = weight.rank() - 2;
  bool batched = isBatched(input, spatial, "convolution");
  if (groups <= 0)
    shapeFail("groups must be positive");
  size_t c = batched ? 1 : 0;
  const SymExpr *inChannels = transposed ? weight.sizes[0] : syms.mul(weight.sizes[1],
                                                                     syms.constant(groups));
  checkSameSize(syms, input.sizes[c], inChannels, "convolution input channels");
  Sizes sizes;
  if (batched)
    sizes.push_back(input.sizes[0]);
  sizes.push_back(transposed ? syms.mul(weight.sizes[1], syms.constant(groups)) : weight.sizes[0]);
  for (size_t i = 0; i < spatial; ++i) {
    const SymExpr *in = input.sizes[c + 1 + i];
    int64_t kernel = constantSize(weight.sizes[2 + i], "the kernel size");
    if (transposed) {
      // (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1
      sizes.push_back(syms.add(syms.mul(syms.sub(in, syms.constant(1)), syms.constant(stride[i])),
                               syms.constant(dilation[i] * (kernel - 1) + outputPadding[i] + 1 -
                                             2 * padding[i])));
    } else {
      sizes.push_back(pooledSize(syms, in, kernel, stride[i], padding[i], dilation[i], false));
    }
  }
  // On CPU torch keeps a channels_last input channels_last; on CUDA a
  // channels_last weight does too.
  bool channelsLast = batched && spatial == 2 &&
                      (suggestsChannelsLast(syms, input) ||
                       (input.device.kind == DeviceKind::CUDA && suggestsChannelsLast(syms, weight)));
  if (channelsLast)
    return channelsLastType(syms, input.dtype, sizes, input.device);
  return contiguousType(syms, input.dtype, sizes, input.device);
}

std::vector<Type> convolution(const ShapeContext &ctx) {
  size_t n = std::max<size_t>(ctx.tensor("weight").rank(), 3) - 2;
  return one(convolved(ctx, expandedInts(ctx, "stride", n, {1}),
                       expandedInts(ctx, "padding", n, {0}), expandedInts(ctx, "dilation", n, {1}),
                       ctx.boolean("transposed", false),
                       expandedInts(ctx, "output_padding", n, {0}), ctx.integer("groups", 1)));
}

/// The int8 calls' result dtype after checking their operands: a uint8 or
/// int8 input, int8 weights with one scale per output channel (or one), and
/// a float32 result unless requantized to uint8 or int8.
DType quantizedCallType(const ShapeContext &ctx, const SymExpr *outChannels) {
  DType in = ctx.tensor("input").dtype;
  if ((in != DType::UInt8 && in != DType::Int8) || ctx.tensor("weight").dtype != DType::Int8)
    shapeFail("an int8 call needs a uint8 or int8 input and int8 weights");
  const NamedArg *given = ctx.find("weight_scales");
  size_t scales = given ? given->value.floats.size() : 0;
  if (scales != 1 && (!outChannels->isConst() ||
                      static_cast<int64_t>(scales) != outChannels->constant()))
    shapeFail("an int8 call needs one weight scale per output channel, or one");
  DType out = ctx.dtype("output_dtype").value_or(DType::Float32);
  if (out != DType::Float32 && out != DType::UInt8 && out != DType::Int8)
    shapeFail("an int8 call gives float32, uint8 or int8");
  return out;
}

std::vector<Type> quantizedConvolution(const ShapeContext &ctx) {
  size_t n = std::max<size_t>(ctx.tensor("weight").rank(), 3) - 2;
  TensorType t = convolved(ctx, expandedInts(ctx, "stride", n, {1}),
                           expandedInts(ctx, "padding", n, {0}),
                           expandedInts(ctx, "dilation", n, {1}), false,
                           std::vector<int64_t>(n, 0), ctx.integer("groups", 1));
  t.dtype = quantizedCallType(ctx, ctx.tensor("weight").sizes[0]);
  return one(std::move(t));
}

std::vector<Type> quantizedLinear(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input"), &weight = ctx.tensor("weight");
  if (weight.rank() != 2 || input.rank() < 1)
    shapeFail("an int8 linear needs a 2-d weight [out, in]");
  TensorType wt = weight;
  std::reverse(wt.sizes.begin(), wt.sizes.end());
  return one(contiguousType(ctx.syms(), quantizedCallType(ctx, weight.sizes[0]),
                            matmulSizes(ctx.syms(), input, wt), input.device));
}

/// conv_transpose1d/2d/3d.input.
std::vector<Type> convolutionTransposed(const ShapeContext &ctx) {
  size_t n = std::max<size_t>(ctx.tensor("weight").rank(), 3) - 2;
  return one(convolved(ctx, expandedInts(ctx, "stride", n, {1}),
                       expandedInts(ctx, "padding", n, {0}), expandedInts(ctx, "dilation", n, {1}),
                       true, expandedInts(ctx, "output_padding", n, {0}),
                       ctx.integer("groups", 1)));
}

/// conv1d/2d/3d.padding: padding "valid" (none) or "same" (the output keeps
/// the input's spatial sizes).
std::vector<Type> convolutionPadded(const ShapeContext &ctx) {
  const TensorType &weight = ctx.tensor("weight");
  size_t n = std::max<size_t>(weight.rank(), 3) - 2;
  std::vector<int64_t> stride = expandedInts(ctx, "stride", n, {1});
  std::vector<int64_t> dilation = expandedInts(ctx, "dilation", n, {1});
  std::string mode = ctx.string("padding", "valid");
  std::vector<int64_t> padding(n, 0);
  if (mode == "same") {
    for (size_t i = 0; i < n; ++i) {
      if (stride[i] != 1)
        shapeFail("padding='same' needs stride 1");
      int64_t total = dilation[i] * (constantSize(weight.sizes[2 + i], "the kernel size") - 1);
      if (total % 2 != 0)
        shapeFail("padding='same' with an odd total padding is not supported");
      padding[i] = total / 2;
    }
  } else if (mode != "valid") {
    shapeFail("unknown padding mode '" + mode + "'");
  }
  return one(convolved(ctx, stride, padding, dilation, false, std::vector<int64_t>(n, 0),
                       ctx.integer("groups", 1)));
}

/// The sizes of 2-d pooling over the last two dimensions of `self`.
Sizes pooled2d(const ShapeContext &ctx, bool dilated) {
  const TensorType &self = ctx.tensor("self");
  isBatched(self, 2, "2-d pooling");
  std::vector<int64_t> kernel = expandedInts(ctx, "kernel_size", 2, {});
  std::vector<int64_t> stride = expandedInts(ctx, "stride", 2, kernel);
  std::vector<int64_t> padding = expandedInts(ctx, "padding", 2, {0});
  std::vector<int64_t> dilation =
      dilated ? expandedInts(ctx, "dilation", 2, {1}) : std::vector<int64_t>{1, 1};
  bool ceilMode = ctx.boolean("ceil_mode", false);
  Sizes sizes = self.sizes;
  for (size_t i = 0; i < 2; ++i) {
    if (padding[i] < 0 || 2 * padding[i] > dilation[i] * (kernel[i] - 1) + 1)
      shapeFail("padding must be at most half the dilated kernel size");
    const SymExpr *&size = sizes[sizes.size() - 2 + i];
    size = pooledSize(ctx.syms(), size, kernel[i], stride[i], padding[i], dilation[i], ceilMode);
  }
  return sizes;
}

std::vector<Type> maxPool2d(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(suggestedLayoutType(ctx.syms(), self.dtype, pooled2d(ctx, true), self));
}

std::vector<Type> maxPool2dWithIndices(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  Sizes sizes = pooled2d(ctx, true);
  return {result(suggestedLayoutType(ctx.syms(), self.dtype, sizes, self)),
          result(suggestedLayoutType(ctx.syms(), DType::Int64, sizes, self))};
}

std::vector<Type> avgPool2d(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(suggestedLayoutType(ctx.syms(), self.dtype, pooled2d(ctx, false), self));
}

std::vector<Type> adaptiveAvgPool2d(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  isBatched(self, 2, "adaptive_avg_pool2d");
  Sizes output = symInts(ctx, "output_size");
  if (output.size() == 1)
    output.push_back(output[0]);
  if (output.size() != 2)
    shapeFail("adaptive_avg_pool2d needs 2 output sizes");
  Sizes sizes = self.sizes;
  sizes[sizes.size() - 2] = output[0];
  sizes[sizes.size() - 1] = output[1];
  return one(suggestedLayoutType(ctx.syms(), self.dtype, sizes, self));
}

/// im2col: [N, C kh kw, L] (unbatched: [C kh kw, L]), where L counts the
/// kernel's positions over the padded image.
std::vector<Type> im2col(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  if (self.rank() != 3 && self.rank() != 4)
    shapeFail("im2col expects a 3-D or 4-D input");
  std::vector<int64_t> kernel = expandedInts(ctx, "kernel_size", 2, {});
  std::vector<int64_t> dilation = expandedInts(ctx, "dilation", 2, {1});
  std::vector<int64_t> padding = expandedInts(ctx, "padding", 2, {0});
  std::vector<int64_t> stride = expandedInts(ctx, "stride", 2, {1});
  SymContext &sy = ctx.syms();
  size_t rank = self.rank();
  const SymExpr *positions = sy.constant(1);
  for (size_t i = 0; i < 2; ++i)
    positions = sy.mul(positions, pooledSize(sy, self.sizes[rank - 2 + i], kernel[i], stride[i],
                                             padding[i], dilation[i], false));
  Sizes sizes(self.sizes.begin(), self.sizes.end() - 3);
  sizes.push_back(sy.mul(self.sizes[rank - 3], sy.constant(kernel[0] * kernel[1])));
  sizes.push_back(positions);
  return one(contiguousType(sy, self.dtype, std::move(sizes), self.device));
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// The number of leading dimensions layer_norm does not normalize.
size_t layerNormAxis(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  Sizes normalized = symInts(ctx, "normalized_shape");
  if (normalized.empty() || normalized.size() > input.rank())
    shapeFail("normalized_shape does not fit the input's rank");
  size_t axis = input.rank() - normalized.size();
  for (size_t i = 0; i < normalized.size(); ++i)
    checkSameSize(ctx.syms(), input.sizes[axis + i], normalized[i], "layer_norm");
  return axis;
}

std::vector<Type> layerNorm(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  layerNormAxis(ctx);
  return one(contiguousType(ctx.syms(), input.dtype, input.sizes, input.device));
}

/// _weight_norm: v's shape (its decomposition checks dim).
std::vector<Type> weightNorm(const ShapeContext &ctx) {
  const TensorType &v = ctx.tensor("v");
  return one(contiguousType(ctx.syms(), v.dtype, v.sizes, v.device));
}

/// native_layer_norm: the output, and the mean and rstd with the normalized
/// dimensions kept as 1.
std::vector<Type> nativeLayerNorm(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  size_t axis = layerNormAxis(ctx);
  Sizes stats = input.sizes;
  for (size_t d = axis; d < stats.size(); ++d)
    stats[d] = ctx.syms().constant(1);
  TensorType statsType = contiguousType(ctx.syms(), statsDType(input), stats, input.device);
  return {result(contiguousType(ctx.syms(), input.dtype, input.sizes, input.device)),
          result(statsType), result(statsType)};
}

/// The output of a batch norm: the input's shape and suggested layout.
TensorType batchNormOutput(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  return suggestedLayoutType(ctx.syms(), input.dtype, input.sizes, input);
}

/// Saved mean and inverse std: one per channel when training, else empty.
TensorType batchNormStats(const ShapeContext &ctx, bool training) {
  const TensorType &input = ctx.tensor("input");
  if (training && input.rank() < 2)
    shapeFail("batch norm needs an input with a channel dimension");
  const SymExpr *n = training ? input.sizes[1] : ctx.syms().constant(0);
  return contiguousType(ctx.syms(), statsDType(input), {n}, input.device);
}

std::vector<Type> batchNorm(const ShapeContext &ctx) { return one(batchNormOutput(ctx)); }

/// native_batch_norm, _native_batch_norm_legit(.no_stats, _no_training).
std::vector<Type> nativeBatchNorm(const ShapeContext &ctx) {
  TensorType stats = batchNormStats(ctx, ctx.boolean("training", false));
  return {result(batchNormOutput(ctx)), result(stats),
          result(stats)};
}

/// _native_batch_norm_legit_functional: also the updated running stats.
std::vector<Type> functionalBatchNorm(const ShapeContext &ctx) {
  std::vector<Type> out = nativeBatchNorm(ctx);
  for (std::string_view name : {"running_mean", "running_var"}) {
    const TensorType &t = ctx.tensor(name);
    out.push_back(result(contiguousType(ctx.syms(), t.dtype, t.sizes, t.device)));
  }
  return out;
}

/// _batch_norm_with_update: training-mode statistics and the reserve
/// space, empty on the CPU.
std::vector<Type> batchNormWithUpdate(const ShapeContext &ctx) {
  TensorType stats = batchNormStats(ctx, true);
  TensorType reserve = contiguousType(ctx.syms(), DType::UInt8, {ctx.syms().constant(0)},
                                      ctx.tensor("input").device);
  return {result(batchNormOutput(ctx)), result(stats), result(stats), result(reserve)};
}

std::vector<Type> groupNorm(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  if (input.rank() < 2)
    shapeFail("group_norm needs an input with a channel dimension");
  int64_t groups = ctx.integer("num_groups");
  if (groups <= 0 || (input.sizes[1]->isConst() && input.sizes[1]->constant() % groups != 0))
    shapeFail("group_norm: the channels do not split into " + std::to_string(groups) + " groups");
  return one(suggestedLayoutType(ctx.syms(), input.dtype, input.sizes, input));
}

/// native_group_norm: the output, and the mean and rstd per sample and group.
std::vector<Type> nativeGroupNorm(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  SymContext &syms = ctx.syms();
  TensorType stats = contiguousType(
      syms, statsDType(input),
      {syms.constant(ctx.integer("N")), syms.constant(ctx.integer("group"))}, input.device);
  return {result(suggestedLayoutType(syms, input.dtype, input.sizes, input)),
          result(stats), result(stats)};
}

//===----------------------------------------------------------------------===//
// Attention and losses
//===----------------------------------------------------------------------===//

/// scaled_dot_product_attention: query's shape with value's last size. torch
/// allocates the output like the query (empty_like), so it keeps the
/// query's dimension order.
std::vector<Type> attention(const ShapeContext &ctx) {
  const TensorType &query = ctx.tensor("query"), &key = ctx.tensor("key"),
                   &value = ctx.tensor("value");
  if (query.rank() < 2 || key.rank() < 2 || value.rank() < 2)
    shapeFail("attention needs query, key and value of at least 2 dimensions");
  checkSameSize(ctx.syms(), query.sizes.back(), key.sizes.back(), "attention query and key");
  checkSameSize(ctx.syms(), key.sizes[key.rank() - 2], value.sizes[value.rank() - 2],
                "attention key and value");
  Sizes sizes = query.sizes;
  sizes.back() = value.sizes.back();
  if (sizes == query.sizes)
    return one(preservedLayoutType(ctx.syms(), query, query.dtype));
  return one(contiguousType(ctx.syms(), query.dtype, sizes, query.device));
}

/// torch's Reduction enum: 0 none, 1 mean, 2 sum.
bool reducesLoss(const ShapeContext &ctx) { return ctx.integer("reduction", 1) != 0; }

std::vector<Type> mseLoss(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self"), &target = ctx.tensor("target");
  Sizes sizes = broadcastSizes(ctx.syms(), self.sizes, target.sizes);
  DType dtype = promoteTypes(self.dtype, target.dtype);
  return one(contiguousType(ctx.syms(), dtype, reducesLoss(ctx) ? Sizes{} : sizes, self.device));
}

/// The per-sample loss shape of class scores `self` ([N, C, d...] or [C]):
/// the class dimension goes.
Sizes perSampleSizes(const TensorType &self) {
  Sizes sizes = self.sizes;
  if (sizes.empty())
    shapeFail("a classification loss needs class scores of at least one dimension");
  sizes.erase(sizes.begin() + (self.rank() == 1 ? 0 : 1));
  return sizes;
}

std::vector<Type> crossEntropyLoss(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  Sizes sizes = reducesLoss(ctx) ? Sizes{} : perSampleSizes(self);
  return one(contiguousType(ctx.syms(), self.dtype, sizes, self.device));
}

std::vector<Type> nllLoss(const ShapeContext &ctx) { return crossEntropyLoss(ctx); }

/// nll_loss_forward, nll_loss2d_forward: the loss and the total weight.
std::vector<Type> nllLossForward(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return {nllLoss(ctx)[0],
          result(contiguousType(ctx.syms(), self.dtype, {}, self.device))};
}

constexpr ShapeEntry kEntries[] = {
    {ops::aten__adaptive_avg_pool2d_default, adaptiveAvgPool2d},
    {ops::aten__batch_norm_with_update_default, batchNormWithUpdate},
    {ops::aten__native_batch_norm_legit_default, nativeBatchNorm},
    {ops::aten__native_batch_norm_legit_no_stats, nativeBatchNorm},
    {ops::aten__native_batch_norm_legit_functional_default, functionalBatchNorm},
    {ops::aten__native_batch_norm_legit_no_training_default, nativeBatchNorm},
    {ops::aten__weight_norm_default, weightNorm},
    {ops::aten_adaptive_avg_pool2d_default, adaptiveAvgPool2d},
    {ops::aten_addmm_default, addmm},
    {ops::aten_avg_pool2d_default, avgPool2d},
    {ops::aten_baddbmm_default, baddbmm},
    {ops::aten_batch_norm_default, batchNorm},
    {ops::aten_bmm_default, bmm},
    {ops::aten_conv1d_default, convolution},
    {ops::aten_conv1d_padding, convolutionPadded},
    {ops::aten_conv2d_default, convolution},
    {ops::aten_conv2d_padding, convolutionPadded},
    {ops::aten_conv3d_default, convolution},
    {ops::aten_conv3d_padding, convolutionPadded},
    {ops::aten_conv_transpose1d_default, convolutionTransposed},
    {ops::aten_conv_transpose2d_input, convolutionTransposed},
    {ops::aten_conv_transpose3d_input, convolutionTransposed},
    {ops::aten_convolution_default, convolution},
    {ops::aten_cross_entropy_loss_default, crossEntropyLoss},
    {ops::aten_einsum_default, einsum},
    {ops::aten_group_norm_default, groupNorm},
    {ops::aten_layer_norm_default, layerNorm},
    {ops::aten_linear_default, linear},
    {ops::aten_matmul_default, matmul},
    {ops::aten_max_pool2d_default, maxPool2d},
    {ops::aten_max_pool2d_with_indices_default, maxPool2dWithIndices},
    {ops::aten_im2col_default, im2col},
    {ops::aten_mm_default, mm},
    {ops::aten_mse_loss_default, mseLoss},
    {ops::aten_native_batch_norm_default, nativeBatchNorm},
    {ops::aten_native_group_norm_default, nativeGroupNorm},
    {ops::aten_native_layer_norm_default, nativeLayerNorm},
    {ops::aten_nll_loss_default, nllLoss},
    {ops::aten_nll_loss2d_forward_default, nllLossForward},
    {ops::aten_nll_loss_forward_default, nllLossForward},
    {ops::aten_nll_loss_nd_default, nllLoss},
    {ops::aten_scaled_dot_product_attention_default, attention},    {ops::gc_qconvolution_default, quantizedConvolution},
    {ops::gc_qlinear_default, quantizedLinear},
};

} // namespace

void registerNNShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
