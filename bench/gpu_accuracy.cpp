#include "bench/gpu_accuracy.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

namespace pipevd::bench {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("gpu accuracy: ") + what + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("gpu accuracy: ") + what + ": cuBLAS status " +
                             std::to_string(static_cast<int>(s)));
}

// A device array freed on scope exit.
template <class T = double>
struct DeviceArray {
  explicit DeviceArray(long count) { check(cudaMalloc(&p, sizeof(T) * count), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* p = nullptr;
};

// A cuBLAS handle destroyed on scope exit.
struct Handle {
  Handle() { check(cublasCreate(&h), "cublasCreate"); }
  ~Handle() { cublasDestroy(h); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasHandle_t h = nullptr;
};

}  // namespace

void gpu_residual_orthogonality(int n, const double* a, const double* z,
                                const std::vector<double>& w, double* residual,
                                double* orthogonality) {
  *residual = *orthogonality = 0;
  if (n <= 0) return;
  const long nn = static_cast<long>(n) * n;
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");
  try {
    DeviceArray<> da(nn), dz(nn), dr(nn), dw(n);
    check(cudaMemcpy(da.p, a, sizeof(double) * nn, cudaMemcpyHostToDevice), "upload A");
    check(cudaMemcpy(dz.p, z, sizeof(double) * nn, cudaMemcpyHostToDevice), "upload Z");
    check(cudaMemcpy(dw.p, w.data(), sizeof(double) * n, cudaMemcpyHostToDevice), "upload w");
    const double one = 1, minus_one = -1, zero = 0;
    double anorm = 0, rnorm = 0, onorm = 0;
    check(cublasDnrm2_64(h, nn, da.p, 1, &anorm), "nrm2 A");
    // R = Z diag(w), then R = A Z - R.
    check(cublasDdgmm_64(h, CUBLAS_SIDE_RIGHT, n, n, dz.p, n, dw.p, 1, dr.p, n), "dgmm");
    check(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, da.p, n, dz.p, n, &minus_one,
                         dr.p, n),
          "gemm A Z");
    check(cublasDnrm2_64(h, nn, dr.p, 1, &rnorm), "nrm2 R");
    // R = Z^T Z, then its diagonal minus one (a vector of ones, stride n + 1 along the diagonal).
    check(cublasDgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, dz.p, n, dz.p, n, &zero, dr.p,
                         n),
          "gemm Z^T Z");
    std::vector<double> ones(n, 1.0);
    check(cudaMemcpy(dw.p, ones.data(), sizeof(double) * n, cudaMemcpyHostToDevice), "ones");
    check(cublasDaxpy_64(h, n, &minus_one, dw.p, 1, dr.p, static_cast<long>(n) + 1), "axpy");
    check(cublasDnrm2_64(h, nn, dr.p, 1, &onorm), "nrm2 Z^T Z - I");
    *residual = rnorm / (std::max(anorm, DBL_MIN) * n * DBL_EPSILON);
    *orthogonality = onorm / (n * DBL_EPSILON);
  } catch (...) {
    cublasDestroy(h);
    throw;
  }
  cublasDestroy(h);
}

void gpu_residual_orthogonality(int n, const std::complex<double>* a, const std::complex<double>* z,
                                const std::vector<double>& w, double* residual,
                                double* orthogonality, long panel_columns) {
  *residual = *orthogonality = 0;
  if (n <= 0) return;
  static_assert(sizeof(cuDoubleComplex) == sizeof(std::complex<double>));
  const long nn = static_cast<long>(n) * n;
  // R in panels of columns: a third full complex n x n array would be 16 GiB at n = 32768, on a
  // GPU where the solver just measured may keep its memory pools between calls.
  const long panel =
      std::clamp(panel_columns > 0 ? panel_columns : (1L << 27) / n, 1L, static_cast<long>(n));
  Handle handle;
  const cublasHandle_t h = handle.h;
  DeviceArray<cuDoubleComplex> da(nn), dz(nn), dr(static_cast<long>(n) * panel), dw(n), dones(n);
  const size_t bytes = sizeof(cuDoubleComplex) * nn;
  check(cudaMemcpy(da.p, a, bytes, cudaMemcpyHostToDevice), "upload A");
  check(cudaMemcpy(dz.p, z, bytes, cudaMemcpyHostToDevice), "upload Z");
  // The eigenvalues as complex numbers: Zdgmm scales by a complex vector.
  std::vector<std::complex<double>> wc(w.begin(), w.begin() + n), ones(n, {1, 0});
  check(cudaMemcpy(dw.p, wc.data(), sizeof(cuDoubleComplex) * n, cudaMemcpyHostToDevice),
        "upload w");
  check(cudaMemcpy(dones.p, ones.data(), sizeof(cuDoubleComplex) * n, cudaMemcpyHostToDevice),
        "ones");
  const cuDoubleComplex one{1, 0}, minus_one{-1, 0}, zero{0, 0};
  double anorm = 0, r2 = 0, o2 = 0;
  check(cublasDznrm2_64(h, nn, da.p, 1, &anorm), "nrm2 A");
  for (long j0 = 0; j0 < n; j0 += panel) {
    const long k = std::min(panel, n - j0);
    const cuDoubleComplex* zj = dz.p + j0 * n;
    double norm = 0;
    // R = Z(:, J) diag(w(J)), then R = A Z(:, J) - R.
    check(cublasZdgmm_64(h, CUBLAS_SIDE_RIGHT, n, k, zj, n, dw.p + j0, 1, dr.p, n), "dgmm");
    check(cublasZgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, k, n, &one, da.p, n, zj, n, &minus_one,
                         dr.p, n),
          "gemm A Z");
    check(cublasDznrm2_64(h, n * k, dr.p, 1, &norm), "nrm2 R");
    r2 += norm * norm;
    // R = Z^H Z(:, J), then minus one on its part of the diagonal (rows J, stride n + 1).
    check(
        cublasZgemm_64(h, CUBLAS_OP_C, CUBLAS_OP_N, n, k, n, &one, dz.p, n, zj, n, &zero, dr.p, n),
        "gemm Z^H Z");
    check(cublasZaxpy_64(h, k, &minus_one, dones.p, 1, dr.p + j0, static_cast<long>(n) + 1),
          "axpy");
    check(cublasDznrm2_64(h, n * k, dr.p, 1, &norm), "nrm2 Z^H Z - I");
    o2 += norm * norm;
  }
  *residual = std::sqrt(r2) / (std::max(anorm, DBL_MIN) * n * DBL_EPSILON);
  *orthogonality = std::sqrt(o2) / (n * DBL_EPSILON);
}

}  // namespace pipevd::bench
