//===- StridedCopy.cpp - Copies between GPU tensors of any layout ---------===//
#include "StridedCopy.h"

#include <algorithm>

namespace gc::cuda {

Expected<StridedCopyPlan> planStridedCopy(const std::vector<int64_t> &sizes,
                                          const std::vector<int64_t> &dstStrides,
                                          const std::vector<int64_t> &srcStrides) {
  StridedCopyPlan plan;
  plan.numel = 1;
  for (int64_t s : sizes)
    plan.numel *= s;
  if (plan.numel == 0) {
    plan.block = true;
    return plan;
  }
  // Outermost first; a dimension merges into the one before it when both
  // sides step over it exactly as far as over the whole of it.
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1)
      continue;
    size_t last = plan.sizes.size() - 1;
    if (!plan.sizes.empty() && plan.dstStrides[last] == dstStrides[d] * sizes[d] &&
        plan.srcStrides[last] == srcStrides[d] * sizes[d]) {
      plan.sizes[last] *= sizes[d];
      plan.dstStrides[last] = dstStrides[d];
      plan.srcStrides[last] = srcStrides[d];
      continue;
    }
    plan.sizes.push_back(sizes[d]);
    plan.dstStrides.push_back(dstStrides[d]);
    plan.srcStrides.push_back(srcStrides[d]);
  }
  plan.block = plan.sizes.empty() ||
               (plan.sizes.size() == 1 && plan.dstStrides[0] == 1 && plan.srcStrides[0] == 1);
  if (plan.block) {
    plan.sizes.clear();
    plan.dstStrides.clear();
    plan.srcStrides.clear();
  } else if (plan.sizes.size() > kMaxCopyRank) {
    return makeError() << "a copy between layouts with " << plan.sizes.size()
                       << " dimensions that do not merge; gc's GPU copy takes at most "
                       << kMaxCopyRank;
  }
  return plan;
}

StridedCopyArgs stridedCopyArgs(const StridedCopyPlan &plan, uint64_t dst, uint64_t src,
                                unsigned elemBytes) {
  StridedCopyArgs a;
  a.dst = dst;
  a.src = src;
  a.numel = static_cast<uint64_t>(plan.numel);
  a.elemBytes = elemBytes;
  a.rank = static_cast<uint32_t>(plan.sizes.size());
  std::copy(plan.sizes.begin(), plan.sizes.end(), a.sizes);
  std::copy(plan.dstStrides.begin(), plan.dstStrides.end(), a.dstStrides);
  std::copy(plan.srcStrides.begin(), plan.srcStrides.end(), a.srcStrides);
  return a;
}

unsigned stridedCopyBlocks(int64_t numel) {
  // Enough blocks to fill any GPU gc runs on; threads loop beyond that.
  constexpr int64_t kMaxBlocks = 65535;
  int64_t blocks = (numel + kCopyBlockThreads - 1) / kCopyBlockThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

// One thread an element, grid-stride: element i's index in each dimension
// comes from dividing i by the sizes, innermost first; the element is
// moved as one load and store of its width (1, 2, 4 or 8 bytes). The
// dimensions are read from the parameter by index (its address in a
// register, as PTX allows for kernel parameters).
const char *const kStridedCopyPtx = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry gc_strided_copy(.param .align 8 .b8 copy[224])
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<24>;

  ld.param.u64 %rd1, [copy];
  ld.param.u64 %rd2, [copy+8];
  ld.param.u64 %rd3, [copy+16];
  ld.param.u32 %r1, [copy+24];
  ld.param.u32 %r2, [copy+28];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u64 %rd4, copy;
  cvt.u64.u32 %rd20, %r1;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mov.u32 %r6, %nctaid.x;
  mul.wide.u32 %rd5, %r3, %r4;
  cvt.u64.u32 %rd6, %r5;
  add.u64 %rd5, %rd5, %rd6;
  mul.wide.u32 %rd6, %r6, %r4;
element:
  setp.ge.u64 %p1, %rd5, %rd3;
  @%p1 bra done;
  mov.u64 %rd7, %rd5;
  mov.u64 %rd8, 0;
  mov.u64 %rd9, 0;
  mov.u32 %r7, %r2;
dimension:
  setp.eq.u32 %p2, %r7, 0;
  @%p2 bra move;
  sub.u32 %r7, %r7, 1;
  mul.wide.u32 %rd10, %r7, 8;
  add.u64 %rd11, %rd4, %rd10;
  ld.param.u64 %rd12, [%rd11+32];
  ld.param.u64 %rd13, [%rd11+96];
  ld.param.u64 %rd14, [%rd11+160];
  rem.u64 %rd15, %rd7, %rd12;
  div.u64 %rd7, %rd7, %rd12;
  mad.lo.s64 %rd8, %rd15, %rd13, %rd8;
  mad.lo.s64 %rd9, %rd15, %rd14, %rd9;
  bra dimension;
move:
  mul.lo.s64 %rd16, %rd8, %rd20;
  add.s64 %rd16, %rd1, %rd16;
  mul.lo.s64 %rd17, %rd9, %rd20;
  add.s64 %rd17, %rd2, %rd17;
  setp.eq.u32 %p2, %r1, 4;
  @%p2 bra move4;
  setp.eq.u32 %p2, %r1, 2;
  @%p2 bra move2;
  setp.eq.u32 %p2, %r1, 8;
  @%p2 bra move8;
  ld.global.u8 %r8, [%rd17];
  st.global.u8 [%rd16], %r8;
  bra next;
move2:
  ld.global.u16 %r8, [%rd17];
  st.global.u16 [%rd16], %r8;
  bra next;
move4:
  ld.global.u32 %r8, [%rd17];
  st.global.u32 [%rd16], %r8;
  bra next;
move8:
  ld.global.u64 %rd18, [%rd17];
  st.global.u64 [%rd16], %rd18;
next:
  add.u64 %rd5, %rd5, %rd6;
  bra element;
done:
  ret;
}
)";

} // namespace gc::cuda
