// The engine's backends and the device facts the route plans with, made by the backend folders:
// host/ makes the host backend; gpu/backend_factory.cpp the GPU one where CUDA is built, and
// gpu/backend_factory_stub.cpp answers "no GPU" elsewhere. Callers never test PIPEVD_HAVE_CUDA.
#pragma once
#include <mpi.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/nccl_channels.hpp"
#include "core/backend.hpp"
#include "core/dbbr.hpp"

namespace pipevd {

// A GPU backend's settings, given at construction (the policy's PIPEVD_GPU_* values).
struct GpuBackendSettings {
  bool panel_qr_cusolver = false;       // PIPEVD_GPU_PANEL_QR=cusolver
  std::string bc_back_kernel = "auto";  // PIPEVD_GPU_BC_BACK: auto, blas2, tensor
  bool symmetric_product = true;        // PIPEVD_GPU_AW=symm
  int host_threads = 1;                 // threads of the copies of the caller's pageable arrays
  // Kernel tuning (0 / -1: defaults): PIPEVD_GPU_PANEL_QR_BLOCKS / _THREADS and
  // PIPEVD_GPU_BC_BLOCKS / _SWEEPS_PER_BLOCK / _EXCLUSIVE.
  int panel_qr_blocks = 0, panel_qr_threads = 0;
  int bc_blocks = -1, bc_sweeps_per_block = -1, bc_exclusive = -1;
  int bc_back_lanes = 0;                     // PIPEVD_GPU_BC_LANES: auto 0 or 1-8
  bool sharing = false;                      // PIPEVD_GPU_SHARING: engine ranks may share a GPU
  int nccl_channels = kDefaultNcclChannels;  // PIPEVD_NCCL_CHANNELS (0: NCCL's choice)
  bool keep_pool = false;                    // PIPEVD_KEEP_DEVICE_MEMORY=1
};

std::unique_ptr<EngineBackend> make_host_backend();

// Whether this build has the GPU engine.
bool gpu_engine_built();
// CUDA devices visible to this process (0 without the GPU engine, a driver or a device).
int gpu_visible_devices();
// Their UUIDs in ordinal order (redistribute/gpu_assignment's GpuUuid), empty where none.
std::vector<std::array<unsigned char, 16>> gpu_visible_uuids();
// Free bytes of `device` (-1: unknown).
long gpu_free_bytes(int device);
// Whether DBBR's A W may take the one-triangle kernel on `device`.
bool gpu_symmetric_product_available(int device);
// Rows BC-back processes at once on `device` for m rows of bandwidth b (0: not known).
long gpu_wave_rows(int device, long m, long b, const std::string& bc_back_kernel);
// The GPU backend on `device`; throws where the GPU engine is not built.
std::unique_ptr<EngineBackend> make_gpu_backend(int device, const GpuBackendSettings& settings);
// DBBR's parts timed on `be`'s stream where `be` is a GPU backend (nullptr otherwise).
std::unique_ptr<DbbrPartClock> make_gpu_dbbr_clock(EngineBackend& be);
// Readies `device` for a call, so that the engine's first steps find it ready: its CUDA context,
// streams and library handles; and pipevd's pool grown to `pool_bytes` (mapped now, not at the
// engine's first allocations). No MPI (they run in a thread beside the route's plan and the
// redistribution); best effort: what they could not make, the engine makes or reports.
void gpu_prepare_context(int device);
// pipevd's kernels loaded on `device` (gpu/kernel_preload.hpp), best effort: what is not loaded
// loads at its first launch.
void gpu_preload_kernels(int device);
void gpu_grow_pool(int device, long pool_bytes);
// pipevd's pool on `device` grown to hold `peak_bytes` while the engine allocates from it (the
// staged growth's second step): what it lacks of them, once core/pool_growth.hpp's pool_rest_due
// says so (`needed` tells it that the engine needs the memory now), on a stream of its own, so
// that the engine's queued work is not waited for. Best effort, as above.
void gpu_grow_pool_to(int device, long peak_bytes, const std::function<bool()>& needed);
// The bytes pipevd's pool on `device` has mapped (0 where pipevd has no context there, or without
// the GPU engine).
long gpu_pool_reserved_bytes(int device);
// Begins the engine's NCCL communicator on `device` for the engine ranks of `engine`, collective
// over `engine` (an MPI broadcast, in the calling thread); the returned function, which every
// engine rank must run once (in the preparing thread: no MPI inside), makes it, so that a first
// call's NCCL set-up also overlaps the redistribution. Empty where there is nothing to make.
std::function<void()> gpu_begin_nccl(MPI_Comm engine, int device, int channels);
// Whether the engine's NCCL communicator for `engine` on `device` is made or begun (local, never
// waits), and how many NCCL communicators this process has made: for tests.
bool gpu_nccl_held(MPI_Comm engine, int device);
long gpu_nccl_communicators_made();
// The NCCL communicators destroyed (collective, see pipevd_release()), the page-locked host
// staging kept between calls freed, and the free memory of pipevd's device pools handed back to the
// driver.
void gpu_release_memory();
// The page-locked host staging kept between calls freed (not collective: the end of a call that
// keeps no memory).
void gpu_release_host_staging();
// Runs `fn` in the calling thread with `device` current, the thread's current device restored
// afterwards (an application's thread keeps its own); `fn` alone without the GPU engine.
void gpu_run_on_device(int device, const std::function<void()>& fn);
// Makes `device` current in the calling thread (a new thread's current device is 0); no-op for
// device < 0 or without the GPU engine.
void gpu_make_current(int device);

}  // namespace pipevd
