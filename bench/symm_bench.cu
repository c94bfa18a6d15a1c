// Z = S W reading S's lower triangle only (gpu/symmetric_product.cuh, DBBR's A W) against the same
// run's cublasDgemm('T', 'N') on the full symmetric S, b = 32 by default. Each time is the median
// of several repetitions timed with CUDA events after one warm-up. Columns: ms; TB/s_eq = 8 m^2 / t
// (the full matrix's bytes, as gemm reads them: the rate ours would need to match); TB/s_dram =
// the bytes actually moved / t (gemm: 8 m^2; ours: 4 m^2 of the lower triangle, plus the
// workspace written and read once); TFLOP/s = 2 m^2 b / t; speed-up = t(gemm) / t; rel_err =
// ||Z - Z_gemm||_F / ||Z_gemm||_F.
//   symm_bench [--m 8192,16384,32768,49152] [--b 32] [--quick] (default shape only, no breakdown)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/gpu_timing.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/symmetric_product.cuh"
#include "gpu/syr2k.hpp"

namespace {

using pipevd::gpu::SymmetricProductParams;
using pipevd::gpu::SymmetricProductPlan;
using pipevd::gpu::SymmetricProductShape;

using pipevd::bench::median_ms;
using pipevd::bench::parse_list;
using pipevd::bench::random_fill;

double rel_diff(const double* z, const double* ref, std::int64_t count) {
  std::vector<double> a(static_cast<std::size_t>(count)), r(a.size());
  PIPEVD_CUDA_CHECK(cudaMemcpy(a.data(), z, count * sizeof(double), cudaMemcpyDeviceToHost));
  PIPEVD_CUDA_CHECK(cudaMemcpy(r.data(), ref, count * sizeof(double), cudaMemcpyDeviceToHost));
  long double d = 0, n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (static_cast<long double>(a[i]) - r[i]) * (static_cast<long double>(a[i]) - r[i]);
    n += static_cast<long double>(r[i]) * r[i];
  }
  return n > 0 ? static_cast<double>(std::sqrt(d / n)) : static_cast<double>(std::sqrt(d));
}

struct Variant {
  std::string name;
  SymmetricProductParams params;
  bool split = false;  // S in two segments (columns m/2.. from a second pointer into the matrix)
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> ms{8192, 16384, 32768, 49152};
  std::int64_t b = 32;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--m" && i + 1 < argc)
      ms = parse_list(argv[++i]);
    else if (a == "--b" && i + 1 < argc)
      b = std::atoll(argv[++i]);
    else if (a == "--quick")
      quick = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  int device = 0, optin = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  cublasHandle_t blas;
  PIPEVD_CUBLAS_CHECK(cublasCreate(&blas));
  pipevd::bench::print_device_lines(blas);
  cudaStream_t stream;
  PIPEVD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PIPEVD_CUBLAS_CHECK(cublasSetStream(blas, stream));

  // The variants: every compiled shape the device runs; for the default one also 8-byte copies
  // only, no L2 hint, S in two segments, a workspace cap of half, and the two kernels alone.
  std::vector<Variant> variants;
  const SymmetricProductShape def{};
  std::size_t base_index = 0;
  for (const SymmetricProductShape& s : pipevd::gpu::symmetric_product_shapes()) {
    if (pipevd::gpu::symmetric_product_shared_bytes(s) > static_cast<std::size_t>(optin)) continue;
    if (quick && !(s == def)) continue;
    if (s == def) base_index = variants.size();
    Variant v;
    v.name = "ns" + std::to_string(s.stages) + (s.k16 ? "_k16" : "_k8") + (s.roles ? "_roles" : "");
    v.params.shape = s;
    variants.push_back(v);
  }
  if (variants.empty()) {
    std::printf("no compiled shape fits this device's shared memory (%d bytes)\n", optin);
    return 1;
  }
  // The variations below are of the default shape (else of the first that fits).
  const SymmetricProductParams base = variants[base_index].params;
  const std::string base_name = variants[base_index].name;
  if (!quick) {
    Variant v{base_name + "_copy8", base};
    v.params.vector_loads = false;
    variants.push_back(v);
    v = Variant{base_name + (base.evict_first ? "_nohint" : "_evict_first"), base};
    v.params.evict_first = !base.evict_first;
    variants.push_back(v);
    v = Variant{base_name + "_split", base, true};
    variants.push_back(v);
    v = Variant{base_name + "_cap1/2", base};
    v.params.max_workspace = -1;  // set per m below
    variants.push_back(v);
    v = Variant{base_name + "_products", base};
    v.params.phases = 1;
    variants.push_back(v);
    v = Variant{base_name + "_sums", base};
    v.params.phases = 2;
    variants.push_back(v);
  }

  std::printf("%6s %3s %-18s %9s %9s %10s %8s %9s %8s %9s\n", "m", "b", "variant", "ms", "TB/s_eq",
              "TB/s_dram", "TFLOP/s", "speed-up", "rel_err", "ws_GiB");
  for (const std::int64_t m : ms) {
    const double mm = static_cast<double>(m) * static_cast<double>(m);
    double *S, *W, *Zref, *Z, *work = nullptr;
    PIPEVD_CUDA_CHECK(cudaMalloc(&S, m * m * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&W, m * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&Zref, m * b * sizeof(double)));
    PIPEVD_CUDA_CHECK(cudaMalloc(&Z, m * b * sizeof(double)));
    random_fill(S, m * m, 11);  // on the legacy default stream: synchronized below
    random_fill(W, m * b, 12);
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
    pipevd::gpu::mirror_lower(stream, m, S, m);  // symmetric: gemm reads both triangles
    const double one = 1.0, zero = 0.0;
    const auto gemm = [&] {
      PIPEVD_CUBLAS_CHECK(cublasDgemm_64(blas, CUBLAS_OP_T, CUBLAS_OP_N, m, b, m, &one, S, m, W, m,
                                         &zero, Zref, m));
    };
    const double t_gemm = median_ms(stream, gemm);
    const double flops = 2.0 * mm * static_cast<double>(b);
    std::printf("%6lld %3lld %-18s %9.3f %9.3f %10.3f %8.2f %9.2f %8s %9s\n",
                static_cast<long long>(m), static_cast<long long>(b), "cublas_gemm_TN", t_gemm,
                8 * mm / (t_gemm * 1e9), 8 * mm / (t_gemm * 1e9), flops / (t_gemm * 1e9), 1.0, "-",
                "-");
    std::fflush(stdout);

    std::vector<SymmetricProductPlan> plans;
    std::int64_t ws = 0;
    const std::int64_t one_pass = pipevd::gpu::symmetric_product_workspace(device, m, b, base);
    for (Variant& v : variants) {
      if (v.params.max_workspace == -1 || v.params.max_workspace > 0)
        v.params.max_workspace = one_pass / 2;
      plans.push_back(pipevd::gpu::plan_symmetric_product(device, m, b, v.params));
      ws = std::max(ws, plans.back().workspace);
    }
    PIPEVD_CUDA_CHECK(cudaMalloc(&work, std::max<std::int64_t>(ws, 1) * sizeof(double)));
    const SymmetricProductPlan& p0 = plans.front();
    std::printf(
        "# m = %lld: %d strips; pass 1 of %zu: %lld stages, %d blocks of %lld, %lld "
        "pieces; workspace %lld doubles (%.3f m^2/16); %zu bytes of shared memory\n",
        static_cast<long long>(m), p0.strips, p0.passes.size(),
        static_cast<long long>(p0.passes[0].stages), p0.passes[0].blocks,
        static_cast<long long>(p0.passes[0].chunk), static_cast<long long>(p0.passes[0].pieces),
        static_cast<long long>(p0.workspace), static_cast<double>(p0.workspace) / (mm / 16),
        pipevd::gpu::symmetric_product_shared_bytes(p0.params.shape));

    for (std::size_t k = 0; k < variants.size(); ++k) {
      const Variant& v = variants[k];
      const SymmetricProductPlan& p = plans[k];
      const std::int64_t split = v.split ? m / 2 : m;
      const auto run = [&] {
        pipevd::gpu::symmetric_product(p, stream, S, m, S + split * m, m, split, W, m, Z, m, work);
      };
      PIPEVD_CUDA_CHECK(cudaMemsetAsync(Z, 0, m * b * sizeof(double), stream));
      const double t = median_ms(stream, run);
      PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream));
      const bool full = v.params.phases == 3;
      double bytes = 0;  // DRAM bytes moved: S's lower triangle, the workspace written and read
      if (v.params.phases & 1) bytes += 4 * mm + 8.0 * static_cast<double>(p.workspace);
      if (v.params.phases & 2) bytes += 8.0 * static_cast<double>(p.workspace);
      char err[32] = "-";
      if (full) std::snprintf(err, sizeof err, "%.1e", rel_diff(Z, Zref, m * b));
      std::printf("%6lld %3lld %-18s %9.3f %9.3f %10.3f %8.2f %9.2f %8s %9.3f\n",
                  static_cast<long long>(m), static_cast<long long>(b), v.name.c_str(), t,
                  8 * mm / (t * 1e9), bytes / (t * 1e9), flops / (t * 1e9), t_gemm / t, err,
                  static_cast<double>(p.workspace) * 8 / 1073741824.0);
      std::fflush(stdout);
    }
    for (double* x : {S, W, Zref, Z, work}) PIPEVD_CUDA_CHECK(cudaFree(x));
  }
  PIPEVD_CUBLAS_CHECK(cublasDestroy(blas));
  PIPEVD_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
