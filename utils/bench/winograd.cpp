//===- winograd.cpp - oneDNN's Winograd 3x3 convolutions beside direct ----===//
//
// Times oneDNN's float32 forward-inference convolution with the direct and
// the Winograd algorithm on the 3x3, stride-1, pad-1 convolutions of
// resnet18/50 and VGG-16 at batch 1, and measures each algorithm's error
// against a float64 reference on the same data (post-ReLU-like sources in
// [0, 1), Kaiming-scaled weights, a bias, a ReLU post-op: the shape of a
// folded conv + batch norm + relu).
//
//   winograd-bench [--nets resnet|vgg|all] [--sources relu|signed] [--runs N]
//                  [--threads T] [--cold]
//
// --cold writes 64 MiB (twice the development machine's last-level cache)
// before every run, untimed, so that the run reads its weights and
// activations from memory, as a layer of a whole model does: Winograd's
// transformed weights are 16/9 (F(2x2,3x3)) or 4 (F(4x4,3x3)) times the
// size of the direct algorithm's, which costs it where they come from
// memory.
// --sources signed draws the sources from [-1, 1) instead (a convolution
// that reads a residual sum or an input image, not a ReLU's result).
// The direct algorithm runs as gc runs it: channels-last activations as
// given, weights in the layout the primitive picks (reordered once). oneDNN
// 2.6's Winograd takes only blocked activations, so its time is given twice:
// the primitive alone, and with the reorders from and to channels-last that
// gc would run around it ("+reorders"). The two are timed alternately, one
// run each in turn, and the median of the runs is printed. Pin the process
// (taskset) and set OMP_NUM_THREADS, or --threads, for stable numbers.
//
// Error columns: the largest absolute difference from the float64 result,
// and that divided by the largest |reference| (gc's model checks allow 1e-3
// of max(1, |out|max)).
//
//===----------------------------------------------------------------------===//
#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Dims = memory::dims;

struct Shape {
  const char *net;
  int64_t c, k, hw; ///< in channels, out channels, height = width
};

// Every distinct 3x3 stride-1 shape of the nets at 224x224 (resnet18's are
// resnet50's, which keep the channel count through the 3x3).
const Shape kShapes[] = {
    {"resnet", 64, 64, 56},   {"resnet", 128, 128, 28}, {"resnet", 256, 256, 14},
    {"resnet", 512, 512, 7},  {"vgg", 3, 64, 224},      {"vgg", 64, 64, 224},
    {"vgg", 64, 128, 112},    {"vgg", 128, 128, 112},   {"vgg", 128, 256, 56},
    {"vgg", 256, 256, 56},    {"vgg", 256, 512, 28},    {"vgg", 512, 512, 28},
    {"vgg", 512, 512, 14},
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// relu(conv(src, wei) + bias) in float64, NCHW / OIHW, pad 1.
std::vector<double> reference(const Shape &s, const std::vector<float> &src,
                              const std::vector<float> &wei, const std::vector<float> &bias) {
  int64_t n = s.hw;
  std::vector<double> out(s.k * n * n);
#pragma omp parallel for
  for (int64_t o = 0; o < s.k; ++o) {
    double *dst = &out[o * n * n];
    std::fill(dst, dst + n * n, double(bias[o]));
    for (int64_t i = 0; i < s.c; ++i)
      for (int64_t kh = 0; kh < 3; ++kh)
        for (int64_t kw = 0; kw < 3; ++kw) {
          double w = wei[((o * s.c + i) * 3 + kh) * 3 + kw];
          for (int64_t y = 0; y < n; ++y) {
            int64_t iy = y + kh - 1;
            if (iy < 0 || iy >= n)
              continue;
            const float *row = &src[(i * n + iy) * n];
            int64_t x0 = std::max<int64_t>(0, 1 - kw), x1 = std::min<int64_t>(n, n + 1 - kw);
            for (int64_t x = x0; x < x1; ++x)
              dst[y * n + x] += w * row[x + kw - 1];
          }
        }
    for (int64_t p = 0; p < n * n; ++p)
      dst[p] = std::max(dst[p], 0.0);
  }
  return out;
}

/// One algorithm's primitive on the shape, with the memories it runs on.
struct Conv {
  dnnl::convolution_forward prim;
  std::string impl;
  memory src, wei, bias, dst;           ///< in the primitive's layouts
  std::optional<dnnl::reorder> in, out; ///< from and to the channels-last tensors
};

std::optional<Conv> makeConv(const Shape &s, dnnl::algorithm alg, bool channelsLast,
                             const dnnl::engine &eng, dnnl::stream &stream, memory &userSrc,
                             memory &userWei, memory &userBias, memory &userDst) {
  auto dt = memory::data_type::f32;
  Dims act = {1, s.c, s.hw, s.hw}, res = {1, s.k, s.hw, s.hw}, w = {s.k, s.c, 3, 3};
  Tag actTag = channelsLast ? Tag::nhwc : Tag::any;
  dnnl::post_ops po;
  dnnl::primitive_attr attr;
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  memory::desc srcD(act, dt, actTag), weiD(w, dt, Tag::any), biasD({s.k}, dt, Tag::a),
      dstD(res, dt, actTag);
  auto prop = dnnl::prop_kind::forward_inference;
  try {
#if DNNL_VERSION_MAJOR >= 3
    po.append_eltwise(dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
    pd.emplace(eng, prop, alg, srcD, weiD, biasD, dstD, Dims{1, 1}, Dims{0, 0}, Dims{1, 1},
               Dims{1, 1}, attr);
#else
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
    pd.emplace(dnnl::convolution_forward::desc(prop, alg, srcD, weiD, biasD, dstD, {1, 1}, {0, 0},
                                               {1, 1}, {1, 1}),
               attr, eng);
#endif
  } catch (const dnnl::error &) {
    return std::nullopt;
  }
  Conv c{dnnl::convolution_forward(*pd), pd->impl_info_str(), userSrc,
         memory(pd->weights_desc(), eng), userBias, userDst, {}, {}};
  dnnl::reorder(userWei, c.wei).execute(stream, userWei, c.wei);
  if (pd->src_desc() != userSrc.get_desc()) {
    c.src = memory(pd->src_desc(), eng);
    c.in = dnnl::reorder(userSrc, c.src);
  }
  if (pd->dst_desc() != userDst.get_desc()) {
    c.dst = memory(pd->dst_desc(), eng);
    c.out = dnnl::reorder(c.dst, userDst);
  }
  stream.wait();
  return c;
}

/// Evicts the caches' contents by writing `evict` on every thread (empty:
/// does nothing).
void evictCaches(std::vector<char> &evict) {
  static char value = 0;
  ++value;
  int64_t n = evict.size(), chunk = 1 << 20;
#pragma omp parallel for
  for (int64_t i = 0; i < n; i += chunk)
    std::fill(evict.begin() + i, evict.begin() + std::min(n, i + chunk), value);
}

/// Runs `c`; with `reorders`, the channels-last source is reordered in and
/// the result out as well. Returns the seconds taken.
double run(Conv &c, bool reorders, dnnl::stream &stream, memory &userSrc, memory &userDst,
           std::vector<char> &evict) {
  evictCaches(evict);
  double t0 = now();
  if (reorders && c.in)
    c.in->execute(stream, userSrc, c.src);
  c.prim.execute(stream, {{DNNL_ARG_SRC, c.src},
                          {DNNL_ARG_WEIGHTS, c.wei},
                          {DNNL_ARG_BIAS, c.bias},
                          {DNNL_ARG_DST, c.dst}});
  if (reorders && c.out)
    c.out->execute(stream, c.dst, userDst);
  stream.wait();
  return now() - t0;
}

struct Error {
  double abs = 0, rel = 0;
};

/// The channels-last result against the NCHW float64 reference.
Error error(const Shape &s, const memory &userDst, const std::vector<double> &ref) {
  const float *got = static_cast<const float *>(userDst.get_data_handle());
  int64_t n = s.hw;
  double maxErr = 0, maxRef = 0;
  for (int64_t o = 0; o < s.k; ++o)
    for (int64_t p = 0; p < n * n; ++p) {
      double r = ref[o * n * n + p];
      maxErr = std::max(maxErr, std::fabs(got[p * s.k + o] - r));
      maxRef = std::max(maxRef, std::fabs(r));
    }
  return {maxErr, maxErr / maxRef};
}

int usage(const char *why) {
  std::fprintf(stderr,
               "winograd-bench: %s\nusage: winograd-bench [--nets resnet|vgg|all] [--sources relu|signed] "
               "[--runs N] [--threads T] [--cold]\n",
               why);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string nets = "resnet";
  bool signedSrc = false, cold = false;
  int runs = 51, threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--cold") {
      cold = true;
      continue;
    }
    if (i + 1 >= argc)
      return usage(("missing value of '" + arg + "'").c_str());
    std::string v = argv[++i];
    if (arg == "--nets" && (v == "resnet" || v == "vgg" || v == "all"))
      nets = v;
    else if (arg == "--sources" && (v == "relu" || v == "signed"))
      signedSrc = v == "signed";
    else if (arg == "--runs" && std::atoi(v.c_str()) > 0)
      runs = std::atoi(v.c_str());
    else if (arg == "--threads" && std::atoi(v.c_str()) > 0)
      threads = std::atoi(v.c_str());
    else
      return usage(("bad option '" + arg + " " + v + "'").c_str());
  }
  if (threads)
    omp_set_num_threads(threads);
  std::vector<char> evict(cold ? 64 << 20 : 0);

  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  std::mt19937 gen(0);
  std::printf("threads %d, median of %d runs%s, ms; error: max |got - float64|, and that / max "
              "|float64|\n\n",
              omp_get_max_threads(), runs, cold ? " from cold caches" : "");
  std::printf("| net | C->K | HxW | direct ms | wino ms | wino+reorders ms | speed-up | direct "
              "err | wino err | direct rel | wino rel | direct / wino impl |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Shape &s : kShapes) {
    if (nets != "all" && nets != s.net)
      continue;
    auto dt = memory::data_type::f32;
    std::vector<float> src(s.c * s.hw * s.hw), wei(s.k * s.c * 9), bias(s.k);
    std::uniform_real_distribution<float> unit(0.f, 1.f);
    std::normal_distribution<float> normal(0.f, std::sqrt(2.f / (9.f * s.c)));
    for (float &x : src)
      x = signedSrc ? 2.f * unit(gen) - 1.f : unit(gen);
    for (float &x : wei)
      x = normal(gen);
    for (float &x : bias)
      x = 0.1f * (unit(gen) - 0.5f);
    std::vector<double> ref = reference(s, src, wei, bias);

    // The user's tensors: the source and result channels-last, weights OIHW.
    memory nchwSrc({{1, s.c, s.hw, s.hw}, dt, Tag::nchw}, eng, src.data());
    memory userSrc({{1, s.c, s.hw, s.hw}, dt, Tag::nhwc}, eng);
    dnnl::reorder(nchwSrc, userSrc).execute(stream, nchwSrc, userSrc);
    memory userWei({{s.k, s.c, 3, 3}, dt, Tag::oihw}, eng, wei.data());
    memory userBias({{s.k}, dt, Tag::a}, eng, bias.data());
    memory userDst({{1, s.k, s.hw, s.hw}, dt, Tag::nhwc}, eng);
    stream.wait();

    std::optional<Conv> direct = makeConv(s, dnnl::algorithm::convolution_direct, true, eng,
                                          stream, userSrc, userWei, userBias, userDst);
    std::optional<Conv> wino = makeConv(s, dnnl::algorithm::convolution_winograd, false, eng,
                                        stream, userSrc, userWei, userBias, userDst);
    if (!direct)
      return std::fprintf(stderr, "winograd-bench: no direct convolution for %ld->%ld\n",
                          long(s.c), long(s.k)),
             1;
    run(*direct, true, stream, userSrc, userDst, evict);
    Error de = error(s, userDst, ref);
    std::printf("| %s | %ld->%ld | %ldx%ld |", s.net, long(s.c), long(s.k), long(s.hw),
                long(s.hw));
    if (!wino) {
      std::vector<double> td;
      for (int r = 0; r < runs; ++r)
        td.push_back(run(*direct, true, stream, userSrc, userDst, evict));
      std::printf(" %.3f | - | - | - | %.2e | - | %.2e | - | %s / none |\n", median(td) * 1e3,
                  de.abs, de.rel, direct->impl.c_str());
      continue;
    }
    run(*wino, true, stream, userSrc, userDst, evict);
    Error we = error(s, userDst, ref);
    std::vector<double> td, tw, twr;
    for (int r = 0; r < runs; ++r) {
      td.push_back(run(*direct, true, stream, userSrc, userDst, evict));
      tw.push_back(run(*wino, false, stream, userSrc, userDst, evict));
      twr.push_back(run(*wino, true, stream, userSrc, userDst, evict));
    }
    double d = median(td), w = median(tw), wr = median(twr);
    std::printf(" %.3f | %.3f | %.3f | %.2f | %.2e | %.2e | %.2e | %.2e | %s / %s |\n", d * 1e3,
                w * 1e3, wr * 1e3, d / wr, de.abs, we.abs, de.rel, we.rel, direct->impl.c_str(),
                wino->impl.c_str());
  }
  return 0;
}
