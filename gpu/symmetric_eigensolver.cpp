#include "gpu/symmetric_eigensolver.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {

namespace {

// cusolverDnXsyevd on `data_type` (CUDA_R_64F or CUDA_C_64F; W is always real): workspace from
// `mem`, devInfo checked as cusolver_syevd says.
int xsyevd(EngineBackend& mem, cusolverDnHandle_t solver, cusolverDnParams_t params,
           bool want_vectors, cublasFillMode_t fill, cudaDataType data_type, long n, void* a,
           long lda, double* w) {
  if (n <= 0) return 0;
  const cusolverEigMode_t mode =
      want_vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  DeviceBuffer dw(mem, n, DeviceBuffer::Unfilled{});
  DeviceBuffer dinfo(mem, 1);  // devInfo (an int) in a zeroed double
  std::size_t dev_bytes = 0, host_bytes = 0;
  PIPEVD_CUSOLVER_CHECK(cusolverDnXsyevd_bufferSize(solver, params, mode, fill, n, data_type, a,
                                                    lda, CUDA_R_64F, dw.get(), data_type,
                                                    &dev_bytes, &host_bytes));
  const long work_doubles = static_cast<long>((dev_bytes + sizeof(double) - 1) / sizeof(double));
  DeviceBuffer work(mem, std::max(1L, work_doubles), DeviceBuffer::Unfilled{});
  std::vector<char> host_work(std::max<std::size_t>(host_bytes, 1));
  PIPEVD_CUSOLVER_CHECK(cusolverDnXsyevd(
      solver, params, mode, fill, n, data_type, a, lda, CUDA_R_64F, dw.get(), data_type, work.get(),
      dev_bytes, host_work.data(), host_bytes, reinterpret_cast<int*>(dinfo.get())));
  // Both copies wait for the solver's stream (the backend's), so the results are complete.
  double info_word = 0;
  mem.copy_to_host(dinfo.get(), &info_word, 1);
  int info = 0;
  std::memcpy(&info, &info_word, sizeof info);
  if (info < 0)
    throw DeviceError("pipevd: cusolverDnXsyevd: argument " + std::to_string(-info) +
                      " had an illegal value");
  mem.copy_to_host(dw.get(), w, n);
  return info;
}

}  // namespace

int cusolver_syevd(EngineBackend& mem, cusolverDnHandle_t solver, cusolverDnParams_t params,
                   bool want_vectors, long n, double* a, long lda, double* w) {
  return xsyevd(mem, solver, params, want_vectors, CUBLAS_FILL_MODE_LOWER, CUDA_R_64F, n, a, lda,
                w);
}

int cusolver_heevd(EngineBackend& mem, cusolverDnHandle_t solver, cusolverDnParams_t params,
                   bool want_vectors, char uplo, long n, std::complex<double>* a, long lda,
                   double* w) {
  const cublasFillMode_t fill =
      uplo == 'U' || uplo == 'u' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  return xsyevd(mem, solver, params, want_vectors, fill, CUDA_C_64F, n, a, lda, w);
}

}  // namespace pipevd::gpu
