// Stage 2 on the GPU for a complex Hermitian band: bulge chasing to a Hermitian tridiagonal
// (core/reflector_store.hpp's complex convention: zlarfg's reflectors, H^H from the left and H from
// the right), all n-2 sweeps at once.
//
// The schedule is the real kernel's (gpu/bulge_chasing.cuh): a persistent cooperative grid, a warp
// per sweep taking sweeps g, g + G, ... in increasing order, step (s,t) starting once sweep s-1
// has published completion of ReflectorLayout::prerequisite(s,t) (release store of a progress
// counter, acquire load by the follower). Each step has host::chase_step's arithmetic in complex
// (host/bulge_chasing.cpp): the same left, two-sided and right updates, the dot products in the
// host's order, only the reductions over the whole reflector (the scaled norm, v^H w) as fixed
// trees; so d, the subdiagonal and the reflectors agree with the host's to rounding and repeated
// runs are bitwise identical. By default (BulgeChasingTunables::stage_window) each step runs on
// its window of the working band copied into shared memory (2b columns, 64 KiB at b = 32), as the
// real kernel's staged step: the step is a chain of dependent loops, and each of their loads waits
// on shared memory instead of L2. Where not even one sweep's window fits in shared memory (b
// above 60 on an H100) the steps run in place on the band. Staged or in place, the bits are
// the same. It is a separate kernel rather than a template of the real one: the real one's
// register step is built on double lanes and shuffles, and its speed must not move.
//
// Output: d (real diagonal), the complex subdiagonal (the host makes it real with the phase D, as
// host::bulge_chase does), and, when d_v is given, every reflector in the layout
// ReflectorLayout{n, min(b, n-1)} (complex v and tau).
#pragma once

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gpu/bulge_chasing.cuh"

namespace pipevd::gpu {

// How bulge_chase_complex runs on the current device for given tunables. Of
// BulgeChasingTunables it reads stage_window, sweeps_per_block (capped by what shared memory
// holds when staged), blocks_per_sm, max_blocks and exclusive_sms; a sweep is always a warp
// (threads_per_sweep 32) and there is no register step.
struct ComplexChasePlan {
  bool staged = false;       // each step's window in shared memory
  int sweeps_per_block = 1;  // warps per block
  std::size_t shared_bytes_per_sweep = 0;
  int sweeps_that_fit = 0;  // staged: sweeps whose windows one block's shared memory holds
};
ComplexChasePlan bulge_chase_complex_plan(long n, long b, const BulgeChasingTunables& tun);

// The schedule next to other work on the device (JOBZ = V: SBR-back's GEMMs on a companion
// stream), as bulge_chasing_beside_other_work is for the real chase: the staged sweeps' blocks
// take most of an SM's shared memory, so on every SM they would leave the GEMMs none; on half the
// SMs, kept to themselves, with as many sweeps per block as fit (up to twice tun's), the chase
// leaves the GEMMs the other half. Unchanged where the windows are not staged.
BulgeChasingTunables bulge_chasing_complex_beside_other_work(BulgeChasingTunables tun, int device,
                                                             long b);

// Device workspace bytes for bulge_chase_complex (working band with room for the bulge, progress
// flags).
std::size_t bulge_chase_complex_workspace_bytes(long n, long b);

// Reduces the Hermitian band B (order n, bandwidth b, lower band storage d_ab / ldab on the device,
// ldab >= min(b, n-1) + 1; not modified; the diagonal's imaginary parts ignored) to
// Q_b^H B Q_b: d_d[0 .. n-1] (real), d_sub[0 .. n-2] its subdiagonal; the reflectors to d_v
// (vector_array_size() elements) and d_tau (count()) when d_v is not null. d_work:
// bulge_chase_complex_workspace_bytes(n, b) bytes, 16-byte aligned. tun: the schedule and
// staged or in place (default_bulge_chasing_tunables(device, n, b) by default); it never changes
// the results. Asynchronous on `stream`. Throws std::invalid_argument for bad sizes, GpuError for
// CUDA failures.
void bulge_chase_complex(long n, long b, const cuDoubleComplex* d_ab, long ldab, double* d_d,
                         cuDoubleComplex* d_sub, cuDoubleComplex* d_v, cuDoubleComplex* d_tau,
                         void* d_work, const BulgeChasingTunables& tun, cudaStream_t stream);

}  // namespace pipevd::gpu
