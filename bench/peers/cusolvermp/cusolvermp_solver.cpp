// cuSOLVERMp's cusolverMpSyevd, one rank per GPU: each rank's block-cyclic piece goes to its GPU
// as it is (cuSOLVERMp takes ScaLAPACK's layout), the grid's ranks talk through NCCL. Process (r,
// c) of the BLACS grid is NCCL rank r * npcol + c, so the device grid is row-major whatever order
// the BLACS grid was made in. Complex Hermitian problems take the same call with CUDA_C_64F
// matrices and compute type (the eigenvalues stay real doubles).
#include <cusolverMp.h>
#include <nccl.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "base/scalapack_api.hpp"
#include "bench/peers/gpu_status.hpp"
#include "bench/peers/solver.hpp"
#include "bench/peers/stage_clock.hpp"

namespace pipevd::solvers {
namespace {

using scalapack::CSRC_;
using scalapack::LLD_;
using scalapack::MB_;
using scalapack::NB_;
using scalapack::RSRC_;

class CusolverMpSolver final : public Solver {
 public:
  CusolverMpSolver() {
    const NodeGpu g = node_gpu();
    local_size_ = g.local_size;
    ngpu_ = g.gpus;
    device_id_ = g.device;
    device_ = gpu_name(std::max(0, device_id_));
  }
  ~CusolverMpSolver() override { release_grid(); }
  std::string name() const override { return "cusolvermp"; }
  std::string device() const override { return device_; }
  int gpus(const Problem& p) const override { return p.nprow * p.npcol; }

  std::string unsupported(const Problem& p) const override {
    std::string why;
    if (ngpu_ == 0)
      why = "no CUDA device visible";
    else if (local_size_ > ngpu_)
      why = "cuSOLVERMp needs one rank per GPU (more ranks than GPUs here)";
    else if (p.desc[MB_] != p.desc[NB_])
      why = "cuSOLVERMp needs square blocks (MB = NB)";
    else if (p.desc[RSRC_] != 0 || p.desc[CSRC_] != 0)
      why = "cuSOLVERMp needs RSRC = CSRC = 0";
    int bad = !why.empty(), any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, p.comm);
    return any && why.empty() ? "another rank cannot run cuSOLVERMp" : why;
  }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    return solve_any(p, jobz, a, w, z);
  }
  bool has_hermitian() const override { return true; }
  Outcome solve_hermitian(const Problem& p, char jobz, Complex* a, double* w, Complex* z) override {
    return solve_any(p, jobz, a, w, z);
  }

 private:
  static cudaDataType data_type(const double*) { return CUDA_R_64F; }
  static cudaDataType data_type(const Complex*) { return CUDA_C_64F; }

  template <class T>
  Outcome solve_any(const Problem& p, char jobz, T* a, double* w, T* z) {
    Outcome out;
    int failed = 0;
    try {
      solve_here(p, jobz, a, w, z, out);
    } catch (const ::pipevd::Error& e) {
      out.error = e.what();
      failed = 1;
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, p.comm);
    if (any && out.info == 0) {
      out.info = -1;
      if (out.error.empty()) out.error = "cuSOLVERMp failed on another rank";
    }
    return out;
  }

  // Handle, stream, NCCL communicator and device grid, made once per BLACS grid shape.
  void setup(const Problem& p) {
    if (handle_ && nprow_ == p.nprow && npcol_ == p.npcol) return;
    release_grid();
    PIPEVD_CUDA_CHECK(cudaSetDevice(device_id_));
    PIPEVD_CUDA_CHECK(cudaStreamCreate(&stream_));
    status_check(cusolverMpCreate(&handle_, device_id_, stream_), "cusolverMpCreate");
    const int nccl_rank = p.myrow * p.npcol + p.mycol, nranks = p.nprow * p.npcol;
    // The unique id travels from the rank that will be NCCL rank 0 (grid process (0, 0)).
    ncclUniqueId id{};
    int me = 0, root = -1, cand = nccl_rank == 0 ? 0 : -1;
    MPI_Comm_rank(p.comm, &me);
    if (cand == 0) cand = me;
    MPI_Allreduce(&cand, &root, 1, MPI_INT, MPI_MAX, p.comm);
    if (nccl_rank == 0) status_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, root, p.comm);
    status_check(ncclCommInitRank(&nccl_, nranks, id, nccl_rank), "ncclCommInitRank");
    status_check(cusolverMpCreateDeviceGrid(handle_, &grid_, nccl_, p.nprow, p.npcol,
                                            CUSOLVERMP_GRID_MAPPING_ROW_MAJOR),
                 "cusolverMpCreateDeviceGrid");
    nprow_ = p.nprow;
    npcol_ = p.npcol;
  }

  void release_grid() {
    if (grid_) cusolverMpDestroyGrid(grid_);
    if (handle_) cusolverMpDestroy(handle_);
    if (nccl_) ncclCommDestroy(nccl_);
    if (stream_) cudaStreamDestroy(stream_);
    grid_ = nullptr;
    handle_ = nullptr;
    nccl_ = nullptr;
    stream_ = nullptr;
  }

  template <class T>
  void solve_here(const Problem& p, char jobz, T* a, double* w, T* z, Outcome& out) {
    const cudaDataType type = data_type(a);
    double t = MPI_Wtime();
    setup(p);
    const int64_t lld = p.desc[LLD_];
    const size_t local = static_cast<size_t>(lld) * std::max<long>(1, p.local_cols);
    cusolverMpMatrixDescriptor_t desc_a = nullptr, desc_q = nullptr;
    T *d_a = nullptr, *d_q = nullptr;
    double* d_d = nullptr;
    int* d_info = nullptr;
    void* d_work = nullptr;
    std::vector<char> h_work;
    auto release = [&] {
      if (desc_a) cusolverMpDestroyMatrixDesc(desc_a);
      if (desc_q) cusolverMpDestroyMatrixDesc(desc_q);
      cudaFree(d_a);
      cudaFree(d_q);
      cudaFree(d_d);
      cudaFree(d_info);
      cudaFree(d_work);
    };
    try {
      for (auto* d : {&desc_a, &desc_q})
        status_check(cusolverMpCreateMatrixDesc(d, grid_, type, p.n, p.n, p.desc[MB_], p.desc[NB_],
                                                p.desc[RSRC_], p.desc[CSRC_], lld),
                     "cusolverMpCreateMatrixDesc");
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_a, sizeof(T) * local));
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_q, sizeof(T) * local));
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_d, sizeof(double) * std::max(1, p.n)));
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_info, sizeof(int)));
      PIPEVD_CUDA_CHECK(
          cudaMemcpyAsync(d_a, a, sizeof(T) * local, cudaMemcpyHostToDevice, stream_));
      PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
      MPI_Barrier(p.comm);
      lap(out, "h2d", t);
      // cusolverMpSyevd computes eigenvectors whatever compz says ("N" fails with
      // CUSOLVER_STATUS_INTERNAL_ERROR), so an eigenvalues-only call is what a user of it gets:
      // the vectors computed and dropped.
      char compz[2] = {'V', 0};
      if (jobz == 'N') out.path = "compz V: no eigenvalues-only mode";
      size_t dev_bytes = 0, host_bytes = 0;
      status_check(
          cusolverMpSyevd_bufferSize(handle_, compz, CUBLAS_FILL_MODE_LOWER, p.n, d_a, 1, 1, desc_a,
                                     d_d, d_q, 1, 1, desc_q, type, &dev_bytes, &host_bytes),
          "cusolverMpSyevd_bufferSize");
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_work, std::max<size_t>(1, dev_bytes)));
      h_work.resize(std::max<size_t>(1, host_bytes));
      status_check(
          cusolverMpSyevd(handle_, compz, CUBLAS_FILL_MODE_LOWER, p.n, d_a, 1, 1, desc_a, d_d, d_q,
                          1, 1, desc_q, type, d_work, dev_bytes, h_work.data(), host_bytes, d_info),
          "cusolverMpSyevd");
      PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
      MPI_Barrier(p.comm);
      lap(out, "syevd", t);
      PIPEVD_CUDA_CHECK(cudaMemcpy(&out.info, d_info, sizeof(int), cudaMemcpyDeviceToHost));
      PIPEVD_CUDA_CHECK(cudaMemcpy(w, d_d, sizeof(double) * p.n, cudaMemcpyDeviceToHost));
      if (jobz == 'V')
        PIPEVD_CUDA_CHECK(cudaMemcpy(z, d_q, sizeof(T) * local, cudaMemcpyDeviceToHost));
      lap(out, "d2h", t);
      if (out.info != 0) out.error = "cusolverMpSyevd info = " + std::to_string(out.info);
    } catch (...) {
      release();
      throw;
    }
    release();
  }

  int local_size_ = 1, ngpu_ = 0, device_id_ = -1;
  std::string device_;
  int nprow_ = 0, npcol_ = 0;
  cudaStream_t stream_ = nullptr;
  ncclComm_t nccl_ = nullptr;
  cusolverMpHandle_t handle_ = nullptr;
  cusolverMpGrid_t grid_ = nullptr;
};

}  // namespace

std::unique_ptr<Solver> make_cusolvermp_solver() { return std::make_unique<CusolverMpSolver>(); }

}  // namespace pipevd::solvers
