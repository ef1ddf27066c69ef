//===- PlanBuilder.cpp - Runtime plans from kernels-level modules ---------===//
//
// Sizes become postfix programs over symbol slots; each plan step becomes a
// kernel call, a described oneDNN call, or an op for the fallback
// component, with the buffers it uses. Slots are handed out as symbols are
// first met, kernel symbols first, so the plan depends only on the module.
//
//===----------------------------------------------------------------------===//
#include "gc/Plan/PlanBuilder.h"
#include "gc/Plan/StepWork.h"

#include "gc/IR/ExternOps.h"
#include "gc/IR/KernelCode.h"
#include "gc/IR/Random.h"
#include "gc/IR/TargetOf.h"
#include "gc/Ops/PluginOps.h"

#include "gc/Runtime/RuntimePlan.h"
#include "gc/RuntimeFallback/FallbackPayload.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace gc {

namespace {

namespace fb = plan;
using flatbuffers::Offset;
using Insns = std::vector<fb::SizeInsn>;

static_assert(static_cast<int>(fb::DType::MAX) + 1 == kNumDTypes &&
                  static_cast<int>(fb::DType::Float32) == static_cast<int>(DType::Float32),
              "the plan's dtypes are numbered as gc::DType");

const LoopArg *findArg(const LoopNode &node, std::string_view name) {
  for (const LoopArg &a : node.args)
    if (a.name == name)
      return &a;
  return nullptr;
}

/// An int list argument with `n` entries; a one-entry list stands for all.
std::optional<std::vector<int64_t>> intsArg(const LoopNode &node, std::string_view name,
                                            size_t n) {
  const LoopArg *a = findArg(node, name);
  if (!a)
    return std::nullopt;
  const std::vector<int64_t> &v = a->value.ints;
  if (v.size() == n)
    return v;
  if (v.size() == 1)
    return std::vector<int64_t>(n, v[0]);
  return std::nullopt;
}

int64_t intArg(const LoopNode &node, std::string_view name, int64_t dflt) {
  const LoopArg *a = findArg(node, name);
  return a && !a->value.ints.empty() ? a->value.ints[0] : dflt;
}

fb::PostOpKind postOpKind(PostOp::Kind k) {
  switch (k) {
  case PostOp::Kind::AddBias:
    return fb::PostOpKind::AddBias;
  case PostOp::Kind::Add:
    return fb::PostOpKind::Add;
  case PostOp::Kind::Relu:
    return fb::PostOpKind::Relu;
  case PostOp::Kind::GeluErf:
    return fb::PostOpKind::GeluErf;
  case PostOp::Kind::GeluTanh:
    return fb::PostOpKind::GeluTanh;
  case PostOp::Kind::Swish:
    return fb::PostOpKind::Swish;
  case PostOp::Kind::GatedSilu:
    return fb::PostOpKind::GatedSilu;
  }
  return fb::PostOpKind::AddBias;
}

fb::StepKind stepKind(PlanStep::Kind k) {
  switch (k) {
  case PlanStep::Kind::Kernel:
    return fb::StepKind::Kernel;
  case PlanStep::Kind::Extern:
    return fb::StepKind::Extern;
  case PlanStep::Kind::Fallback:
    return fb::StepKind::Fallback;
  case PlanStep::Kind::Call:
    return fb::StepKind::Call;
  }
  return fb::StepKind::Kernel;
}

fb::BufferKind bufferKind(BufferKind k) {
  switch (k) {
  case BufferKind::Input:
    return fb::BufferKind::Input;
  case BufferKind::Output:
    return fb::BufferKind::Output;
  case BufferKind::Intermediate:
    return fb::BufferKind::Intermediate;
  }
  return fb::BufferKind::Intermediate;
}

fb::DType dtypeOf(DType t) { return static_cast<fb::DType>(t); }

class PlanBuilder {
public:
  PlanBuilder(const Module &m, const PlanOptions &options) : m_(m), options_(options) {}

  Expected<std::string> build() {
    if (m_.level() != Level::Kernels)
      return makeError() << "a runtime plan needs a module at the kernels level, not "
                         << levelName(m_.level());
    // Kernel symbols take the first slots, graph by graph.
    for (const auto &g : m_.loopGraphs())
      for (const std::string &sym : g->plan.symbols)
        slot(sym);
    std::vector<Offset<fb::Weight>> weights;
    for (const Weight &w : m_.weights()) {
      Expected<Offset<fb::Weight>> fw = weight(w);
      if (!fw)
        return fw.error();
      weights.push_back(*fw);
    }
    std::vector<Offset<fb::Graph>> graphs;
    for (size_t i = 0; i < m_.loopGraphs().size(); ++i) {
      Expected<Offset<fb::Graph>> g = graph(*m_.loopGraphs()[i], i);
      if (!g)
        return g.error().withContext("graph @" + m_.loopGraphs()[i]->name);
      graphs.push_back(*g);
    }
    std::vector<Offset<fb::Symbol>> symbols;
    for (const std::string &name : symbolNames_) {
      SymRange r = m_.syms().range(name).value_or(SymRange());
      symbols.push_back(fb::CreateSymbol(fbb_, fbb_.CreateString(name), r.min, r.max));
    }
    int32_t program = -1;
    for (size_t i = 0; i < m_.loopGraphs().size(); ++i)
      if (m_.loopGraphs()[i]->name == kConstantProgramGraph)
        program = static_cast<int32_t>(i);
    std::vector<Offset<fb::PluginUse>> plugins;
    for (const auto &[op, library] : plugins_)
      plugins.push_back(
          fb::CreatePluginUse(fbb_, fbb_.CreateString(op), fbb_.CreateString(library)));
    fb::PlanVersion version(kPlanMajor, kPlanMinor);
    auto root = fb::CreatePlan(fbb_, &version, fbb_.CreateVector(symbols),
                               fbb_.CreateVector(weights), fbb_.CreateVector(graphs), program,
                               plugins.empty() ? 0 : fbb_.CreateVector(plugins));
    fbb_.Finish(root, fb::PlanIdentifier());
    return std::string(reinterpret_cast<const char *>(fbb_.GetBufferPointer()), fbb_.GetSize());
  }

private:
  uint32_t slot(const std::string &name) {
    auto [it, added] = slots_.emplace(name, static_cast<uint32_t>(symbolNames_.size()));
    if (added)
      symbolNames_.push_back(name);
    return it->second;
  }

  /// `e` in postfix: an n-ary sum, product, min or max as n - 1 binary
  /// instructions after its first operand.
  void append(const SymExpr *e, Insns &out) {
    fb::SizeOp op = fb::SizeOp::Add;
    switch (e->kind()) {
    case SymExpr::Kind::Const:
      out.emplace_back(fb::SizeOp::Const, e->constant());
      return;
    case SymExpr::Kind::Symbol:
      out.emplace_back(fb::SizeOp::Symbol, slot(e->symbolName()));
      return;
    case SymExpr::Kind::Add:
      op = fb::SizeOp::Add;
      break;
    case SymExpr::Kind::Mul:
      op = fb::SizeOp::Mul;
      break;
    case SymExpr::Kind::FloorDiv:
      op = fb::SizeOp::FloorDiv;
      break;
    case SymExpr::Kind::Mod:
      op = fb::SizeOp::Mod;
      break;
    case SymExpr::Kind::Min:
      op = fb::SizeOp::Min;
      break;
    case SymExpr::Kind::Max:
      op = fb::SizeOp::Max;
      break;
    }
    auto operands = e->operands();
    append(operands[0], out);
    for (const SymExpr *o : operands.subspan(1)) {
      append(o, out);
      out.emplace_back(op, 0);
    }
  }

  Offset<fb::SizeProgram> program(const Insns &code) {
    return fb::CreateSizeProgram(fbb_, fbb_.CreateVectorOfStructs(code));
  }
  Offset<fb::SizeProgram> program(const SymExpr *e) {
    Insns code;
    append(e, code);
    return program(code);
  }
  Offset<fb::SizeProgram> program(const SizeSum &sum) {
    Insns code{{fb::SizeOp::Const, 0}};
    for (const SizeSum::Term &t : sum.terms) {
      code.emplace_back(fb::SizeOp::Const, t.coefficient);
      for (const SymExpr *f : t.factors) {
        append(f, code);
        code.emplace_back(fb::SizeOp::Mul, 0);
      }
      code.emplace_back(fb::SizeOp::Add, 0);
    }
    return program(code);
  }
  Offset<flatbuffers::Vector<Offset<fb::SizeProgram>>>
  programs(const std::vector<const SymExpr *> &exprs) {
    std::vector<Offset<fb::SizeProgram>> out;
    for (const SymExpr *e : exprs)
      out.push_back(program(e));
    return fbb_.CreateVector(out);
  }

  Offset<fb::View> view(uint32_t buffer, const TensorType &t) {
    auto sizes = programs(t.sizes), strides = programs(t.strides);
    Offset<fb::SizeProgram> offset;
    if (t.storageOffset && !(t.storageOffset->isConst() && t.storageOffset->constant() == 0))
      offset = program(t.storageOffset);
    return fb::CreateView(fbb_, buffer, dtypeOf(t.dtype), sizes, strides, offset);
  }

  Expected<Offset<fb::Weight>> weight(const Weight &w) {
    std::vector<int64_t> sizes, strides;
    for (const auto &[exprs, out] : {std::pair{&w.type.sizes, &sizes}, {&w.type.strides, &strides}})
      for (const SymExpr *e : *exprs) {
        if (!e->isConst())
          return makeError() << "weight '" << w.name << "' has a symbolic layout";
        out->push_back(e->constant());
      }
    const SymExpr *offset = w.type.storageOffset;
    if (offset && !offset->isConst())
      return makeError() << "weight '" << w.name << "' has a symbolic storage offset";
    bool inArchive = options_.archiveSource && w.source == *options_.archiveSource;
    bool computed = m_.weightSources()[w.source].kind == WeightSource::Kind::Program;
    return fb::CreateWeight(fbb_, fbb_.CreateString(w.name), dtypeOf(w.type.dtype),
                            fbb_.CreateVector(sizes), fbb_.CreateVector(strides),
                            offset ? offset->constant() : 0, inArchive, computed ? 0 : w.offset,
                            w.bytes, computed);
  }

  Offset<fb::Binding> binding(const LoopBinding &b, std::string_view role,
                              const std::string &target, const std::string &path, int32_t weight,
                              fb::GeneratorPart generator = fb::GeneratorPart::None) {
    auto name = fbb_.CreateString(b.name);
    auto roleName = fbb_.CreateString(role);
    auto targetName = fbb_.CreateString(target);
    auto v = view(b.buffer, b.type);
    auto pathName = path.empty() ? 0 : fbb_.CreateString(path);
    return fb::CreateBinding(fbb_, name, roleName, targetName, v, weight, generator, pathName);
  }

  /// The oneDNN call of an Extern node, when oneDNN has a primitive for its
  /// op and dtypes (float32, bfloat16 or float16, one for all its tensors,
  /// but that a 16-bit call's result and post-op operands may be float32:
  /// an epilogue widened them, lib/Schedule/PostOps.cpp); otherwise the
  /// step runs on the fallback component.
  Offset<fb::DnnlCall> dnnlCall(const LoopNode &node) {
    if (node.outputs.empty())
      return 0;
    if (findArg(node, "weight_scales"))
      return int8Call(node);
    if (node.outputs.size() != 1 || node.inputs.empty())
      return 0;
    std::vector<bool> postOperand(node.inputs.size());
    for (const PostOp &p : node.postOps)
      if (p.input < node.inputs.size() &&
          (p.kind == PostOp::Kind::AddBias || p.kind == PostOp::Kind::Add))
        postOperand[p.input] = true;
    DType dtype = node.inputs[0].type.dtype;
    if (dtype != DType::Float32 && !isHalfPrecision(dtype))
      return 0;
    auto agrees = [&](DType t, bool widened) {
      return t == dtype || (widened && isHalfPrecision(dtype) && t == DType::Float32);
    };
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (!agrees(node.inputs[i].type.dtype, postOperand[i]))
        return 0;
    if (!agrees(node.outputs[0].type.dtype, true))
      return 0;
    std::vector<fb::PostOp> postOps;
    for (const PostOp &p : node.postOps) {
      if (p.input >= node.inputs.size())
        return 0;
      postOps.emplace_back(postOpKind(p.kind), p.input);
    }
    const ExternOp *ext = externOp(node.op);
    if (!ext)
      return 0;
    if (ext->call == ExternCall::Matmul) {
      std::optional<ProductOperands> operands = productOperands(node);
      if (!operands)
        return 0;
      auto po = fbb_.CreateVectorOfStructs(postOps);
      fb::DnnlCallBuilder d(fbb_);
      d.add_primitive(fb::DnnlPrimitive::Matmul);
      d.add_src(operands->src);
      d.add_weights(operands->weights);
      d.add_post_ops(po);
      std::optional<fb::RmsNormPrologue> norm;
      if (node.rmsNorm) {
        norm.emplace(node.rmsNorm->weight, static_cast<float>(node.rmsNorm->eps));
        d.add_rms_norm(&*norm);
      }
      return d.Finish();
    }
    if (ext->call != ExternCall::Convolution)
      return 0;
    std::optional<uint32_t> x = tensorInput(node, "input"), w = tensorInput(node, "weight");
    if (!x || !w || intArg(node, "transposed", 0) != 0 || node.inputs[*x].type.rank() < 3)
      return 0;
    size_t spatial = node.inputs[*x].type.rank() - 2;
    auto stride = intsArg(node, "stride", spatial), padding = intsArg(node, "padding", spatial);
    auto dilation = intsArg(node, "dilation", spatial);
    if (!stride || !padding || !dilation)
      return 0;
    std::optional<uint32_t> bias = tensorInput(node, "bias");
    auto st = fbb_.CreateVector(*stride), pa = fbb_.CreateVector(*padding);
    auto di = fbb_.CreateVector(*dilation);
    auto po = fbb_.CreateVectorOfStructs(postOps);
    bool winograd =
        dtype == DType::Float32 && targetOf(m_).convAlgorithm == ConvAlgorithm::Auto;
    return fb::CreateDnnlCall(fbb_, fb::DnnlPrimitive::Convolution, *x, *w,
                              bias ? static_cast<int32_t>(*bias) : -1, st, pa, di,
                              intArg(node, "groups", 1), po, 0, 0, 1, 0, winograd);
  }

  /// The oneDNN call of an int8 Extern (gc.qconvolution, gc.qlinear: the
  /// rows whose schema has weight_scales): the scales are the accumulator's
  /// (input scale x weight scale); the bias, ReLU and the post-ops folded
  /// into a float32 result follow as post-ops, and an integer result is
  /// requantized last. Anything else runs on the fallback component.
  Offset<fb::DnnlCall> int8Call(const LoopNode &node) {
    const ExternOp *ext = externOp(node.op);
    std::optional<uint32_t> x = tensorInput(node, "input"), w = tensorInput(node, "weight");
    const LoopArg *scaleArg = findArg(node, "input_scale");
    if (!ext || !x || !w || !scaleArg || scaleArg->value.floats.empty() ||
        node.outputs.size() != 1)
      return 0;
    DType out = node.outputs[0].type.dtype;
    bool requantized = out != DType::Float32;
    if (requantized && !node.postOps.empty())
      return 0;
    double inputScale = scaleArg->value.floats[0];
    std::vector<float> scales;
    for (double s : findArg(node, "weight_scales")->value.floats)
      scales.push_back(static_cast<float>(inputScale * s));
    std::vector<fb::PostOp> postOps;
    if (std::optional<uint32_t> bias = tensorInput(node, "bias"))
      postOps.emplace_back(fb::PostOpKind::AddBias, *bias);
    if (intArg(node, "relu", 0))
      postOps.emplace_back(fb::PostOpKind::Relu, 0);
    for (const PostOp &p : node.postOps) {
      if (p.input >= node.inputs.size() || node.inputs[p.input].type.dtype != DType::Float32)
        return 0;
      postOps.emplace_back(postOpKind(p.kind), p.input);
    }
    double outScale = 1;
    if (const LoopArg *a = findArg(node, "output_scale"); a && !a->value.floats.empty())
      outScale = a->value.floats[0];
    auto po = fbb_.CreateVectorOfStructs(postOps);
    auto sc = fbb_.CreateVector(scales);
    Offset<flatbuffers::Vector<int64_t>> st, pa, di;
    int64_t groups = 1;
    if (ext->call == ExternCall::Convolution) {
      size_t spatial = node.inputs[*x].type.rank() - 2;
      auto stride = intsArg(node, "stride", spatial), padding = intsArg(node, "padding", spatial);
      auto dilation = intsArg(node, "dilation", spatial);
      if (node.inputs[*x].type.rank() < 3 || !stride || !padding || !dilation)
        return 0;
      st = fbb_.CreateVector(*stride);
      pa = fbb_.CreateVector(*padding);
      di = fbb_.CreateVector(*dilation);
      groups = intArg(node, "groups", 1);
    } else if (ext->call != ExternCall::Matmul) {
      return 0;
    }
    fb::DnnlCallBuilder d(fbb_);
    d.add_primitive(ext->call == ExternCall::Matmul ? fb::DnnlPrimitive::Matmul
                                                    : fb::DnnlPrimitive::Convolution);
    d.add_src(*x);
    d.add_weights(*w);
    if (ext->call == ExternCall::Convolution) {
      d.add_stride(st);
      d.add_padding(pa);
      d.add_dilation(di);
      d.add_groups(groups);
    }
    d.add_post_ops(po);
    d.add_scales(sc);
    d.add_src_zero_point(static_cast<int32_t>(intArg(node, "input_zero_point", 0)));
    if (requantized) {
      d.add_dst_scale(static_cast<float>(outScale));
      d.add_dst_zero_point(static_cast<int32_t>(intArg(node, "output_zero_point", 0)));
    }
    return d.Finish();
  }

  /// The fused attention step of an Extern whose row calls Attention (an
  /// inference compile keeps such an op whole where its device's fused
  /// attention takes it: runsWhole). The default scale needs a static head
  /// dimension; without one the fallback runs the call.
  Offset<fb::AttentionCall> attentionCall(const LoopNode &node) {
    const ExternOp *ext = externOp(node.op);
    if (!ext || ext->call != ExternCall::Attention)
      return 0;
    std::optional<uint32_t> q = tensorInput(node, "query"), k = tensorInput(node, "key"),
                            v = tensorInput(node, "value"), mask = tensorInput(node, "attn_mask");
    if (!q || !k || !v)
      return 0;
    double scale;
    const LoopArg *given = findArg(node, "scale");
    if (given && given->value.kind == ArgKind::Float && !given->value.floats.empty()) {
      scale = given->value.floats[0];
    } else {
      const TensorType &query = node.inputs[*q].type;
      const SymExpr *headDim = query.sizes.empty() ? nullptr : query.sizes.back();
      if (!headDim || !headDim->isConst() || headDim->constant() <= 0)
        return 0;
      scale = 1 / std::sqrt(static_cast<double>(headDim->constant()));
    }
    return fb::CreateAttentionCall(fbb_, *q, *k, *v, mask ? static_cast<int32_t>(*mask) : -1,
                                   intArg(node, "is_causal", 0) != 0, scale);
  }

  /// One loop point's cost for the runtime's threading choice: the points
  /// of each node times its body's operations.
  Insns work(const LoopGraph &g, const KernelGroup &k) {
    Insns code{{fb::SizeOp::Const, 0}};
    for (uint32_t n : k.nodes) {
      const LoopNode &node = g.nodes[n];
      code.emplace_back(fb::SizeOp::Const, static_cast<int64_t>(1 + node.body.ops.size()));
      for (const auto *ranges : {&node.ranges, &node.reductionRanges})
        for (const SymExpr *r : *ranges) {
          append(r, code);
          code.emplace_back(fb::SizeOp::Mul, 0);
        }
      code.emplace_back(fb::SizeOp::Add, 0);
    }
    return code;
  }

  /// A GPU kernel's blocks: the points of its parallel ranges, one per
  /// block (BlockPerPoint) or one vector of vectorWidth points per thread
  /// (ThreadPerPoint), at most kMaxGpuGrid blocks (the kernels stride over
  /// the rest). A thread takes pointsPerThread vectors where that leaves
  /// kFillBlocks blocks, fewer where it would not: the kernel spaces a
  /// thread's vectors the grid's width apart, so any grid covers the points
  /// evenly, and a small run of a symbolic size keeps enough threads to
  /// fill the GPU (1024 blocks of 256 threads are about all an H100 or
  /// H200 holds at once: 132 SMs of 8 such blocks).
  Insns gpuGrid(const KernelGroup &k) {
    constexpr int64_t kMaxGpuGrid = int64_t(1) << 20;
    constexpr int64_t kFillBlocks = 1024;
    Insns points{{fb::SizeOp::Const, 1}};
    for (const SymExpr *r : k.parallelRanges) {
      append(r, points);
      points.emplace_back(fb::SizeOp::Mul, 0);
    }
    // ceil(points / per), on the stack.
    auto blocksOf = [&](Insns &code, int64_t per) {
      code.insert(code.end(), points.begin(), points.end());
      code.emplace_back(fb::SizeOp::Const, per - 1);
      code.emplace_back(fb::SizeOp::Add, 0);
      code.emplace_back(fb::SizeOp::Const, per);
      code.emplace_back(fb::SizeOp::FloorDiv, 0);
    };
    Insns code = points;
    if (k.mapping == GpuMapping::ThreadPerPoint) {
      int64_t vector = std::max<int64_t>(1, k.blockThreads) * std::max<int64_t>(1, k.vectorWidth);
      int64_t unroll = std::max<int64_t>(1, k.pointsPerThread);
      code.clear();
      blocksOf(code, vector * unroll);
      if (unroll > 1) {
        blocksOf(code, vector);
        code.emplace_back(fb::SizeOp::Const, kFillBlocks);
        code.emplace_back(fb::SizeOp::Min, 0);
        code.emplace_back(fb::SizeOp::Max, 0);
      }
    }
    code.emplace_back(fb::SizeOp::Const, kMaxGpuGrid);
    code.emplace_back(fb::SizeOp::Min, 0);
    return code;
  }

  /// cond and while_loop: the plan graphs their graph arguments name, in
  /// schema order, and how many of the node's inputs are carried. The
  /// node's inputs are its tensor arguments in schema order (callNode in
  /// lib/Lower), which is the order CallStep documents.
  Expected<Offset<fb::CallStep>> callStep(const LoopNode &node) {
    std::vector<uint32_t> graphs;
    uint32_t carried = 0;
    for (const LoopArg &a : node.args) {
      if (a.value.kind == ArgKind::Graph) {
        const std::string &name = a.value.strings.at(0);
        auto it = std::find_if(m_.loopGraphs().begin(), m_.loopGraphs().end(),
                               [&](const auto &g) { return g->name == name; });
        if (it == m_.loopGraphs().end())
          return makeError() << "node '" << node.name << "' calls graph @" << name
                             << ", which the module does not have";
        graphs.push_back(static_cast<uint32_t>(it - m_.loopGraphs().begin()));
      }
      if (a.name == "carried_inputs")
        carried = static_cast<uint32_t>(a.value.ints.size());
    }
    fb::CallKind kind = node.op == ops::higher_order_cond ? fb::CallKind::Cond
                                                          : fb::CallKind::WhileLoop;
    return fb::CreateCallStep(fbb_, kind, fbb_.CreateVector(graphs), carried);
  }

  Expected<Offset<fb::Step>> step(const LoopGraph &g, const PlanStep &ps,
                                  const std::vector<uint32_t> &uses) {
    const Plan &plan = g.plan;
    std::string name;
    Offset<void> detail;
    fb::StepDetail type;
    fb::StepKind kind = stepKind(ps.kind);
    if (ps.kind == PlanStep::Kind::Kernel) {
      if (ps.index >= plan.kernels.size())
        return makeError() << "a step runs missing kernel " << ps.index;
      const KernelGroup &k = plan.kernels[ps.index];
      for (uint32_t n : k.nodes)
        if (n >= g.nodes.size())
          return makeError() << "kernel '" << k.name << "' runs missing node " << n;
      name = k.name;
      auto entry = fbb_.CreateString(k.name);
      Offset<fb::SizeProgram> range;
      if (!k.parallelRanges.empty())
        range = program(k.parallelRanges[0]);
      auto w = program(work(g, k));
      Offset<fb::SizeProgram> grid;
      if (k.mapping != GpuMapping::None)
        grid = program(gpuGrid(k));
      detail = fb::CreateKernelStep(fbb_, entry, range, w, grid, k.blockThreads).Union();
      type = fb::StepDetail::KernelStep;
    } else {
      if (ps.index >= g.nodes.size())
        return makeError() << "a step runs missing node " << ps.index;
      const LoopNode &node = g.nodes[ps.index];
      name = node.name;
      auto op = fbb_.CreateString(opString(node.op));
      std::vector<Offset<fb::View>> ins, outs;
      for (const BufferView &v : node.inputs)
        ins.push_back(view(v.buffer, v.type));
      for (const BufferView &v : node.outputs)
        outs.push_back(view(v.buffer, v.type));
      auto inputs = fbb_.CreateVector(ins), outputs = fbb_.CreateVector(outs);
      Offset<fb::DnnlCall> dnnl;
      Offset<fb::AttentionCall> attention;
      if (ps.kind == PlanStep::Kind::Extern) {
        dnnl = dnnlCall(node);
        attention = attentionCall(node);
      }
      Offset<fb::CallStep> call;
      Offset<flatbuffers::Vector<uint8_t>> fallback;
      Offset<fb::PluginCall> plugin;
      if (ps.kind == PlanStep::Kind::Call) {
        Expected<Offset<fb::CallStep>> c = callStep(node);
        if (!c)
          return c.error();
        call = *c;
      } else if (const PluginOp *p = pluginOpOf(node.op)) {
        plugin = pluginCall(node, *p);
        kind = fb::StepKind::Extern;
      } else {
        std::string payload = encodeFallbackPayload(node);
        fallback = fbb_.CreateVector(reinterpret_cast<const uint8_t *>(payload.data()),
                                     payload.size());
      }
      detail = fb::CreateOpStep(fbb_, op, inputs, outputs, dnnl, fallback, call, attention,
                                plugin)
                   .Union();
      type = fb::StepDetail::OpStep;
    }
    std::vector<fb::InplacePair> inplace;
    for (const InplacePair &p : ps.inplace)
      inplace.emplace_back(p.output, p.input);
    auto stepName = fbb_.CreateString(name);
    auto usesVec = fbb_.CreateVector(uses);
    auto inplaceVec = fbb_.CreateVectorOfStructs(inplace);
    StepWork work = stepWork(g, ps);
    auto flops = program(work.flops), bytes = program(work.bytes);
    auto sourcesVec = sources(g, ps);
    return fb::CreateStep(fbb_, stepName, kind, type, detail, usesVec, inplaceVec, flops, bytes,
                          sourcesVec);
  }

  /// A plugin op's call: its scalar arguments in schema order. The plan
  /// records the op and its plugin's file name once.
  Offset<fb::PluginCall> pluginCall(const LoopNode &node, const PluginOp &p) {
    std::vector<Arg> args;
    for (const LoopArg &a : node.args)
      args.push_back(a.value);
    std::vector<fb::PluginScalar> scalars;
    for (const gc_plugin_scalar &v : pluginScalars(args))
      scalars.emplace_back(v.i, v.f);
    plugins_.emplace(p.name, p.library->fileName);
    return fb::CreatePluginCall(fbb_, fbb_.CreateString(p.name),
                                fbb_.CreateVectorOfStructs(scalars));
  }

  /// The distinct source locations of the step's loop nodes, in node order;
  /// strings are shared, since many steps come from one module.
  Offset<flatbuffers::Vector<Offset<fb::Source>>> sources(const LoopGraph &g, const PlanStep &ps) {
    std::vector<uint32_t> nodes;
    if (ps.kind == PlanStep::Kind::Kernel)
      nodes = g.plan.kernels[ps.index].nodes;
    else
      nodes = {ps.index};
    std::vector<const SourceLoc *> locs;
    for (uint32_t n : nodes)
      if (const SourceLoc *l = g.nodes[n].loc; l && std::find(locs.begin(), locs.end(), l) == locs.end())
        locs.push_back(l);
    if (locs.empty())
      return {};
    std::vector<Offset<fb::Source>> out;
    for (const SourceLoc *l : locs)
      out.push_back(fb::CreateSource(fbb_, fbb_.CreateSharedString(l->file), l->line,
                                     fbb_.CreateSharedString(l->function),
                                     fbb_.CreateSharedString(l->modulePath),
                                     fbb_.CreateSharedString(l->moduleClass)));
    return fbb_.CreateVector(out);
  }

  Expected<Offset<fb::Graph>> graph(const LoopGraph &g, size_t index) {
    size_t numBuffers = g.buffers.size();
    auto inRange = [&](uint32_t b) { return b < numBuffers; };
    // What the runtime treats as constant: inputs bound to parameters and
    // constants.
    std::vector<bool> weightBuffer(numBuffers, false);
    std::vector<int32_t> inputWeight;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const LoopBinding &b = g.inputs[i];
      InputKind kind = i < g.inputSpecs.size() ? g.inputSpecs[i].kind : InputKind::UserInput;
      if (!inRange(b.buffer))
        return makeError() << "input '" << b.name << "' is bound to missing buffer " << b.buffer;
      inputWeight.push_back(-1);
      if (kind == InputKind::UserInput || isGeneratorInput(kind))
        continue;
      const Weight *w = m_.weight(g.inputSpecs[i].target);
      if (!w)
        return makeError() << "the module has no weight '" << g.inputSpecs[i].target
                           << "' for input '" << b.name << "'";
      inputWeight.back() = static_cast<int32_t>(w - m_.weights().data());
      weightBuffer[b.buffer] =
          weightBuffer[b.buffer] || kind == InputKind::Parameter || kind == InputKind::Constant;
    }
    for (const LoopBinding &b : g.outputs)
      if (!inRange(b.buffer))
        return makeError() << "output '" << b.name << "' is bound to missing buffer " << b.buffer;
    for (const LoopNode &n : g.nodes)
      for (const auto *views : {&n.inputs, &n.outputs})
        for (const BufferView &v : *views)
          if (!inRange(v.buffer))
            return makeError() << "node '" << n.name << "' has a view of missing buffer "
                               << v.buffer;

    std::vector<Offset<fb::Buffer>> buffers;
    for (size_t b = 0; b < numBuffers; ++b) {
      const Buffer &buf = g.buffers[b];
      auto name = fbb_.CreateString(buf.name);
      auto sizes = programs(buf.sizes), strides = programs(buf.strides);
      fb::BufferKind kind = weightBuffer[b] ? fb::BufferKind::Weight : bufferKind(buf.kind);
      buffers.push_back(fb::CreateBuffer(fbb_, name, kind, dtypeOf(buf.dtype), sizes, strides));
    }
    std::vector<Offset<fb::Binding>> inputs, outputs;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      InputKind kind = i < g.inputSpecs.size() ? g.inputSpecs[i].kind : InputKind::UserInput;
      std::string target = i < g.inputSpecs.size() ? g.inputSpecs[i].target : "";
      std::string path = i < g.inputSpecs.size() ? g.inputSpecs[i].path : "";
      fb::GeneratorPart generator = kind == InputKind::RngSeed     ? fb::GeneratorPart::Seed
                                    : kind == InputKind::RngOffset ? fb::GeneratorPart::Offset
                                                                   : fb::GeneratorPart::None;
      inputs.push_back(
          binding(g.inputs[i], inputKindName(kind), target, path, inputWeight[i], generator));
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      OutputKind kind = i < g.outputSpecs.size() ? g.outputSpecs[i].kind : OutputKind::UserOutput;
      std::string target = i < g.outputSpecs.size() ? g.outputSpecs[i].target : "";
      std::string path = i < g.outputSpecs.size() ? g.outputSpecs[i].path : "";
      outputs.push_back(binding(g.outputs[i], outputKindName(kind), target, path, -1));
    }
    ArenaProblem problem = arenaProblem(g);
    std::vector<Offset<fb::Step>> steps;
    for (size_t s = 0; s < g.plan.steps.size(); ++s) {
      Expected<Offset<fb::Step>> st = step(g, g.plan.steps[s], problem.uses[s]);
      if (!st)
        return st.error();
      steps.push_back(*st);
    }
    std::vector<uint32_t> kernelSymbols;
    for (const std::string &sym : g.plan.symbols)
      kernelSymbols.push_back(slot(sym));
    std::vector<fb::Placement> placements;
    for (const BufferPlacement &p : g.plan.placements) {
      if (!inRange(p.buffer))
        return makeError() << "a placement of missing buffer " << p.buffer;
      placements.emplace_back(p.buffer, p.offset, p.bytes);
    }
    std::string library = options_.kernelLibrary && !g.plan.kernels.empty()
                              ? options_.kernelLibrary(index)
                              : std::string();
    auto name = fbb_.CreateString(g.name);
    auto bufferVec = fbb_.CreateVector(buffers);
    auto inputVec = fbb_.CreateVector(inputs), outputVec = fbb_.CreateVector(outputs);
    auto stepVec = fbb_.CreateVector(steps);
    auto symVec = fbb_.CreateVector(kernelSymbols);
    auto placementVec = fbb_.CreateVectorOfStructs(placements);
    auto target = fbb_.CreateString(g.plan.target);
    auto lib = fbb_.CreateString(library);
    Expected<int64_t> draws = randomDraws(g);
    if (!draws)
      return draws.error();
    return fb::CreateGraph(fbb_, name, bufferVec, inputVec, outputVec, stepVec, symVec,
                           placementVec, g.plan.arenaBytes, target, lib, *draws);
  }

  const Module &m_;
  const PlanOptions &options_;
  flatbuffers::FlatBufferBuilder fbb_;
  std::map<std::string, std::string> plugins_; // plugin op -> its library's file name
  std::map<std::string, uint32_t> slots_;
  std::vector<std::string> symbolNames_;
};

} // namespace

Expected<std::string> buildRuntimePlan(const Module &m, const PlanOptions &options) {
  return PlanBuilder(m, options).build();
}

ArenaProblem arenaProblem(const LoopGraph &graph) {
  ArenaProblem p;
  size_t numBuffers = graph.buffers.size();
  for (const Buffer &b : graph.buffers)
    p.intermediate.push_back(b.kind == BufferKind::Intermediate);
  for (const LoopBinding &b : graph.outputs)
    if (b.buffer < numBuffers)
      p.outputs.push_back(b.buffer);
  const Plan &plan = graph.plan;
  for (const PlanStep &step : plan.steps) {
    std::vector<uint32_t> &uses = p.uses.emplace_back();
    // A step's writes and reads both count, since a step may read what it
    // writes; each buffer once, in first-use order.
    auto use = [&](uint32_t b) {
      if (b < numBuffers && std::find(uses.begin(), uses.end(), b) == uses.end())
        uses.push_back(b);
    };
    auto visitNode = [&](const LoopNode &node) {
      for (const auto *views : {&node.inputs, &node.outputs})
        for (const BufferView &v : *views)
          use(v.buffer);
    };
    // A kernel's uses are the buffers its entry receives, in that order.
    if (step.kind == PlanStep::Kind::Kernel) {
      if (step.index < plan.kernels.size())
        for (uint32_t b : kernelBuffers(graph, plan.kernels[step.index]))
          use(b);
    } else if (step.index < graph.nodes.size()) {
      visitNode(graph.nodes[step.index]);
    }
    auto &inplace = p.inplace.emplace_back();
    for (const InplacePair &pair : step.inplace)
      inplace.emplace_back(pair.output, pair.input);
  }
  return p;
}

} // namespace gc
