#include "bench/gpu_accuracy.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
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
struct DeviceArray {
  explicit DeviceArray(long count) { check(cudaMalloc(&p, sizeof(double) * count), "cudaMalloc"); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  double* p = nullptr;
};

}  // namespace

bool gpu_accuracy_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void gpu_residual_orthogonality(int n, const double* a, const double* z,
                                const std::vector<double>& w, double* residual,
                                double* orthogonality) {
  *residual = *orthogonality = 0;
  if (n <= 0) return;
  const long nn = static_cast<long>(n) * n;
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");
  try {
    DeviceArray da(nn), dz(nn), dr(nn), dw(n);
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

}  // namespace pipevd::bench
