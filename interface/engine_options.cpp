#include "interface/engine_options.hpp"

namespace pipevd {

bool dbbr_cyclic_by_default(int gpu_engine_ranks) { return gpu_engine_ranks >= 4; }

EngineOptions engine_options(const Policy& policy, bool want_vectors, int gpu_engine_ranks) {
  EngineOptions opt;
  opt.want_vectors = want_vectors;
  // PIPEVD_BAND / PIPEVD_BLOCK (policy checked block >= band; DBBR rounds k up to a multiple of b).
  if (policy.band > 0) opt.b = policy.band;
  if (policy.block > 0) opt.k = policy.block;
  opt.dbbr_z_on_every_rank = policy.dbbr_z_on_every_rank;
  opt.dbbr_cyclic_blocks = policy.dbbr_columns == DbbrColumnsSetting::Auto
                               ? dbbr_cyclic_by_default(gpu_engine_ranks)
                               : policy.dbbr_columns == DbbrColumnsSetting::Cyclic;
  if (policy.sbr_back_order == "right") opt.sbr_back_order = SbrBackOrder::Right;
  opt.dc.threads = policy.dc_threads;  // 0: every CPU of the node
  opt.dc.verbose = policy.verbose >= 1;
  if (policy.dc_device_merge >= 0) opt.dc.merge_on_device = policy.dc_device_merge;
  if (policy.dc_pinned >= 0) opt.dc.pinned_staging = policy.dc_pinned;
  if (policy.tridiagonal == "dstedc") opt.tridiagonal = TridiagonalSolver::Dstedc;
  if (policy.tridiagonal == "dc") opt.tridiagonal = TridiagonalSolver::Dc;
  return opt;
}

GpuBackendSettings gpu_backend_settings(const Policy& policy, int host_threads) {
  GpuBackendSettings s;
  s.panel_qr_cusolver = policy.panel_qr_cusolver;
  s.bc_back_kernel = policy.bc_back_kernel;
  s.symmetric_product = policy.aw_symm;
  s.host_threads = host_threads;
  s.panel_qr_blocks = policy.panel_qr_blocks;
  s.panel_qr_threads = policy.panel_qr_threads;
  s.bc_blocks = policy.bc_blocks;
  s.bc_sweeps_per_block = policy.bc_sweeps_per_block;
  s.bc_exclusive = policy.bc_exclusive;
  s.bc_back_lanes = policy.bc_back_lanes;
  s.sharing = policy.gpu_sharing;
  s.nccl_channels = policy.nccl_channels;
  s.keep_pool = policy.keep_device_memory;
  return s;
}

}  // namespace pipevd
