#include "bench/gpu_spectrum_matrix.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gpu_device.hpp"

namespace pipevd::bench {
namespace {

[[noreturn]] void fail(const std::string& why) {
  throw std::runtime_error("gpu spectrum matrix: " + why);
}
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}
void check(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    fail(std::string(what) + ": cuSOLVER status " + std::to_string(static_cast<int>(s)));
}
void check(curandStatus_t s, const char* what) {
  if (s != CURAND_STATUS_SUCCESS)
    fail(std::string(what) + ": cuRAND status " + std::to_string(static_cast<int>(s)));
}

// A device array freed on scope exit.
template <class T>
struct DeviceArray {
  explicit DeviceArray(std::size_t count) {
    check(cudaMalloc(&p, sizeof(T) * std::max<std::size_t>(count, 1)), "cudaMalloc");
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* p = nullptr;
};

// The cuBLAS, cuSOLVER and cuRAND handles of one formation, destroyed on scope exit.
struct Handles {
  explicit Handles(unsigned long long seed) {
    try {
      check(cublasCreate(&blas), "cublasCreate");
      check(cusolverDnCreate(&solver), "cusolverDnCreate");
#if defined(CUSOLVER_VERSION) && CUSOLVER_VERSION >= 11500
      // geqrf may otherwise take non-deterministic paths: the same seed must give the same bits.
      check(cusolverDnSetDeterministicMode(solver, CUSOLVER_DETERMINISTIC_RESULTS),
            "cusolverDnSetDeterministicMode");
#endif
      check(curandCreateGenerator(&rng, CURAND_RNG_PSEUDO_PHILOX4_32_10), "curandCreateGenerator");
      check(curandSetPseudoRandomGeneratorSeed(rng, seed), "curandSetPseudoRandomGeneratorSeed");
    } catch (...) {
      release();
      throw;
    }
  }
  ~Handles() { release(); }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  void release() {
    if (rng) curandDestroyGenerator(rng);
    if (solver) cusolverDnDestroy(solver);
    if (blas) cublasDestroy(blas);
    rng = nullptr;
    solver = nullptr;
    blas = nullptr;
  }

  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  curandGenerator_t rng = nullptr;
};

// The element type's calls: real symmetric (Q orthogonal, A = Q diag(lambda) Q^T).
struct RealSymmetric {
  using Host = double;
  using Device = double;
  static constexpr int kDoubles = 1;  // doubles per element
  static constexpr unsigned long long kStream = 1;
  static Device scalar(double x) { return x; }
  static int qr_workspace(cusolverDnHandle_t h, int n, Device* q, Device* tau) {
    int geqrf = 0, orgqr = 0;
    check(cusolverDnDgeqrf_bufferSize(h, n, n, q, n, &geqrf), "cusolverDnDgeqrf_bufferSize");
    check(cusolverDnDorgqr_bufferSize(h, n, n, n, q, n, tau, &orgqr),
          "cusolverDnDorgqr_bufferSize");
    return std::max(geqrf, orgqr);
  }
  static void geqrf(cusolverDnHandle_t h, int n, Device* q, Device* tau, Device* work, int lwork,
                    int* info) {
    check(cusolverDnDgeqrf(h, n, n, q, n, tau, work, lwork, info), "cusolverDnDgeqrf");
  }
  static void form_q(cusolverDnHandle_t h, int n, Device* q, const Device* tau, Device* work,
                     int lwork, int* info) {
    check(cusolverDnDorgqr(h, n, n, n, q, n, tau, work, lwork, info), "cusolverDnDorgqr");
  }
  static void scale_columns(cublasHandle_t h, long n, const Device* q, const Device* lambda,
                            Device* b) {
    check(cublasDdgmm_64(h, CUBLAS_SIDE_RIGHT, n, n, q, n, lambda, 1, b, n), "cublasDdgmm");
  }
  static void times_q_adjoint(cublasHandle_t h, long n, const Device* b, const Device* q,
                              Device* c) {
    const Device one = 1, zero = 0;
    check(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, b, n, q, n, &zero, c, n),
          "cublasDgemm");
  }
  static void half_sum_with_adjoint(cublasHandle_t h, long n, const Device* c, Device* b) {
    const Device half = 0.5;
    check(cublasDgeam_64(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, &half, c, n, &half, c, n, b, n),
          "cublasDgeam");
  }
  static void real_diagonal(Device*, long) {}
};

// Complex Hermitian (Q unitary, A = Q diag(lambda) Q^H).
struct ComplexHermitian {
  using Host = std::complex<double>;
  using Device = cuDoubleComplex;
  static constexpr int kDoubles = 2;
  static constexpr unsigned long long kStream = 7;
  static Device scalar(double x) { return {x, 0}; }
  static int qr_workspace(cusolverDnHandle_t h, int n, Device* q, Device* tau) {
    int geqrf = 0, ungqr = 0;
    check(cusolverDnZgeqrf_bufferSize(h, n, n, q, n, &geqrf), "cusolverDnZgeqrf_bufferSize");
    check(cusolverDnZungqr_bufferSize(h, n, n, n, q, n, tau, &ungqr),
          "cusolverDnZungqr_bufferSize");
    return std::max(geqrf, ungqr);
  }
  static void geqrf(cusolverDnHandle_t h, int n, Device* q, Device* tau, Device* work, int lwork,
                    int* info) {
    check(cusolverDnZgeqrf(h, n, n, q, n, tau, work, lwork, info), "cusolverDnZgeqrf");
  }
  static void form_q(cusolverDnHandle_t h, int n, Device* q, const Device* tau, Device* work,
                     int lwork, int* info) {
    check(cusolverDnZungqr(h, n, n, n, q, n, tau, work, lwork, info), "cusolverDnZungqr");
  }
  static void scale_columns(cublasHandle_t h, long n, const Device* q, const Device* lambda,
                            Device* b) {
    check(cublasZdgmm_64(h, CUBLAS_SIDE_RIGHT, n, n, q, n, lambda, 1, b, n), "cublasZdgmm");
  }
  static void times_q_adjoint(cublasHandle_t h, long n, const Device* b, const Device* q,
                              Device* c) {
    const Device one{1, 0}, zero{0, 0};
    check(cublasZgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_C, n, n, n, &one, b, n, q, n, &zero, c, n),
          "cublasZgemm");
  }
  static void half_sum_with_adjoint(cublasHandle_t h, long n, const Device* c, Device* b) {
    const Device half{0.5, 0};
    check(cublasZgeam_64(h, CUBLAS_OP_N, CUBLAS_OP_C, n, n, &half, c, n, &half, c, n, b, n),
          "cublasZgeam");
  }
  // The diagonal's imaginary parts (one double every n + 1 elements) set to zero: the half sum
  // cancels them already, this makes the diagonal real whatever cuBLAS's complex products round.
  static void real_diagonal(Device* b, long n) {
    check(cudaMemset2D(reinterpret_cast<double*>(b) + 1, sizeof(Device) * (n + 1), 0,
                       sizeof(double), n),
          "cudaMemset2D");
  }
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Throws, with the numbers, where the current device cannot hold the three n x n arrays and the
// factorization's workspace (about 256 MiB beyond them covers cuSOLVER's and cuBLAS's own).
void check_room(long n, std::size_t element_bytes) {
  std::size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  const double need = 3.0 * n * n * element_bytes + 4.0 * n * element_bytes + 256.0 * 1024 * 1024;
  if (static_cast<double>(free_bytes) >= need) return;
  char why[200];
  std::snprintf(why, sizeof why,
                "the device has %.1f GiB free of %.1f GiB, forming an n = %ld matrix there needs "
                "about %.1f GiB",
                free_bytes / kGiB, total / kGiB, n, need / kGiB);
  fail(why);
}

void check_info(const int* device_info, const char* what) {
  int info = 0;
  check(cudaMemcpy(&info, device_info, sizeof info, cudaMemcpyDeviceToHost), "download info");
  if (info != 0) fail(std::string(what) + " returned info " + std::to_string(info));
}

template <class Ops>
std::vector<typename Ops::Host> form(const std::vector<double>& lambda, unsigned seed) {
  using Device = typename Ops::Device;
  static_assert(sizeof(Device) == sizeof(typename Ops::Host));
  const long n = static_cast<long>(lambda.size());
  if (n == 0) return {};
  if (!gpu_device_visible()) fail("no CUDA device is visible");
  check_room(n, sizeof(Device));
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  // cuRAND draws normals in pairs: one element more where n^2 doubles are an odd count.
  const std::size_t normals = nn * Ops::kDoubles + (nn * Ops::kDoubles) % 2;
  // A seed of its own (as the host's generator mixes it), so Q is unrelated to the eigenvalues'.
  Handles h(seed * 0x9E3779B97F4A7C15ULL + Ops::kStream);
  DeviceArray<Device> q(nn + 1), b(nn), c(nn), tau(n), scale(n);
  DeviceArray<int> info(1);

  // Q from the QR factorization of a matrix of independent N(0, 1) entries (real and imaginary
  // parts alike): Haar-like, as the host's (neither makes R's diagonal positive, which would make
  // it exactly Haar).
  check(curandGenerateNormalDouble(h.rng, reinterpret_cast<double*>(q.p), normals, 0.0, 1.0),
        "curandGenerateNormalDouble");
  const int lwork = Ops::qr_workspace(h.solver, static_cast<int>(n), q.p, tau.p);
  DeviceArray<Device> work(lwork);
  Ops::geqrf(h.solver, static_cast<int>(n), q.p, tau.p, work.p, lwork, info.p);
  check_info(info.p, "geqrf");
  Ops::form_q(h.solver, static_cast<int>(n), q.p, tau.p, work.p, lwork, info.p);
  check_info(info.p, "orgqr/ungqr");

  // C = (Q diag(lambda)) Q^T, then B = (C + C^T) / 2: entries (i, j) and (j, i) are the same sum of
  // the same two halves, so B is exactly symmetric (Hermitian).
  std::vector<Device> lambdas(n);
  std::transform(lambda.begin(), lambda.end(), lambdas.begin(), Ops::scalar);
  check(cudaMemcpy(scale.p, lambdas.data(), sizeof(Device) * n, cudaMemcpyHostToDevice),
        "upload lambda");
  Ops::scale_columns(h.blas, n, q.p, scale.p, b.p);
  Ops::times_q_adjoint(h.blas, n, b.p, q.p, c.p);
  Ops::half_sum_with_adjoint(h.blas, n, c.p, b.p);
  Ops::real_diagonal(b.p, n);
  // The host copy only now: where the device fails, no n x n host array was set up in vain.
  std::vector<typename Ops::Host> a(nn);
  check(cudaMemcpy(a.data(), b.p, sizeof(Device) * nn, cudaMemcpyDeviceToHost), "download A");
  return a;
}

}  // namespace

std::vector<double> gpu_matrix_with_eigenvalues(const std::vector<double>& lambda, unsigned seed) {
  return form<RealSymmetric>(lambda, seed);
}

std::vector<std::complex<double>> gpu_hermitian_with_eigenvalues(const std::vector<double>& lambda,
                                                                 unsigned seed) {
  return form<ComplexHermitian>(lambda, seed);
}

}  // namespace pipevd::bench
