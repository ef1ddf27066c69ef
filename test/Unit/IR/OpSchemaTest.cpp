//===- OpSchemaTest.cpp - OpDefs.def and the schema parser ----------------===//
//
// Every entry of OpDefs.def must parse (a release build would drop a bad one
// silently), names must be unique, and the parsed flags must match ATen's
// meaning of the notation.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/Names.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/OpVariants.h"

#include <gtest/gtest.h>

#include <set>

namespace gc {
namespace {

TEST(OpDefs, EveryEntryParsesAndIsUnique) {
  std::set<std::string_view> names;
  for (const OpDef &row : opdefs::kTable) {
    Expected<OpSchema> s = parseOpSchema(row.name, row.schema);
    EXPECT_TRUE(s) << (s ? "" : s.error().message());
    EXPECT_TRUE(isOpName(row.name)) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate " << row.name;
  }
  EXPECT_EQ(allOpSchemas().size(), kNumOps);
}

TEST(OpDefs, IdsNameTheirRows) {
  EXPECT_EQ(opName(ops::aten_add_Tensor), "aten.add.Tensor");
  EXPECT_EQ(lookupOp("aten._to_copy.default"), ops::aten__to_copy_default);
  EXPECT_EQ(lookupOp("aten.no_such_op.default"), std::nullopt);
  for (const OpSchema &s : allOpSchemas()) {
    EXPECT_EQ(opName(s.id), s.name);
    EXPECT_EQ(&opSchema(s.id), &s);
  }
}

TEST(OpDefs, ViewsComeFromTheAliasAnnotation) {
  EXPECT_TRUE(returnsView(ops::aten_view_default));
  EXPECT_TRUE(returnsView(ops::aten_split_Tensor)); // Tensor(a)[]
  EXPECT_FALSE(returnsView(*lookupOp("aten.add_.Tensor"))); // Tensor(a!): written, not a view
  EXPECT_FALSE(returnsView(ops::aten_clone_default));
}

TEST(OpDefs, Traits) {
  EXPECT_TRUE(hasTraits(ops::aten_dropout_default, kRandom));
  EXPECT_TRUE(hasTraits(ops::gc_rand_default, kRandom));
  EXPECT_FALSE(hasTraits(ops::aten_add_Tensor, kRandom));
  EXPECT_TRUE(hasTraits(ops::aten_add_Tensor, kRecomputable));
  EXPECT_FALSE(hasTraits(ops::aten_mm_default, kRecomputable));
}

TEST(OpDefs, SortedForLookup) {
  std::span<const OpSchema> all = allOpSchemas();
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LT(all[i - 1].name, all[i].name);
  for (const OpSchema &s : all)
    EXPECT_EQ(findOpSchema(s.name), &s);
  EXPECT_EQ(findOpSchema("aten.no_such_op.default"), nullptr);
  EXPECT_EQ(findOpSchema("aten.add"), nullptr);
}

TEST(OpDefs, CoreSet) {
  EXPECT_TRUE(isCoreOp(ops::aten_add_Tensor));
  EXPECT_TRUE(isCoreOp(ops::aten_convolution_default));
  EXPECT_TRUE(isCoreOp(ops::aten__to_copy_default));
  EXPECT_TRUE(isCoreOp(ops::gc_rand_default));
  EXPECT_FALSE(isCoreOp(ops::aten_linear_default));
  EXPECT_FALSE(isCoreOp(*lookupOp("aten.add_.Tensor")));
  EXPECT_FALSE(isCoreOp(ops::aten_relu_default));
  const OpSchema *relu = findOpSchema("aten.relu.default");
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu->id, ops::aten_relu_default);
  EXPECT_FALSE(relu->core);
  EXPECT_FALSE(relu->summary.empty());
}

TEST(OpSchema, AddTensorAlphaIsKeywordOnly) {
  const OpSchema *s = (&opSchema(ops::aten_add_Tensor));
  ASSERT_TRUE(s);
  ASSERT_EQ(s->args.size(), 3u);
  EXPECT_EQ(s->args[0].name, "self");
  EXPECT_EQ(s->args[0].type, "Tensor");
  EXPECT_FALSE(s->args[0].keywordOnly);
  EXPECT_FALSE(s->args[1].keywordOnly);
  const ArgDef *alpha = s->arg("alpha");
  ASSERT_TRUE(alpha);
  EXPECT_TRUE(alpha->keywordOnly);
  EXPECT_EQ(alpha->type, "Scalar");
  EXPECT_EQ(alpha->defaultValue, "1");
  EXPECT_FALSE(alpha->mutated);
  EXPECT_EQ(s->returns, std::vector<std::string>{"Tensor"});
  EXPECT_EQ(s->schema, "(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

TEST(OpSchema, InPlaceAddMutatesSelf) {
  const OpSchema *s = findOpSchema("aten.add_.Tensor");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->arg("self")->mutated);
  EXPECT_EQ(s->arg("self")->type, "Tensor");
  EXPECT_FALSE(s->arg("other")->mutated);
  EXPECT_TRUE(s->arg("alpha")->keywordOnly);
  for (const char *name : {"aten.relu_.default", "aten.hardswish_.default", "aten.dropout_.default"})
    EXPECT_TRUE(findOpSchema(name)->arg("self")->mutated) << name;
  // A view aliases its input without writing it.
  EXPECT_FALSE((&opSchema(ops::aten_view_default))->arg("self")->mutated);
}

TEST(OpSchema, BatchNorm) {
  const OpSchema *s = (&opSchema(ops::aten_batch_norm_default));
  ASSERT_TRUE(s);
  std::vector<std::string> names, types;
  for (const ArgDef &a : s->args) {
    names.push_back(a.name);
    types.push_back(a.type);
    EXPECT_FALSE(a.keywordOnly) << a.name;
    EXPECT_FALSE(a.mutated) << a.name;
    EXPECT_FALSE(a.defaultValue) << a.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"input", "weight", "bias", "running_mean",
                                             "running_var", "training", "momentum", "eps",
                                             "cudnn_enabled"}));
  EXPECT_EQ(types, (std::vector<std::string>{"Tensor", "Tensor?", "Tensor?", "Tensor?", "Tensor?",
                                             "bool", "float", "float", "bool"}));
}

TEST(OpSchema, ReturnsAndDefaults) {
  const OpSchema *sort = (&opSchema(ops::aten_sort_default));
  ASSERT_TRUE(sort);
  EXPECT_EQ(sort->returns, (std::vector<std::string>{"Tensor", "Tensor"}));
  EXPECT_EQ((&opSchema(ops::aten_split_Tensor))->returns, std::vector<std::string>{"Tensor[]"});
  EXPECT_TRUE((&opSchema(ops::aten__assert_tensor_metadata_default))->returns.empty());
  const OpSchema *conv = (&opSchema(ops::aten_conv2d_default));
  EXPECT_EQ(conv->arg("stride")->type, "SymInt[2]");
  EXPECT_EQ(conv->arg("stride")->defaultValue, "[1, 1]");
  EXPECT_EQ((&opSchema(ops::aten_gelu_default))->arg("approximate")->defaultValue, "\"none\"");
  const OpSchema *rand = (&opSchema(ops::gc_rand_default));
  ASSERT_TRUE(rand);
  EXPECT_TRUE(rand->arg("dtype")->keywordOnly);
  EXPECT_FALSE(rand->arg("offset")->keywordOnly);
}

TEST(OpSchema, ParsesAliasSetsAndQuotedCommas) {
  Expected<OpSchema> s = parseOpSchema(
      "x.y.z", "(Tensor(a -> *) self, Tensor(b!)? out, str mode=\"a, b\") -> Tensor(a)[]");
  ASSERT_TRUE(s) << s.error().message();
  ASSERT_EQ(s->args.size(), 3u);
  EXPECT_EQ(s->args[0].type, "Tensor");
  EXPECT_FALSE(s->args[0].mutated);
  EXPECT_EQ(s->args[1].type, "Tensor?");
  EXPECT_TRUE(s->args[1].mutated);
  EXPECT_EQ(s->args[2].defaultValue, "\"a, b\"");
  EXPECT_EQ(s->returns, std::vector<std::string>{"Tensor[]"});
}

TEST(OpSchema, RejectsMalformed) {
  for (const char *bad : {"", "Tensor self -> Tensor", "(Tensor self)", "(self) -> Tensor",
                          "(Tensor self, int[2 dims) -> Tensor", "(Tensor 1x) -> Tensor",
                          "(Tensor self) -> (Tensor"}) {
    Expected<OpSchema> s = parseOpSchema("x.y.z", bad);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message().find("x.y.z"), std::string::npos);
  }
}

TEST(OpVariants, EveryTorchSchemaParses) {
  EXPECT_GT(atenOverloads().size(), 3000u);
  for (const AtenOverload &o : atenOverloads()) {
    Expected<OpSchema> s = parseOpSchema(o.name, o.schema);
    EXPECT_TRUE(s) << (s ? "" : s.error().message());
  }
  EXPECT_TRUE(std::is_sorted(atenOverloads().begin(), atenOverloads().end(),
                             [](const AtenOverload &a, const AtenOverload &b) {
                               return a.name < b.name;
                             }));
}

/// The functional op and written arguments of variant `name`.
std::pair<std::string_view, std::vector<std::string>> variantOf(std::string_view name) {
  std::optional<OpId> op = lookupOp(name);
  const OpVariant *v = op ? findVariant(*op) : nullptr;
  if (!v)
    return {};
  return {opName(v->functional), v->written};
}

TEST(OpVariants, DerivedFromTheSchemas) {
  using Written = std::vector<std::string>;
  // In place: X_.ovl of X.ovl.
  EXPECT_EQ(variantOf("aten.fill_.Tensor"), std::pair(std::string_view("aten.fill.Tensor"), Written{"self"}));
  EXPECT_EQ(variantOf("aten.hardtanh_.default").first, "aten.hardtanh.default");
  EXPECT_EQ(variantOf("aten.mul_.Tensor").first, "aten.mul.Tensor");
  // dropout_ names its input `self`, dropout `input`: types decide.
  EXPECT_EQ(variantOf("aten.dropout_.default").first, "aten.dropout.default");
  // out=: the overload names do not say; the arguments do.
  EXPECT_EQ(variantOf("aten.add.out"), std::pair(std::string_view("aten.add.Tensor"), Written{"out"}));
  EXPECT_EQ(variantOf("aten.sum.IntList_out").first, "aten.sum.dim_IntList");
  EXPECT_EQ(variantOf("aten.sum.out").first, "aten.sum.default");
  // A variant has torch's schema and its functional op's traits.
  std::optional<OpId> uniform = lookupOp("aten.uniform_.default");
  ASSERT_TRUE(uniform);
  EXPECT_TRUE(hasTraits(*uniform, kRandom));
  EXPECT_FALSE(isCoreOp(*uniform));
  EXPECT_TRUE(opSchema(*uniform).args[0].mutated);
  EXPECT_EQ(findOpSchema("aten.uniform_.default"), &opSchema(*uniform));
  // Rows stay rows: copy_ is the write-back itself, resize_ changes sizes.
  for (const char *row : {"aten.copy_.default", "aten.resize_.default", "aten.detach_.default"}) {
    std::optional<OpId> op = lookupOp(row);
    ASSERT_TRUE(op) << row;
    EXPECT_LT(static_cast<size_t>(*op), kNumOps) << row;
    EXPECT_EQ(findVariant(*op), nullptr) << row;
  }
  // Not variants: an in-place op whose functional op gc lacks, a view.
  EXPECT_EQ(lookupOp("aten.cauchy_.default"), std::nullopt);
  EXPECT_EQ(variantOf("aten.view.default").first, "");
}

TEST(OpVariants, IdsFollowTheRows) {
  for (const OpVariant &v : opVariants()) {
    EXPECT_GE(static_cast<size_t>(v.id), kNumOps);
    EXPECT_EQ(lookupOp(opName(v.id)), v.id);
    EXPECT_EQ(opSchema(v.id).id, v.id);
    EXPECT_LT(static_cast<size_t>(v.functional), kNumOps);
    EXPECT_FALSE(v.written.empty());
  }
  EXPECT_GT(opVariants().size(), 500u);
}

} // namespace
} // namespace gc
