//===- GpuKernelEmitter.cpp - NVIDIA GPU code for kernel groups -----------===//
//
// A kernel group becomes one kernel entry `void name(ptr buffers, ptr
// symbols)` (buffers: the base pointers of its own buffers, in
// kernelBuffers() order, KernelCode.h; groups of one name share it) that strides over the flattened points of its parallel ranges
// (a launch has at most 2^20 blocks, so a grid need not cover them all):
//
// - ThreadPerPoint: thread t of block b starts at point b*T + t and steps by
//   gridDim*T; at each point it runs the group's nodes as the CPU does inside
//   its loop nest (their own inner loops and reductions serially). With
//   vectorWidth or pointsPerThread (emitVectors), its points are vectors of
//   consecutive innermost points, several a step, the grid's width apart.
// - BlockPerPoint: block b starts at point b and steps by gridDim; at each
//   point the block's T threads share every node's loops beyond the prefix,
//   flattened: a pointwise node strides its inner points over the threads
//   (in vectors of consecutive points where innerVectorWidth finds some); a
//   reduction strides its reduction points over them, each thread combining
//   its own, then the block combines the threads' partial results (warp
//   shuffles, then one partial per warp through shared memory) and thread 0
//   stores the result; one of fewer than kGpuBlockReduction points strides
//   its rows (its loops beyond the prefix) over the threads instead, each
//   thread reducing its rows alone. A barrier follows every reduction, and every
//   pointwise node whose output a later node of the group loads, so that
//   later nodes read what earlier ones stored (global memory written before
//   a barrier is visible to the block after it). Without one, the threads
//   of independent nodes overlap their loads: no later node writes what an
//   earlier one reads (fusion's rule; an in-place output overwrites a
//   buffer only its own node reads, Scheduler.cpp).
//
// Point indices are i32 where the space's size is known to stay below 2^30
// (so that index + stride cannot overflow), else i64. Divisions by sizes
// that symbols give go through magic numbers computed at entry (Divisor).
//
// On sm_90 and later libgcrt launches kernels early (programmatic dependent
// launch: Kernel in lib/Runtime/Cuda/CudaDriver.h), so the cubins for those
// GPUs come from a second PTX (earlyLaunchPtx) whose entries first release
// the kernel after them and wait for the one before them, before any load.
//
// Math: ScalarEmitter's gc_* calls come from the math library compiled for
// nvptx64 (kGpuMathBitcode). Its C library calls (sinf, atan2, erfc, double
// erf and pow, ...) and `frem` (which NVPTX would expand to x - trunc(x/y)*y,
// not fmod's exact result) resolve to CUDA's libdevice (__nv_sinf, __nv_fmodf,
// ...), linked from the toolkit at compile time; NVVMReflect, part of the
// NVPTX pipeline, settles libdevice's __nvvm_reflect queries (no
// flush-to-zero, as torch).
//
//===----------------------------------------------------------------------===//
#include "gc/Codegen/GpuKernelEmitter.h"

#include "CudaToolkit.h"
#include "GpuLaunch.h"
#include "GroupEmitterBase.h"
#include "MathBitcode.h"
#include "TargetSetup.h"

#include "gc/IR/KernelCode.h"
#include "gc/IR/Module.h"
#include "gc/Support/Parallel.h"
#include "gc/Support/Target.h"
#include "gc/Support/TimeTrace.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace gc {

namespace {

constexpr unsigned kWarpSize = 32;
constexpr unsigned kMaxPointsPerThread = 8;
constexpr unsigned kSharedAddressSpace = 3;
constexpr unsigned kGlobalAddressSpace = 1;
/// Point indices stay i32 below this many points.
constexpr int64_t kNarrowSpace = int64_t(1) << 30;

/// Emits one kernel group as a GPU kernel.
class GpuGroupEmitter : public GroupEmitterBase {
public:
  /// `arch`: the lowest architecture the kernels are built for (80 for
  /// sm_80).
  GpuGroupEmitter(llvm::Module &module, const Module &m, const LoopGraph &graph, uint32_t g,
                  int arch)
      : GroupEmitterBase(module, graph, g, "GPU"), ranges_(m.syms().ranges()) {
    if (arch >= 80)
      scalar_.useNvptxBFloat16Rounding();
  }

  Error emit() {
    bool perBlock = group_.mapping == GpuMapping::BlockPerPoint;
    if (group_.mapping == GpuMapping::None)
      return makeError() << "kernel '" << group_.name
                         << "' has no GPU launch (chooseGpuLaunches sets it)";
    if (group_.blockThreads == 0 || group_.blockThreads > kGpuMaxBlockThreads ||
        (perBlock && group_.blockThreads % kWarpSize != 0))
      return makeError() << "kernel '" << group_.name << "': " << group_.blockThreads
                         << " threads a block is not a launch a GPU can run"
                         << (perBlock ? " (block_per_point needs a multiple of 32)" : "");
    if (group_.pointsPerThread > kMaxPointsPerThread ||
        (perBlock && group_.pointsPerThread > 1))
      return makeError() << "kernel '" << group_.name << "': " << group_.pointsPerThread
                         << " points a thread is not a launch gc emits (thread_per_point, at most "
                         << kMaxPointsPerThread << ")";
    unsigned unroll = std::max(group_.pointsPerThread, 1u);
    unsigned width = std::max(group_.vectorWidth, 1u);
    if (unroll > 1 || width > 1)
      GC_RETURN_IF_ERROR(checkVectors(width));
    auto *ptr = b_.getPtrTy();
    GC_RETURN_IF_ERROR(beginFunction({ptr, ptr}, {"buffers", "symbols"}));
    threads_ = group_.blockThreads;
    thread_ = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    if (unroll > 1 || width > 1)
      emitVectors(unroll, width);
    else
      emitPoints(perBlock);
    GC_RETURN_IF_ERROR(endFunction());
    markKernel();
    return Error::success();
  }

private:
  /// A thread's part of a reduction: the value and, for ArgMax/ArgMin, its
  /// position.
  struct Partial {
    Value *value = nullptr;
    Value *position = nullptr;
  };

  Value *bufferBase(Value *pointer) override {
    return b_.CreateAddrSpaceCast(pointer, b_.getPtrTy(kGlobalAddressSpace));
  }

  /// Points of a scatter run in parallel here, so a combining store is
  /// atomic (as torch's GPU scatter_add; the order of the additions, and so
  /// a float sum's rounding, may differ from run to run): atomicrmw where
  /// NVPTX has it, else a compare-and-swap loop around combineStored.
  void combineStore(const LoopNode &node, Value *address, Value *v) override {
    DType dtype = graph_.buffers[node.output].dtype;
    bool isFloat = isFloatingPoint(dtype);
    bool wide = dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Int32 ||
                dtype == DType::Int64;
    std::optional<llvm::AtomicRMWInst::BinOp> op;
    if (wide && node.combine == StoreCombine::Add)
      op = isFloat ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    else if (wide && !isFloat && node.combine == StoreCombine::Max)
      op = llvm::AtomicRMWInst::Max;
    else if (wide && !isFloat && node.combine == StoreCombine::Min)
      op = llvm::AtomicRMWInst::Min;
    if (op) {
      b_.CreateAtomicRMW(*op, address, v, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
      return;
    }
    llvm::Type *type = v->getType();
    llvm::Type *bits = b_.getIntNTy(type->getPrimitiveSizeInBits());
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    llvm::Value *first = b_.CreateLoad(bits, address);
    auto *retry = llvm::BasicBlock::Create(ctx_, "cas", fn_);
    auto *done = llvm::BasicBlock::Create(ctx_, "cas.done", fn_);
    b_.CreateBr(retry);
    b_.SetInsertPoint(retry);
    llvm::PHINode *seen = b_.CreatePHI(bits, 2, "seen");
    seen->addIncoming(first, pre);
    Value *combined = combineStored(node.combine, dtype, b_.CreateBitCast(seen, type), v);
    Value *pair = b_.CreateAtomicCmpXchg(address, seen, b_.CreateBitCast(combined, bits),
                                         llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic,
                                         llvm::AtomicOrdering::Monotonic);
    seen->addIncoming(b_.CreateExtractValue(pair, 0), b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateExtractValue(pair, 1), done, retry);
    b_.SetInsertPoint(done);
  }

  Value *special(llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {}, {}); }
  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

  void markKernel() {
    llvm::NamedMDNode *annotations = module_.getOrInsertNamedMetadata("nvvm.annotations");
    auto entry = [&](const char *key, uint32_t value) {
      annotations->addOperand(
          llvm::MDNode::get(ctx_, {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(ctx_, key),
                                   llvm::ConstantAsMetadata::get(b_.getInt32(value))}));
    };
    entry("kernel", 1);
    entry("maxntidx", threads_);
  }

  //===--- Flattened loop spaces ------------------------------------------===//

  /// i32 where the space (plus a stride) surely fits, else i64.
  llvm::IntegerType *indexType(const std::vector<const SymExpr *> &space) {
    return loopSpaceBounds(space, ranges_).max < kNarrowSpace ? b_.getInt32Ty() : b_.getInt64Ty();
  }

  Value *asIndex(Value *v, llvm::Type *type) { return b_.CreateZExtOrTrunc(v, type); }

  /// A divisor that stays the same for the whole kernel (a loop's size),
  /// with what dividing by it takes. A constant one is left to LLVM (a
  /// multiply-high); a 32-bit one that a symbol gives divides a dividend
  /// below 2^31 as q = (umulhi(n, magic) + n) >> shift, with shift =
  /// ceil(log2 d) and magic = floor(2^32 (2^shift - d) / d) + 1, which is
  /// exact for every such n and d >= 1 (Granlund and Montgomery's division
  /// by invariant integers): three instructions where `div.u32` by a
  /// register takes some twenty. The magic number is computed once, at the
  /// kernel's entry.
  struct Divisor {
    Value *value = nullptr;
    Value *magic = nullptr, *shift = nullptr;
  };

  /// `at` evaluated in the entry block, where the symbols are loaded.
  template <typename F> Value *atEntry(F &&at) {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(entry_);
    return at();
  }

  /// The divisor `d` (computed in the entry block) of dividends of `type`.
  Divisor divisor(Value *d) {
    Divisor div{d};
    if (llvm::isa<llvm::Constant>(d) || !d->getType()->isIntegerTy(32))
      return div;
    atEntry([&] {
      // max(d, 1): a space of size 0 runs no point, and its magic must not
      // divide by zero.
      Value *one = b_.getInt32(1);
      Value *safe = scalar_.intrinsic(llvm::Intrinsic::umax, {d, one});
      Value *leading = scalar_.intrinsic(llvm::Intrinsic::ctlz, {b_.CreateSub(safe, one), b_.getFalse()});
      div.shift = b_.CreateSub(b_.getInt32(32), leading);
      Value *wide = b_.CreateZExt(safe, b_.getInt64Ty());
      Value *excess = b_.CreateSub(b_.CreateShl(b_.getInt64(1), b_.CreateZExt(div.shift, b_.getInt64Ty())), wide);
      div.magic = b_.CreateTrunc(
          b_.CreateAdd(b_.CreateUDiv(b_.CreateShl(excess, 32), wide), b_.getInt64(1)), b_.getInt32Ty());
      return div.magic;
    });
    return div;
  }

  Value *quotient(Value *n, const Divisor &d) {
    if (!d.magic)
      return b_.CreateUDiv(n, d.value);
    llvm::Type *wide = b_.getInt64Ty();
    Value *product = b_.CreateMul(b_.CreateZExt(n, wide), b_.CreateZExt(d.magic, wide));
    Value *high = b_.CreateTrunc(b_.CreateLShr(product, 32), b_.getInt32Ty());
    return b_.CreateLShr(b_.CreateAdd(high, n), d.shift);
  }

  /// The sizes of `space` as divisors of its flat indices of `type`.
  std::vector<Divisor> radixOf(const std::vector<const SymExpr *> &space, llvm::Type *type) {
    std::vector<Divisor> radix;
    for (const SymExpr *s : space)
      radix.push_back(divisor(atEntry([&] { return asIndex(expr(s), type); })));
    return radix;
  }

  Value *spaceSize(const std::vector<Divisor> &radix, llvm::Type *type) {
    Value *size = llvm::ConstantInt::get(type, 1);
    for (const Divisor &d : radix)
      size = b_.CreateMul(size, d.value, "", true, true);
    return size;
  }

  /// Binds prefix<first+k> to the k-th digit of `flat` in the mixed radix
  /// `radix` (the last size varies fastest).
  void bindDigits(Value *flat, const std::vector<Divisor> &radix, const char *prefix,
                  size_t first) {
    Value *rest = flat;
    for (size_t k = radix.size(); k-- > 0;) {
      Value *digit = rest;
      if (k > 0) {
        Value *q = quotient(rest, radix[k]);
        digit = radix[k].magic ? b_.CreateSub(rest, b_.CreateMul(q, radix[k].value))
                               : b_.CreateURem(rest, radix[k].value);
        rest = q;
      }
      vars_[prefix + std::to_string(first + k)] = b_.CreateZExt(digit, b_.getInt64Ty());
    }
  }

  void unbind(size_t count, const char *prefix, size_t first) {
    for (size_t k = 0; k < count; ++k)
      vars_.erase(prefix + std::to_string(first + k));
  }

  /// The points of `space` strided over the block's threads, each thread
  /// taking vectors of `width` consecutive points of the innermost loop
  /// (innerVectorWidth; the loads that vectorLoads_ names are one access
  /// for all lanes). `lane` runs for each lane with prefix<first>... bound
  /// and gets the lane's flattened index as i64; `after` runs once a
  /// vector's lanes have.
  template <typename Lane, typename After>
  void emitThreadStrided(const std::vector<const SymExpr *> &space, const char *prefix,
                         size_t first, unsigned width, Lane &&lane, After &&after) {
    llvm::IntegerType *type = indexType(space);
    std::vector<Divisor> radix = radixOf(space, type);
    if (width > 1)
      innermostInVectors(radix, type, width);
    Value *count = spaceSize(radix, type);
    emitLoop(
        asIndex(thread_, type), count, std::string(prefix) + "flat",
        [&](Value *index) {
          bindDigits(index, radix, prefix, first);
          Value *flat = b_.CreateZExt(index, b_.getInt64Ty());
          if (width < 2) {
            lane(flat);
            return after();
          }
          std::string var = prefix + std::to_string(first + space.size() - 1);
          Value *firstLane = b_.CreateMul(vars_[var], b_.getInt64(width), "", true, true);
          Value *flatFirst = b_.CreateMul(flat, b_.getInt64(width), "", true, true);
          width_ = width;
          for (lane_ = 0; lane_ < width; ++lane_) {
            vars_[var] = b_.CreateAdd(firstLane, b_.getInt64(lane_), "", true, true);
            lane(b_.CreateAdd(flatFirst, b_.getInt64(lane_), "", true, true));
          }
          lane_ = 0;
          after();
        },
        llvm::ConstantInt::get(type, threads_));
    unbind(space.size(), prefix, first);
  }

  /// The radix of a space counted in vectors of `width` innermost points.
  void innermostInVectors(std::vector<Divisor> &radix, llvm::Type *type, unsigned width) {
    Divisor &inner = radix.back();
    inner = divisor(atEntry([&] {
      return b_.CreateUDiv(inner.value, llvm::ConstantInt::get(type, width), "", true);
    }));
  }

  /// The loads of `node` that the lanes of a vector of `width` points of
  /// `var` make as one access (vectorLoads), for loadElement.
  void setVectorLoads(const LoopNode &node, const std::string &var, unsigned width) {
    vectorLoads_.clear();
    if (width < 2)
      return;
    std::vector<bool> loads = vectorLoads(graph_, node.body, var, width, ranges_);
    for (size_t op = 0; op < loads.size(); ++op)
      if (loads[op])
        vectorLoads_.insert(&node.body.ops[op]);
  }

  /// Stores the lanes' values of a pointwise node: one vector where the
  /// store is a vector access, else lane by lane.
  void storeLanes(const LoopNode &node, const std::vector<Value *> &values, DType from,
                  const std::vector<Value *> &indices, const std::string &var) {
    unsigned width = values.size();
    if (width > 1 && vectorAccess(graph_, node.output, node.storeIndex, var, width))
      return storeVector(node, values, from, indices[0]);
    for (unsigned lane = 0; lane < width; ++lane)
      storeAt(node, values[lane], from, indices[lane]);
  }

  //===--- The points of the parallel ranges --------------------------------===//

  /// The grid-stride loop over the points of the parallel ranges: their
  /// count, where this block (perBlock) or this thread starts, and how far
  /// it steps.
  struct PointLoop {
    Value *count, *start, *stride;
  };
  PointLoop pointLoop(bool perBlock, const std::vector<Divisor> &radix, llvm::Type *type) {
    Value *count = spaceSize(radix, type);
    Value *block = asIndex(special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), type);
    Value *blocks = asIndex(special(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), type);
    if (perBlock)
      return {count, block, blocks};
    Value *threads = llvm::ConstantInt::get(type, threads_);
    Value *start = b_.CreateAdd(b_.CreateMul(block, threads, "", true, true),
                                asIndex(thread_, type), "", true, true);
    return {count, start, b_.CreateMul(blocks, threads, "", true, true)};
  }

  /// Whether the group meets what emitVectors relies on (chooseGpuLaunches
  /// gives vectors and several points a thread only to such groups):
  /// pointwise nodes over exactly the parallel ranges, none scattering nor
  /// reading what the group writes, and vectors that tile the innermost
  /// range.
  Error checkVectors(unsigned width) {
    ErrorBuilder e;
    e << "kernel '" << group_.name << "': " << group_.pointsPerThread << " points a thread of "
      << width << " lanes ";
    if (group_.mapping != GpuMapping::ThreadPerPoint)
      return e << "needs thread_per_point";
    if (width > 1 && (width > 16 || (width & (width - 1)) != 0))
      return e << "is not a vector gc emits (2, 4, 8 or 16 lanes)";
    if (group_.parallelRanges.empty() ||
        (width > 1 && !isMultipleOf(group_.parallelRanges.back(), width)))
      return e << "needs an innermost parallel range of a multiple of " << width << " points";
    std::vector<uint32_t> written;
    for (uint32_t n : group_.nodes) {
      const LoopNode &node = graph_.nodes[n];
      if (node.kind != LoopNode::Kind::Pointwise || scatters(node) ||
          node.ranges.size() != group_.parallelRanges.size())
        return e << "needs pointwise nodes over exactly the parallel ranges, none scattering";
      written.push_back(node.output);
    }
    for (uint32_t n : group_.nodes)
      for (const BodyOp &op : graph_.nodes[n].body.ops)
        if (op.kind == BodyOp::Kind::Load &&
            std::find(written.begin(), written.end(), op.buffer) != written.end())
          return e << "needs nodes that read nothing the kernel writes (every load comes before "
                      "the first store)";
    return Error::success();
  }

  /// ThreadPerPoint where each thread takes vectors of `width` consecutive
  /// points of the innermost parallel range (vectorWidth), `unroll` of them
  /// a step (pointsPerThread), the grid's width apart so that any grid
  /// spreads the points evenly; every access stays coalesced across the
  /// warp. All loads of a step come before its first store
  /// (checkVectors). The lanes of a vector run the nodes one after
  /// another, but a load or store that moves with them along the range
  /// from an aligned first lane (vectorAccess) is one access for all of
  /// them. A vector past the end computes at the last one, which exists,
  /// and stores nothing.
  void emitVectors(unsigned unroll, unsigned width) {
    const std::vector<const SymExpr *> &space = group_.parallelRanges;
    llvm::IntegerType *type = indexType(space);
    // The vectors' radix: the ranges, the innermost counted in vectors.
    std::vector<Divisor> radix = radixOf(space, type);
    innermostInVectors(radix, type, width);
    auto [count, start, stride] = pointLoop(false, radix, type);
    Value *last = b_.CreateSub(count, llvm::ConstantInt::get(type, 1));
    std::string var = "i" + std::to_string(space.size() - 1);
    struct PendingStore {
      const LoopNode *node;
      std::vector<Value *> values, indices;
      DType dtype;
      Value *inRange;
    };
    emitLoop(
        start, count, "vector",
        [&](Value *first) {
          std::vector<PendingStore> stores;
          for (unsigned k = 0; k < unroll; ++k) {
            Value *vector = first;
            Value *inRange = nullptr;
            if (k > 0) {
              vector = b_.CreateAdd(first, b_.CreateMul(stride, llvm::ConstantInt::get(type, k)),
                                    "", true, true);
              inRange = b_.CreateICmpSLT(vector, count);
              vector = b_.CreateSelect(inRange, vector, last);
            }
            bindDigits(vector, radix, "i", 0);
            Value *firstLane = b_.CreateMul(vars_[var], b_.getInt64(width), "", true, true);
            for (uint32_t n : group_.nodes) {
              node_ = &graph_.nodes[n];
              if (!checkNode(*node_))
                return;
              PendingStore pending{node_, {}, {}, node_->body.ops[node_->body.result].dtype,
                                   inRange};
              setVectorLoads(*node_, var, width);
              width_ = width;
              for (lane_ = 0; lane_ < width; ++lane_) {
                vars_[var] = b_.CreateAdd(firstLane, b_.getInt64(lane_), "", true, true);
                pending.values.push_back(emitBody(node_->body));
                pending.indices.push_back(storeIndexOf(*node_));
              }
              stores.push_back(std::move(pending));
            }
          }
          vectorLoads_.clear();
          for (const PendingStore &s : stores) {
            node_ = s.node;
            auto store = [&] { storeLanes(*s.node, s.values, s.dtype, s.indices, var); };
            if (s.inRange)
              emitIf(s.inRange, store);
            else
              store();
          }
        },
        b_.CreateMul(stride, llvm::ConstantInt::get(type, unroll), "", true, true));
    lane_ = 0;
    unbind(space.size(), "i", 0);
  }

  /// A division of an index expression by a divisor of size symbols alone
  /// (a view's reshape over a symbolic size: mod(2*i0*s0 + i1, s0)) goes
  /// through the divisor's magic number where the bounds allow it (a
  /// nonnegative dividend and a positive divisor, both below 2^31), instead
  /// of a 64-bit signed division per element.
  Value *indexDivision(const SymExpr *e) override {
    const SymExpr *x = e->operands()[0], *d = e->operands()[1];
    constexpr int64_t kNarrow = (int64_t(1) << 31) - 1;
    std::optional<SymRange> dividend = boundsOf(x, loopRanges());
    std::optional<SymRange> by = boundsOf(d, ranges_);
    if (d->isConst() || !sizeSymbolsOnly(d) || !dividend || dividend->min < 0 ||
        dividend->max > kNarrow || !by || by->min < 1 || by->max > kNarrow)
      return GroupEmitterBase::indexDivision(e);
    auto [cached, fresh] = indexDivisors_.try_emplace(d);
    if (fresh)
      cached->second =
          divisor(atEntry([&] { return b_.CreateTrunc(expr(d), b_.getInt32Ty()); }));
    const Divisor &div = cached->second;
    Value *n = b_.CreateTrunc(expr(x), b_.getInt32Ty());
    Value *q = quotient(n, div);
    Value *result = e->kind() == SymExpr::Kind::FloorDiv ? q : b_.CreateSub(n, b_.CreateMul(q, div.value));
    return b_.CreateZExt(result, b_.getInt64Ty());
  }

  /// Whether `e` reads only size symbols (the plan's), no loop variable.
  bool sizeSymbolsOnly(const SymExpr *e) const {
    if (e->isSymbol())
      return std::find(graph_.plan.symbols.begin(), graph_.plan.symbols.end(), e->symbolName()) !=
             graph_.plan.symbols.end();
    for (const SymExpr *op : e->operands())
      if (!sizeSymbolsOnly(op))
        return false;
    return true;
  }

  /// The symbols' ranges and the current node's loop variables', each
  /// [0, the largest value of its loop's size - 1].
  const VarRanges &loopRanges() {
    auto [cached, fresh] = loopRanges_.try_emplace(node_, ranges_);
    if (fresh && node_) {
      auto add = [&](const std::vector<const SymExpr *> &sizes, const char *prefix) {
        for (size_t k = 0; k < sizes.size(); ++k) {
          std::optional<SymRange> b = boundsOf(sizes[k], ranges_);
          cached->second[prefix + std::to_string(k)] =
              b && b->max != SymRange::kUnbounded ? SymRange{0, std::max<int64_t>(b->max - 1, 0)}
                                                  : SymRange{0, SymRange::kUnbounded};
        }
      };
      add(node_->ranges, "i");
      add(node_->reductionRanges, "r");
    }
    return cached->second;
  }

  //===--- Vector accesses --------------------------------------------------===//

  /// A load of a vector access (vectorLoads_) is made by the first lane, as
  /// one load of words (wordsType); every lane takes its element from it.
  Value *loadElement(const BodyOp &op, Value *index) override {
    if (!vectorLoads_.count(&op))
      return GroupEmitterBase::loadElement(op, index);
    llvm::Type *memType = memoryType(ctx_, graph_.buffers[op.buffer].dtype);
    unsigned width = width_;
    Value *&words = laneWords_[&op];
    if (lane_ == 0) {
      llvm::LoadInst *load =
          b_.CreateAlignedLoad(wordsType(memType, width), elementAddress(op.buffer, index),
                               llvm::Align(vectorBytes(memType, width)));
      annotate(load, op.buffer);
      // The lanes come from a frozen copy: a load whose only users extract
      // its elements, VectorCombine would split into scalar loads (NVPTX's
      // cost model does not count ld.global.v4 as one access). freeze
      // emits no instruction.
      words = b_.CreateFreeze(load);
    }
    return laneOf(words, memType, lane_);
  }

  /// The lanes' values stored as one vector of words from the first
  /// lane's index.
  void storeVector(const LoopNode &node, const std::vector<Value *> &values, DType from,
                   Value *index) {
    DType to = graph_.buffers[node.output].dtype;
    llvm::Type *memType = memoryType(ctx_, to);
    unsigned width = values.size();
    auto *type = llvm::cast<llvm::FixedVectorType>(wordsType(memType, width));
    std::vector<Value *> words(type->getNumElements(), nullptr);
    // bfloat16 pairs round into their word in one instruction where the
    // target has it.
    for (unsigned w = 0; to == DType::BFloat16 && w < words.size(); ++w)
      words[w] = scalar_.encodeBFloat16Pair(halfSource(values[2 * w], from, to),
                                            halfSource(values[2 * w + 1], from, to));
    if (words[0])
      return storeWords(node, words, type, index);
    std::vector<Value *> lanes;
    for (Value *v : values)
      lanes.push_back(memoryValue(node, v, from));
    unsigned bits = memType->getPrimitiveSizeInBits();
    for (unsigned lane = 0; lane < width; ++lane) {
      if (bits >= 32) {
        words[lane] = lanes[lane];
        continue;
      }
      // Narrow lanes share a word, the first lane in its low bits.
      Value *piece = b_.CreateShl(b_.CreateZExt(b_.CreateBitCast(lanes[lane], b_.getIntNTy(bits)),
                                                b_.getInt32Ty()),
                                  lane * bits % 32);
      Value *&word = words[lane * bits / 32];
      word = word ? b_.CreateOr(word, piece) : piece;
    }
    storeWords(node, words, type, index);
  }

  /// `words` stored as one vector of `type` from element `index`.
  void storeWords(const LoopNode &node, const std::vector<Value *> &words,
                  llvm::FixedVectorType *type, Value *index) {
    Value *packed = llvm::PoisonValue::get(type);
    for (unsigned w = 0; w < words.size(); ++w)
      packed = b_.CreateInsertElement(packed, words[w], w);
    annotate(b_.CreateAlignedStore(packed, elementAddress(node.output, index),
                                   llvm::Align(type->getPrimitiveSizeInBits() / 8)),
             node.output);
  }

  static unsigned vectorBytes(llvm::Type *memType, unsigned width) {
    return memType->getPrimitiveSizeInBits() / 8 * width;
  }

  /// How `width` elements of `memType` travel: as a vector of them where
  /// they are 4 or 8 bytes (ld.global.v4.f32), else packed into 4-byte
  /// words (NVPTX has no vectors of 8 or 16-bit integers).
  llvm::Type *wordsType(llvm::Type *memType, unsigned width) {
    if (memType->getPrimitiveSizeInBits() >= 32)
      return llvm::FixedVectorType::get(memType, width);
    return llvm::FixedVectorType::get(b_.getInt32Ty(), vectorBytes(memType, width) / 4);
  }

  /// Element `lane` of the words `words` (wordsType).
  Value *laneOf(Value *words, llvm::Type *memType, unsigned lane) {
    unsigned bits = memType->getPrimitiveSizeInBits();
    if (bits >= 32)
      return b_.CreateExtractElement(words, lane);
    Value *word = b_.CreateExtractElement(words, lane * bits / 32);
    return b_.CreateBitCast(
        b_.CreateTrunc(b_.CreateLShr(word, lane * bits % 32), b_.getIntNTy(bits)), memType);
  }

  void emitPoints(bool perBlock) {
    const std::vector<const SymExpr *> &space = group_.parallelRanges;
    llvm::IntegerType *type = indexType(space);
    std::vector<Divisor> radix = radixOf(space, type);
    auto [count, start, stride] = pointLoop(perBlock, radix, type);
    emitLoop(
        start, count, "point",
        [&](Value *point) {
          bindDigits(point, radix, "i", 0);
          for (uint32_t n : group_.nodes) {
            node_ = &graph_.nodes[n];
            if (perBlock)
              emitBlockNode(*node_);
            else
              emitSerialNode(*node_);
          }
        },
        stride);
    unbind(space.size(), "i", 0);
  }

  /// Whether a node of the group after `node` loads its output.
  bool loadedLater(const LoopNode &node) const {
    bool after = false;
    for (uint32_t n : group_.nodes) {
      const LoopNode &other = graph_.nodes[n];
      if (after)
        for (const BodyOp &op : other.body.ops)
          if (op.kind == BodyOp::Kind::Load && op.buffer == node.output)
            return true;
      after |= &other == &node;
    }
    return false;
  }

  void emitBlockNode(const LoopNode &node) {
    if (!checkNode(node))
      return;
    size_t prefix = group_.parallelRanges.size();
    if (node.kind == LoopNode::Kind::Pointwise) {
      std::vector<const SymExpr *> inner(node.ranges.begin() + prefix, node.ranges.end());
      unsigned width = innerVectorWidth(graph_, node, prefix, ranges_);
      std::string var = "i" + std::to_string(node.ranges.size() - 1);
      setVectorLoads(node, var, width);
      DType dtype = node.body.ops[node.body.result].dtype;
      std::vector<Value *> values, indices;
      emitThreadStrided(
          inner, "i", prefix, width,
          [&](Value *) {
            values.push_back(emitBody(node.body));
            indices.push_back(storeIndexOf(node));
          },
          [&] {
            storeLanes(node, values, dtype, indices, var);
            values.clear();
            indices.clear();
          });
      vectorLoads_.clear();
      if (loadedLater(node))
        barrier();
      return;
    }
    // A reduction of fewer than kGpuBlockReduction points has no use for
    // the whole block: its rows (the node's loops beyond the prefix) go to
    // the threads, each reducing its rows alone, as ThreadPerPoint does (a
    // depthwise window sum beside the layer norm over the same pixels).
    std::vector<const SymExpr *> rows(node.ranges.begin() + prefix, node.ranges.end());
    if (!rows.empty() && !node.scan &&
        loopSpaceBounds(node.reductionRanges, ranges_).max < kGpuBlockReduction) {
      emitThreadStrided(rows, "i", prefix, 1, [&](Value *) { emitSerialReduction(node); }, [] {});
      if (loadedLater(node))
        barrier();
      return;
    }
    // The barrier after each point of the node's own loops both lets the
    // next point reuse the shared arrays and ends the node.
    emitOwnLoops(node, prefix, [&] {
      emitBlockReduction(node);
      barrier();
    });
  }

  //===--- Reductions across a block ------------------------------------------===//

  void emitBlockReduction(const LoopNode &node) {
    Accumulator a = beginReduction(node);
    unsigned width = innerVectorWidth(graph_, node, group_.parallelRanges.size(), ranges_);
    setVectorLoads(node, "r" + std::to_string(node.reductionRanges.size() - 1), width);
    emitThreadStrided(
        node.reductionRanges, "r", 0, width,
        [&](Value *position) { accumulate(node, a, emitBody(node.body), position); }, [] {});
    vectorLoads_.clear();
    Partial mine{reducedValue(a), a.isArg ? b_.CreateLoad(b_.getInt64Ty(), a.position) : nullptr};
    combineInBlock(a, mine, [&](Partial total) {
      if (a.isArg)
        store(node, total.position, DType::Int64);
      else
        store(node, total.value, a.valueType);
    });
  }

  template <typename F> void emitIf(Value *condition, F &&then) {
    auto *thenBlock = llvm::BasicBlock::Create(ctx_, "then", fn_);
    auto *after = llvm::BasicBlock::Create(ctx_, "endif", fn_);
    b_.CreateCondBr(condition, thenBlock, after);
    b_.SetInsertPoint(thenBlock);
    then();
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }

  /// Combines every thread's partial; `finish` runs in thread 0 with the
  /// block's result. Every thread of the block must get here, and pass a
  /// barrier before the next reduction reuses the shared arrays.
  template <typename F> void combineInBlock(const Accumulator &a, Partial mine, F &&finish) {
    Partial warp = combineInWarp(a, mine);
    unsigned warps = threads_ / kWarpSize;
    Value *isFirstThread = b_.CreateICmpEQ(thread_, b_.getInt32(0));
    if (warps <= 1)
      return emitIf(isFirstThread, [&] { finish(warp); });
    Value *lane = b_.CreateAnd(thread_, kWarpSize - 1);
    Value *warpIndex = b_.CreateLShr(thread_, 5);
    llvm::GlobalVariable *values = sharedArray(a.type);
    llvm::GlobalVariable *positions = a.isArg ? sharedArray(b_.getInt64Ty()) : nullptr;
    auto element = [&](llvm::GlobalVariable *array, Value *index) {
      return b_.CreateInBoundsGEP(array->getValueType(), array, {b_.getInt32(0), index});
    };
    emitIf(b_.CreateICmpEQ(lane, b_.getInt32(0)), [&] {
      b_.CreateStore(warp.value, element(values, warpIndex));
      if (positions)
        b_.CreateStore(warp.position, element(positions, warpIndex));
    });
    barrier();
    emitIf(b_.CreateICmpULT(thread_, b_.getInt32(kWarpSize)), [&] {
      // Lanes beyond the last warp hold the identity, which never wins.
      Value *present = b_.CreateICmpULT(lane, b_.getInt32(warps));
      Partial first;
      first.value =
          b_.CreateSelect(present, b_.CreateLoad(a.type, element(values, lane)), a.identity);
      if (positions)
        first.position =
            b_.CreateSelect(present, b_.CreateLoad(b_.getInt64Ty(), element(positions, lane)),
                            b_.getInt64(std::numeric_limits<int64_t>::max()));
      Partial total = combineInWarp(a, first);
      emitIf(isFirstThread, [&] { finish(total); });
    });
  }

  /// Butterfly shuffles: every lane ends with the warp's combined partial.
  Partial combineInWarp(const Accumulator &a, Partial p) {
    for (unsigned offset = kWarpSize / 2; offset >= 1; offset /= 2) {
      Partial other{shuffleXor(p.value, offset),
                    p.position ? shuffleXor(p.position, offset) : nullptr};
      p = combinePartials(a, p, other);
    }
    return p;
  }

  /// Two threads' partials with torch's semantics: NaN propagates through
  /// max and min; ArgMax/ArgMin keep the extreme at the lowest position,
  /// NaN counting as extreme.
  Partial combinePartials(const Accumulator &a, Partial x, Partial y) {
    if (!a.isArg) {
      if (a.isFloat && (a.kind == ReduceKind::Max || a.kind == ReduceKind::Min))
        return {
            scalar_.floatOp(a.wantsMax ? ScalarOp::Maximum : ScalarOp::Minimum, x.value, y.value)};
      return {combine(a.kind, x.value, y.value, a.isFloat, a.isUnsigned)};
    }
    Value *beyond, *tie;
    if (a.isFloat) {
      beyond = a.wantsMax ? b_.CreateFCmpOGT(y.value, x.value) : b_.CreateFCmpOLT(y.value, x.value);
      Value *xNaN = b_.CreateFCmpUNO(x.value, x.value);
      Value *yNaN = b_.CreateFCmpUNO(y.value, y.value);
      beyond = b_.CreateOr(beyond, b_.CreateAnd(yNaN, b_.CreateNot(xNaN)));
      tie = b_.CreateOr(b_.CreateFCmpOEQ(x.value, y.value), b_.CreateAnd(xNaN, yNaN));
    } else {
      beyond = a.isUnsigned ? (a.wantsMax ? b_.CreateICmpUGT(y.value, x.value)
                                          : b_.CreateICmpULT(y.value, x.value))
                            : (a.wantsMax ? b_.CreateICmpSGT(y.value, x.value)
                                          : b_.CreateICmpSLT(y.value, x.value));
      tie = b_.CreateICmpEQ(x.value, y.value);
    }
    Value *earlier = b_.CreateICmpSLT(y.position, x.position);
    Value *takeY = b_.CreateOr(beyond, b_.CreateAnd(tie, earlier));
    return {b_.CreateSelect(takeY, y.value, x.value),
            b_.CreateSelect(takeY, y.position, x.position)};
  }

  /// The value of lane (this lane xor offset), for any register type.
  Value *shuffleXor(Value *v, unsigned offset) {
    llvm::Type *type = v->getType();
    if (type->isDoubleTy())
      return b_.CreateBitCast(shuffleXor(b_.CreateBitCast(v, b_.getInt64Ty()), offset), type);
    if (type->isIntegerTy(64)) {
      Value *low = shuffleXor(b_.CreateTrunc(v, b_.getInt32Ty()), offset);
      Value *high = shuffleXor(b_.CreateTrunc(b_.CreateLShr(v, 32), b_.getInt32Ty()), offset);
      return b_.CreateOr(b_.CreateShl(b_.CreateZExt(high, type), 32), b_.CreateZExt(low, type));
    }
    if (type->isIntegerTy() && !type->isIntegerTy(32))
      return b_.CreateTrunc(shuffleXor(b_.CreateZExt(v, b_.getInt32Ty()), offset), type);
    llvm::Intrinsic::ID id = type->isFloatTy() ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32
                                               : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
    // All 32 lanes take part; the last operand clamps lane indices to the warp.
    return b_.CreateIntrinsic(id, {},
                              {b_.getInt32(~0u), v, b_.getInt32(offset), b_.getInt32(0x1f)});
  }

  /// A block-wide array of one element per warp, one per type and kernel.
  llvm::GlobalVariable *sharedArray(llvm::Type *type) {
    llvm::GlobalVariable *&array = shared_[type];
    if (!array) {
      auto *arrayType = llvm::ArrayType::get(type, kWarpSize);
      array =
          new llvm::GlobalVariable(module_, arrayType, false, llvm::GlobalValue::InternalLinkage,
                                   llvm::UndefValue::get(arrayType),
                                   group_.name + "_partials" + std::to_string(shared_.size() - 1),
                                   nullptr, llvm::GlobalValue::NotThreadLocal, kSharedAddressSpace);
      array->setAlignment(llvm::Align(8));
    }
    return array;
  }

  const VarRanges &ranges_;
  uint32_t threads_ = 0;
  Value *thread_ = nullptr;
  std::map<llvm::Type *, llvm::GlobalVariable *> shared_;
  /// Vectors (emitVectors, emitThreadStrided): their width, the lane being
  /// emitted, the current node's loads that are vector accesses, and the
  /// words each has loaded.
  unsigned width_ = 1;
  unsigned lane_ = 0;
  std::set<const BodyOp *> vectorLoads_;
  std::map<const BodyOp *, Value *> laneWords_;
  /// Divisors of index expressions (indexDivision), and the loop ranges
  /// of each node that bound their dividends.
  std::map<const SymExpr *, Divisor> indexDivisors_;
  std::map<const LoopNode *, VarRanges> loopRanges_;
};

/// Where libdevice computes a function of gc's math library in fewer
/// instructions at float32's accuracy, the kernels call libdevice's (through
/// its C library name, which useLibdevice resolves). expf: gc_expf is about
/// 20 instructions on the FMA pipe (within 1 ulp); libdevice's about 10,
/// one of them ex2.approx.ftz on the reduced argument, within 2 ulp over the
/// whole range (CUDA's documented bound for expf). Not __expf, whose
/// ex2.approx of x*log2(e) loses accuracy as |x| grows. sigmoid, SiLU and
/// softmax take their exp from here too.
void preferLibdevice(llvm::Module &module) {
  for (auto [ours, theirs] : {std::pair<const char *, const char *>{"gc_expf", "expf"}}) {
    llvm::Function *fn = module.getFunction(ours);
    if (!fn || !fn->isDeclaration())
      continue;
    if (llvm::Function *existing = module.getFunction(theirs)) {
      fn->replaceAllUsesWith(existing);
      fn->eraseFromParent();
    } else {
      fn->setName(theirs);
    }
  }
}

/// Replaces `frem` with libdevice's exact fmod and the C library's math
/// functions with libdevice's, which it links from the toolkit.
Error useLibdevice(llvm::Module &module) {
  for (llvm::Function &fn : module)
    for (llvm::BasicBlock &block : fn)
      for (llvm::Instruction &inst : llvm::make_early_inc_range(block)) {
        if (inst.getOpcode() != llvm::Instruction::FRem)
          continue;
        llvm::IRBuilder<> b(&inst);
        llvm::Type *type = inst.getType();
        llvm::FunctionCallee fmod =
            module.getOrInsertFunction(type->isFloatTy() ? "fmodf" : "fmod", type, type, type);
        inst.replaceAllUsesWith(b.CreateCall(fmod, {inst.getOperand(0), inst.getOperand(1)}));
        inst.eraseFromParent();
      }
  std::vector<llvm::Function *> calls;
  for (llvm::Function &fn : module)
    if (fn.isDeclaration() && !fn.isIntrinsic() && !fn.getName().startswith("gc_"))
      calls.push_back(&fn);
  if (calls.empty())
    return Error::success();
  Expected<std::string> path = cudaToolkitFile("nvvm/libdevice/libdevice.10.bc", "libdevice");
  if (!path)
    return path.error();
  auto bytes = llvm::MemoryBuffer::getFile(*path);
  if (!bytes)
    return makeError() << "cannot read libdevice '" << *path << "': " << bytes.getError().message();
  auto library = llvm::parseBitcodeFile(**bytes, module.getContext());
  if (!library)
    return makeError() << "cannot read libdevice '" << *path
                       << "': " << llvm::toString(library.takeError());
  for (llvm::Function *fn : calls) {
    std::string name = "__nv_" + fn->getName().str();
    if (!(*library)->getFunction(name))
      return makeError() << "the kernels call '" << fn->getName().str()
                         << "', which libdevice does not provide";
    fn->setName(name);
  }
  (*library)->setTargetTriple(module.getTargetTriple());
  (*library)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded))
    return makeError() << "cannot link libdevice into the kernels";
  for (llvm::Function &fn : module)
    if (!fn.isDeclaration() && fn.getName().startswith("__nv_"))
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  return Error::success();
}

/// The first architecture whose kernels libgcrt may launch early.
constexpr int kEarlyLaunchArch = 90;

/// `ptx` (kernel entries only) for sm_90 and later: each entry's body
/// starts by letting the next kernel launch (griddepcontrol.launch_dependents)
/// and by waiting for the kernels before it (griddepcontrol.wait) in every
/// thread, ahead of the table loads that LLVM puts first. A kernel whose
/// blocks all ended without waiting would let the kernel after it start
/// before the one before it has ended; so the wait comes before any branch.
/// (RuntimePlan.h, kPlanMinorEarlyKernels: the runtime relies on it.)
std::string earlyLaunchPtx(const std::string &ptx) {
  size_t target = ptx.find("\n.target sm_");
  if (target == std::string::npos)
    return ptx;
  size_t numberAt = target + std::string_view("\n.target sm_").size();
  size_t numberEnd = ptx.find_first_not_of("0123456789", numberAt);
  int arch = std::stoi(ptx.substr(numberAt, numberEnd - numberAt));
  std::string out = ptx.substr(0, numberAt) + std::to_string(std::max(arch, kEarlyLaunchArch));
  size_t at = numberEnd;
  constexpr std::string_view kBodyStart = "\n{\n";
  for (size_t entry = ptx.find(".entry ", at); entry != std::string::npos;
       entry = ptx.find(".entry ", at)) {
    size_t body = ptx.find(kBodyStart, entry);
    if (body == std::string::npos)
      break;
    body += kBodyStart.size();
    out.append(ptx, at, body - at);
    out += "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n";
    at = body;
  }
  out.append(ptx, at, std::string::npos);
  return out;
}

} // namespace

namespace {

/// The PTX of the kernels of `batch`, one LLVM module of its own.
Expected<std::string> emitGpuBatch(const Module &m, const LoopGraph &graph,
                                   std::span<const uint32_t> kernels, KernelBatch batch, int arch,
                                   const EmitOptions &options) {
  TraceScope scope(options.trace,
                   "kernels " + graph.name + "[" + std::to_string(batch.begin) + ", " +
                       std::to_string(batch.end) + ") sm_" + std::to_string(arch),
                   "kernels");
  auto machine = createGpuTargetMachine(arch);
  if (!machine)
    return machine.error();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> owned = newKernelModule(ctx, graph.name, **machine);
  llvm::Module &module = *owned;
  // libdevice's functions flush denormals to zero only when asked to.
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
  for (uint32_t i = batch.begin; i < batch.end; ++i) {
    GpuGroupEmitter emitter(module, m, graph, kernels[i], arch);
    GC_RETURN_IF_ERROR(emitter.emit());
  }
  preferLibdevice(module);
  // The load-time program runs once a load (see assembleFatbinary's level
  // below): LLVM's O1 pipeline for it, O3 for the run's kernels.
  return finishKernelModule(
      module, **machine,
      llvm::StringRef(reinterpret_cast<const char *>(kGpuMathBitcode), kGpuMathBitcodeSize),
      graph.name, options, llvm::CGFT_AssemblyFile,
      graph.name == kConstantProgramGraph ? llvm::OptimizationLevel::O1
                                          : llvm::OptimizationLevel::O3,
      [&] { return useLibdevice(module); });
}

/// The end of a PTX module's header (LLVM's banner comment, .version,
/// .target, .address_size), or npos.
size_t ptxHeaderEnd(const std::string &ptx) {
  size_t at = ptx.find("\n.address_size ");
  return at == std::string::npos ? at : ptx.find('\n', at + 1);
}

/// Whether `ptx` declares nothing at module scope but kernel entries
/// (no .func, .global, .const, .shared or .extern line): then the PTX of
/// several batches concatenates, after one header, into a valid module.
bool onlyEntries(const std::string &ptx) {
  size_t at = 0;
  while (at < ptx.size()) {
    size_t end = ptx.find('\n', at);
    std::string_view line(ptx.data() + at, (end == std::string::npos ? ptx.size() : end) - at);
    for (const char *scope : {".func", ".visible .func", ".weak", ".global", ".const", ".shared",
                              ".extern", ".visible .global"})
      if (line.starts_with(scope))
        return false;
    at = end == std::string::npos ? ptx.size() : end + 1;
  }
  return true;
}

} // namespace

Expected<std::string> emitGpuKernels(const Module &m, const LoopGraph &graph,
                                     const EmitOptions &options) {
  Expected<std::vector<int>> archs = cudaArchs(options.target);
  if (!archs)
    return archs.error();
  std::sort(archs->begin(), archs->end());
  archs->erase(std::unique(archs->begin(), archs->end()), archs->end());
  if (archs->empty())
    return makeError() << "the CUDA target '" << options.target << "' names no architecture";
  if (auto machine = createGpuTargetMachine(archs->front()); !machine)
    return machine.error();
  // The kernels compile in the CPU path's batches, on options.jobs threads,
  // each batch a module of its own whose PTX (kernel entries only: shared
  // memory is demoted into them) joins the others' after one header. The
  // batches do not depend on the threads, so neither does the PTX. Where a
  // batch declares something at module scope (a libdevice function left
  // out of line, say), whose name another batch may declare too, or where
  // the IR's text is asked for, the kernels compile as one module instead.
  std::vector<uint32_t> kernels = distinctKernels(graph);
  bool wantIR = options.llvmIR || options.optimizedLLVMIR;
  std::vector<KernelBatch> batches =
      wantIR ? std::vector<KernelBatch>{{0, static_cast<uint32_t>(kernels.size())}}
             : kernelBatches(graph);
  if (batches.empty())
    batches.push_back({0, 0});
  Expected<std::vector<std::string>> made = mapIndices<std::string>(
      batches.size(), options.jobs,
      [&](size_t i) { return emitGpuBatch(m, graph, kernels, batches[i], archs->front(), options); });
  if (!made)
    return made.error();
  const std::vector<std::string> &texts = *made;
  std::string ptx = texts.front();
  if (texts.size() > 1) {
    bool joinable = std::all_of(texts.begin(), texts.end(), [](const std::string &t) {
      return ptxHeaderEnd(t) != std::string::npos && onlyEntries(t.substr(ptxHeaderEnd(t)));
    });
    if (joinable) {
      ptx = texts.front();
      for (size_t i = 1; i < texts.size(); ++i)
        ptx += texts[i].substr(ptxHeaderEnd(texts[i]));
    } else {
      Expected<std::string> whole = emitGpuBatch(
          m, graph, kernels, {0, static_cast<uint32_t>(kernels.size())}, archs->front(), options);
      if (!whole)
        return whole.error();
      ptx = whole.take();
    }
  }
  // The graph's own problems first, then what the machine lacks.
  GC_RETURN_IF_ERROR(checkCudaAssemblers());
  std::vector<PtxImage> images;
  if (archs->front() < kEarlyLaunchArch)
    images.push_back({archs->front(), ptx});
  if (archs->back() >= kEarlyLaunchArch)
    images.push_back({std::max(archs->front(), kEarlyLaunchArch), earlyLaunchPtx(ptx)});
  // The PTX of the lowest architecture: what ptxas assembles for it.
  if (options.ptx)
    *options.ptx = images.front().text;
  // The load-time program runs once a load, over a model's weights: ptxas
  // takes half the time at -O1 there (densenet121 in bfloat16: its 38
  // kernels 2.0 -> 1.0 s an architecture), the run's kernels keep -O3.
  return assembleFatbinary(images, *archs, graph.name == kConstantProgramGraph ? 1 : 3);
}

} // namespace gc
