// The policy's GPU knobs reach the GPU backend's settings through the one mapping the route
// (make_gpu_backend) and the benches (interface/gpu_options) share: interface/engine_options'
// gpu_backend_settings, then gpu/backend_settings. Plain structs: no device needed.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/nccl_channels.hpp"
#include "gpu/backend_settings.hpp"
#include "interface/engine_options.hpp"
#include "interface/gpu_options.hpp"
#include "interface/policy.hpp"

namespace pipevd {
namespace {

Policy parse(const std::map<std::string, std::string>& env) {
  const PolicyOrError p = parse_policy([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_TRUE(p.error.empty()) << p.error;
  return p.policy;
}

void expect_same(const gpu::GpuTuning& t, const gpu::GpuTuning& u) {
  EXPECT_EQ(t.panel_qr_blocks, u.panel_qr_blocks);
  EXPECT_EQ(t.panel_qr_threads, u.panel_qr_threads);
  EXPECT_EQ(t.bulge_chasing.sweeps_per_block, u.bulge_chasing.sweeps_per_block);
  EXPECT_EQ(t.bulge_chasing.max_blocks, u.bulge_chasing.max_blocks);
  EXPECT_EQ(t.bulge_chasing.exclusive_sms, u.bulge_chasing.exclusive_sms);
  EXPECT_EQ(t.sharing, u.sharing);
  EXPECT_EQ(t.nccl_channels, u.nccl_channels);
  EXPECT_EQ(t.bc_back_lanes, u.bc_back_lanes);
}

// Unset knobs leave the kernels' own defaults, from the policy and from default settings alike.
TEST(PolicyGpuTuning, UnsetKnobsKeepTheDefaults) {
  const gpu::GpuTuning defaults;
  expect_same(gpu_tuning(parse({})), defaults);
  expect_same(gpu::tuning_of(GpuBackendSettings{}), defaults);
  EXPECT_EQ(gpu_tuning(parse({})).nccl_channels, kDefaultNcclChannels);
}

// Every tuning knob set to a value unlike the others' (a swapped field shows) reaches GpuTuning;
// PIPEVD_NCCL_CHANNELS=0 stays 0 (NCCL's own choice), not the default.
TEST(PolicyGpuTuning, KnobsReachTheTuning) {
  const Policy p = parse({{"PIPEVD_GPU_PANEL_QR_BLOCKS", "66"},
                          {"PIPEVD_GPU_PANEL_QR_THREADS", "512"},
                          {"PIPEVD_GPU_BC_BLOCKS", "7"},
                          {"PIPEVD_GPU_BC_SWEEPS_PER_BLOCK", "4"},
                          {"PIPEVD_GPU_BC_EXCLUSIVE", "1"},
                          {"PIPEVD_GPU_SHARING", "1"},
                          {"PIPEVD_NCCL_CHANNELS", "0"},
                          {"PIPEVD_GPU_BC_LANES", "6"}});
  gpu::GpuTuning want;
  want.panel_qr_blocks = 66;
  want.panel_qr_threads = 512;
  want.bulge_chasing.max_blocks = 7;
  want.bulge_chasing.sweeps_per_block = 4;
  want.bulge_chasing.exclusive_sms = 1;
  want.sharing = true;
  want.nccl_channels = 0;
  want.bc_back_lanes = 6;
  expect_same(gpu_tuning(p), want);
  // The route's path: the settings with its host threads, then the tuning.
  expect_same(gpu::tuning_of(gpu_backend_settings(p, 6)), want);
  EXPECT_EQ(gpu_tuning(parse({{"PIPEVD_NCCL_CHANNELS", "64"}})).nccl_channels, 64);
  EXPECT_EQ(gpu_tuning(parse({{"PIPEVD_GPU_BC_LANES", "3"}})).bc_back_lanes, 3);
}

// The knobs that are backend setters rather than tuning, as make_gpu_backend receives them.
TEST(PolicyGpuTuning, BackendSettings) {
  const GpuBackendSettings d = gpu_backend_settings(parse({}), 3);
  EXPECT_FALSE(d.panel_qr_cusolver);
  EXPECT_EQ(d.bc_back_kernel, "auto");
  EXPECT_TRUE(d.symmetric_product);
  EXPECT_EQ(d.host_threads, 3);
  EXPECT_EQ(gpu_backend_settings(parse({})).host_threads, 1);
  const GpuBackendSettings s = gpu_backend_settings(parse({{"PIPEVD_GPU_PANEL_QR", "cusolver"},
                                                           {"PIPEVD_GPU_BC_BACK", "tensor"},
                                                           {"PIPEVD_GPU_AW", "gemm"}}),
                                                    1);
  EXPECT_TRUE(s.panel_qr_cusolver);
  EXPECT_FALSE(s.symmetric_product);
  EXPECT_EQ(gpu::bc_back_kernel_named(s.bc_back_kernel), gpu::BcBackKernel::Tensor);
  EXPECT_EQ(gpu::bc_back_kernel_named("blas2"), gpu::BcBackKernel::Blas2);
  EXPECT_EQ(gpu::bc_back_kernel_named("auto"), gpu::BcBackKernel::Auto);
}

}  // namespace
}  // namespace pipevd
