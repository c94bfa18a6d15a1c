// The GPU backend (see gpu_backend.hpp).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/memory_plan.hpp"
#include "core/packed_triangle.hpp"
#include "core/reflector_store.hpp"
#include "core/tridiagonal_bisection.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/bc_back_complex.cuh"
#include "gpu/bulge_chasing.cuh"
#include "gpu/bulge_chasing_complex.cuh"
#include "gpu/complex_matrix.cuh"
#include "gpu/complex_panel_qr.cuh"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/nccl_communicators.hpp"
#include "gpu/pageable_copy.hpp"
#include "gpu/panel_qr.cuh"
#include "gpu/pinned_staging.hpp"
#include "gpu/row_runs.cuh"
#include "gpu/secular_merge.cuh"
#include "gpu/sturm_bisection.cuh"
#include "gpu/symmetric_eigensolver.hpp"
#include "gpu/symmetric_product.cuh"
#include "gpu/syr2k.hpp"

namespace pipevd::gpu {
namespace {

#ifdef PIPEVD_GPU_NCCL
// NCCL takes size_t counts, but messages are cut into pieces of at most 2^30 elements so that no
// count nears 2^31 inside NCCL or a network plugin; both sides cut the same count the same way.
constexpr long kNcclChunk = 1L << 30;
#endif

// Element counts for MPI's int counts.
constexpr long kMpiChunk = 1L << 28;

// f(offset, length) over [0, count) in pieces of at most `chunk` elements: every message is cut
// the same way on both sides.
template <class F>
void for_each_piece(long count, long chunk, F&& f) {
  for (long off = 0; off < count; off += chunk) f(off, std::min(chunk, count - off));
}

constexpr int kThreads = 256;

int grid_for(long count) {
  return static_cast<int>(std::max(1L, std::min(4096L, (count + kThreads - 1) / kThreads)));
}

// LAPACK's laset: alpha off the diagonal, beta on it.
__global__ void laset_kernel(long m, long n, double alpha, double beta, double* a, long lda) {
  const long total = m * n;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / m, i = k - j * m;
    a[i + j * lda] = i == j ? beta : alpha;
  }
}

// Y(0:m, 0:kk) = the reflectors below the panel's diagonal with an explicit unit diagonal and
// zeros above it; the panel keeps R (zeros below the diagonal).
__global__ void split_panel(long m, long kk, double* panel, long ldp, double* y, long ldy) {
  const long total = m * kk;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long j = k / m, i = k - j * m;
    double& p = panel[i + j * ldp];
    y[i + j * ldy] = i > j ? p : (i == j ? 1.0 : 0.0);
    if (i > j) p = 0.0;
  }
}

// g (kk x kk) = Y^T Y on entry; becomes T^{-1} = diag(1/tau) + striu(Y^T Y) (the UT transform),
// and t becomes I for the trsm. A reflector with tau = 0 is the identity: its row and column of
// T are zero, so its row and column of g are decoupled (unit diagonal) here and its diagonal
// entry of T is zeroed after the trsm (fix_identity_reflectors).
__global__ void t_inverse(long kk, const double* tau, double* g, double* t) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < kk * kk;
       k += static_cast<long>(gridDim.x) * blockDim.x) {
    const long c = k / kk, r = k - c * kk;
    double val = 0.0;
    if (r == c)
      val = tau[r] != 0.0 ? 1.0 / tau[r] : 1.0;
    else if (r < c && tau[r] != 0.0 && tau[c] != 0.0)
      val = g[k];
    g[k] = val;
    t[k] = r == c ? 1.0 : 0.0;
  }
}

__global__ void fix_identity_reflectors(long kk, const double* tau, double* t) {
  for (long r = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; r < kk;
       r += static_cast<long>(gridDim.x) * blockDim.x)
    if (tau[r] == 0.0) t[r + r * kk] = 0.0;
}

cublasOperation_t op_of(char c) {
  return (c == 'T' || c == 't' || c == 'C' || c == 'c') ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// Complex ops: 'C' is the adjoint, distinct from the transpose.
cublasOperation_t complex_op_of(char c) {
  if (c == 'C' || c == 'c') return CUBLAS_OP_C;
  return (c == 'T' || c == 't') ? CUBLAS_OP_T : CUBLAS_OP_N;
}

cuDoubleComplex* device_complex(Complex* p) { return reinterpret_cast<cuDoubleComplex*>(p); }
const cuDoubleComplex* device_complex(const Complex* p) {
  return reinterpret_cast<const cuDoubleComplex*>(p);
}
cuDoubleComplex to_cuda(Complex z) { return make_cuDoubleComplex(z.real(), z.imag()); }

// Tokens of bulge chases, unique in the process (so a store from another backend never matches).
std::atomic<unsigned long> chase_tokens{0};

// A cheap fingerprint of the host reflectors: a host copy still holds what the chase wrote. T:
// double or Complex (its two doubles each).
template <class T>
std::uint64_t fingerprint(const BasicReflectorStore<T>& u) {
  constexpr std::size_t words = sizeof(T) / sizeof(double);
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&](const double* p, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint64_t bits;
      std::memcpy(&bits, p + i, sizeof(bits));
      h = (h ^ bits) * 1099511628211ull;
    }
  };
  mix(reinterpret_cast<const double*>(u.tau.data()), words * u.tau.size());
  // A sample of the vectors (all of them would cost as much as the copy it saves).
  const std::size_t stride = std::max<std::size_t>(1, u.v.size() / 4096);
  for (std::size_t i = 0; i < u.v.size(); i += stride)
    mix(reinterpret_cast<const double*>(u.v.data() + i), words);
  return h;
}

}  // namespace

int visible_device_count() {
  static const int count = [] {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no device" error
      return 0;
    }
    return c;
  }();
  return count;
}

const std::vector<std::array<unsigned char, 16>>& visible_gpu_uuids() {
  static const std::vector<std::array<unsigned char, 16>> uuids = [] {
    std::vector<std::array<unsigned char, 16>> u(static_cast<std::size_t>(visible_device_count()));
    for (int d = 0; d < static_cast<int>(u.size()); ++d) {
      cudaDeviceProp p{};
      PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
      static_assert(sizeof(p.uuid.bytes) == 16, "a CUDA UUID has 16 bytes");
      std::memcpy(u[d].data(), p.uuid.bytes, 16);
    }
    return u;
  }();
  return uuids;
}

// A device buffer that only grows, freed in stream order.
struct GrowBuffer {
  void* p = nullptr;
  std::size_t bytes = 0;
};

// The fused panel QR's shortest panels under PanelQrPath::Auto: with one grid sync per column it
// pays a fixed cost per column that only tall panels (m >= 8192) amortise better than cuSOLVER's
// launches do.
constexpr long kFusedMinRows = 8192;

struct GpuBackend::State {
  int device = 0;
  GpuContext* ctx = nullptr;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnParams_t params = nullptr;
  cudaMemPool_t pool = nullptr;
  bool own_stream = false;  // a companion: stream and handle are this backend's, destroyed with it
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  // Panel QR and merge workspaces.
  GrowBuffer qr_work, tau, gmat, tmat, info, merge, fused_qr;
  GpuBackend::PanelQrPath panel_qr_path = GpuBackend::PanelQrPath::Auto;
  // DBBR's A W by gpu/symmetric_product where the device has it (symmetric_product_available).
  bool symmetric_product = true;
  bool symmetric_product_fits = false;
  long symmetric_product_min_rows = GpuBackend::kSymmetricProductMinRows;
  bool poison_unfilled = false;
  BcBackKernel bc_back_kernel = BcBackKernel::Auto;
  GpuTuning tuning;
  // The last fused panel QR plan and its (m, nb): DBBR asks for the same shapes again and again.
  long plan_m = -1, plan_nb = -1;
  FusedPanelQrPlan plan;
  // Whether panel_qr takes the fused kernel (see PanelQrPath). At nb = 64 the kernel is also
  // known to lose orthogonality on panels of repeated columns (tests/test_gpu_panel_qr.cpp): the
  // fused path is limited to nb <= 32 until that is understood.
  bool use_fused(long m, long nb) {
    if (panel_qr_path == GpuBackend::PanelQrPath::Cusolver || nb > 32) return false;
    if (panel_qr_path == GpuBackend::PanelQrPath::Auto && m < kFusedMinRows) return false;
    return fused_plan(m, nb).ok;
  }
  const FusedPanelQrPlan& fused_plan(long m, long nb) {
    if (m != plan_m || nb != plan_nb) {
      plan = plan_fused_panel_qr(ctx->properties(), m, nb, tuning.panel_qr_blocks,
                                 tuning.panel_qr_threads);
      plan_m = m;
      plan_nb = nb;
    }
    return plan;
  }
  // The plan for (m, nb) on at most half the blocks of the one its grid was refused for (not ok
  // where it had one block or the taller slab does not fit in shared memory).
  const FusedPanelQrPlan& fused_plan_on_fewer_blocks(long m, long nb) {
    plan = plan.blocks > 1 ? plan_fused_panel_qr(ctx->properties(), m, nb, plan.blocks / 2,
                                                 tuning.panel_qr_threads)
                           : FusedPanelQrPlan{};
    return plan;
  }
  std::vector<char> qr_host;
  // The device copy of the reflectors of the last bulge_chase, reused by bc_back.
  GrowBuffer u_v, u_tau;
  std::uint64_t u_print = 0;  // fingerprint of the host copy, where the chase made one
  unsigned long u_token = 0;  // ReflectorStore::backend_token of the chase kept
  bool u_valid = false;
  bool u_complex = false;       // the chase kept was a complex one (u_v, u_tau hold Complex)
  bool nccl = false;            // bound to more than one rank, each on its own GPU
  std::vector<double> staging;  // host staging for MPI without NCCL
  // Pinned staging blocks handed out (taken from gpu/pinned_staging, with their sizes); per source
  // buffer, the event after its last asynchronous upload.
  std::map<const double*, long> pinned_used;
  std::map<const double*, cudaEvent_t> upload_done;
  int host_threads = 1;    // for copies to and from pageable memory (gpu/pageable_copy.hpp)
  bool keep_pool = false;  // the device pool not trimmed at the end (PIPEVD_KEEP_DEVICE_MEMORY)

  double* grow(GrowBuffer& g, std::size_t bytes);
  [[noreturn]] void out_of_memory(std::size_t bytes, cudaError_t e);
  // cusolverDnXgeqrf of the m x nb panel of `type` (CUDA_R_64F or CUDA_C_64F) into it and tau, on
  // `stream`, with its device and host workspaces kept here between panels.
  void geqrf(cudaDataType type, long m, long nb, void* panel, long ldp, void* tau_out);
};

void GpuBackend::State::geqrf(cudaDataType type, long m, long nb, void* panel, long ldp,
                              void* tau_out) {
  cusolverDnHandle_t solver = ctx->solver(stream);
  std::size_t dbytes = 0, hbytes = 0;
  PIPEVD_CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(solver, params, m, nb, type, panel, ldp, type,
                                                    tau_out, type, &dbytes, &hbytes));
  void* dwork = grow(qr_work, dbytes);
  if (qr_host.size() < std::max<std::size_t>(hbytes, 1))
    qr_host.resize(std::max<std::size_t>(hbytes, 1));
  int* dinfo = reinterpret_cast<int*>(grow(info, sizeof(int)));
  PIPEVD_CUSOLVER_CHECK(cusolverDnXgeqrf(solver, params, m, nb, type, panel, ldp, type, tau_out,
                                         type, dwork, dbytes, qr_host.data(), hbytes, dinfo));
}

void GpuBackend::State::out_of_memory(std::size_t bytes, cudaError_t e) {
  cudaGetLastError();
  std::size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  char msg[320];
  std::snprintf(msg, sizeof msg,
                "pipevd: GPU backend: cannot allocate %.3f GiB on device %d (%s; %.3f GiB free of "
                "%.3f GiB): the problem is too large for this GPU's memory",
                bytes / 1073741824.0, device, cudaGetErrorName(e), free_b / 1073741824.0,
                total_b / 1073741824.0);
  throw OutOfMemory(msg);
}

double* GpuBackend::State::grow(GrowBuffer& g, std::size_t bytes) {
  if (bytes <= g.bytes && g.p) return static_cast<double*>(g.p);
  if (g.p) PIPEVD_CUDA_CHECK(cudaFreeAsync(g.p, stream));
  g.p = nullptr;
  g.bytes = 0;
  const std::size_t want = std::max<std::size_t>(bytes, 256);
  const cudaError_t e = pool_malloc(&g.p, want, stream);
  if (e != cudaSuccess) out_of_memory(want, e);
  g.bytes = want;
  return static_cast<double*>(g.p);
}

GpuBackend::GpuBackend(int device) : GpuBackend(device, false) {}

GpuBackend::GpuBackend(int device, bool own_stream, bool urgent) : s_(std::make_unique<State>()) {
  if (visible_device_count() == 0) throw GpuError("pipevd: GPU backend: no CUDA device visible");
  if (device < 0) PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  s_->device = device;
  s_->ctx = &GpuContext::for_device(device);
  ScopedDevice guard(device);
  if (own_stream) {
    s_->own_stream = true;
    int least = 0, greatest = 0;  // numerically, greatest priority is the lowest number
    PIPEVD_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    PIPEVD_CUDA_CHECK(cudaStreamCreateWithPriority(&s_->stream, cudaStreamNonBlocking,
                                                   urgent ? greatest : least));
    PIPEVD_CUBLAS_CHECK(cublasCreate(&s_->blas));
    PIPEVD_CUBLAS_CHECK(cublasSetStream(s_->blas, s_->stream));
  } else {
    Lane& lane = s_->ctx->lane(0);
    s_->stream = lane.stream;
    s_->blas = lane.blas;
  }
  PIPEVD_CUBLAS_CHECK(cublasSetPointerMode(s_->blas, CUBLAS_POINTER_MODE_HOST));
  PIPEVD_CUSOLVER_CHECK(cusolverDnCreateParams(&s_->params));
  // Stream-ordered allocation from pipevd's pool on the device (gpu_context.hpp); trimmed when the
  // backend goes.
  s_->pool = s_->ctx->pool();
  s_->symmetric_product_fits = symmetric_product_available(device);
}

void GpuBackend::set_panel_qr_path(PanelQrPath path) { s_->panel_qr_path = path; }

void GpuBackend::set_bc_back_kernel(BcBackKernel kernel) { s_->bc_back_kernel = kernel; }

void GpuBackend::set_host_threads(int threads) { s_->host_threads = std::max(1, threads); }

void GpuBackend::set_keep_pool(bool keep) { s_->keep_pool = keep; }
void GpuBackend::set_tuning(const GpuTuning& tuning) {
  s_->tuning = tuning;
  s_->plan_m = s_->plan_nb = -1;  // the fused panel QR's plan follows the new tuning
}
GpuBackend::PanelQrPath GpuBackend::panel_qr_path() const { return s_->panel_qr_path; }
bool GpuBackend::panel_qr_fused(long m, long nb) const {
  ScopedDevice guard(s_->device);
  return s_->use_fused(m, nb);
}

GpuBackend::~GpuBackend() {
  // No throwing here: errors are ignored, the memory goes back to the pool either way.
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(s_->device);
  for (GrowBuffer* g : {&s_->qr_work, &s_->tau, &s_->gmat, &s_->tmat, &s_->info, &s_->merge,
                        &s_->fused_qr, &s_->u_v, &s_->u_tau})
    if (g->p) cudaFreeAsync(g->p, s_->stream);
  cudaStreamSynchronize(s_->stream);
  for (auto& [p, ev] : s_->upload_done) cudaEventDestroy(ev);
  // Blocks still taken go back to the kept staging (gpu/pinned_staging.hpp); the stream is idle.
  for (auto& [p, count] : s_->pinned_used) keep_pinned_staging(const_cast<double*>(p), count);
  if (s_->params) cusolverDnDestroyParams(s_->params);
  if (s_->own_stream) {  // the pool stays as the lane-0 backend set it
    cublasDestroy(s_->blas);
    cudaStreamDestroy(s_->stream);
    if (previous >= 0) cudaSetDevice(previous);
    return;
  }
  if (!s_->keep_pool) trim_pool_after_call(s_->pool);
  if (previous >= 0) cudaSetDevice(previous);
}

cudaStream_t GpuBackend::stream() const { return s_->stream; }

int GpuBackend::device() const { return s_->device; }

std::unique_ptr<EngineBackend> GpuBackend::companion(bool urgent) const {
  auto be = std::make_unique<GpuBackend>(s_->device, true, urgent);
  be->set_host_threads(s_->host_threads);  // the D&C's pageable copies too
  return be;
}

std::unique_ptr<SecularMerge> GpuBackend::secular_merge() {
  return make_gpu_secular_merge(s_->device, s_->stream);
}

bool symmetric_product_available(int device) {
  const cudaDeviceProp& p = GpuContext::for_device(device).properties();
  SymmetricProductShape three_stages;  // the plan takes fewer stages where more do not fit
  three_stages.stages = 3;
  return p.major >= 9 && static_cast<std::size_t>(p.sharedMemPerBlockOptin) >=
                             symmetric_product_shared_bytes(three_stages);
}

namespace {

// BC-back's group lanes request: one where engine ranks share the GPU (their blocks need not all
// be resident at once), else PIPEVD_GPU_BC_LANES's where set, else the kernel's default.
int bc_back_lanes(const GpuTuning& t, int kernel_default) {
  return t.sharing ? 1 : t.bc_back_lanes != 0 ? t.bc_back_lanes : kernel_default;
}

}  // namespace

long device_free_bytes(int device) {
  std::size_t free_b = 0, total_b = 0;
  try {
    ScopedDevice guard(device);
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
      return static_cast<long>(free_b) + pool_free_bytes(device);
  } catch (const std::exception&) {  // no such device: unknown, as a failed query
  }
  cudaGetLastError();
  return -1;
}

namespace {

// The first two engine ranks of `engine` that drive the same GPU ({-1, -1}: none), from every
// rank's device UUID (unique across nodes); collective, the same answer on every rank.
std::pair<int, int> engine_ranks_sharing_a_gpu(MPI_Comm engine, int device) {
  int size = 1;
  MPI_Comm_size(engine, &size);
  const cudaDeviceProp& props = GpuContext::for_device(device).properties();
  const std::size_t u = sizeof(props.uuid.bytes);
  std::vector<char> uuids(static_cast<std::size_t>(size) * u);
  MPI_Allgather(props.uuid.bytes, static_cast<int>(u), MPI_BYTE, uuids.data(), static_cast<int>(u),
                MPI_BYTE, engine);
  for (int i = 0; i < size; ++i)
    for (int j = i + 1; j < size; ++j)
      if (std::memcmp(&uuids[i * u], &uuids[j * u], u) == 0) return {i, j};
  return {-1, -1};
}

}  // namespace

void GpuBackend::bind(MPI_Comm engine) {
  s_->comm = engine;
  MPI_Comm_rank(engine, &s_->rank);
  MPI_Comm_size(engine, &s_->size);
  s_->nccl = false;
  if (s_->size <= 1) return;
  ScopedDevice guard(s_->device);
  const auto [shared_with, sharer] = engine_ranks_sharing_a_gpu(engine, s_->device);
  if (sharer >= 0 && !s_->tuning.sharing)
    throw GpuError("pipevd: GPU engine ranks " + std::to_string(shared_with) + " and " +
                   std::to_string(sharer) +
                   " drive the same GPU (one engine rank per GPU; set PIPEVD_ENGINE_RANKS to the "
                   "number of GPUs per node, or PIPEVD_GPU_SHARING=1 to share them through MPI)");
#ifdef PIPEVD_GPU_NCCL
  if (sharer < 0) {
    // Made here, where every engine rank is, rather than at the first message.
    agree_on_nccl_communicator(engine, s_->device);
    nccl_for(engine, s_->device, s_->tuning.nccl_channels);
    s_->nccl = true;
  }
#endif
}

MPI_Comm GpuBackend::communicator() const { return s_->comm; }

double* GpuBackend::allocate(long count) {
  double* p = allocate_unfilled(count);
  ScopedDevice guard(s_->device);
  PIPEVD_CUDA_CHECK(cudaMemsetAsync(
      p, 0, sizeof(double) * static_cast<std::size_t>(std::max(1L, count)), s_->stream));
  return p;
}

double* GpuBackend::allocate_unfilled(long count) {
  ScopedDevice guard(s_->device);
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(std::max(1L, count));
  void* p = nullptr;
  const cudaError_t e = pool_malloc(&p, bytes, s_->stream);
  if (e != cudaSuccess) s_->out_of_memory(bytes, e);
  if (s_->poison_unfilled) PIPEVD_CUDA_CHECK(cudaMemsetAsync(p, 0xff, bytes, s_->stream));  // NaN
  return static_cast<double*>(p);
}

void GpuBackend::set_poison_unfilled(bool poison) { s_->poison_unfilled = poison; }

void GpuBackend::release(double* p) {
  if (!p) return;
  ScopedDevice guard(s_->device);
  PIPEVD_CUDA_CHECK(cudaFreeAsync(p, s_->stream));
}

namespace {

// Pageable copies go through two pinned chunks: an eighth of the copy (so the DMA hides all but
// that eighth of the host copies), a power of two in [2 MiB, 64 MiB] so that repeated calls of one
// size find their chunks kept (gpu/pinned_staging). cudaMemcpy's own staging is one thread through
// small pinned buffers: uploads gain from two smallest chunks on, downloads (whose direct copy
// runs faster) only from 64 MiB (bench/RESULTS.md, sixteenth session).
constexpr long kPageableChunk = 8L << 20;     // 64 MiB
constexpr long kMinPageableChunk = 1L << 18;  // 2 MiB
constexpr long kMinPinnedUpload = 2 * kMinPageableChunk;
constexpr long kMinPinnedDownload = kPageableChunk;

bool through_pinned_chunks(const double* host, long count, long min_count) {
  return count >= min_count && is_pageable(host);
}

long pageable_chunk(long count) {
  long chunk = kMinPageableChunk;
  while (chunk < count / 8 && chunk < kPageableChunk) chunk *= 2;
  return chunk;
}

// fn(stage) with two pinned chunks for a copy of `count` doubles from this backend's cache, handed
// back afterwards (after a throw, once `stream`'s DMAs can no longer touch them).
template <class F>
void with_pinned_chunks(GpuBackend& be, cudaStream_t stream, long count, F&& fn) {
  PinnedChunks stage;
  stage.size = pageable_chunk(count);
  stage.chunk[0] = be.allocate_host_staging(stage.size);
  try {
    stage.chunk[1] = be.allocate_host_staging(stage.size);
    fn(stage);
  } catch (...) {
    cudaStreamSynchronize(stream);  // its error, if any, is the one being thrown
    be.release_host_staging(stage.chunk[0]);
    if (stage.chunk[1]) be.release_host_staging(stage.chunk[1]);
    throw;
  }
  be.release_host_staging(stage.chunk[0]);
  be.release_host_staging(stage.chunk[1]);
}

// host[0, count) := dev[0, count) after `stream`'s earlier work, finished on return: large copies
// to pageable memory through the pinned chunks, the rest directly.
void download(GpuBackend& be, const double* dev, double* host, long count, int threads,
              cudaStream_t stream) {
  if (through_pinned_chunks(host, count, kMinPinnedDownload)) {
    with_pinned_chunks(be, stream, count, [&](const PinnedChunks& stage) {
      copy_to_pageable(dev, host, count, stage, threads, stream);
    });
    return;
  }
  PIPEVD_CUDA_CHECK(
      cudaMemcpyAsync(host, dev, sizeof(double) * count, cudaMemcpyDeviceToHost, stream));
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

void GpuBackend::copy_to_device(const double* host, double* dev, long count) {
  if (count <= 0) return;
  ScopedDevice guard(s_->device);
  if (through_pinned_chunks(host, count, kMinPinnedUpload)) {
    with_pinned_chunks(*this, s_->stream, count, [&](const PinnedChunks& stage) {
      copy_from_pageable(host, dev, count, stage, s_->host_threads, s_->stream);
    });
    return;
  }
  PIPEVD_CUDA_CHECK(
      cudaMemcpyAsync(dev, host, sizeof(double) * count, cudaMemcpyHostToDevice, s_->stream));
  // From pinned memory the copy is asynchronous: the caller may reuse `host` once we return.
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s_->stream));
}

namespace {

// a's triangle (ld lda) := the packed triangle (core/packed_triangle.hpp); the other triangle is
// not written. T: double, or double2 for a complex element. A block per column, over the columns
// by grid stride.
template <class T>
__global__ void unpack_triangle_kernel(bool lower, long n, const T* packed, T* a, long lda) {
  for (long j = blockIdx.x; j < n; j += gridDim.x) {
    const T* src = packed + packed_column_begin(lower, n, j);
    T* dst = a + packed_first_row(lower, j) + j * lda;
    const long rows = packed_column_rows(lower, n, j);
    for (long i = threadIdx.x; i < rows; i += blockDim.x) dst[i] = src[i];
  }
}

// upload_triangle: the triangle packed through the pinned chunks into a device buffer (half of
// a's bytes cross PCIe; the scan rides on the packing), then unpacked in place. The packed buffer
// is released before the solve's workspace is taken; the pool keeps its reservation, which
// core/one_stage.hpp's peak counts.
template <class S>
EntryScan upload_packed_triangle(GpuBackend& be, int threads, char uplo, long n, const S* host,
                                 long ldh, S* dev, long ldd) {
  const bool lower = lower_triangle(uplo);
  if (n <= 0) return {};
  const cudaStream_t stream = be.stream();
  const long count = packed_triangle_size(n) * words_per<S>;
  double* const packed = be.allocate_unfilled(count);
  EntryScan found;
  try {
    with_pinned_chunks(be, stream, count, [&](const PinnedChunks& stage) {
      found = pack_triangle_to_device(uplo, n, host, ldh, elements_in<S>(packed), stage, threads,
                                      stream);
    });
    using T = std::conditional_t<is_complex_v<S>, double2, double>;
    unpack_triangle_kernel<<<static_cast<int>(std::min(n, 8192L)), kThreads, 0, stream>>>(
        lower, n, reinterpret_cast<const T*>(packed), reinterpret_cast<T*>(dev), ldd);
    PIPEVD_CUDA_CHECK(cudaGetLastError());
  } catch (...) {
    try {
      be.release(packed);
    } catch (...) {  // a sticky device error: the one being thrown says it
    }
    throw;
  }
  be.release(packed);  // after the kernel, in stream order
  return found;
}

}  // namespace

EntryScan GpuBackend::upload_triangle(char uplo, long n, const double* host, long ldh, double* dev,
                                      long ldd) {
  ScopedDevice guard(s_->device);
  return upload_packed_triangle(*this, s_->host_threads, uplo, n, host, ldh, dev, ldd);
}

EntryScan GpuBackend::upload_triangle(char uplo, long n, const Complex* host, long ldh,
                                      Complex* dev, long ldd) {
  ScopedDevice guard(s_->device);
  return upload_packed_triangle(*this, s_->host_threads, uplo, n, host, ldh, dev, ldd);
}

double* GpuBackend::allocate_host_staging(long count) {
  count = std::max(1L, count);
  long got = 0;
  double* p = take_pinned_staging(count, &got);  // kept between calls: gpu/pinned_staging.hpp
  if (!p)
    throw OutOfMemory("pipevd: cannot allocate " + std::to_string(count * sizeof(double)) +
                      " bytes of page-locked host memory");
  s_->pinned_used.emplace(p, got);
  return p;
}

void GpuBackend::release_host_staging(double* p) {
  if (!p) return;
  auto it = s_->pinned_used.find(p);
  if (it == s_->pinned_used.end()) throw GpuError("pipevd: release_host_staging: unknown buffer");
  wait_staging(p);  // its uploads must have read it before it is handed out again
  keep_pinned_staging(p, it->second);
  s_->pinned_used.erase(it);
}

void GpuBackend::copy_to_device_async(const double* host, double* dev, long count) {
  if (count <= 0) return;
  ScopedDevice guard(s_->device);
  PIPEVD_CUDA_CHECK(
      cudaMemcpyAsync(dev, host, sizeof(double) * count, cudaMemcpyHostToDevice, s_->stream));
  auto it = s_->upload_done.find(host);
  if (it == s_->upload_done.end()) {
    cudaEvent_t ev = nullptr;
    PIPEVD_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    it = s_->upload_done.emplace(host, ev).first;
  }
  PIPEVD_CUDA_CHECK(cudaEventRecord(it->second, s_->stream));
}

void GpuBackend::wait_staging(const double* host) {
  auto it = s_->upload_done.find(host);
  if (it == s_->upload_done.end()) return;
  ScopedDevice guard(s_->device);
  PIPEVD_CUDA_CHECK(cudaEventSynchronize(it->second));
  PIPEVD_CUDA_CHECK(cudaEventDestroy(it->second));
  s_->upload_done.erase(it);
}

void GpuBackend::copy_to_host(const double* dev, double* host, long count) {
  if (count <= 0) return;
  ScopedDevice guard(s_->device);
  download(*this, dev, host, count, s_->host_threads, s_->stream);
}

void GpuBackend::gemm_to_host(long m, long n, long k, const double* a, long lda, const double* b,
                              long ldb, double* c, long ldc) {
  if (m <= 0 || n <= 0) return;
  // Eight panels: the first GEMM and the last copy (1/8 each) are not hidden.
  constexpr long kPanels = 8;
  const long pw = (n + kPanels - 1) / kPanels, panels = (n + pw - 1) / pw;
  if (panels < 2 || ldc != m) {  // nothing to overlap, or c's padding rows must stay untouched
    EngineBackend::gemm_to_host(m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  ScopedDevice guard(s_->device);
  pipevd::DeviceBuffer buf[2] = {pipevd::DeviceBuffer(*this, ldc * pw),
                                 pipevd::DeviceBuffer(*this, ldc * pw)};
  cudaStream_t copy = nullptr;
  cudaEvent_t done[2] = {nullptr, nullptr};
  PIPEVD_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  auto cleanup = [&] {
    cudaStreamSynchronize(copy);
    for (cudaEvent_t e : done)
      if (e) cudaEventDestroy(e);
    cudaStreamDestroy(copy);
  };
  try {
    for (cudaEvent_t& e : done)
      PIPEVD_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    auto queue_gemm = [&](long j) {  // buffer j % 2 is free: its last copy returned
      const long c0 = j * pw, w = std::min(pw, n - c0);
      gemm('N', 'N', m, w, k, 1.0, a, lda, b + c0 * ldb, ldb, 0.0, buf[j % 2].get(), ldc);
      PIPEVD_CUDA_CHECK(cudaEventRecord(done[j % 2], s_->stream));
    };
    queue_gemm(0);
    for (long j = 0; j < panels; ++j) {
      if (j + 1 < panels) queue_gemm(j + 1);
      PIPEVD_CUDA_CHECK(cudaStreamWaitEvent(copy, done[j % 2], 0));
      const long c0 = j * pw;
      download(*this, buf[j % 2].get(), c + c0 * ldc, ldc * std::min(pw, n - c0), s_->host_threads,
               copy);
    }
  } catch (...) {
    cudaStreamSynchronize(s_->stream);  // no GEMM may still write a buffer being released
    cleanup();
    throw;
  }
  cleanup();
}

void GpuBackend::copy_matrix(long m, long n, const double* src, long lds, double* dst, long ldd) {
  if (m <= 0 || n <= 0) return;
  ScopedDevice guard(s_->device);
  if (n == 1) {
    PIPEVD_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, sizeof(double) * m, cudaMemcpyDeviceToDevice, s_->stream));
    return;
  }
  PIPEVD_CUDA_CHECK(cudaMemcpy2DAsync(dst, sizeof(double) * ldd, src, sizeof(double) * lds,
                                      sizeof(double) * m, n, cudaMemcpyDeviceToDevice, s_->stream));
}

void GpuBackend::copy_row_runs(long cols, const std::vector<RowRun>& runs, const double* src,
                               long lds, double* dst, long ldd) {
  if (runs.size() == 1) {
    const RowRun& r = runs.front();
    copy_matrix(r.rows, cols, src + r.src_row, lds, dst + r.dst_row, ldd);
    return;
  }
  ScopedDevice guard(s_->device);
  gpu::copy_row_runs(s_->stream, cols, runs, src, lds, dst, ldd);
}

void GpuBackend::fill_matrix(long m, long n, double alpha, double beta, double* a, long lda) {
  if (m <= 0 || n <= 0) return;
  ScopedDevice guard(s_->device);
  laset_kernel<<<grid_for(m * n), kThreads, 0, s_->stream>>>(m, n, alpha, beta, a, lda);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

void GpuBackend::gemm(char transa, char transb, long m, long n, long k, double alpha,
                      const double* a, long lda, const double* b, long ldb, double beta, double* c,
                      long ldc) {
  if (m <= 0 || n <= 0) return;
  ScopedDevice guard(s_->device);
  const cublasOperation_t ta = op_of(transa), tb = op_of(transb);
  // cuBLAS checks leading dimensions even where k = 0 leaves A and B unreferenced.
  const long arows = ta == CUBLAS_OP_N ? m : k, brows = tb == CUBLAS_OP_N ? k : n;
  lda = std::max(lda, std::max(1L, arows));
  ldb = std::max(ldb, std::max(1L, brows));
  PIPEVD_CUBLAS_CHECK(
      cublasDgemm_64(s_->blas, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc));
}

void GpuBackend::mirror_triangle(char uplo, long n, double* a, long lda) {
  if (n <= 1) return;
  ScopedDevice guard(s_->device);
  gpu::mirror_triangle(s_->stream, uplo, n, a, lda);
}

void GpuBackend::syr2k_full(long n, long k, double alpha, const double* a, long lda,
                            const double* b, long ldb, double* c, long ldc) {
  if (n <= 0 || k <= 0) return;
  ScopedDevice guard(s_->device);
  syr2k_lower(*s_->ctx, s_->stream, n, k, alpha, a, lda, b, ldb, 1.0, c, ldc);
  mirror_lower(s_->stream, n, c, ldc);
}

void GpuBackend::set_symmetric_product(bool use) { s_->symmetric_product = use; }
void GpuBackend::set_symmetric_product_min_rows(long rows) {
  s_->symmetric_product_min_rows = std::max(1L, rows);
}
bool GpuBackend::symmetric_product_used(long m, long k) const {
  return s_->symmetric_product && s_->symmetric_product_fits && k <= kSymmetricProductMaxWidth &&
         m >= s_->symmetric_product_min_rows;
}

void GpuBackend::symmetric_product(long m, long k, long split, const double* s1, long ld1,
                                   const double* s2, long ld2, const double* w, long ldw, double* z,
                                   long ldz) {
  if (m <= 0 || k <= 0) return;
  if (!symmetric_product_used(m, k)) {
    EngineBackend::symmetric_product(m, k, split, s1, ld1, s2, ld2, w, ldw, z, ldz);
    return;
  }
  ScopedDevice guard(s_->device);
  gpu::SymmetricProductParams params;
  params.max_workspace = kSymmetricProductWorkspace;
  const gpu::SymmetricProductPlan plan = gpu::plan_symmetric_product(s_->device, m, k, params);
  // Every slot is written before it is read: no zero fill (it had cost what the kernel gains).
  pipevd::DeviceBuffer work(*this, plan.workspace, pipevd::DeviceBuffer::Unfilled{});
  gpu::symmetric_product(plan, s_->stream, s1, ld1, s2, ld2, split, w, ldw, z, ldz, work.get());
}

void GpuBackend::panel_qr(long m, long nb, double* panel, long ldp, double* w, long ldw, double* y,
                          long ldy) {
  const long kk = std::min(m, nb), k0 = std::max(0L, kk);
  // Both QR paths write every element of the first kk columns of W and Y (the out-of-place trmm
  // writes all of W's); the contract zeroes the rest.
  fill_matrix(m, nb - k0, 0.0, 0.0, w + k0 * ldw, ldw);
  fill_matrix(m, nb - k0, 0.0, 0.0, y + k0 * ldy, ldy);
  if (kk <= 0) return;
  ScopedDevice guard(s_->device);
  State& s = *s_;
  double* tau = s.grow(s.tau, sizeof(double) * kk);
  // One cooperative kernel: R into the panel, Y, tau and T out; then W = Y T. A refused grid
  // (fewer SMs are ours than the plan saw: MPS, a shared GPU) is retried on fewer blocks, each
  // with a taller slab; where none fits, the cuSOLVER path from now on for this shape.
  FusedPanelQrPlan plan = s.use_fused(m, nb) ? s.fused_plan(m, nb) : FusedPanelQrPlan{};
  for (; plan.ok; plan = s.fused_plan_on_fewer_blocks(m, nb)) {
    double* scratch = s.grow(s.fused_qr, sizeof(double) * fused_panel_qr_scratch(plan, nb));
    double* t = s.grow(s.tmat, sizeof(double) * kk * kk);
    if (fused_panel_qr(plan, s.stream, m, nb, panel, ldp, y, ldy, tau, t, kk, scratch)) {
      const double one = 1.0;
      PIPEVD_CUBLAS_CHECK(cublasDtrmm_64(s.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER,
                                         CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m, kk, &one, t, kk, y,
                                         ldy, w, ldw));
      return;
    }
  }
  cusolver_geqrf_split(m, nb, panel, ldp, y, ldy, tau);
  form_w(m, kk, y, ldy, tau, w, ldw);
}

void GpuBackend::cusolver_geqrf_split(long m, long nb, double* panel, long ldp, double* y, long ldy,
                                      double* tau) {
  State& s = *s_;
  const long kk = std::min(m, nb);
  s.geqrf(CUDA_R_64F, m, nb, panel, ldp, tau);
  split_panel<<<grid_for(m * kk), kThreads, 0, s.stream>>>(m, kk, panel, ldp, y, ldy);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

void GpuBackend::form_w(long m, long kk, const double* y, long ldy, const double* tau, double* w,
                        long ldw) {
  State& s = *s_;
  // T from T^{-1} = diag(1/tau) + striu(Y^T Y): one GEMM, one TRSM; then W = Y T.
  double* g = s.grow(s.gmat, sizeof(double) * kk * kk);
  double* t = s.grow(s.tmat, sizeof(double) * kk * kk);
  const double one = 1.0, zero = 0.0;
  PIPEVD_CUBLAS_CHECK(cublasDgemm_64(s.blas, CUBLAS_OP_T, CUBLAS_OP_N, kk, kk, m, &one, y, ldy, y,
                                     ldy, &zero, g, kk));
  t_inverse<<<grid_for(kk * kk), kThreads, 0, s.stream>>>(kk, tau, g, t);
  PIPEVD_CUDA_CHECK_LAUNCH();
  PIPEVD_CUBLAS_CHECK(cublasDtrsm_64(s.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, kk, kk, &one, g, kk, t, kk));
  fix_identity_reflectors<<<grid_for(kk), kThreads, 0, s.stream>>>(kk, tau, t);
  PIPEVD_CUDA_CHECK_LAUNCH();
  PIPEVD_CUBLAS_CHECK(cublasDtrmm_64(s.blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT, m, kk, &one, t, kk, y, ldy, w, ldw));
}

void GpuBackend::merge_reflector_blocks(long m, long k1, long k2, double* w, long ldw,
                                        const double* y, long ldy) {
  if (m <= 0 || k1 <= 0 || k2 <= 0) return;
  double* sm = s_->grow(s_->merge, sizeof(double) * k1 * k2);
  gemm('T', 'N', k1, k2, m, 1.0, y, ldy, w + k1 * ldw, ldw, 0.0, sm, k1);
  gemm('N', 'N', m, k2, k1, -1.0, w, ldw, sm, k1, 1.0, w + k1 * ldw, ldw);
}

void GpuBackend::fill_matrix(long m, long n, Complex alpha, Complex beta, Complex* a, long lda) {
  if (m <= 0 || n <= 0) return;
  ScopedDevice guard(s_->device);
  fill_complex(s_->stream, m, n, to_cuda(alpha), to_cuda(beta), device_complex(a), lda);
}

void GpuBackend::mirror_triangle(char uplo, long n, Complex* a, long lda) {
  if (n <= 0) return;
  ScopedDevice guard(s_->device);
  mirror_hermitian(s_->stream, uplo, n, device_complex(a), lda);
}

void GpuBackend::gemm(char transa, char transb, long m, long n, long k, Complex alpha,
                      const Complex* a, long lda, const Complex* b, long ldb, Complex beta,
                      Complex* c, long ldc) {
  if (m <= 0 || n <= 0) return;
  ScopedDevice guard(s_->device);
  const cublasOperation_t ta = complex_op_of(transa), tb = complex_op_of(transb);
  // cuBLAS checks leading dimensions even where k = 0 leaves A and B unreferenced.
  const long arows = ta == CUBLAS_OP_N ? m : k, brows = tb == CUBLAS_OP_N ? k : n;
  lda = std::max(lda, std::max(1L, arows));
  ldb = std::max(ldb, std::max(1L, brows));
  const cuDoubleComplex al = to_cuda(alpha), be = to_cuda(beta);
  PIPEVD_CUBLAS_CHECK(cublasZgemm_64(s_->blas, ta, tb, m, n, k, &al, device_complex(a), lda,
                                     device_complex(b), ldb, &be, device_complex(c), ldc));
}

void GpuBackend::syr2k_full(long n, long k, Complex alpha, const Complex* a, long lda,
                            const Complex* b, long ldb, Complex* c, long ldc) {
  if (n <= 0 || k <= 0) return;
  ScopedDevice guard(s_->device);
  const cuDoubleComplex al = to_cuda(alpha);
  const double one = 1.0;
  PIPEVD_CUBLAS_CHECK(cublasZher2k_64(s_->blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &al,
                                      device_complex(a), std::max(1L, lda), device_complex(b),
                                      std::max(1L, ldb), &one, device_complex(c), ldc));
  mirror_hermitian(s_->stream, 'L', n, device_complex(c), ldc);
}

void GpuBackend::panel_qr(long m, long nb, Complex* panel, long ldp, Complex* w, long ldw,
                          Complex* y, long ldy) {
  const long kk = std::min(m, nb), k0 = std::max(0L, kk);
  // The QR writes every element of the first kk columns of W and Y (the out-of-place trmm writes
  // all of W's); the contract zeroes the rest.
  fill_matrix(m, nb - k0, Complex(0), Complex(0), w + k0 * ldw, ldw);
  fill_matrix(m, nb - k0, Complex(0), Complex(0), y + k0 * ldy, ldy);
  if (kk <= 0) return;
  ScopedDevice guard(s_->device);
  State& s = *s_;
  constexpr std::size_t z = sizeof(cuDoubleComplex);
  auto* tau = reinterpret_cast<cuDoubleComplex*>(s.grow(s.tau, z * kk));
  s.geqrf(CUDA_C_64F, m, nb, panel, ldp, tau);
  split_complex_panel(s.stream, m, kk, device_complex(panel), ldp, device_complex(y), ldy);
  auto* g = reinterpret_cast<cuDoubleComplex*>(s.grow(s.gmat, z * kk * kk));
  auto* t = reinterpret_cast<cuDoubleComplex*>(s.grow(s.tmat, z * kk * kk));
  form_complex_w(s.blas, s.stream, m, kk, device_complex(y), ldy, tau, g, t, device_complex(w),
                 ldw);
}

void GpuBackend::merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw,
                                        const Complex* y, long ldy) {
  if (m <= 0 || k1 <= 0 || k2 <= 0) return;
  auto* sm = reinterpret_cast<Complex*>(s_->grow(s_->merge, sizeof(Complex) * k1 * k2));
  gemm('C', 'N', k1, k2, m, Complex(1), y, ldy, w + k1 * ldw, ldw, Complex(0), sm, k1);
  gemm('N', 'N', m, k2, k1, Complex(-1), w, ldw, sm, k1, Complex(1), w + k1 * ldw, ldw);
}

void GpuBackend::bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                             ReflectorStore& u, bool host_copy, bool beside_companion) {
  const long bw = std::max(0L, std::min(b, n - 1));
  s_->u_valid = false;
  if (n <= 0) {
    u = ReflectorStore(n, bw);
    return;
  }
  ScopedDevice guard(s_->device);
  State& s = *s_;
  const ReflectorLayout L{n, bw};
  pipevd::DeviceBuffer dd(*this, n), de(*this, n);
  pipevd::DeviceBuffer work(*this, static_cast<long>((bulge_chase_workspace_bytes(n, b) + 7) / 8));
  double* v = s.grow(s.u_v, sizeof(double) * std::max(1L, L.vector_array_size()));
  double* tau = s.grow(s.u_tau, sizeof(double) * std::max(1L, L.count()));
  BulgeChasingTunables tun = default_bulge_chasing_tunables(s.device, n, bw);
  if (beside_companion) tun = bulge_chasing_beside_other_work(tun, s.device, bw);
  gpu::bulge_chase(n, b, ab, ldab, dd.get(), de.get(), v, tau, work.get(),
                   with_overrides(tun, s.tuning.bulge_chasing), s.stream);
  // The host store (zero-filled, n^2 / 2 doubles) is made while the kernel runs: a copy into
  // pageable memory returns only when done, so the copies come after. Without host_copy only the
  // layout: the reflectors stay here for bc_back.
  if (host_copy) {
    u = ReflectorStore(n, bw);
  } else {
    u = ReflectorStore();
    u.layout = L;
    u.held_by_backend = true;
  }
  u.backend_token = ++chase_tokens;
  PIPEVD_CUDA_CHECK(
      cudaMemcpyAsync(d, dd.get(), sizeof(double) * n, cudaMemcpyDeviceToHost, s.stream));
  if (n > 1)
    PIPEVD_CUDA_CHECK(
        cudaMemcpyAsync(e, de.get(), sizeof(double) * (n - 1), cudaMemcpyDeviceToHost, s.stream));
  if (host_copy && L.count() > 0) {
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(u.v.data(), v, sizeof(double) * L.vector_array_size(),
                                      cudaMemcpyDeviceToHost, s.stream));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(u.tau.data(), tau, sizeof(double) * L.count(),
                                      cudaMemcpyDeviceToHost, s.stream));
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  s.u_print = host_copy ? fingerprint(u) : 0;
  s.u_token = u.backend_token;
  s.u_complex = false;
  s.u_valid = true;
}

void GpuBackend::bulge_chase_values(long n, long b, const double* ab, long ldab, double* d,
                                    double* e) {
  if (n <= 0) return;
  ScopedDevice guard(s_->device);
  State& s = *s_;
  const long bw = std::max(0L, std::min(b, n - 1));
  pipevd::DeviceBuffer dd(*this, n), de(*this, n);
  pipevd::DeviceBuffer work(*this, static_cast<long>((bulge_chase_workspace_bytes(n, b) + 7) / 8));
  gpu::bulge_chase(
      n, b, ab, ldab, dd.get(), de.get(), nullptr, nullptr, work.get(),
      with_overrides(default_bulge_chasing_tunables(s.device, n, bw), s.tuning.bulge_chasing),
      s.stream);
  PIPEVD_CUDA_CHECK(
      cudaMemcpyAsync(d, dd.get(), sizeof(double) * n, cudaMemcpyDeviceToHost, s.stream));
  if (n > 1)
    PIPEVD_CUDA_CHECK(
        cudaMemcpyAsync(e, de.get(), sizeof(double) * (n - 1), cudaMemcpyDeviceToHost, s.stream));
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s.stream));
}

void GpuBackend::bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                             ComplexReflectorStore& u, bool host_copy, bool beside_companion) {
  chase_complex(n, b, ab, ldab, d, e, &u, host_copy, beside_companion);
}

void GpuBackend::bulge_chase_values(long n, long b, const Complex* ab, long ldab, double* d,
                                    double* e) {
  chase_complex(n, b, ab, ldab, d, e, nullptr, false, false);
}

void GpuBackend::chase_complex(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                               ComplexReflectorStore* u, bool host_copy, bool beside_companion) {
  const long bw = std::max(0L, std::min(b, n - 1));
  if (n <= 0) {
    if (u) *u = ComplexReflectorStore(n, bw);
    return;
  }
  ScopedDevice guard(s_->device);
  State& s = *s_;
  const ReflectorLayout L{n, bw};
  pipevd::DeviceBuffer dd(*this, n);
  pipevd::BasicDeviceBuffer<Complex> dsub(*this, n);
  pipevd::DeviceBuffer work(*this,
                            static_cast<long>((bulge_chase_complex_workspace_bytes(n, b) + 7) / 8));
  cuDoubleComplex *v = nullptr, *tau = nullptr;
  if (u) {
    // The device reflector buffers: what they held is no longer a kept chase.
    s.u_valid = false;
    v = reinterpret_cast<cuDoubleComplex*>(
        s.grow(s.u_v, sizeof(Complex) * std::max(1L, L.vector_array_size())));
    tau = reinterpret_cast<cuDoubleComplex*>(
        s.grow(s.u_tau, sizeof(Complex) * std::max(1L, L.count())));
  }
  // The real chase's defaults (staged windows, sweeps per block by n / b), the complex schedule
  // next to SBR-back, then the overrides.
  BulgeChasingTunables tun = default_bulge_chasing_tunables(s.device, n, bw);
  if (beside_companion) tun = bulge_chasing_complex_beside_other_work(tun, s.device, bw);
  bulge_chase_complex(n, b, device_complex(ab), ldab, dd.get(), device_complex(dsub.get()), v, tau,
                      work.get(), with_overrides(tun, s.tuning.bulge_chasing), s.stream);
  // As the real chase: the host store (n^2 / 2 complex) is made while the kernel runs; without
  // host_copy only the layout, the reflectors staying here for bc_back.
  if (u) {
    if (host_copy) {
      *u = ComplexReflectorStore(n, bw);
    } else {
      *u = ComplexReflectorStore();
      u->layout = L;
      u->held_by_backend = true;
    }
    u->backend_token = ++chase_tokens;
  }
  std::vector<Complex> sub(static_cast<std::size_t>(n));
  PIPEVD_CUDA_CHECK(
      cudaMemcpyAsync(d, dd.get(), sizeof(double) * n, cudaMemcpyDeviceToHost, s.stream));
  if (n > 1)
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(sub.data(), dsub.get(), sizeof(Complex) * (n - 1),
                                      cudaMemcpyDeviceToHost, s.stream));
  if (u && host_copy && L.count() > 0) {
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(u->v.data(), v, sizeof(Complex) * L.vector_array_size(),
                                      cudaMemcpyDeviceToHost, s.stream));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(u->tau.data(), tau, sizeof(Complex) * L.count(),
                                      cudaMemcpyDeviceToHost, s.stream));
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s.stream));
  if (u) {
    s.u_print = host_copy ? fingerprint(*u) : 0;
    s.u_token = u->backend_token;
    s.u_complex = true;
    s.u_valid = true;
  }
  // The real T: e_i = |sub_i|, and D (D(0,0) = 1, D(i+1,i+1) = D(i,i) sub_i / |sub_i|) so that
  // (D^H T D)(i+1, i) = |sub_i|, as host::bulge_chase makes them.
  if (u) u->phase.assign(static_cast<std::size_t>(n), Complex(1.0));
  for (long i = 0; i + 1 < n; ++i) {
    e[i] = std::abs(sub[i]);
    if (u) u->phase[i + 1] = e[i] == 0.0 ? u->phase[i] : u->phase[i] * (sub[i] / e[i]);
  }
}

void GpuBackend::bc_back(const ComplexReflectorStore& u, long m, Complex* x, long ldx) {
  const ReflectorLayout& L = u.layout;
  if (m <= 0 || (L.count() == 0 && u.phase.empty())) return;
  ScopedDevice guard(s_->device);
  State& s = *s_;
  // This backend's last chase (a complex one), still on the device: held there only, or with a
  // host copy that still holds what the chase wrote.
  const bool kept =
      s.u_valid && s.u_complex && u.backend_token != 0 && u.backend_token == s.u_token;
  if (u.held_by_backend && !kept && L.count() > 0)
    throw std::logic_error(
        "bc_back: complex reflectors held by another backend, or released since");
  const bool cached = kept && (u.held_by_backend || fingerprint(u) == s.u_print);
  if (!cached && L.count() > 0) {  // reflectors from elsewhere: upload them
    s.u_valid = false;
    s.grow(s.u_v, sizeof(Complex) * L.vector_array_size());
    s.grow(s.u_tau, sizeof(Complex) * L.count());
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(s.u_v.p, u.v.data(), sizeof(Complex) * L.vector_array_size(),
                                      cudaMemcpyHostToDevice, s.stream));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(s.u_tau.p, u.tau.data(), sizeof(Complex) * L.count(),
                                      cudaMemcpyHostToDevice, s.stream));
  }
  const auto* v = static_cast<const cuDoubleComplex*>(s.u_v.p);
  const auto* tau = static_cast<const cuDoubleComplex*>(s.u_tau.p);
  pipevd::BasicDeviceBuffer<Complex> phase;
  if (!u.phase.empty()) {
    phase = pipevd::BasicDeviceBuffer<Complex>(*this, static_cast<long>(u.phase.size()));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(phase.get(), u.phase.data(), sizeof(Complex) * u.phase.size(),
                                      cudaMemcpyHostToDevice, s.stream));
  }
  gpu::ComplexBcBackTunables tun = default_bc_back_complex_tunables(m, L.b, s.bc_back_kernel);
  tun.group_lanes = bc_back_lanes(s.tuning, tun.group_lanes);
  bc_back_complex(L, v, tau, phase.get() ? device_complex(phase.get()) : nullptr, m,
                  device_complex(x), ldx, tun, s.stream);
  // The host arrays are pageable: the copies above have read them once the stream gets here.
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s.stream));
}

void GpuBackend::release_reflectors() {
  ScopedDevice guard(s_->device);
  for (GrowBuffer* g : {&s_->u_v, &s_->u_tau}) {
    if (g->p) PIPEVD_CUDA_CHECK(cudaFreeAsync(g->p, s_->stream));
    g->p = nullptr;
    g->bytes = 0;
  }
  s_->u_valid = false;
}

int GpuBackend::tridiagonal_eigenvalues(long n, const double* d, const double* e, double* w) {
  if (n <= 0) return 0;
  SturmArrays arrays;
  SturmProblem p = prepare_sturm(n, d, e, arrays);
  // T = 0 and T with NaN/Inf: the host implementation's answer, nothing to bisect.
  if (std::isnan(p.lo) || (p.unscale == 1 && p.unscale2 == 1 && p.hi - p.lo <= 10 * p.pivmin))
    return tridiagonal_eigenvalues_bisection(n, d, e, w, 1);
  ScopedDevice guard(s_->device);
  pipevd::DeviceBuffer dd(*this, n), de2(*this, std::max(1L, n - 1)), dw(*this, n);
  copy_to_device(arrays.d.data(), dd.get(), n);
  copy_to_device(arrays.e2.data(), de2.get(), std::max(1L, n - 1));
  p.d = dd.get();
  p.e2 = de2.get();
  bisect_eigenvalues(p, dw.get(), s_->stream);
  copy_to_host(dw.get(), w, n);
  std::sort(w, w + n);  // ascending already where counts are monotone (IEEE); cheap insurance
  return 0;
}

int GpuBackend::symmetric_eigensolver(bool want_vectors, long n, double* a, long lda, double* w) {
  if (n <= 0) return 0;
  ScopedDevice guard(s_->device);
  return cusolver_syevd(*this, s_->ctx->solver(s_->stream), s_->params, want_vectors, n, a, lda, w);
}

int GpuBackend::hermitian_eigensolver(bool want_vectors, char uplo, long n, std::complex<double>* a,
                                      long lda, double* w) {
  if (n <= 0) return 0;
  ScopedDevice guard(s_->device);
  return cusolver_heevd(*this, s_->ctx->solver(s_->stream), s_->params, want_vectors, uplo, n, a,
                        lda, w);
}

void GpuBackend::bc_back(const ReflectorStore& u, long m, double* x, long ldx) {
  const ReflectorLayout& L = u.layout;
  if (m <= 0 || L.count() == 0) return;
  ScopedDevice guard(s_->device);
  State& s = *s_;
  // This backend's last chase, still on the device: held there only, or with a host copy that
  // still holds what the chase wrote.
  const bool kept =
      s.u_valid && !s.u_complex && u.backend_token != 0 && u.backend_token == s.u_token;
  if (u.held_by_backend && !kept)
    throw std::logic_error("bc_back: reflectors held by another backend, or released since");
  const bool cached = kept && (u.held_by_backend || fingerprint(u) == s.u_print);
  if (!cached) {  // reflectors from elsewhere (the host, another backend): upload them
    s.u_valid = false;
    double* v = s.grow(s.u_v, sizeof(double) * L.vector_array_size());
    double* tau = s.grow(s.u_tau, sizeof(double) * L.count());
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(v, u.v.data(), sizeof(double) * L.vector_array_size(),
                                      cudaMemcpyHostToDevice, s.stream));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(tau, u.tau.data(), sizeof(double) * L.count(),
                                      cudaMemcpyHostToDevice, s.stream));
  }
  // The workspace (the tensor kernel's T factors) from this backend: a failure is its clear
  // out-of-memory error.
  gpu::BcBackTunables tun = gpu::default_bc_back_tunables(m, L.b, s.bc_back_kernel);
  tun.group_lanes = bc_back_lanes(s.tuning, tun.group_lanes);
  pipevd::DeviceBuffer work(*this,
                            static_cast<long>((gpu::bc_back_workspace_bytes(L, tun) + 7) / 8));
  gpu::bc_back(L, static_cast<const double*>(s.u_v.p), static_cast<const double*>(s.u_tau.p), m, x,
               ldx, tun, work.get(), s.stream);
}

// NCCL runs on the backend's stream, after the cuBLAS and kernel work queued before it and
// before what follows, with no host synchronisation; only the calling (engine) thread reaches it.
void GpuBackend::broadcast(double* buf, long count, int root) {
  if (s_->size <= 1 || count <= 0) return;
  ScopedDevice guard(s_->device);
#ifdef PIPEVD_GPU_NCCL
  if (s_->nccl) {
    ncclComm_t c = nccl_for(s_->comm, s_->device, s_->tuning.nccl_channels);
    PIPEVD_NCCL_CHECK(ncclGroupStart());
    for_each_piece(count, kNcclChunk, [&](long off, long len) {
      PIPEVD_NCCL_CHECK(ncclBroadcast(buf + off, buf + off, static_cast<std::size_t>(len),
                                      ncclDouble, root, c, s_->stream));
    });
    PIPEVD_NCCL_CHECK(ncclGroupEnd());
    return;
  }
#endif
  s_->staging.resize(count);
  if (s_->rank == root) copy_to_host(buf, s_->staging.data(), count);
  for_each_piece(count, kMpiChunk, [&](long off, long len) {
    MPI_Bcast(s_->staging.data() + off, static_cast<int>(len), MPI_DOUBLE, root, s_->comm);
  });
  if (s_->rank != root) copy_to_device(s_->staging.data(), buf, count);
}

void GpuBackend::send(const double* buf, long count, int dest, int tag) {
  if (count <= 0) return;
  if (dest == s_->rank) throw std::logic_error("pipevd: GPU backend: send to itself");
  ScopedDevice guard(s_->device);
#ifdef PIPEVD_GPU_NCCL
  if (s_->nccl) {
    // NCCL matches point-to-point messages by order between two ranks, which the engine keeps
    // (a rank posts its sends to a peer in the order the peer posts the receives).
    ncclComm_t c = nccl_for(s_->comm, s_->device, s_->tuning.nccl_channels);
    PIPEVD_NCCL_CHECK(ncclGroupStart());
    for_each_piece(count, kNcclChunk, [&](long off, long len) {
      PIPEVD_NCCL_CHECK(
          ncclSend(buf + off, static_cast<std::size_t>(len), ncclDouble, dest, c, s_->stream));
    });
    PIPEVD_NCCL_CHECK(ncclGroupEnd());
    return;
  }
#endif
  s_->staging.resize(count);
  copy_to_host(buf, s_->staging.data(), count);
  for_each_piece(count, kMpiChunk, [&](long off, long len) {
    MPI_Send(s_->staging.data() + off, static_cast<int>(len), MPI_DOUBLE, dest, tag, s_->comm);
  });
}

void GpuBackend::recv(double* buf, long count, int source, int tag) {
  if (count <= 0) return;
  if (source == s_->rank) throw std::logic_error("pipevd: GPU backend: receive from itself");
  ScopedDevice guard(s_->device);
#ifdef PIPEVD_GPU_NCCL
  if (s_->nccl) {
    ncclComm_t c = nccl_for(s_->comm, s_->device, s_->tuning.nccl_channels);
    PIPEVD_NCCL_CHECK(ncclGroupStart());
    for_each_piece(count, kNcclChunk, [&](long off, long len) {
      PIPEVD_NCCL_CHECK(
          ncclRecv(buf + off, static_cast<std::size_t>(len), ncclDouble, source, c, s_->stream));
    });
    PIPEVD_NCCL_CHECK(ncclGroupEnd());
    return;
  }
#endif
  s_->staging.resize(count);
  for_each_piece(count, kMpiChunk, [&](long off, long len) {
    MPI_Recv(s_->staging.data() + off, static_cast<int>(len), MPI_DOUBLE, source, tag, s_->comm,
             MPI_STATUS_IGNORE);
  });
  copy_to_device(s_->staging.data(), buf, count);
}

void GpuBackend::all_reduce_sum(double* buf, long count) {
  if (s_->size <= 1 || count <= 0) return;
  ScopedDevice guard(s_->device);
#ifdef PIPEVD_GPU_NCCL
  if (s_->nccl) {
    ncclComm_t c = nccl_for(s_->comm, s_->device, s_->tuning.nccl_channels);
    PIPEVD_NCCL_CHECK(ncclGroupStart());
    for_each_piece(count, kNcclChunk, [&](long off, long len) {
      PIPEVD_NCCL_CHECK(ncclAllReduce(buf + off, buf + off, static_cast<std::size_t>(len),
                                      ncclDouble, ncclSum, c, s_->stream));
    });
    PIPEVD_NCCL_CHECK(ncclGroupEnd());
    return;
  }
#endif
  s_->staging.resize(count);
  copy_to_host(buf, s_->staging.data(), count);
  for_each_piece(count, kMpiChunk, [&](long off, long len) {
    MPI_Allreduce(MPI_IN_PLACE, s_->staging.data() + off, static_cast<int>(len), MPI_DOUBLE,
                  MPI_SUM, s_->comm);
  });
  copy_to_device(s_->staging.data(), buf, count);
}

// NCCL's all-gather wants equal parts; the rows of Z differ per rank, so one broadcast per part,
// grouped so that NCCL runs them as one operation.
void GpuBackend::all_gather(double* buf, const std::vector<long>& begin) {
  if (s_->size <= 1) return;
  ScopedDevice guard(s_->device);
#ifdef PIPEVD_GPU_NCCL
  if (s_->nccl) {
    ncclComm_t c = nccl_for(s_->comm, s_->device, s_->tuning.nccl_channels);
    PIPEVD_NCCL_CHECK(ncclGroupStart());
    for (std::size_t q = 0; q + 1 < begin.size(); ++q)
      for_each_piece(begin[q + 1] - begin[q], kNcclChunk, [&](long off, long len) {
        double* p = buf + begin[q] + off;
        PIPEVD_NCCL_CHECK(ncclBroadcast(p, p, static_cast<std::size_t>(len), ncclDouble,
                                        static_cast<int>(q), c, s_->stream));
      });
    PIPEVD_NCCL_CHECK(ncclGroupEnd());
    return;
  }
#endif
  for (std::size_t q = 0; q + 1 < begin.size(); ++q)
    broadcast(buf + begin[q], begin[q + 1] - begin[q], static_cast<int>(q));
}

bool GpuBackend::uses_nccl() const { return s_->nccl; }

void GpuBackend::synchronize() {
  ScopedDevice guard(s_->device);
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(s_->stream));
}

void GpuBackend::wait_for(EngineBackend& other) {
  auto* gpu = dynamic_cast<GpuBackend*>(&other);
  if (!gpu) {
    other.synchronize();
    return;
  }
  ScopedDevice guard(s_->device);
  cudaEvent_t done = nullptr;
  PIPEVD_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  // Destroyed at once: the runtime keeps the event until the wait queued on it has passed.
  const cudaError_t recorded = cudaEventRecord(done, gpu->s_->stream);
  const cudaError_t waited =
      recorded == cudaSuccess ? cudaStreamWaitEvent(s_->stream, done, 0) : recorded;
  cudaEventDestroy(done);
  PIPEVD_CUDA_CHECK(waited);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* gpu_backend_kernel_anchor() { return reinterpret_cast<const void*>(&laset_kernel); }

}  // namespace pipevd::gpu
