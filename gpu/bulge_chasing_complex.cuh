// Stage 2 on the GPU for a complex Hermitian band: bulge chasing to a Hermitian tridiagonal
// (core/reflector_store.hpp's complex convention: zlarfg's reflectors, H^H from the left and H from
// the right), all n-2 sweeps at once.
//
// The schedule is the real kernel's (gpu/bulge_chasing.cuh): a persistent cooperative grid, a warp
// per sweep taking sweeps g, g + G, ... in increasing order, step (s,t) starting once sweep s-1
// has published completion of ReflectorLayout::prerequisite(s,t) (release store of a progress
// counter, acquire load by the follower). Each step runs in place on the working band in global
// memory with host::chase_step's arithmetic in complex (host/bulge_chasing.cpp): the same left,
// two-sided and right updates, the dot products in the host's order, only the reductions over the
// whole reflector (the scaled norm, v^H w) as fixed trees; so d, the subdiagonal and the reflectors
// agree with the host's to rounding and repeated runs are bitwise identical. It is a separate
// kernel rather than a template of the real one: the real one's register and staged-window steps
// are built on double lanes and shuffles, and its speed must not move.
//
// Output: d (real diagonal), the complex subdiagonal (the host makes it real with the phase D, as
// host::bulge_chase does), and, when d_v is given, every reflector in the layout
// ReflectorLayout{n, min(b, n-1)} (complex v and tau).
#pragma once

#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace pipevd::gpu {

// Device workspace bytes for bulge_chase_complex (working band with room for the bulge, progress
// flags).
std::size_t bulge_chase_complex_workspace_bytes(long n, long b);

// Reduces the Hermitian band B (order n, bandwidth b, lower band storage d_ab / ldab on the device,
// ldab >= min(b, n-1) + 1; not modified; the diagonal's imaginary parts ignored) to
// Q_b^H B Q_b: d_d[0 .. n-1] (real), d_sub[0 .. n-2] its subdiagonal; the reflectors to d_v
// (vector_array_size() elements) and d_tau (count()) when d_v is not null. d_work:
// bulge_chase_complex_workspace_bytes(n, b) bytes, 16-byte aligned. Asynchronous on `stream`.
// Throws std::invalid_argument for bad sizes, GpuError for CUDA failures.
void bulge_chase_complex(long n, long b, const cuDoubleComplex* d_ab, long ldab, double* d_d,
                         cuDoubleComplex* d_sub, cuDoubleComplex* d_v, cuDoubleComplex* d_tau,
                         void* d_work, cudaStream_t stream);

}  // namespace pipevd::gpu
