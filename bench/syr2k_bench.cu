// Our recursive syr2k (gpu/syr2k.hpp) against cuBLAS Dsyr2k, in TFLOP/s (2 n^2 k flops), and the
// panel QR of an m x b panel (cusolverDnXgeqrf, then the T factor of the WY form through cuBLAS).
// Each time is the median of several repetitions timed with CUDA events after one warm-up.
//   syr2k_bench [--n 16384,32768,49152] [--k 32,...,4096] [--nb 512] [--pack-max-k 1024]
//               [--lanes 4] [--tune] [--qr] [--ceilings] [--no-main]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpu_timing.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/syr2k.hpp"

using pipevd::gpu::GpuContext;
using pipevd::gpu::Syr2kParams;

namespace {

using pipevd::bench::median_ms;
using pipevd::bench::parse_list;
using pipevd::bench::random_fill;

double tflops(std::int64_t n, std::int64_t k, double ms) {
  return 2.0 * static_cast<double>(n) * n * k / (ms * 1e-3) / 1e12;
}

// Sets T (b x b, upper) from the Householder vectors below the diagonal of the panel and tau:
// T^{-1} = diag(1/tau) + striu(V^T V) (Joffrain et al.'s UT transform), so first V with its unit
// diagonal and zeros above it, then G = V^T V, then T = (diag(1/tau) + striu(G))^{-1} by a trsm.
__global__ void unit_lower(const double* panel, std::int64_t m, std::int64_t b, double* V) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < m * b;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = i % m, c = i / m;
    V[i] = r > c ? panel[i] : r == c ? 1.0 : 0.0;
  }
}

__global__ void t_inverse_and_identity(double* G, const double* tau, std::int64_t b, double* X) {
  const std::int64_t r = threadIdx.x, c = threadIdx.y;
  if (r >= b || c >= b) return;
  double& g = G[r + c * b];
  g = r < c ? g : r == c ? 1.0 / tau[r] : 0.0;
  X[r + c * b] = r == c ? 1.0 : 0.0;
}

void bench_panel_qr(cudaStream_t stream, const cudaDeviceProp& prop) {
  const std::int64_t b = 32;
  std::printf("\n# panel QR of an m x %lld panel on %s (median ms)\n", static_cast<long long>(b),
              prop.name);
  std::printf("%8s %5s %12s %14s %12s\n", "m", "b", "geqrf_ms", "geqrf+T_ms", "T_only_ms");
  cusolverDnHandle_t solver;
  PIPEVD_CUSOLVER_CHECK(cusolverDnCreate(&solver));
  PIPEVD_CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
  cublasHandle_t blas;
  PIPEVD_CUBLAS_CHECK(cublasCreate(&blas));
  PIPEVD_CUBLAS_CHECK(cublasSetStream(blas, stream));
  cusolverDnParams_t params;
  PIPEVD_CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  for (std::int64_t m : {std::int64_t{8192}, std::int64_t{32768}}) {
    double *orig, *panel, *tau, *V, *G, *T;
    int* info;
    PIPEVD_CUDA_CHECK(cudaMalloc(&orig, m * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&panel, m * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&V, m * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&tau, b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&G, b * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&T, b * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
    random_fill(orig, m * b, 7);
    std::size_t dbytes = 0, hbytes = 0;
    PIPEVD_CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(
        solver, params, m, b, CUDA_R_64F, panel, m, CUDA_R_64F, tau, CUDA_R_64F, &dbytes, &hbytes));
    void* dwork;
    PIPEVD_CUDA_CHECK(cudaMalloc(&dwork, std::max<std::size_t>(dbytes, 8)));
    std::vector<char> hwork(std::max<std::size_t>(hbytes, 8));
    const auto geqrf = [&] {
      PIPEVD_CUDA_CHECK(
          cudaMemcpyAsync(panel, orig, m * b * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      PIPEVD_CUSOLVER_CHECK(cusolverDnXgeqrf(solver, params, m, b, CUDA_R_64F, panel, m, CUDA_R_64F,
                                             tau, CUDA_R_64F, dwork, dbytes, hwork.data(), hbytes,
                                             info));
    };
    const auto form_t = [&] {
      const double one = 1.0, zero = 0.0;
      unit_lower<<<256, 256, 0, stream>>>(panel, m, b, V);
      PIPEVD_CUDA_CHECK_LAUNCH();
      PIPEVD_CUBLAS_CHECK(
          cublasDgemm_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, b, b, m, &one, V, m, V, m, &zero, G, b));
      t_inverse_and_identity<<<1, dim3(32, 32), 0, stream>>>(G, tau, b, T);
      PIPEVD_CUDA_CHECK_LAUNCH();
      PIPEVD_CUBLAS_CHECK(cublasDtrsm_64(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                                         CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, b, b, &one, G, b, T,
                                         b));
    };
    // Check the T factor: Q^T A = (I - V T^T V^T) A must be [R; 0], R the panel's upper triangle.
    geqrf();
    form_t();
    {
      const double one = 1.0, zero = 0.0, minus_one = -1.0;
      double *S, *U, *X;
      PIPEVD_CUDA_CHECK(cudaMalloc(&S, b * b * sizeof(double)));
      PIPEVD_CUDA_CHECK(cudaMalloc(&U, b * b * sizeof(double)));
      PIPEVD_CUDA_CHECK(cudaMalloc(&X, m * b * sizeof(double)));
      PIPEVD_CUDA_CHECK(
          cudaMemcpyAsync(X, orig, m * b * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      PIPEVD_CUBLAS_CHECK(cublasDgemm_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, b, b, m, &one, V, m, orig,
                                         m, &zero, S, b));
      PIPEVD_CUBLAS_CHECK(
          cublasDgemm_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, b, b, b, &one, T, b, S, b, &zero, U, b));
      PIPEVD_CUBLAS_CHECK(cublasDgemm_64(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, b, b, &minus_one, V, m,
                                         U, b, &one, X, m));
      std::vector<double> hX(static_cast<std::size_t>(m * b)), hP(hX.size()), hA(hX.size());
      PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
      PIPEVD_CUDA_CHECK(cudaMemcpy(hX.data(), X, m * b * sizeof(double), cudaMemcpyDeviceToHost));
      PIPEVD_CUDA_CHECK(
          cudaMemcpy(hP.data(), panel, m * b * sizeof(double), cudaMemcpyDeviceToHost));
      PIPEVD_CUDA_CHECK(
          cudaMemcpy(hA.data(), orig, m * b * sizeof(double), cudaMemcpyDeviceToHost));
      double d2 = 0, a2 = 0;
      for (std::int64_t c = 0; c < b; ++c)
        for (std::int64_t r = 0; r < m; ++r) {
          const std::size_t i = static_cast<std::size_t>(r + c * m);
          const double want = r <= c ? hP[i] : 0.0;
          d2 += (hX[i] - want) * (hX[i] - want);
          a2 += hA[i] * hA[i];
        }
      std::printf("# m = %lld: ||Q^T A - [R; 0]||_F / ||A||_F = %.2e with Q = I - V T V^T\n",
                  static_cast<long long>(m), std::sqrt(d2 / a2));
      for (double* p : {S, U, X}) PIPEVD_CUDA_CHECK(cudaFree(p));
    }
    const double t_qr = median_ms(stream, geqrf);
    const double t_both = median_ms(stream, [&] {
      geqrf();
      form_t();
    });
    const double t_t = median_ms(stream, form_t);
    int h_info = 0;
    PIPEVD_CUDA_CHECK(cudaMemcpy(&h_info, info, sizeof(int), cudaMemcpyDeviceToHost));
    if (h_info != 0) std::printf("geqrf info = %d\n", h_info);
    std::printf("%8lld %5lld %12.4f %14.4f %12.4f\n", static_cast<long long>(m),
                static_cast<long long>(b), t_qr, t_both, t_t);
    for (void* p :
         {(void*)orig, (void*)panel, (void*)V, (void*)tau, (void*)G, (void*)T, (void*)info, dwork})
      PIPEVD_CUDA_CHECK(cudaFree(p));
  }
  PIPEVD_CUSOLVER_CHECK(cusolverDnDestroyParams(params));
  PIPEVD_CUBLAS_CHECK(cublasDestroy(blas));
  PIPEVD_CUSOLVER_CHECK(cusolverDnDestroy(solver));
}

// The two ceilings of METHOD.md: device-to-device copy bandwidth and DGEMM rate, plus the DGEMM
// shape that dominates our syr2k at small k (n/2 x n/2 x 2k).
void bench_ceilings(cudaStream_t stream, cublasHandle_t blas) {
  std::printf("\n# ceilings\n");
  const std::int64_t bytes = std::int64_t{4} << 30;
  void *x, *y;
  PIPEVD_CUDA_CHECK(cudaMalloc(&x, bytes));
  PIPEVD_CUDA_CHECK(cudaMalloc(&y, bytes));
  random_fill(static_cast<double*>(x), bytes / 8, 5);
  const double t_copy = median_ms(stream, [&] {
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  std::printf("copy 4 GiB device to device: %.2f TB/s (bytes read + written)\n",
              2.0 * bytes / (t_copy * 1e-3) / 1e12);
  PIPEVD_CUDA_CHECK(cudaFree(x));
  PIPEVD_CUDA_CHECK(cudaFree(y));
  const double one = 1.0;
  for (const auto& mk :
       {std::pair<std::int64_t, std::int64_t>{16384, 4096}, {16384, 64}, {16384, 256}}) {
    const std::int64_t m = mk.first, k = mk.second;
    double *A, *B, *C;
    PIPEVD_CUDA_CHECK(cudaMalloc(&A, m * k * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&B, m * k * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&C, m * m * sizeof(double)));
    random_fill(A, m * k, 6);
    random_fill(B, m * k, 7);
    random_fill(C, m * m, 8);
    const double t = median_ms(stream, [&] {
      PIPEVD_CUBLAS_CHECK(
          cublasDgemm_64(blas, CUBLAS_OP_N, CUBLAS_OP_T, m, m, k, &one, A, m, B, m, &one, C, m));
    });
    std::printf("DGEMM %lld x %lld x %lld: %.2f TFLOP/s, %.2f TB/s of C read + written\n",
                static_cast<long long>(m), static_cast<long long>(m), static_cast<long long>(k),
                2.0 * m * m * k / (t * 1e-3) / 1e12, 16.0 * m * m / (t * 1e-3) / 1e12);
    for (double* p : {A, B, C}) PIPEVD_CUDA_CHECK(cudaFree(p));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> ns{16384, 32768, 49152};
  std::vector<std::int64_t> ks{32, 64, 128, 256, 512, 1024, 2048, 4096};
  bool tune = false, qr = false, main_table = true, ceilings = false;
  Syr2kParams params;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc)
      ns = parse_list(argv[++i]);
    else if (a == "--k" && i + 1 < argc)
      ks = parse_list(argv[++i]);
    else if (a == "--nb" && i + 1 < argc)
      params.diag_block = std::atoll(argv[++i]);
    else if (a == "--pack-max-k" && i + 1 < argc)
      params.pack_max_k = std::atoll(argv[++i]);
    else if (a == "--lanes" && i + 1 < argc)
      params.lanes = std::atoi(argv[++i]);
    else if (a == "--tune")
      tune = true;
    else if (a == "--qr")
      qr = true;
    else if (a == "--ceilings")
      ceilings = true;
    else if (a == "--no-main")
      main_table = false;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  GpuContext& ctx = GpuContext::for_device(device);
  cublasHandle_t blas;
  PIPEVD_CUBLAS_CHECK(cublasCreate(&blas));
  const std::string lanes = "; " + std::to_string(ctx.lane_count()) + " lanes in the context";
  const cudaDeviceProp prop = pipevd::bench::print_device_lines(blas, lanes.c_str());
  cudaStream_t stream;
  PIPEVD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PIPEVD_CUBLAS_CHECK(cublasSetStream(blas, stream));

  if (ceilings) bench_ceilings(stream, blas);
  if (main_table || tune) {
    const std::int64_t nmax = *std::max_element(ns.begin(), ns.end());
    const std::int64_t kmax = *std::max_element(ks.begin(), ks.end());
    double *A, *B, *C;
    PIPEVD_CUDA_CHECK(cudaMalloc(&A, nmax * kmax * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&B, nmax * kmax * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&C, nmax * nmax * sizeof(double)));
    random_fill(A, nmax * kmax, 1);
    random_fill(B, nmax * kmax, 2);
    random_fill(C, nmax * nmax, 3);
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
    const double alpha = -1.0, beta = 1.0;  // the trailing update C - A B^T - B A^T
    const auto ours = [&](std::int64_t n, std::int64_t k, const Syr2kParams& p) {
      return median_ms(stream, [&] {
        pipevd::gpu::syr2k_lower(ctx, stream, n, k, alpha, A, n, B, n, beta, C, n, p);
      });
    };
    const auto cublas = [&](std::int64_t n, std::int64_t k) {
      return median_ms(stream, [&] {
        PIPEVD_CUBLAS_CHECK(cublasDsyr2k_64(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &alpha,
                                            A, n, B, n, &beta, C, n));
      });
    };
    if (tune) {
      const std::int64_t n = std::min<std::int64_t>(32768, nmax);
      std::printf("\n# tuning at n = %lld: ours in TFLOP/s by diagonal block nb, packed or not\n",
                  static_cast<long long>(n));
      std::printf("%6s %6s %7s %9s\n", "k", "nb", "packed", "TFLOP/s");
      for (std::int64_t k : {32, 128, 512, 2048}) {
        if (k > kmax) continue;
        for (std::int64_t nb : {256, 512, 1024, 2048}) {
          for (bool packed : {true, false}) {
            Syr2kParams p = params;
            p.diag_block = nb;
            p.pack_max_k = packed ? k : 0;
            std::printf("%6lld %6lld %7s %9.2f\n", static_cast<long long>(k),
                        static_cast<long long>(nb), packed ? "yes" : "no",
                        tflops(n, k, ours(n, k, p)));
            std::fflush(stdout);
          }
        }
      }
      std::printf("\n# lanes at n = %lld (nb %lld, packed for k <= %lld)\n%6s %6s %9s\n",
                  static_cast<long long>(n), static_cast<long long>(params.diag_block),
                  static_cast<long long>(params.pack_max_k), "k", "lanes", "TFLOP/s");
      for (std::int64_t k : {32, 256}) {
        for (int lanes : {1, 2, 4}) {
          Syr2kParams p = params;
          p.lanes = lanes;
          std::printf("%6lld %6d %9.2f\n", static_cast<long long>(k), lanes,
                      tflops(n, k, ours(n, k, p)));
        }
      }
    }
    if (main_table) {
      std::printf(
          "\n# syr2k lower, C - A B^T - B A^T, TFLOP/s = 2 n^2 k / time; ours: nb %lld, "
          "packed for k <= %lld, %d lanes\n",
          static_cast<long long>(params.diag_block), static_cast<long long>(params.pack_max_k),
          params.lanes);
      std::printf("%6s %6s %10s %10s %10s %8s\n", "n", "k", "ours_ms", "ours_TF", "cublas_TF",
                  "speedup");
      for (std::int64_t n : ns) {
        for (std::int64_t k : ks) {
          const double t_ours = ours(n, k, params);
          const double t_cublas = cublas(n, k);
          std::printf("%6lld %6lld %10.3f %10.2f %10.2f %8.2f\n", static_cast<long long>(n),
                      static_cast<long long>(k), t_ours, tflops(n, k, t_ours),
                      tflops(n, k, t_cublas), t_cublas / t_ours);
          std::fflush(stdout);
        }
      }
    }
    PIPEVD_CUDA_CHECK(cudaFree(A));
    PIPEVD_CUDA_CHECK(cudaFree(B));
    PIPEVD_CUDA_CHECK(cudaFree(C));
  }
  if (qr) bench_panel_qr(stream, prop);
  PIPEVD_CUBLAS_CHECK(cublasDestroy(blas));
  PIPEVD_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
