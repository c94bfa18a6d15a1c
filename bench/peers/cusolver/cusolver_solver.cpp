// cuSOLVER's cusolverDnXsyevd on one GPU: the matrix is gathered to grid process (0, 0), solved
// on its GPU, and the eigenvectors scattered back. Stage times split the copies from the solve.
// Complex Hermitian problems take the same call with CUDA_C_64F (eigenvalues stay CUDA_R_64F).
#include <cusolverDn.h>

#include <memory>
#include <vector>

#include "bench/peers/gpu_status.hpp"
#include "bench/peers/root_solve.hpp"
#include "bench/peers/solver.hpp"
#include "bench/peers/stage_clock.hpp"

namespace pipevd::solvers {
namespace {

class CusolverSolver final : public Solver {
 public:
  CusolverSolver() : device_(gpu_name(0)) {}
  ~CusolverSolver() override {
    if (params_) cusolverDnDestroyParams(params_);
    if (handle_) cusolverDnDestroy(handle_);
  }
  std::string name() const override { return "cusolver"; }
  std::string device() const override { return device_; }
  int gpus(const Problem&) const override { return 1; }
  std::string unsupported(const Problem& p) const override {
    int have = device_count() > 0, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, p.comm);
    return all ? std::string() : "no CUDA device visible";
  }

  Outcome solve(const Problem& p, char jobz, double* a, double* w, double* z) override {
    return solve_at_root(p, jobz, a, w, z, "cuSOLVER",
                         [&](const double* in, double* vectors, Outcome& out) {
                           solve_on_root(p.n, jobz, in, vectors, w, out);
                         });
  }

  bool has_hermitian() const override { return true; }
  Outcome solve_hermitian(const Problem& p, char jobz, Complex* a, double* w, Complex* z) override {
    return solve_at_root(p, jobz, a, w, z, "cuSOLVER",
                         [&](const Complex* in, Complex* vectors, Outcome& out) {
                           solve_on_root(p.n, jobz, in, vectors, w, out);
                         });
  }

 private:
  static cudaDataType data_type(const double*) { return CUDA_R_64F; }
  static cudaDataType data_type(const Complex*) { return CUDA_C_64F; }

  template <class T>
  void solve_on_root(int n, char jobz, const T* in, T* vectors, double* w, Outcome& out) {
    const cudaDataType type = data_type(in);
    PIPEVD_CUDA_CHECK(cudaSetDevice(0));
    if (!handle_) {
      status_check(cusolverDnCreate(&handle_), "cusolverDnCreate");
      status_check(cusolverDnCreateParams(&params_), "cusolverDnCreateParams");
    }
    const auto mode = jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const size_t bytes = sizeof(T) * static_cast<size_t>(n) * n;
    double t = MPI_Wtime();
    T* d_a = nullptr;
    double* d_w = nullptr;
    int* d_info = nullptr;
    void* d_work = nullptr;
    std::vector<char> h_work;
    auto release = [&] {
      cudaFree(d_a);
      cudaFree(d_w);
      cudaFree(d_info);
      cudaFree(d_work);
    };
    try {
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_a, std::max<size_t>(bytes, 8)));
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_w, sizeof(double) * std::max(n, 1)));
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_info, sizeof(int)));
      PIPEVD_CUDA_CHECK(cudaMemcpy(d_a, in, bytes, cudaMemcpyHostToDevice));
      lap(out, "h2d", t);
      size_t dev_bytes = 0, host_bytes = 0;
      status_check(
          cusolverDnXsyevd_bufferSize(handle_, params_, mode, CUBLAS_FILL_MODE_LOWER, n, type, d_a,
                                      n, CUDA_R_64F, d_w, type, &dev_bytes, &host_bytes),
          "cusolverDnXsyevd_bufferSize");
      PIPEVD_CUDA_CHECK(cudaMalloc(&d_work, std::max<size_t>(dev_bytes, 1)));
      h_work.resize(std::max<size_t>(host_bytes, 1));
      status_check(cusolverDnXsyevd(handle_, params_, mode, CUBLAS_FILL_MODE_LOWER, n, type, d_a, n,
                                    CUDA_R_64F, d_w, type, d_work, dev_bytes, h_work.data(),
                                    host_bytes, d_info),
                   "cusolverDnXsyevd");
      PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
      lap(out, "syevd", t);
      PIPEVD_CUDA_CHECK(cudaMemcpy(&out.info, d_info, sizeof(int), cudaMemcpyDeviceToHost));
      PIPEVD_CUDA_CHECK(cudaMemcpy(w, d_w, sizeof(double) * n, cudaMemcpyDeviceToHost));
      if (jobz == 'V') PIPEVD_CUDA_CHECK(cudaMemcpy(vectors, d_a, bytes, cudaMemcpyDeviceToHost));
      lap(out, "d2h", t);
      if (out.info != 0) out.error = "cusolverDnXsyevd info = " + std::to_string(out.info);
    } catch (...) {
      release();
      throw;
    }
    release();
  }

  std::string device_;
  cusolverDnHandle_t handle_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
};

}  // namespace

std::unique_ptr<Solver> make_cusolver_solver() { return std::make_unique<CusolverSolver>(); }

}  // namespace pipevd::solvers
