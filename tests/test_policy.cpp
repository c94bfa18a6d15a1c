#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "interface/decision.hpp"
#include "interface/engine_options.hpp"
#include "interface/policy.hpp"

namespace pipevd {
namespace {

PolicyOrError parse(const std::map<std::string, std::string>& env) {
  return parse_policy([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Policy, DefaultsWhenUnset) {
  const PolicyOrError p = parse({});
  EXPECT_TRUE(p.error.empty());
  EXPECT_EQ(p.policy.backend, Backend::Auto);
  EXPECT_EQ(p.policy.min_n, 0);
  EXPECT_EQ(p.policy.verbose, 0);
}

TEST(Policy, ParsesEveryBackend) {
  EXPECT_EQ(parse({{"PIPEVD_BACKEND", "gpu"}}).policy.backend, Backend::Gpu);
  EXPECT_EQ(parse({{"PIPEVD_BACKEND", "host"}}).policy.backend, Backend::Host);
  EXPECT_EQ(parse({{"PIPEVD_BACKEND", "scalapack"}}).policy.backend, Backend::Scalapack);
  EXPECT_EQ(parse({{"PIPEVD_BACKEND", "auto"}}).policy.backend, Backend::Auto);
}

TEST(Policy, ParsesTheTridiagonalSolver) {
  EXPECT_EQ(parse({}).policy.tridiagonal, "auto");
  EXPECT_EQ(parse({{"PIPEVD_TRIDIAGONAL", "dc"}}).policy.tridiagonal, "dc");
  EXPECT_EQ(parse({{"PIPEVD_TRIDIAGONAL", "dstedc"}}).policy.tridiagonal, "dstedc");
  EXPECT_NE(parse({{"PIPEVD_TRIDIAGONAL", "DC"}}).error.find("PIPEVD_TRIDIAGONAL"),
            std::string::npos);
}

// PIPEVD_ENGINE_PATH forces the engine's path (core/engine_path.hpp); a bad value is the policy's
// strict error, naming the variable and the choices.
TEST(Policy, ParsesTheEnginePath) {
  EXPECT_EQ(parse({}).policy.engine_path, "auto");
  for (const char* v : {"auto", "two_stage", "one_stage"}) {
    const PolicyOrError p = parse({{"PIPEVD_ENGINE_PATH", v}});
    EXPECT_TRUE(p.error.empty()) << p.error;
    EXPECT_EQ(p.policy.engine_path, v);
  }
  EXPECT_EQ(parse({{"PIPEVD_ENGINE_PATH", ""}}).policy.engine_path, "auto");
  for (const char* bad : {"one-stage", "ONE_STAGE", "1", "cusolver"})
    EXPECT_EQ(
        parse({{"PIPEVD_ENGINE_PATH", bad}}).error,
        std::string("PIPEVD_ENGINE_PATH='") + bad + "' is not one of auto, two_stage, one_stage");
}

// A three-way setting (auto, on, off): "auto" by default and when empty, each choice taken as it
// is, anything else the policy's strict error naming the variable and the choices.
void expect_three_way_setting(const char* var, std::string Policy::*field,
                              const std::vector<std::string>& more = {}) {
  EXPECT_EQ(parse({}).policy.*field, "auto") << var;
  std::vector<std::string> values = {"auto", "on", "off"};
  values.insert(values.end(), more.begin(), more.end());
  std::string choices;
  for (const std::string& v : values) {
    const PolicyOrError p = parse({{var, v}});
    EXPECT_TRUE(p.error.empty()) << p.error;
    EXPECT_EQ(p.policy.*field, v) << var;
    choices += (choices.empty() ? "" : ", ") + v;
  }
  EXPECT_EQ(parse({{var, ""}}).policy.*field, "auto") << var;
  for (const char* bad : {"1", "0", "ON", "OFF", "yes", "true", " on", "DBBR"})
    EXPECT_EQ(parse({{var, bad}}).error,
              std::string(var) + "='" + bad + "' is not one of " + choices);
}

// PIPEVD_DC_FOLD: the D&C's top merge folded into the final GEMM by the call plan (auto), always
// (on) or never (off). PIPEVD_SBR_BACK_BESIDE: SBR-back next to bulge chasing where the memory
// plan fits (auto, on), after it (off), or beside DBBR (dbbr). PIPEVD_DC_EARLY: rank 0's D&C
// started at SBR-back with several engine ranks (auto), with any number (on), or never (off).
TEST(Policy, ParsesTheThreeWaySettings) {
  expect_three_way_setting("PIPEVD_DC_FOLD", &Policy::dc_fold);
  expect_three_way_setting("PIPEVD_SBR_BACK_BESIDE", &Policy::sbr_back_beside, {"dbbr"});
  expect_three_way_setting("PIPEVD_DC_EARLY", &Policy::dc_early);
  expect_three_way_setting("PIPEVD_PRELOAD_KERNELS", &Policy::preload_kernels);
}

TEST(Policy, BadValuesNameTheVariable) {
  for (const auto& [var, value] : std::map<std::string, std::string>{
           {"PIPEVD_BACKEND", "GPU"}, {"PIPEVD_MIN_N", "-3"}, {"PIPEVD_VERBOSE", "yes"}}) {
    const PolicyOrError p = parse({{var, value}});
    EXPECT_NE(p.error.find(var), std::string::npos) << p.error;
  }
  EXPECT_FALSE(parse({{"PIPEVD_MIN_N", "12abc"}}).error.empty());
  EXPECT_FALSE(parse({{"PIPEVD_VERBOSE", "3"}}).error.empty());
  EXPECT_EQ(parse({{"PIPEVD_MIN_N", "4096"}}).policy.min_n, 4096);
  EXPECT_EQ(parse({{"PIPEVD_VERBOSE", "2"}}).policy.verbose, 2);
}

TEST(Policy, EngineRanksPerNode) {
  EXPECT_EQ(parse({}).policy.engine_ranks, 0);
  EXPECT_EQ(parse({{"PIPEVD_ENGINE_RANKS", "3"}}).policy.engine_ranks, 3);
  for (const char* bad : {"0", "-1", "two", "2x"}) {
    const PolicyOrError p = parse({{"PIPEVD_ENGINE_RANKS", bad}});
    EXPECT_NE(p.error.find("PIPEVD_ENGINE_RANKS"), std::string::npos) << bad;
  }
}

// Where DBBR forms each panel's Z (core/dbbr.hpp), parsed here and handed to the engine's options.
TEST(Policy, DbbrZ) {
  EXPECT_TRUE(parse({}).policy.dbbr_z_on_every_rank);
  EXPECT_TRUE(parse({{"PIPEVD_DBBR_Z", "every_rank"}}).policy.dbbr_z_on_every_rank);
  EXPECT_FALSE(parse({{"PIPEVD_DBBR_Z", "owner"}}).policy.dbbr_z_on_every_rank);
  EXPECT_EQ(parse({{"PIPEVD_DBBR_Z", "root"}}).error,
            "PIPEVD_DBBR_Z='root' is not one of every_rank, owner");
  EXPECT_TRUE(engine_options(parse({}).policy, true).dbbr_z_on_every_rank);
  EXPECT_FALSE(
      engine_options(parse({{"PIPEVD_DBBR_Z", "owner"}}).policy, true).dbbr_z_on_every_rank);
}

// DBBR's columns over the engine ranks (core/dbbr_columns.hpp): auto by default, cyclic from 4
// GPU engine ranks and blockwise below them and on the host engine; either forced at any count.
TEST(Policy, DbbrColumns) {
  EXPECT_EQ(parse({}).policy.dbbr_columns, DbbrColumnsSetting::Auto);
  EXPECT_EQ(parse({{"PIPEVD_DBBR_COLUMNS", "auto"}}).policy.dbbr_columns, DbbrColumnsSetting::Auto);
  EXPECT_EQ(parse({{"PIPEVD_DBBR_COLUMNS", "cyclic"}}).policy.dbbr_columns,
            DbbrColumnsSetting::Cyclic);
  EXPECT_EQ(parse({{"PIPEVD_DBBR_COLUMNS", "blockwise"}}).policy.dbbr_columns,
            DbbrColumnsSetting::Blockwise);
  EXPECT_EQ(parse({{"PIPEVD_DBBR_COLUMNS", "round_robin"}}).error,
            "PIPEVD_DBBR_COLUMNS='round_robin' is not one of auto, cyclic, blockwise");
  const Policy automatic = parse({}).policy;
  for (int gpu_ranks : {0, 1, 2, 3}) {
    EXPECT_FALSE(engine_options(automatic, true, gpu_ranks).dbbr_cyclic_blocks) << gpu_ranks;
    EXPECT_FALSE(dbbr_cyclic_by_default(gpu_ranks)) << gpu_ranks;
  }
  for (int gpu_ranks : {4, 5, 8}) {
    EXPECT_TRUE(engine_options(automatic, true, gpu_ranks).dbbr_cyclic_blocks) << gpu_ranks;
    EXPECT_TRUE(engine_options(automatic, false, gpu_ranks).dbbr_cyclic_blocks) << gpu_ranks;
  }
  for (int gpu_ranks : {0, 2, 4}) {
    EXPECT_TRUE(engine_options(parse({{"PIPEVD_DBBR_COLUMNS", "cyclic"}}).policy, true, gpu_ranks)
                    .dbbr_cyclic_blocks)
        << gpu_ranks;
    EXPECT_FALSE(
        engine_options(parse({{"PIPEVD_DBBR_COLUMNS", "blockwise"}}).policy, true, gpu_ranks)
            .dbbr_cyclic_blocks)
        << gpu_ranks;
  }
}

// How the readied device's pool grows (core/pool_growth.hpp): whole by default, staged where asked,
// anything else an error naming the variable.
TEST(Policy, PoolGrowth) {
  EXPECT_EQ(parse({}).policy.pool_growth, PoolGrowthSetting::Whole);
  EXPECT_EQ(parse({{"PIPEVD_POOL_GROWTH", "whole"}}).policy.pool_growth, PoolGrowthSetting::Whole);
  EXPECT_EQ(parse({{"PIPEVD_POOL_GROWTH", "staged"}}).policy.pool_growth,
            PoolGrowthSetting::Staged);
  EXPECT_EQ(parse({{"PIPEVD_POOL_GROWTH", "stages"}}).error,
            "PIPEVD_POOL_GROWTH='stages' is not one of whole, staged");
  EXPECT_EQ(parse({{"PIPEVD_POOL_GROWTH", "Staged"}}).error,
            "PIPEVD_POOL_GROWTH='Staged' is not one of whole, staged");
}

// SBR-back's order (core/sbr_back.hpp): auto by default (from the left on a rank with every row),
// right on every rank where asked, handed to the engine's options.
TEST(Policy, SbrBackOrder) {
  EXPECT_EQ(parse({}).policy.sbr_back_order, "auto");
  EXPECT_EQ(parse({{"PIPEVD_SBR_BACK_ORDER", "right"}}).policy.sbr_back_order, "right");
  EXPECT_EQ(parse({{"PIPEVD_SBR_BACK_ORDER", "left"}}).error,
            "PIPEVD_SBR_BACK_ORDER='left' is not one of auto, right");
  EXPECT_EQ(engine_options(parse({}).policy, true).sbr_back_order, SbrBackOrder::Auto);
  EXPECT_EQ(engine_options(parse({{"PIPEVD_SBR_BACK_ORDER", "auto"}}).policy, true).sbr_back_order,
            SbrBackOrder::Auto);
  EXPECT_EQ(engine_options(parse({{"PIPEVD_SBR_BACK_ORDER", "right"}}).policy, true).sbr_back_order,
            SbrBackOrder::Right);
}

// Threads of the D&C and the redistribution, and the panel QR path: parsed and checked here, so a
// bad value stops the job naming the variable like every other setting.
TEST(Policy, ThreadsAndPanelQr) {
  EXPECT_EQ(parse({}).policy.dc_threads, 0);
  EXPECT_EQ(parse({{"PIPEVD_DC_THREADS", "12"}}).policy.dc_threads, 12);
  EXPECT_EQ(parse({{"PIPEVD_THREADS", "3"}}).policy.threads, 3);
  EXPECT_TRUE(parse({{"PIPEVD_GPU_PANEL_QR", "cusolver"}}).policy.panel_qr_cusolver);
  EXPECT_TRUE(parse({{"PIPEVD_GPU_AW", "symm"}}).policy.aw_symm);
  EXPECT_FALSE(parse({{"PIPEVD_GPU_AW", "gemm"}}).policy.aw_symm);
  EXPECT_TRUE(parse({}).policy.aw_symm);
  EXPECT_NE(parse({{"PIPEVD_GPU_AW", "auto"}}).error.find("PIPEVD_GPU_AW"), std::string::npos);
  EXPECT_EQ(parse({}).policy.bc_back_kernel, "auto");
  for (const char* v : {"auto", "blas2", "tensor"}) {
    const PolicyOrError p = parse({{"PIPEVD_GPU_BC_BACK", v}});
    EXPECT_TRUE(p.error.empty()) << v;
    EXPECT_EQ(p.policy.bc_back_kernel, v);
  }
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_BACK", "blas3"}}).error,
            "PIPEVD_GPU_BC_BACK='blas3' is not one of auto, blas2, tensor");
  for (const char* bad : {"auto, tensor", "tensor,", "Tensor"})
    EXPECT_NE(parse({{"PIPEVD_GPU_BC_BACK", bad}}).error.find("PIPEVD_GPU_BC_BACK"),
              std::string::npos)
        << bad;
  EXPECT_FALSE(parse({{"PIPEVD_GPU_PANEL_QR", "auto"}}).policy.panel_qr_cusolver);
  for (const char* var : {"PIPEVD_DC_THREADS", "PIPEVD_THREADS"})
    for (const char* bad : {"0", "-2", "many", "4x"}) {
      const PolicyOrError p = parse({{var, bad}});
      EXPECT_NE(p.error.find(var), std::string::npos) << var << "=" << bad;
    }
  EXPECT_NE(parse({{"PIPEVD_GPU_PANEL_QR", "magma"}}).error.find("PIPEVD_GPU_PANEL_QR"),
            std::string::npos);
  EXPECT_EQ(parse({}).policy.dc_device_merge, -1);
  EXPECT_EQ(parse({{"PIPEVD_DC_DEVICE_MERGE", "1"}}).policy.dc_device_merge, 1);
  EXPECT_EQ(parse({{"PIPEVD_DC_PINNED", "0"}}).policy.dc_pinned, 0);
  for (const char* var : {"PIPEVD_DC_DEVICE_MERGE", "PIPEVD_DC_PINNED"})
    EXPECT_NE(parse({{var, "yes"}}).error.find(var), std::string::npos) << var;
}

TEST(Policy, BandAndBlock) {
  EXPECT_EQ(parse({}).policy.band, 0);  // 0: the engine's defaults
  EXPECT_EQ(parse({}).policy.block, 0);
  const PolicyOrError p = parse({{"PIPEVD_BAND", "64"}, {"PIPEVD_BLOCK", "2048"}});
  EXPECT_TRUE(p.error.empty()) << p.error;
  EXPECT_EQ(p.policy.band, 64);
  EXPECT_EQ(p.policy.block, 2048);
  EXPECT_EQ(parse({{"PIPEVD_BLOCK", "100"}}).policy.block, 100);  // any k: DBBR rounds it up to b
  EXPECT_EQ(parse({{"PIPEVD_BAND", "1"}}).policy.band, 1);
  for (const char* bad : {"0", "-32", "32x", "1025", "b"}) {
    const PolicyOrError q = parse({{"PIPEVD_BAND", bad}});
    EXPECT_NE(q.error.find("PIPEVD_BAND"), std::string::npos) << bad;
  }
  for (const char* bad : {"0", "-1", "1k", "65537"}) {
    const PolicyOrError q = parse({{"PIPEVD_BLOCK", bad}});
    EXPECT_NE(q.error.find("PIPEVD_BLOCK"), std::string::npos) << bad;
  }
  // A block narrower than one panel.
  const PolicyOrError q = parse({{"PIPEVD_BAND", "64"}, {"PIPEVD_BLOCK", "32"}});
  EXPECT_NE(q.error.find("PIPEVD_BLOCK=32 is smaller than PIPEVD_BAND=64"), std::string::npos)
      << q.error;
}

TEST(Policy, NodeSegmentMib) {
  EXPECT_EQ(parse({}).policy.node_segment_mib, 0);  // 0: the redistribution's default
  EXPECT_EQ(parse({{"PIPEVD_NODE_SEGMENT_MIB", "64"}}).policy.node_segment_mib, 64);
  for (const char* bad : {"0", "-1", "64M", "1048577"}) {
    const PolicyOrError q = parse({{"PIPEVD_NODE_SEGMENT_MIB", bad}});
    EXPECT_NE(q.error.find("PIPEVD_NODE_SEGMENT_MIB"), std::string::npos) << bad;
  }
}

// auto never takes the host engine: without a GPU a relinked code keeps ScaLAPACK's speed and
// memory.
// An empty value means unset (`export PIPEVD_BAND=`, mpirun -x with an empty value): the default,
// no error, for every variable.
TEST(Policy, EmptyIsUnset) {
  const Policy d = parse({}).policy;
  for (const char* var : {"PIPEVD_BACKEND",
                          "PIPEVD_MIN_N",
                          "PIPEVD_VERBOSE",
                          "PIPEVD_ENGINE_RANKS",
                          "PIPEVD_BAND",
                          "PIPEVD_BLOCK",
                          "PIPEVD_NODE_SEGMENT_MIB",
                          "PIPEVD_TRIDIAGONAL",
                          "PIPEVD_DBBR_Z",
                          "PIPEVD_DBBR_COLUMNS",
                          "PIPEVD_SBR_BACK_ORDER",
                          "PIPEVD_ENGINE_PATH",
                          "PIPEVD_GPU_MEMORY_LIMIT",
                          "PIPEVD_DC_THREADS",
                          "PIPEVD_THREADS",
                          "PIPEVD_DC_DEVICE_MERGE",
                          "PIPEVD_DC_PINNED",
                          "PIPEVD_GPU_BC_BACK",
                          "PIPEVD_GPU_PANEL_QR",
                          "PIPEVD_GPU_AW",
                          "PIPEVD_GPU_SHARING",
                          "PIPEVD_GPU_PREPARE",
                          "PIPEVD_POOL_GROWTH",
                          "PIPEVD_PREPARE_AT_GRID",
                          "PIPEVD_GPU_PANEL_QR_BLOCKS",
                          "PIPEVD_GPU_PANEL_QR_THREADS",
                          "PIPEVD_GPU_BC_BLOCKS",
                          "PIPEVD_GPU_BC_SWEEPS_PER_BLOCK",
                          "PIPEVD_GPU_BC_EXCLUSIVE",
                          "PIPEVD_NCCL_CHANNELS",
                          "PIPEVD_TIMELINE"}) {
    const PolicyOrError p = parse({{var, ""}});
    EXPECT_TRUE(p.error.empty()) << var << ": " << p.error;
    EXPECT_EQ(p.policy.backend, d.backend) << var;
    EXPECT_EQ(p.policy.band, d.band) << var;
    EXPECT_EQ(p.policy.min_n, d.min_n) << var;
    EXPECT_EQ(p.policy.bc_blocks, d.bc_blocks) << var;
    EXPECT_EQ(p.policy.nccl_channels, d.nccl_channels) << var;
    EXPECT_EQ(p.policy.timeline_path, d.timeline_path) << var;
    EXPECT_EQ(p.policy.dbbr_columns, d.dbbr_columns) << var;
    EXPECT_EQ(p.policy.sbr_back_order, d.sbr_back_order) << var;
    EXPECT_EQ(p.policy.pool_growth, d.pool_growth) << var;
  }
}

// The settings the GPU code and the timeline read, parsed here like every other (they were read
// where used, bad values ignored): valid, bad (an error naming the variable), unset.
TEST(Policy, GpuTuningSharingAndTimeline) {
  const Policy d = parse({}).policy;
  EXPECT_EQ(d.panel_qr_blocks, 0);
  EXPECT_EQ(d.panel_qr_threads, 0);
  EXPECT_EQ(d.bc_blocks, -1);
  EXPECT_EQ(d.bc_sweeps_per_block, -1);
  EXPECT_EQ(d.bc_exclusive, -1);
  EXPECT_FALSE(d.gpu_sharing);
  EXPECT_EQ(d.nccl_channels, 8);
  EXPECT_TRUE(d.timeline_path.empty());
  EXPECT_EQ(parse({{"PIPEVD_GPU_PANEL_QR_BLOCKS", "66"}}).policy.panel_qr_blocks, 66);
  EXPECT_EQ(parse({{"PIPEVD_GPU_PANEL_QR_THREADS", "512"}}).policy.panel_qr_threads, 512);
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_BLOCKS", "0"}}).policy.bc_blocks, 0);
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_SWEEPS_PER_BLOCK", "4"}}).policy.bc_sweeps_per_block, 4);
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_EXCLUSIVE", "1"}}).policy.bc_exclusive, 1);
  EXPECT_EQ(parse({{"PIPEVD_NCCL_CHANNELS", "0"}}).policy.nccl_channels, 0);
  EXPECT_EQ(parse({{"PIPEVD_NCCL_CHANNELS", "64"}}).policy.nccl_channels, 64);
  EXPECT_TRUE(parse({{"PIPEVD_GPU_SHARING", "1"}}).policy.gpu_sharing);
  EXPECT_FALSE(parse({{"PIPEVD_GPU_SHARING", "0"}}).policy.gpu_sharing);
  EXPECT_EQ(parse({{"PIPEVD_TIMELINE", "/tmp/t.json"}}).policy.timeline_path, "/tmp/t.json");
  EXPECT_TRUE(d.keep_memory);
  EXPECT_FALSE(parse({{"PIPEVD_KEEP_MEMORY", "0"}}).policy.keep_memory);
  EXPECT_TRUE(parse({{"PIPEVD_KEEP_MEMORY", "1"}}).policy.keep_memory);
  EXPECT_TRUE(parse({{"PIPEVD_KEEP_MEMORY", ""}}).policy.keep_memory);
  EXPECT_FALSE(parse({}).policy.keep_device_memory);
  EXPECT_TRUE(parse({{"PIPEVD_KEEP_DEVICE_MEMORY", "1"}}).policy.keep_device_memory);
  EXPECT_FALSE(parse({{"PIPEVD_KEEP_DEVICE_MEMORY", "0"}}).policy.keep_device_memory);
  EXPECT_TRUE(d.pin_memory);
  EXPECT_FALSE(parse({{"PIPEVD_PIN_MEMORY", "0"}}).policy.pin_memory);
  EXPECT_TRUE(parse({{"PIPEVD_PIN_MEMORY", "1"}}).policy.pin_memory);
  EXPECT_TRUE(parse({{"PIPEVD_PIN_MEMORY", ""}}).policy.pin_memory);
  EXPECT_TRUE(d.gpu_prepare);
  EXPECT_FALSE(parse({{"PIPEVD_GPU_PREPARE", "0"}}).policy.gpu_prepare);
  EXPECT_TRUE(parse({{"PIPEVD_GPU_PREPARE", "1"}}).policy.gpu_prepare);
  EXPECT_TRUE(d.prepare_at_grid);
  EXPECT_TRUE(parse({{"PIPEVD_PREPARE_AT_GRID", "1"}}).policy.prepare_at_grid);
  EXPECT_FALSE(parse({{"PIPEVD_PREPARE_AT_GRID", "0"}}).policy.prepare_at_grid);
  EXPECT_TRUE(parse({{"PIPEVD_PREPARE_AT_GRID", ""}}).policy.prepare_at_grid);
  EXPECT_EQ(d.bc_back_lanes, 0);
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_LANES", "auto"}}).policy.bc_back_lanes, 0);
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_LANES", ""}}).policy.bc_back_lanes, 0);
  EXPECT_EQ(parse({{"PIPEVD_GPU_BC_LANES", "5"}}).policy.bc_back_lanes, 5);
  for (const auto& [var, bad] :
       std::map<std::string, std::string>{{"PIPEVD_GPU_PANEL_QR_BLOCKS", "0"},
                                          {"PIPEVD_GPU_PANEL_QR_THREADS", "384"},
                                          {"PIPEVD_GPU_BC_BLOCKS", "-1"},
                                          {"PIPEVD_GPU_BC_SWEEPS_PER_BLOCK", "0"},
                                          {"PIPEVD_GPU_BC_EXCLUSIVE", "yes"},
                                          {"PIPEVD_GPU_BC_LANES", "fill"},
                                          {"PIPEVD_GPU_BC_LANES", "9"},
                                          {"PIPEVD_NCCL_CHANNELS", "65"},
                                          {"PIPEVD_GPU_SHARING", "true"},
                                          {"PIPEVD_KEEP_MEMORY", "no"},
                                          {"PIPEVD_KEEP_DEVICE_MEMORY", "yes"},
                                          {"PIPEVD_PIN_MEMORY", "on"},
                                          {"PIPEVD_GPU_PREPARE", "off"},
                                          {"PIPEVD_PREPARE_AT_GRID", "yes"}}) {
    const PolicyOrError p = parse({{var, bad}});
    EXPECT_NE(p.error.find(var), std::string::npos) << var << "=" << bad << ": " << p.error;
  }
  EXPECT_NE(parse({{"PIPEVD_GPU_BC_BLOCKS", "2097152"}}).error.find("PIPEVD_GPU_BC_BLOCKS"),
            std::string::npos);
  EXPECT_NE(parse({{"PIPEVD_NCCL_CHANNELS", "-1"}}).error.find("PIPEVD_NCCL_CHANNELS"),
            std::string::npos);
}

TEST(Decision, AutoTakesTheGpuElseScalapack) {
  Policy p;
  EXPECT_EQ(decide(p, 1000, {true, true}).route, Route::Gpu);
  EXPECT_EQ(decide(p, 1000, {true, false}).route, Route::Scalapack);
  EXPECT_EQ(decide(p, 1000, {false, false}).route, Route::Scalapack);
  p.backend = Backend::Host;
  EXPECT_EQ(decide(p, 1000, {true, false}).route, Route::Host);
  EXPECT_EQ(decide(p, 1000, {true, true}).route, Route::Host);
  p.backend = Backend::Auto;
  p.min_n = 2000;
  EXPECT_EQ(decide(p, 1000, {true, true}).route, Route::Scalapack);
  EXPECT_EQ(decide(p, 2000, {true, true}).route, Route::Gpu);
}

TEST(Decision, EnginesOnlyUpToTheirLimit) {
  Policy p;
  EngineAvailability host_only{true, false, 46340}, both{true, true, 46340};
  EXPECT_EQ(decide(p, 46340, host_only).route, Route::Scalapack);  // auto: no GPU
  EXPECT_EQ(decide(p, 46340, both).route, Route::Gpu);
  EXPECT_EQ(decide(p, 46341, both).route, Route::Scalapack);
  p.backend = Backend::Host;
  EXPECT_TRUE(decide(p, 46340, host_only).error.empty());
  EXPECT_NE(decide(p, 46341, host_only).error.find("limit"), std::string::npos);
  p.backend = Backend::Gpu;
  EXPECT_TRUE(decide(p, 46340, both).error.empty());
  EXPECT_NE(decide(p, 46341, both).error.find("limit"), std::string::npos);
}

TEST(Decision, ExplicitBackendThatIsMissingIsAnError) {
  Policy p;
  p.backend = Backend::Gpu;
  EXPECT_FALSE(decide(p, 100, {true, false}).error.empty());
  EXPECT_TRUE(decide(p, 100, {true, true}).error.empty());
  p.backend = Backend::Host;
  EXPECT_FALSE(decide(p, 100, {false, false}).error.empty());
  p.backend = Backend::Scalapack;
  const Decision d = decide(p, 100, {true, true});
  EXPECT_EQ(d.route, Route::Scalapack);
  EXPECT_TRUE(d.error.empty());
}

// PIPEVD_ENGINE_PATH never changes the route (PDSYEVD and PZHEEVD alike): both engines run both
// paths, the path is chosen after the route (core/engine_path.hpp). In particular two_stage on the
// GPU engine is neither forwarded nor an error.
TEST(Decision, EnginePathDoesNotChangeTheRoute) {
  for (Backend backend : {Backend::Auto, Backend::Gpu, Backend::Host, Backend::Scalapack})
    for (const char* path : {"auto", "two_stage", "one_stage"}) {
      Policy p;
      p.backend = backend;
      p.engine_path = path;
      const Decision d = decide(p, 1000, {true, true});
      EXPECT_TRUE(d.error.empty()) << d.error;
      const Route want = backend == Backend::Host        ? Route::Host
                         : backend == Backend::Scalapack ? Route::Scalapack
                                                         : Route::Gpu;
      EXPECT_EQ(d.route, want) << path;
    }
}

}  // namespace
}  // namespace pipevd
