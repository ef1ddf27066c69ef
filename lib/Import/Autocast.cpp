//===- Autocast.cpp - torch.autocast's dtype rules per op -----------------===//
//
// The rules of the ops gc knows, per device. They were read from the torch
// that exports gc's test models (2.15): which ops have an autocast kernel on
// each device (the dispatcher's AutocastCPU and AutocastCUDA keys), the
// categories of ATen/autocast_mode.h for CUDA, and for CPU the dtype each
// registered op returns inside a bfloat16 region. An op absent here keeps
// its inputs' dtypes on both devices.
//
//===----------------------------------------------------------------------===//
#include "Autocast.h"

namespace gc {

namespace {

struct RuleRow {
  OpId op;
  AutocastRule cpu;
  AutocastRule cuda;
};

using enum AutocastRule;

constexpr RuleRow kRules[] = {
    // Matrix products and convolutions: lower precision.
    {ops::aten_addmm_default, Lower, Lower},
    {ops::aten_baddbmm_default, Lower, Lower},
    {ops::aten_bmm_default, Lower, Lower},
    {ops::aten_conv1d_default, Lower, Lower},
    {ops::aten_conv1d_padding, Lower, Keep},
    {ops::aten_conv2d_default, Lower, Lower},
    {ops::aten_conv2d_padding, Lower, Keep},
    {ops::aten_conv3d_default, Lower, Lower},
    {ops::aten_conv3d_padding, Lower, Keep},
    {ops::aten_conv_transpose1d_default, Lower, Lower},
    {ops::aten_conv_transpose2d_input, Lower, Lower},
    {ops::aten_conv_transpose3d_input, Lower, Lower},
    {ops::aten_convolution_default, Keep, Lower},
    {ops::aten_einsum_default, Keep, Lower},
    {ops::aten_linear_default, Lower, Lower},
    {ops::aten_matmul_default, Lower, Lower},
    {ops::aten_mm_default, Lower, Lower},
    {ops::aten_scaled_dot_product_attention_default, Lower, Lower},
    // Losses and products: float32 on both devices.
    {ops::aten_cross_entropy_loss_default, Float32, Keep},
    {ops::aten_mse_loss_default, Float32, Float32},
    {ops::aten_nll_loss_default, Float32, Float32},
    {ops::aten_prod_default, Float32, Float32},
    {ops::aten_prod_dim_int, Float32, Float32},
    // Transcendentals, norms, softmax and sums: float32 on CUDA only.
    {ops::aten_acos_default, Keep, Float32},
    {ops::aten_asin_default, Keep, Float32},
    {ops::aten_cosh_default, Keep, Float32},
    {ops::aten_cumprod_default, Keep, Float32},
    {ops::aten_cumsum_default, Keep, Float32},
    {ops::aten_exp_default, Keep, Float32},
    {ops::aten_expm1_default, Keep, Float32},
    {ops::aten_group_norm_default, Keep, Float32},
    {ops::aten_layer_norm_default, Keep, Float32},
    {ops::aten_linalg_vector_norm_default, Keep, Float32},
    {ops::aten_log_default, Keep, Float32},
    {ops::aten_log10_default, Keep, Float32},
    {ops::aten_log1p_default, Keep, Float32},
    {ops::aten_log2_default, Keep, Float32},
    {ops::aten_log_softmax_int, Keep, Float32},
    {ops::aten_logsumexp_default, Keep, Float32},
    {ops::aten_native_layer_norm_default, Keep, Float32},
    {ops::aten_pow_Scalar, Keep, Float32},
    {ops::aten_pow_Tensor_Scalar, Keep, Float32},
    {ops::aten_pow_Tensor_Tensor, Keep, Float32},
    {ops::aten_reciprocal_default, Keep, Float32},
    {ops::aten_rsqrt_default, Keep, Float32},
    {ops::aten_sinh_default, Keep, Float32},
    {ops::aten_softmax_int, Keep, Float32},
    {ops::aten_softplus_default, Keep, Float32},
    {ops::aten_sum_default, Keep, Float32},
    {ops::aten_sum_dim_IntList, Keep, Float32},
    {ops::aten_tan_default, Keep, Float32},
    // Several tensors meeting: the widest dtype.
    {ops::aten_cat_default, Widest, Keep},
    {ops::aten_index_copy_default, Widest, Keep},
    {ops::aten_index_put_default, Keep, Widest},
    {ops::aten_scatter_add_default, Keep, Widest},
    {ops::aten_stack_default, Widest, Keep},
};

} // namespace

std::optional<AutocastDevice> autocastDevice(std::string_view deviceType) {
  if (deviceType == "cpu")
    return AutocastDevice::Cpu;
  if (deviceType == "cuda")
    return AutocastDevice::Cuda;
  return std::nullopt;
}

AutocastRule autocastRule(OpId op, AutocastDevice device) {
  for (const RuleRow &row : kRules)
    if (row.op == op)
      return device == AutocastDevice::Cpu ? row.cpu : row.cuda;
  return Keep;
}

} // namespace gc
