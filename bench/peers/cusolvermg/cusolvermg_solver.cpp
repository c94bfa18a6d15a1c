// cuSOLVERMg's cusolverMgSyevd on all GPUs visible to one process: the matrix is gathered to grid
// process (0, 0), dealt to its GPUs in cuSOLVERMg's 1-D column-block-cyclic layout (tiles of
// kTile columns, as in NVIDIA's samples), solved, and the eigenvectors collected and scattered
// back. cuSOLVERMg is deprecated in CUDA 13 but still shipped; it is the single-process multi-GPU
// peer.
#include <cusolverMg.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "bench/peers/gpu_status.hpp"
#include "bench/peers/root_solve.hpp"
#include "bench/peers/solver.hpp"
#include "bench/peers/stage_clock.hpp"

namespace pipevd::solvers {
namespace {

constexpr int kTile = 256;  // columns per tile of the 1-D block-cyclic layout

class CusolverMgSolver final : public Solver {
 public:
  CusolverMgSolver() : device_(gpu_name(0)), ngpu_(device_count()) {}
  ~CusolverMgSolver() override {
    if (desc_) cusolverMgDestroyMatrixDesc(desc_);
    if (grid_) cusolverMgDestroyGrid(grid_);
    if (handle_) cusolverMgDestroy(handle_);
  }
  std::string name() const override { return "cusolvermg"; }
  std::string device() const override { return device_; }
  int gpus(const Problem&) const override { return ngpu_; }
  std::string unsupported(const Problem& p) const override {
    int have = ngpu_ > 0, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, p.comm);
    return all ? std::string() : "no CUDA device visible";
  }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    return solve_at_root(p, jobz, a, w, z, "cuSOLVERMg",
                         [&](const double* in, double* vectors, Outcome& out) {
                           solve_on_root(p.n, jobz, in, vectors, w, out);
                         });
  }

 private:
  void setup() {
    if (handle_) return;
    devices_.resize(ngpu_);
    for (int d = 0; d < ngpu_; ++d) devices_[d] = d;
    // cuSOLVERMg reads and writes other GPUs' tiles directly.
    for (int d = 0; d < ngpu_; ++d) {
      PIPEVD_CUDA_CHECK(cudaSetDevice(d));
      for (int e = 0; e < ngpu_; ++e) {
        int can = 0;
        if (e != d && cudaDeviceCanAccessPeer(&can, d, e) == cudaSuccess && can) {
          const cudaError_t err = cudaDeviceEnablePeerAccess(e, 0);
          if (err == cudaErrorPeerAccessAlreadyEnabled)
            cudaGetLastError();
          else
            PIPEVD_CUDA_CHECK(err);
        }
      }
    }
    status_check(cusolverMgCreate(&handle_), "cusolverMgCreate");
    status_check(cusolverMgDeviceSelect(handle_, ngpu_, devices_.data()), "cusolverMgDeviceSelect");
    status_check(cusolverMgCreateDeviceGrid(&grid_, 1, ngpu_, devices_.data(),
                                            CUDALIBMG_GRID_MAPPING_COL_MAJOR),
                 "cusolverMgCreateDeviceGrid");
  }

  // Tile j of the n columns lives on GPU j % ngpu at local tile j / ngpu (lda = n): f(host
  // offset, device tile, bytes) for each tile.
  template <class F>
  void for_each_tile(int n, std::vector<double*>& dev, F&& f) const {
    const int tiles = (n + kTile - 1) / kTile;
    for (int j = 0; j < tiles; ++j) {
      const int width = std::min(kTile, n - j * kTile);
      const size_t offset = static_cast<size_t>(j) * kTile * n;
      f(offset, dev[j % ngpu_] + static_cast<size_t>(j / ngpu_) * kTile * n,
        sizeof(double) * static_cast<size_t>(n) * width);
    }
  }
  void upload_tiles(int n, const double* host, std::vector<double*>& dev) const {
    for_each_tile(n, dev, [&](size_t offset, double* d, size_t bytes) {
      PIPEVD_CUDA_CHECK(cudaMemcpy(d, host + offset, bytes, cudaMemcpyHostToDevice));
    });
  }
  void download_tiles(int n, std::vector<double*>& dev, double* host) const {
    for_each_tile(n, dev, [&](size_t offset, double* d, size_t bytes) {
      PIPEVD_CUDA_CHECK(cudaMemcpy(host + offset, d, bytes, cudaMemcpyDeviceToHost));
    });
  }

  void solve_on_root(int n, char jobz, const double* in, double* vectors, double* w, Outcome& out) {
    setup();
    double t = MPI_Wtime();
    if (desc_ && desc_n_ != n) {
      cusolverMgDestroyMatrixDesc(desc_);
      desc_ = nullptr;
    }
    if (!desc_) {
      status_check(cusolverMgCreateMatrixDesc(&desc_, n, n, n, kTile, CUDA_R_64F, grid_),
                   "cusolverMgCreateMatrixDesc");
      desc_n_ = n;
    }
    const int tiles = (n + kTile - 1) / kTile;
    std::vector<double*> d_a(ngpu_, nullptr), d_work(ngpu_, nullptr);
    auto release = [&] {
      for (int d = 0; d < ngpu_; ++d) {
        cudaSetDevice(d);
        cudaFree(d_a[d]);
        cudaFree(d_work[d]);
      }
    };
    try {
      for (int d = 0; d < ngpu_; ++d) {
        const long local_tiles = tiles / ngpu_ + (d < tiles % ngpu_ ? 1 : 0);
        PIPEVD_CUDA_CHECK(cudaSetDevice(d));
        PIPEVD_CUDA_CHECK(
            cudaMalloc(&d_a[d], sizeof(double) * std::max<long>(1, local_tiles * kTile * n)));
      }
      upload_tiles(n, in, d_a);
      lap(out, "h2d", t);
      const auto mode = jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
      int64_t lwork = 0;
      status_check(cusolverMgSyevd_bufferSize(handle_, mode, CUBLAS_FILL_MODE_LOWER, n,
                                              reinterpret_cast<void**>(d_a.data()), 1, 1, desc_, w,
                                              CUDA_R_64F, CUDA_R_64F, &lwork),
                   "cusolverMgSyevd_bufferSize");
      for (int d = 0; d < ngpu_; ++d) {
        PIPEVD_CUDA_CHECK(cudaSetDevice(d));
        PIPEVD_CUDA_CHECK(cudaMalloc(&d_work[d], sizeof(double) * std::max<int64_t>(1, lwork)));
      }
      for (int d = 0; d < ngpu_; ++d) {
        PIPEVD_CUDA_CHECK(cudaSetDevice(d));
        PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
      }
      // W and info are host memory for cuSOLVERMg.
      status_check(
          cusolverMgSyevd(handle_, mode, CUBLAS_FILL_MODE_LOWER, n,
                          reinterpret_cast<void**>(d_a.data()), 1, 1, desc_, w, CUDA_R_64F,
                          CUDA_R_64F, reinterpret_cast<void**>(d_work.data()), lwork, &out.info),
          "cusolverMgSyevd");
      for (int d = 0; d < ngpu_; ++d) {
        PIPEVD_CUDA_CHECK(cudaSetDevice(d));
        PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
      }
      lap(out, "syevd", t);
      if (jobz == 'V') download_tiles(n, d_a, vectors);
      lap(out, "d2h", t);
      if (out.info != 0) out.error = "cusolverMgSyevd info = " + std::to_string(out.info);
    } catch (...) {
      release();
      throw;
    }
    release();
  }

  std::string device_;
  int ngpu_ = 0;
  std::vector<int> devices_;
  cusolverMgHandle_t handle_ = nullptr;
  cudaLibMgGrid_t grid_ = nullptr;
  cudaLibMgMatrixDesc_t desc_ = nullptr;
  int desc_n_ = -1;
};

}  // namespace

std::unique_ptr<Solver> make_cusolvermg_solver() { return std::make_unique<CusolverMgSolver>(); }

}  // namespace pipevd::solvers
