// The GPU backend: the engine's operations on one CUDA device (the device current when the
// backend is made, or the one named): cuBLAS for GEMMs, the fused panel QR of gpu/panel_qr.cuh
// (cuSOLVER geqrf where it does not apply) plus a T formed on the GPU for the DBBR panel, the
// GPU bulge-chasing kernel, the BLAS2 BC-back kernel (gpu/bc_back.cuh), and NCCL (bootstrapped
// over MPI) between engine ranks. All work is queued on one stream (lane 0 of the device's
// GpuContext), in program order, so every operation sees the results of those before it; copies
// to and from the host and synchronize() wait for it.
// Messages: NCCL on that same stream (so after the cuBLAS work that produced a buffer, without a
// host wait), one engine rank per GPU; the NCCL communicator is made in bind() (collective) and
// cached on the MPI communicator. Only the engine's main thread may communicate: other threads
// (the D&C thread, a companion backend with its own stream) must not call broadcast/send/recv.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "base/nccl_channels.hpp"
#include "core/backend.hpp"
#include "core/memory_plan.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/bulge_chasing.cuh"

namespace pipevd::gpu {

// Number of CUDA devices visible to this process (0 without a driver or device); asked once.
int visible_device_count();

// The UUIDs of the visible devices in ordinal order (the same GPU has the same UUID in every
// process, whatever CUDA_VISIBLE_DEVICES numbers it); asked once.
const std::vector<std::array<unsigned char, 16>>& visible_gpu_uuids();

// A backend's tuning, from the policy (interface/policy: the PIPEVD_GPU_* settings), given at
// construction; 0 / -1: the kernels' defaults.
struct GpuTuning {
  int panel_qr_blocks = 0, panel_qr_threads = 0;  // fused panel QR (plan_fused_panel_qr)
  BulgeChasingOverrides bulge_chasing;
  // PIPEVD_GPU_SHARING: several engine ranks may drive one GPU (they then communicate through MPI
  // with host staging; NCCL needs one GPU per rank). Without it, bind() refuses a shared GPU.
  bool sharing = false;
  int nccl_channels = kDefaultNcclChannels;  // the NCCL communicator's channels at most (0: NCCL's)
  // PIPEVD_GPU_BC_LANES: the tensor-core BC-back's group lanes request (BcBackTunables::
  // group_lanes: 0 the kernels' default, or a count).
  int bc_back_lanes = 0;
};

// Free bytes on `device` now for pipevd: the device's (cudaMemGetInfo) and its pool's free ones
// (gpu_context.hpp pool_free_bytes); -1 when the device cannot be asked.
long device_free_bytes(int device);

// Whether DBBR's A W can go through gpu/symmetric_product on `device`: a Hopper or newer (its
// shapes are tuned for Hopper's m16n8k8 DMMA; on older devices the m8n8k4 fallback gives no gain
// over the GEMMs) whose shared memory holds the default shape with at least 3 stages (with fewer
// the loads are not hidden behind the products, and the GEMMs win).
bool symmetric_product_available(int device);

class GpuBackend final : public EngineBackend {
 public:
  // device < 0: the current device.
  explicit GpuBackend(int device = -1);
  // own_stream: a stream and cuBLAS handle of its own instead of the context's lane 0; urgent:
  // that stream at the device's highest priority (companion(true)).
  GpuBackend(int device, bool own_stream, bool urgent = false);
  ~GpuBackend() override;
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  const char* name() const override { return "gpu"; }
  // Complex A W: the interface's two GEMMs over full columns ('C'), by this backend's ZGEMM. The
  // real path's one-triangle kernel (gpu/symmetric_product.cuh) is built on double DMMA fragments,
  // which have no complex twin; reading both triangles costs bytes, not correctness.
  using EngineBackend::symmetric_product;
  int device() const;
  // The stream this backend queues all its work on (profilers record their events there).
  cudaStream_t stream() const;
  // Collective over `engine`: checks that no two engine ranks drive one GPU (see
  // gpu_sharing_allowed) and makes (or finds) the engine's NCCL communicator.
  void bind(MPI_Comm engine) override;
  MPI_Comm communicator() const override;
  // Messages go through NCCL (bound to > 1 rank, one GPU each, NCCL built in).
  bool uses_nccl() const;

  double* allocate(long count) override;
  double* allocate_unfilled(long count) override;
  // Tests: allocate_unfilled fills with NaN, so that a read of an element never written shows.
  void set_poison_unfilled(bool poison);
  void release(double* p) override;
  // Large copies from or to pageable host memory go through pinned chunks with `host threads`
  // copying in parallel (gpu/pageable_copy.hpp); pinned memory is copied directly.
  void copy_to_device(const double* host, double* dev, long count) override;
  void copy_to_host(const double* dev, double* host, long count) override;
  // Panels of c's columns through two device buffers: the copy of one (on the calling thread,
  // on a stream of its own) runs while the GEMM of the next one computes.
  void gemm_to_host(long m, long n, long k, const double* a, long lda, const double* b, long ldb,
                    double* c, long ldc) override;
  // The triangle packed by the host threads (which scan it as they pack) into pinned chunks, one
  // chunk's DMA beside the next one's packing, then unpacked into place by a kernel.
  EntryScan upload_triangle(char uplo, long n, const double* host, long ldh, double* dev,
                            long ldd) override;
  EntryScan upload_triangle(char uplo, long n, const Complex* host, long ldh, Complex* dev,
                            long ldd) override;
  // Host threads for those pageable copies (default 1): the engine rank's share of the CPUs.
  void set_host_threads(int threads);
  // Whether the device pool keeps its memory when this backend goes (default: trimmed to nothing,
  // so the caller may allocate on the device between calls); kept, the next call finds it grown.
  void set_keep_pool(bool keep);
  void set_tuning(const GpuTuning& tuning);
  // Pinned blocks from the staging kept between calls (gpu/pinned_staging.hpp), back there once
  // released.
  double* allocate_host_staging(long count) override;
  void release_host_staging(double* p) override;
  // cudaMemcpyAsync on the stream; an event per source buffer marks when it has been read.
  void copy_to_device_async(const double* host, double* dev, long count) override;
  void wait_staging(const double* host) override;
  void copy_matrix(long m, long n, const double* src, long lds, double* dst, long ldd) override;
  // One kernel for the runs (gpu/row_runs.cuh); a single run is copy_matrix's 2D copy.
  using EngineBackend::copy_row_runs;
  void copy_row_runs(long cols, const std::vector<RowRun>& runs, const double* src, long lds,
                     double* dst, long ldd) override;
  void fill_matrix(long m, long n, double alpha, double beta, double* a, long lda) override;
  void fill_matrix(long m, long n, Complex alpha, Complex beta, Complex* a, long lda) override;
  void mirror_triangle(char uplo, long n, double* a, long lda) override;
  // The other triangle conjugated, the diagonal's imaginary parts zeroed (gpu/complex_matrix.cuh).
  void mirror_triangle(char uplo, long n, Complex* a, long lda) override;

  void gemm(char transa, char transb, long m, long n, long k, double alpha, const double* a,
            long lda, const double* b, long ldb, double beta, double* c, long ldc) override;
  // cublasZgemm: 'N', 'T' and 'C' ops.
  void gemm(char transa, char transb, long m, long n, long k, Complex alpha, const Complex* a,
            long lda, const Complex* b, long ldb, Complex beta, Complex* c, long ldc) override;
  // Lower triangle by gpu/syr2k (recursive, half the flops of two GEMMs), then mirrored.
  void syr2k_full(long n, long k, double alpha, const double* a, long lda, const double* b,
                  long ldb, double* c, long ldc) override;
  // Lower triangle by cublasZher2k (half the flops of two GEMMs; its diagonal real), then the
  // conjugate mirror.
  void syr2k_full(long n, long k, Complex alpha, const Complex* a, long lda, const Complex* b,
                  long ldb, Complex* c, long ldc) override;
  // DBBR's A W: by default the kernel that reads only S's lower triangle
  // (gpu/symmetric_product.cuh) where it applies (b <= 32, m >= kSymmetricProductMinRows, a device
  // whose shared memory holds its default shape), else, or with set_symmetric_product(false)
  // (PIPEVD_GPU_AW=gemm), the two GEMMs over full columns. Its workspace (at most
  // kSymmetricProductWorkspace doubles, core/memory_plan.hpp) comes from the pool per call, not
  // zero-filled (the kernel writes all of it, and a fill would cost about what it gains).
  void symmetric_product(long m, long k, long split, const double* s1, long ld1, const double* s2,
                         long ld2, const double* w, long ldw, double* z, long ldz) override;
  static constexpr long kSymmetricProductMinRows = pipevd::kSymmetricProductMinRows;
  void set_symmetric_product(bool use);
  // Tests: the kernel from `rows` rows on (default kSymmetricProductMinRows), to check it inside
  // DBBR at sizes the host backend reduces quickly.
  void set_symmetric_product_min_rows(long rows);
  bool symmetric_product_used(long m, long k) const;
  // The fused cooperative Householder kernel (gpu/panel_qr.cuh) where the panel fits (nb <= 64,
  // the slab of rows per SM in shared memory), cusolverDnXgeqrf otherwise; then T and W = Y T.
  // Where the runtime refuses the kernel's grid (fewer SMs are this process's than the device
  // has), the kernel on half as many blocks, until a grid runs or no slab fits; the plan that ran
  // is kept for the shape.
  void panel_qr(long m, long nb, double* panel, long ldp, double* w, long ldw, double* y,
                long ldy) override;
  // Which panel QR to use: Auto (the fused kernel where it applies) or Cusolver (always
  // cusolverDnXgeqrf, for comparisons). The route sets PIPEVD_GPU_PANEL_QR's choice (Auto default).
  // Auto: the fused kernel where it beats cuSOLVER's path (nb <= 32, m >= 8192: tall, narrow
  // panels, where cuSOLVER's many small launches dominate and one grid sync per column is cheap),
  // cuSOLVER elsewhere. Fused: the fused kernel wherever it fits (tests). Cusolver: always
  // cuSOLVER.
  enum class PanelQrPath { Auto, Fused, Cusolver };
  void set_panel_qr_path(PanelQrPath path);
  PanelQrPath panel_qr_path() const;
  // Whether panel_qr(m, nb, ...) would take the fused kernel now.
  bool panel_qr_fused(long m, long nb) const;
  // Complex: cusolverDnXgeqrf on CUDA_C_64F, then T and W = Y T (gpu/complex_panel_qr.cuh); the
  // fused kernel is real only.
  void panel_qr(long m, long nb, Complex* panel, long ldp, Complex* w, long ldw, Complex* y,
                long ldy) override;
  void merge_reflector_blocks(long m, long k1, long k2, double* w, long ldw, const double* y,
                              long ldy) override;
  void merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw, const Complex* y,
                              long ldy) override;

  void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                   ReflectorStore& u, bool host_copy = true,
                   bool beside_companion = false) override;
  // BC-back's kernel (default Auto; the route sets PIPEVD_GPU_BC_BACK's choice).
  void set_bc_back_kernel(BcBackKernel kernel);
  void bulge_chase_values(long n, long b, const double* ab, long ldab, double* d,
                          double* e) override;
  void bc_back(const ReflectorStore& u, long m, double* x, long ldx) override;
  // Complex Hermitian band (gpu/bulge_chasing_complex.cuh): d, e and D (u.phase) made real on the
  // host from the chased subdiagonal as host::bulge_chase does. As the real chase, the reflectors
  // stay in this backend's device buffers for bc_back, with a host copy only where host_copy asks
  // (n^2 / 2 complex); beside_companion does not change the complex kernel's schedule.
  void bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                   ComplexReflectorStore& u, bool host_copy = true,
                   bool beside_companion = false) override;
  void bulge_chase_values(long n, long b, const Complex* ab, long ldab, double* d,
                          double* e) override;
  // X := X Q_b D (gpu/bc_back_complex.cuh): the reflectors of this backend's last complex chase
  // where u is that chase's (held here, or a host copy the fingerprint finds unchanged), else
  // uploaded from u's host copy into the device buffers release_reflectors() frees.
  // std::logic_error for reflectors held by another backend or released since.
  void bc_back(const ComplexReflectorStore& u, long m, Complex* x, long ldx) override;
  void release_reflectors() override;
  // D&C merges' roots and M in kernels on this backend's stream (gpu/secular_merge.cuh).
  std::unique_ptr<SecularMerge> secular_merge() override;
  // Parallel bisection on the device (gpu/sturm_bisection.cuh).
  int tridiagonal_eigenvalues(long n, const double* d, const double* e, double* w) override;
  // The one-stage path's solver: cusolverDnXsyevd on this backend's stream
  // (gpu/symmetric_eigensolver.hpp).
  int symmetric_eigensolver(bool want_vectors, long n, double* a, long lda, double* w) override;
  int hermitian_eigensolver(bool want_vectors, char uplo, long n, std::complex<double>* a, long lda,
                            double* w) override;

  void broadcast(double* buf, long count, int root) override;
  void send(const double* buf, long count, int dest, int tag) override;
  void recv(double* buf, long count, int source, int tag) override;
  void all_reduce_sum(double* buf, long count) override;
  // The parts broadcast from their ranks in one NCCL group.
  void all_gather(double* buf, const std::vector<long>& begin) override;

  void synchronize() override;
  // An event recorded on other's stream (a GpuBackend's; any other backend is synchronised).
  void wait_for(EngineBackend& other) override;
  // Same device, its own stream and cuBLAS handle (not one of the context's lanes).
  std::unique_ptr<EngineBackend> companion(bool urgent) const override;

 private:
  // panel_qr's cuSOLVER path (Xgeqrf, then R and Y split apart) and its T / W formation.
  void cusolver_geqrf_split(long m, long nb, double* panel, long ldp, double* y, long ldy,
                            double* tau);
  void form_w(long m, long kk, const double* y, long ldy, const double* tau, double* w, long ldw);
  // The complex chase; unless u is null, the reflectors kept in the device buffers and *u made
  // here: their host copy with host_copy, else only their layout (held_by_backend);
  // beside_companion: the schedule next to a companion's work (bulge_chase's).
  void chase_complex(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                     ComplexReflectorStore* u, bool host_copy, bool beside_companion);
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace pipevd::gpu
