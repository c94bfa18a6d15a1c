// Stage 2 on the GPU: bulge chasing, symmetric band -> tridiagonal, all n-2 sweeps at once.
//
// One kernel runs the sweeps concurrently (tridiagonalization paper §4.2, Algorithm 2; the
// band-to-bidiagonal paper §IV): a group of `threads_per_sweep` threads (a warp or part of one)
// chases one sweep; step (s,t) starts once sweep s-1 has published completion of its step
// ReflectorLayout::prerequisite(s,t) (release store of a progress counter, acquire load by the
// follower), or, for the register step, which defers one row's update to the next step, of the
// step ReflectorLayout::prerequisite_deferred_given_last names (sweeps two steps apart). The grid
// is persistent: it is launched cooperatively (all blocks resident, or the launch fails), and group
// g takes the sweeps g, g + G, g + 2G, ... in increasing order, so the lowest unfinished sweep
// always belongs to a running group whose predecessor sweep is done: no deadlock for any n on any
// GPU. Consecutive sweeps share a block (and its L1).
//
// The step arithmetic is host::chase_step's (host/bulge_chasing.cpp): the same reflector
// (dlarfg's normalisation), the same left / two-sided / right updates, each dot product
// accumulated in the host's order; only the reductions over a whole reflector (max |x_i| and the
// scaled ||x||^2 of dlarfg's norm, v^T w) are trees. So d, e and the reflectors agree with the
// host's to rounding, and repeated runs are bitwise identical (no atomics on data, fixed reduction
// trees).
//
// The step's form: for b <= 32 with 32 threads per sweep, a lane holds a column / row of the
// step's blocks in registers (chase_step_registers), and with b = 32 a sweep keeps half of its
// window in shared memory from one step to the next. The chase is a chain of short dependent
// steps, so each step's latency is the kernel's time: registers take the shared-memory round trips
// out of it, and keeping the window saves reloading it; the arithmetic and so the bits are the
// loops' own. With the register step sweeps follow two steps apart, not three (each step leaves
// one row's update to the sweep's next step: bulge_chasing.cu), so a sweep waits less for the one
// before it.
//
// Output: d, e, and, when v is given, every reflector in core/reflector_store.hpp's layout
// (ReflectorLayout{n, min(b, n-1)}: v[index * b' .. + b'), tau[index]), the layout BC-back
// streams; the same U as host::bulge_chase.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/reflector_store.hpp"

namespace pipevd::gpu {

// Tunables of the bulge-chasing kernel (see default_bulge_chasing_tunables for the defaults). The
// complex chase (bulge_chasing_complex.cuh) takes the same ones: a warp per sweep, no register
// step.
struct BulgeChasingTunables {
  int threads_per_sweep = 32;  // 8, 16 or 32 lanes chase one sweep
  int sweeps_per_block = 2;    // groups (sweeps in flight) per block
  int blocks_per_sm = 1;       // resident blocks per SM; 0 = as many as fit
  // Each step works on its window of the band copied into shared memory (sweeps_per_block is then
  // capped by what shared memory holds); false: in place in the band (L2).
  bool stage_window = true;
  // With stage_window, 32 threads per sweep and b <= 32: the step's entries in registers, a lane
  // per column / row (chase_step_registers; the same bits as the loops over shared memory).
  bool register_step = true;
  // At most this many blocks (0: blocks_per_sm on every SM). With exclusive_sms each block asks
  // for all of its SM's shared memory, so no other kernel's block (SBR-back's GEMMs next to bulge
  // chasing) shares its SM: the chain keeps its latency and the rest of the GPU does the GEMMs.
  int max_blocks = 0;
  bool exclusive_sms = false;
};

// Defaults for the current device, order n and bandwidth b (bulge_chasing.cu says why: the sweeps
// worth having in flight grow with n, since a sweep has about n / b steps).
BulgeChasingTunables default_bulge_chasing_tunables(int device, long n, long b);
// The same for an n not known (the n = 16384 choice).
BulgeChasingTunables default_bulge_chasing_tunables(int device, long b);
// The chase next to other kernels on the device (SBR-back's GEMMs): the same sweeps in flight on
// half the SMs, each block holding all of its SM's shared memory so that no other block shares it
// (tun unchanged where the doubled blocks would not fit).
BulgeChasingTunables bulge_chasing_beside_other_work(BulgeChasingTunables tun, int device, long b);
// Tuning overrides (the policy's PIPEVD_GPU_BC_SWEEPS_PER_BLOCK, PIPEVD_GPU_BC_BLOCKS and
// PIPEVD_GPU_BC_EXCLUSIVE; < 0: unset).
struct BulgeChasingOverrides {
  int sweeps_per_block = -1, max_blocks = -1, exclusive_sms = -1;
};
// tun with each override that is set in place of its field.
BulgeChasingTunables with_overrides(BulgeChasingTunables tun, const BulgeChasingOverrides& o);

// Device workspace bytes for bulge_chase (working band with room for the bulge, progress flags).
std::size_t bulge_chase_workspace_bytes(long n, long b);

// Reduces the symmetric band matrix B (order n, bandwidth b, lower band storage d_ab/ldab on the
// device as in core/band_storage.hpp, ldab >= min(b, n-1) + 1; not modified) to T = Q_b^T B Q_b:
// d_d[0 .. n-1], d_e[0 .. n-2] on the device; the reflectors to d_v (ReflectorLayout{n,
// min(b,n-1)}.vector_array_size() doubles) and d_tau (count() doubles) when d_v is not null.
// d_work: bulge_chase_workspace_bytes(n, b) bytes, 16-byte aligned (as cudaMalloc gives).
// Asynchronous on `stream`. Throws
// std::invalid_argument for bad sizes, GpuError for CUDA failures (e.g. a grid that cannot be
// co-resident).
void bulge_chase(long n, long b, const double* d_ab, long ldab, double* d_d, double* d_e,
                 double* d_v, double* d_tau, void* d_work, const BulgeChasingTunables& tun,
                 cudaStream_t stream);

// The same from host memory (copies in, chases, copies out; synchronous): fills d, e and, when U is
// not null, *U (made here with U->layout = {n, min(b, n-1)}), as host::bulge_chase does.
void bulge_chase_from_host(long n, long b, const double* ab, long ldab, double* d, double* e,
                           ReflectorStore* U, const BulgeChasingTunables& tun);

}  // namespace pipevd::gpu
