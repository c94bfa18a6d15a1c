// The process-wide policy: which backend takes PDSYEVD calls, from the environment, read once.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "base/nccl_channels.hpp"

namespace pipevd {

enum class Backend { Auto, Gpu, Host, Scalapack };
const char* to_string(Backend b);

// PIPEVD_DBBR_COLUMNS's values.
enum class DbbrColumnsSetting { Auto, Cyclic, Blockwise };
// PIPEVD_POOL_GROWTH's values.
enum class PoolGrowthSetting { Whole, Staged };

struct Policy {
  Backend backend = Backend::Auto;
  long min_n = 0;        // below it, calls go to ScaLAPACK (PIPEVD_MIN_N)
  int verbose = 0;       // PIPEVD_VERBOSE: 0, 1 (a line per call), 2 (plus per-rank timelines)
  int engine_ranks = 0;  // PIPEVD_ENGINE_RANKS: host engine ranks per node; 0: all node-local ranks
  long band = 0;         // PIPEVD_BAND: DBBR's bandwidth b; 0: the engine's default
  long block = 0;        // PIPEVD_BLOCK: DBBR's outer block k (DBBR rounds it up to b's multiple)
  // PIPEVD_DBBR_Z: where DBBR forms each panel's Z with several engine ranks, "every_rank" (each
  // its own rows, gathered) or "owner" (the panel's owner, broadcast): core/dbbr.hpp.
  bool dbbr_z_on_every_rank = true;
  // PIPEVD_DBBR_COLUMNS: DBBR's columns over several engine ranks, "cyclic" (outer blocks dealt
  // out in turn, moved there after the upload, the rank's rows packed a panel), "blockwise" (the
  // engine layout's) or "auto" (interface/engine_options.hpp's dbbr_cyclic_by_default):
  // core/dbbr.hpp.
  DbbrColumnsSetting dbbr_columns = DbbrColumnsSetting::Auto;

  // PIPEVD_TRIDIAGONAL: the engine's stage-3 solver, "auto" (dc on the GPU, dstedc on the host
  // engine), "dstedc" or "dc" (core/engine.hpp's TridiagonalSolver).
  std::string tridiagonal = "auto";

  // PIPEVD_DC_FOLD: the D&C's top merge folded into the final GEMM, "auto" (several engine ranks,
  // stage 3 by dc, where the memory plan with it fits), "on" or "off" (core/call_plan.hpp's
  // DcFoldSetting).
  std::string dc_fold = "auto";

  // PIPEVD_SBR_BACK_BESIDE: SBR-back next to bulge chasing on a GPU where the memory plan allows,
  // "auto", "on" or "off", or beside DBBR with several engine ranks, "dbbr"
  // (core/call_plan.hpp's SbrBackBesideSetting).
  std::string sbr_back_beside = "auto";
  // PIPEVD_SBR_BACK_ORDER: SBR-back's order, "auto" (from the left on a rank that holds every row)
  // or "right" (from the right everywhere; core/sbr_back.hpp's SbrBackOrder).
  std::string sbr_back_order = "auto";
  // PIPEVD_DC_EARLY: engine rank 0's D&C started at SBR-back where the memory plan allows, "auto"
  // (several engine ranks), "on" or "off" (core/call_plan.hpp's DcEarlySetting).
  std::string dc_early = "auto";

  // PIPEVD_ENGINE_PATH: the engine's path, "auto" (core/engine_path.hpp's crossover table),
  // "two_stage" or "one_stage" (core/engine_path.hpp's EnginePathSetting).
  std::string engine_path = "auto";

  // PIPEVD_GPU_MEMORY_LIMIT: bytes of device memory the engine may use per rank (0: all free
  // memory on a GPU, no limit on the host engine, whose buffers it caps as well, for tests).
  long gpu_memory_limit = 0;
  // PIPEVD_HOST_MEMORY_LIMIT: bytes of host memory a call may add on one node, over all its ranks
  // (0: the memory cgroup's room, where one is set; core/host_memory_room.hpp).
  long host_memory_limit = 0;

  int dc_threads = 0;  // PIPEVD_DC_THREADS: the D&C's host threads; 0: every CPU
  int threads = 0;     // PIPEVD_THREADS: redistribution's threads cap; 0: none
  // PIPEVD_NODE_SEGMENT_MIB: the node window's segment limit per process in MiB (a call's parts
  // past it move in rounds: redistribute/window_rounds.hpp); 0: ExchangeOptions' default.
  long node_segment_mib = 0;
  bool panel_qr_cusolver = false;  // PIPEVD_GPU_PANEL_QR=cusolver: no fused panel QR
  bool aw_symm = true;  // PIPEVD_GPU_AW=gemm: DBBR's A W by GEMMs, not the one-triangle kernel
  // PIPEVD_GPU_BC_BACK: BC-back's kernel, "auto", "blas2" or "tensor" (gpu::BcBackKernel), for
  // real and complex matrices.
  std::string bc_back_kernel = "auto";
  // PIPEVD_DC_DEVICE_MERGE, PIPEVD_DC_PINNED (0 or 1; -1 unset): the D&C's merges on the device
  // (default on) and its pinned uploads (default off), core/tridiagonal_dc.hpp.
  int dc_device_merge = -1, dc_pinned = -1;

  // GPU kernels' tuning (bench/), given to the GPU backend at construction; 0 / -1: defaults.
  int panel_qr_blocks = 0;       // PIPEVD_GPU_PANEL_QR_BLOCKS: at most that many blocks
  int panel_qr_threads = 0;      // PIPEVD_GPU_PANEL_QR_THREADS: 256, 512 or 1024 per block
  int bc_blocks = -1;            // PIPEVD_GPU_BC_BLOCKS: bulge chasing's blocks (0: every SM)
  int bc_sweeps_per_block = -1;  // PIPEVD_GPU_BC_SWEEPS_PER_BLOCK
  int bc_exclusive = -1;         // PIPEVD_GPU_BC_EXCLUSIVE: blocks keep their SM (0 or 1)
  // PIPEVD_GPU_BC_LANES: the tensor-core BC-back's group lanes per row block, "auto" (0, the rounds
  // model of gpu/group_lanes_choice.hpp) or a count 1-8.
  int bc_back_lanes = 0;
  bool gpu_sharing = false;  // PIPEVD_GPU_SHARING=1: engine ranks may share a GPU
  // PIPEVD_NCCL_CHANNELS: the engine's NCCL communicator's channels at most (its CTAs per
  // collective, ncclConfig_t::maxCTAs); 0: NCCL's own choice.
  int nccl_channels = kDefaultNcclChannels;
  std::string timeline_path;  // PIPEVD_TIMELINE: the verbose-2 timeline's file
  // PIPEVD_TEST_NODES (tests only): one host split into pretend nodes, redistribute/node_split's
  // spec ("2+2", "0,2|1,3"), so the across-node route runs on one machine; empty: real nodes.
  std::string test_nodes;
  // PIPEVD_KEEP_MEMORY=0: the large host buffers go back after each call instead of being kept for
  // the next one (redistribute/kept_buffer.hpp).
  bool keep_memory = true;
  // PIPEVD_KEEP_DEVICE_MEMORY: the device pool keeps a call's memory for the next call (1), or is
  // trimmed at each call's end (0, default: the caller may allocate on the device between calls).
  bool keep_device_memory = false;
  // PIPEVD_PIN_MEMORY=0: the engine rank's kept copies of A and Z stay pageable, instead of being
  // registered with the GPU's driver after a call, for the next call's direct copies
  // (redistribute/kept_buffer.hpp).
  bool pin_memory = true;
  // PIPEVD_GPU_PREPARE=0: the engine rank's device is not readied (context, handles, pipevd's pool
  // grown to the plan's peak) in a thread beside the redistribution in, but at the engine's start.
  bool gpu_prepare = true;
  // PIPEVD_POOL_GROWTH: how the readied device's pool grows, "whole" (to the plan's peak before the
  // engine starts) or "staged" (to DBBR's stage first, the rest beside DBBR, where the device's
  // free memory leaves room for it: core/pool_growth.hpp).
  PoolGrowthSetting pool_growth = PoolGrowthSetting::Whole;
  // PIPEVD_PRELOAD_KERNELS: pipevd's kernels loaded while the device is readied (gpu/kernel_preload
  // .hpp), "on", or "off"/"auto" (each loads at its first launch, CUDA's lazy loading): the loads
  // beside NCCL's set-up lengthen it by about what they save the engine, so a whole first call
  // gains nothing yet; "on" pays once NCCL's set-up leaves the first call's critical path.
  std::string preload_kernels = "auto";
  // PIPEVD_PREPARE_AT_GRID (1, the default): the device readied for a grid's processes when BLACS
  // creates the grid (interface/grid_preparation.hpp): the engine's NCCL communicator begun and,
  // with the CUDA context, made in a thread, so that the first call finds them ready; 0 leaves
  // both to the first call.
  bool prepare_at_grid = true;
};

struct PolicyOrError {
  Policy policy;
  std::string error;  // empty when the environment was valid; otherwise names the variable
};

// Parses the policy from an environment lookup (nullptr, or an empty value, for unset): every
// PIPEVD_* setting of the library is read here, and a bad value is an error naming the variable.
// Pure, for tests.
PolicyOrError parse_policy(const std::function<const char*(const char*)>& getenv_fn);

// The policy of this process, parsed from the real environment on first use.
const PolicyOrError& process_policy();

// This process's PIPEVD_* variables, read once: "NAME\0VALUE\0" for each, in environment order.
// One rank's snapshot is what the caller ranks agree on (interface/agreement.hpp).
const std::string& environment_snapshot();

// Parses the policy from a snapshot (environment_snapshot's format).
PolicyOrError parse_policy_snapshot(const std::string& snapshot);

}  // namespace pipevd
