//===- GraphCall.cpp - Call steps: cond and while_loop at run time --------===//
#include "GraphCall.h"

#include <algorithm>
#include <cstdint>
#include <new>

namespace gc {

namespace {

/// Contiguous memory for one carried value of a while_loop, 64-byte
/// aligned like the arena.
struct Owned {
  struct Free {
    void operator()(char *p) const { ::operator delete(p, std::align_val_t(64)); }
  };
  std::unique_ptr<char, Free> data;
  TensorRef ref;
};

Owned allocate(const TensorRef &like) {
  Owned o;
  o.ref.dtype = like.dtype;
  o.ref.sizes = like.sizes;
  o.ref.strides.assign(like.sizes.size(), 1);
  int64_t numel = 1;
  for (size_t d = like.sizes.size(); d-- > 0;) {
    o.ref.strides[d] = numel;
    numel *= like.sizes[d];
  }
  size_t bytes = static_cast<size_t>(std::max<int64_t>(numel, 1)) * dtypeSize(like.dtype);
  o.data.reset(static_cast<char *>(::operator new(bytes, std::align_val_t(64))));
  o.ref.data = o.data.get();
  return o;
}

void copy(const TensorRef &dst, const TensorRef &src) {
  copyStrided(static_cast<char *>(dst.data), dst.strides, static_cast<const char *>(src.data),
              src.strides, src.sizes, dtypeSize(src.dtype));
}

} // namespace

Expected<std::unique_ptr<GraphCall>> GraphCall::create(std::shared_ptr<const RuntimePlan> plan,
                                                       const plan::OpStep &step,
                                                       const RuntimeOptions &options) {
  std::unique_ptr<GraphCall> call(new GraphCall(step));
  for (uint32_t g : *step.call()->graphs()) {
    std::string name = "graph '" + plan->root().graphs()->Get(g)->name()->str() + "'";
    if (!options.graphKernels)
      return makeError() << "calls " << name << ", but the runtime has no kernels for it";
    Expected<std::unique_ptr<Executor>> exec =
        Executor::create(plan, g, options.graphKernels(g), options);
    if (!exec)
      return exec.error().withContext(name);
    call->graphs_.push_back(exec.take());
  }
  return call;
}

Error GraphCall::run(char *const *buffers, const std::vector<StridedLayout> &inputs,
                     const std::vector<StridedLayout> &outputs) {
  auto refs = [&](const flatbuffers::Vector<flatbuffers::Offset<plan::View>> &views,
                  const std::vector<StridedLayout> &layouts) {
    std::vector<TensorRef> out;
    for (size_t i = 0; i < layouts.size(); ++i) {
      const plan::View &v = *views.Get(i);
      DType dtype = dtypeOf(v.dtype());
      out.push_back({buffers[v.buffer()] + layouts[i].offset * dtypeSize(dtype), dtype,
                     layouts[i].sizes, layouts[i].strides});
    }
    return out;
  };
  std::vector<TensorRef> in = refs(*step_.inputs(), inputs);
  std::vector<TensorRef> out = refs(*step_.outputs(), outputs);
  if (step_.call()->kind() == plan::CallKind::Cond)
    return runCond(in, out);
  return runWhile(in, out);
}

Error GraphCall::runCond(const std::vector<TensorRef> &in, const std::vector<TensorRef> &out) {
  // A bool element is one byte; any nonzero byte is true, as torch reads it.
  bool pred = *static_cast<const uint8_t *>(in.at(0).data) != 0;
  std::vector<TensorRef> operands(in.begin() + 1, in.end());
  return graphs_.at(pred ? 0 : 1)->run(operands, out);
}

Error GraphCall::runWhile(const std::vector<TensorRef> &in, const std::vector<TensorRef> &out) {
  // The carried values live in memory of their own, two sets used in
  // turn: the body reads one while it writes the other.
  size_t carried = step_.call()->carried();
  std::vector<Owned> current, next;
  for (size_t i = 0; i < carried; ++i) {
    current.push_back(allocate(in[i]));
    copy(current.back().ref, in[i]);
    next.push_back(allocate(in[i]));
  }
  uint8_t go = 0;
  TensorRef flag{&go, DType::Bool, {}, {}};
  std::vector<TensorRef> args(in.begin(), in.end()), results(carried);
  while (true) {
    for (size_t i = 0; i < carried; ++i) {
      args[i] = current[i].ref;
      results[i] = next[i].ref;
    }
    GC_RETURN_IF_ERROR(graphs_.at(0)->run(args, std::span(&flag, 1)));
    if (!go)
      break;
    GC_RETURN_IF_ERROR(graphs_.at(1)->run(args, results));
    std::swap(current, next);
  }
  for (size_t i = 0; i < carried; ++i)
    copy(out.at(i), current[i].ref);
  return Error::success();
}

} // namespace gc
