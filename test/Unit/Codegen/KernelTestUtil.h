//===- KernelTestUtil.h - Building small loop graphs for codegen tests ---===//
#ifndef GC_TEST_UNIT_CODEGEN_KERNELTESTUTIL_H
#define GC_TEST_UNIT_CODEGEN_KERNELTESTUTIL_H

#include "gc/Codegen/KernelEmitter.h"
#include "gc/Codegen/ObjectLoader.h"
#include "gc/IR/KernelCode.h"
#include "gc/IR/Module.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gc::test {

/// Appends body operations and returns their value numbers.
struct BodyBuilder {
  Body body;

  uint32_t add(BodyOp op) {
    body.ops.push_back(std::move(op));
    body.result = static_cast<uint32_t>(body.ops.size() - 1);
    return body.result;
  }
  uint32_t load(uint32_t buffer, DType t, const SymExpr *index) {
    BodyOp op;
    op.kind = BodyOp::Kind::Load;
    op.dtype = t;
    op.buffer = buffer;
    op.index = index;
    return add(op);
  }
  uint32_t constant(DType t, double v) {
    BodyOp op;
    op.kind = BodyOp::Kind::Const;
    op.dtype = t;
    op.constant = v;
    return add(op);
  }
  uint32_t index(DType t, const SymExpr *e) {
    BodyOp op;
    op.kind = BodyOp::Kind::Index;
    op.dtype = t;
    op.index = e;
    return add(op);
  }
  uint32_t compute(ScalarOp sop, DType t, std::vector<uint32_t> operands) {
    BodyOp op;
    op.kind = BodyOp::Kind::Compute;
    op.op = sop;
    op.dtype = t;
    op.operands = std::move(operands);
    return add(op);
  }
  uint32_t cast(DType t, uint32_t value) {
    BodyOp op;
    op.kind = BodyOp::Kind::Cast;
    op.dtype = t;
    op.operands = {value};
    return add(op);
  }
};

/// A loop graph under construction, compiled for the test's target.
class KernelTest : public ::testing::TestWithParam<std::string> {
protected:
  Module module;
  LoopGraph graph;
  std::unique_ptr<KernelLibrary> library;

  const SymExpr *c(int64_t v) { return module.syms().constant(v); }
  const SymExpr *sym(const std::string &name) { return module.syms().symbol(name); }
  const SymExpr *add(const SymExpr *a, const SymExpr *b) { return module.syms().add(a, b); }
  const SymExpr *mul(const SymExpr *a, const SymExpr *b) { return module.syms().mul(a, b); }

  uint32_t buffer(DType t, const std::string &name) {
    Buffer b;
    b.name = name;
    b.dtype = t;
    graph.buffers.push_back(b);
    return static_cast<uint32_t>(graph.buffers.size() - 1);
  }

  uint32_t pointwise(std::vector<const SymExpr *> ranges, Body body, uint32_t output,
                     const SymExpr *storeIndex) {
    LoopNode n;
    n.kind = LoopNode::Kind::Pointwise;
    n.name = "n" + std::to_string(graph.nodes.size());
    n.ranges = std::move(ranges);
    n.body = std::move(body);
    n.output = output;
    n.storeIndex = storeIndex;
    graph.nodes.push_back(n);
    return static_cast<uint32_t>(graph.nodes.size() - 1);
  }

  uint32_t reduction(std::vector<const SymExpr *> ranges, std::vector<const SymExpr *> reduced,
                     ReduceKind kind, Body body, uint32_t output, const SymExpr *storeIndex) {
    uint32_t n = pointwise(std::move(ranges), std::move(body), output, storeIndex);
    graph.nodes[n].kind = LoopNode::Kind::Reduction;
    graph.nodes[n].reductionRanges = std::move(reduced);
    graph.nodes[n].reduce = kind;
    return n;
  }

  void kernel(const std::string &name, std::vector<uint32_t> nodes,
              std::vector<const SymExpr *> parallel) {
    KernelGroup g;
    g.name = name;
    g.nodes = std::move(nodes);
    g.parallelRanges = std::move(parallel);
    PlanStep step;
    step.kind = PlanStep::Kind::Kernel;
    step.index = static_cast<uint32_t>(graph.plan.kernels.size());
    graph.plan.kernels.push_back(g);
    graph.plan.steps.push_back(step);
  }

  /// A compiled kernel called with the graph's whole buffer table: it
  /// passes the entry point the group's own buffers (kernelBuffers), as the
  /// executors do.
  struct Kernel {
    KernelEntryFn entry = nullptr;
    std::vector<uint32_t> uses;
    bool operator==(std::nullptr_t) const { return entry == nullptr; }
    void operator()(char *const *buffers, const int64_t *symbols, int64_t begin,
                    int64_t end) const {
      std::vector<char *> args;
      for (uint32_t b : uses)
        args.push_back(buffers[b]);
      entry(args.data(), symbols, begin, end);
    }
  };

  /// Compiles the graph for the test's target and loads it; the kernel
  /// `name`.
  Kernel compile(const std::string &name, std::string *optimizedIR = nullptr) {
    EmitOptions options;
    options.target = GetParam();
    options.optimizedLLVMIR = optimizedIR;
    auto object = emitKernels(module, graph, options);
    EXPECT_TRUE(object) << (object ? "" : object.error().message());
    if (!object)
      return {};
    auto loaded = loadObjectCode(*object);
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.error().message());
    if (!loaded)
      return {};
    library = loaded.take();
    for (const KernelGroup &k : graph.plan.kernels)
      if (k.name == name)
        return {library->lookup(name), kernelBuffers(graph, k)};
    return {};
  }
};

} // namespace gc::test

#endif // GC_TEST_UNIT_CODEGEN_KERNELTESTUTIL_H
