//===- PassRegistration.cpp - gc-opt's passes into the pass registry ------===//
#include "gc/Transforms/Passes.h"

namespace gc {

namespace {
template <std::unique_ptr<Pass> (*Create)()> std::unique_ptr<Pass> make() { return Create(); }

constexpr PassInfo kPasses[] = {
#define GC_PASS(NAME, CREATE, SUMMARY) {NAME, SUMMARY, &make<&CREATE>},
#include "gc/Transforms/Passes.def"
#undef GC_PASS
};

/// Passes for gc's own tests, which users do not see (PassInfo::testOnly).
constexpr PassInfo kTestPasses[] = {
    {"test-miscompile", "Call another op with the same arguments in place of a chosen one",
     &make<&createTestMiscompilePass>, /*testOnly=*/true},
};
} // namespace

void registerTransformPasses() {
  registerPasses(kPasses);
  registerPasses(kTestPasses);
}

} // namespace gc
