// Stage 3 alone on one GPU: core/tridiagonal_dc on the GPU backend (merge GEMMs by cuBLAS, host
// parts on PIPEVD_DC_THREADS threads, read through the policy) against LAPACK's dstedc on the host
// (n <= --dstedc-max), for T = Toeplitz (2, -1) (little deflation, the expensive case) and random
// T.
//   dc_gpu_bench --n 4096,8192,16384,32768 [--dstedc-max 16384] [--seconds 240] [--panel 2048]
//                [--leaf 128] [--kinds toeplitz,random] [--merge host,device] [--device-min 512]
// Per n, kind and merge path (host: dlaed4 and M built on the host, uploaded from pinned memory;
// device: roots and M in kernels for merges of order >= --device-min): dc wall time (parts
// overlapping), dc_fold's (core/tridiagonal_dc_fold: the top merges' GEMMs left out, the engine's
// rank-0 part under PIPEVD_DC_FOLD), dc's stage split from a second run that waits for the GPU at
// each boundary (leaves, host merge = deflation + secular + M, upload, device merge, GEMMs), the
// dstedc time in a std::thread as the engine runs it, the largest eigenvalue difference from
// dstedc and, on 64 sampled columns, the residual ||T q - lambda q||_1 / (n eps ||T||) and
// ||Q^T q - e||_1 / (n eps); path_diff: the largest eigenvalue difference from the first path's
// run, / (eps max|lambda|).
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/lapack_prototypes.hpp"
#include "core/tridiagonal_dc.hpp"
#include "core/tridiagonal_solver.hpp"
#include "gpu/gpu_backend.hpp"
#include "interface/engine_options.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<long> parse_list(const std::string& s) {
  std::vector<long> v;
  std::size_t p = 0;
  while (p < s.size()) {
    const std::size_t q = s.find(',', p);
    v.push_back(std::atol(s.substr(p, q - p).c_str()));
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return v;
}

// Residual and orthogonality on `samples` columns of Q (device, n x n).
void sample_check(pipevd::EngineBackend& be, long n, const std::vector<double>& d0,
                  const std::vector<double>& e0, const std::vector<double>& lam, const double* q,
                  double* res, double* orth) {
  const long s = std::min(64L, n);
  std::vector<long> cols(s);
  for (long j = 0; j < s; ++j) cols[j] = (j * (n - 1)) / std::max(1L, s - 1);
  pipevd::DeviceBuffer qs(be, n * s), g(be, n * s);
  for (long j = 0; j < s; ++j) be.copy_matrix(n, 1, q + cols[j] * n, n, qs.get() + j * n, n);
  be.gemm('T', 'N', n, s, n, 1.0, q, n, qs.get(), n, 0.0, g.get(), n);
  std::vector<double> hq(n * s), hg(n * s);
  be.copy_to_host(qs.get(), hq.data(), n * s);
  be.copy_to_host(g.get(), hg.data(), n * s);
  double tnorm = 0;
  for (long i = 0; i < n; ++i)
    tnorm = std::max(tnorm, std::fabs(d0[i]) + (i > 0 ? std::fabs(e0[i - 1]) : 0) +
                                (i + 1 < n ? std::fabs(e0[i]) : 0));
  *res = *orth = 0;
  for (long j = 0; j < s; ++j) {
    const double* x = hq.data() + j * n;
    double r = 0, o = 0;
    for (long i = 0; i < n; ++i) {
      double t = d0[i] * x[i] - lam[cols[j]] * x[i];
      if (i > 0) t += e0[i - 1] * x[i - 1];
      if (i + 1 < n) t += e0[i] * x[i + 1];
      r += std::fabs(t);
      o += std::fabs(hg[i + j * n] - (i == cols[j] ? 1.0 : 0.0));
    }
    *res = std::max(*res, r / (n * DBL_EPSILON * tnorm));
    *orth = std::max(*orth, o / (n * DBL_EPSILON));
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<long> sizes = {4096, 8192, 16384, 32768};
  long dstedc_max = 16384;
  double budget = 240;
  const pipevd::PolicyOrError& pol = pipevd::process_policy();
  if (!pol.error.empty()) {
    std::fprintf(stderr, "dc_gpu_bench: %s\n", pol.error.c_str());
    return 2;
  }
  pipevd::DcOptions base = pipevd::engine_options(pol.policy, true).dc;
  std::string kinds = "toeplitz,random", merges = "host,device";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--n")
      sizes = parse_list(v);
    else if (a == "--dstedc-max")
      dstedc_max = std::atol(v.c_str());
    else if (a == "--seconds")
      budget = std::atof(v.c_str());
    else if (a == "--panel")
      base.panel = std::atol(v.c_str());
    else if (a == "--leaf")
      base.leaf = std::atol(v.c_str());
    else if (a == "--kinds")
      kinds = v;
    else if (a == "--merge")
      merges = v;
    else if (a == "--device-min")
      base.device_merge_min = std::atol(v.c_str());
  }
  std::vector<std::string> paths;
  for (const char* p : {"host", "device"})
    if (merges.find(p) != std::string::npos) paths.push_back(p);
  const auto start = Clock::now();
  int failures = 0;
  try {
    pipevd::gpu::GpuBackend main_be;  // the engine's backend; dc runs on its companion
    const auto comp = main_be.companion(/*urgent=*/true);
    pipevd::EngineBackend& be = *comp;
    {  // warm-up: handles, pool, first launches
      std::vector<double> d(512, 2.0), e(512, -1.0);
      pipevd::DeviceBuffer q(be, 512 * 512);
      pipevd::tridiagonal_dc(be, 512, d.data(), e.data(), q.get(), 512, base);
    }
    std::printf("%6s %8s %6s %8s %8s | %8s %8s %8s %8s %8s %7s %7s | %8s | %9s %8s %8s %9s\n", "n",
                "kind", "merge", "dc", "dc_fold", "leaves", "host_mrg", "upload", "dev_mrg", "gemm",
                "defl%", "thr", "dstedc", "eig_diff", "resid", "orthog", "path_diff");
    for (long n : sizes)
      for (const char* kind : {"toeplitz", "random"}) {
        if (kinds.find(kind) == std::string::npos) continue;
        std::mt19937_64 rng(7 + n);
        std::uniform_real_distribution<double> u(-1, 1);
        const bool random = kind[0] == 'r';
        std::vector<double> d0(n), e0(n, 0.0);
        for (long i = 0; i < n; ++i) {
          d0[i] = random ? u(rng) : 2.0;
          e0[i] = i + 1 < n ? (random ? u(rng) : -1.0) : 0.0;
        }
        std::vector<double> dref, dfirst;  // dstedc's eigenvalues (once), the first path's
        double dstedc_s = -1;
        for (const std::string& path : paths) {
          if (since(start) > budget) {
            std::printf("%6ld %8s %6s skipped: past the %.0f s budget\n", n, kind, path.c_str(),
                        budget);
            continue;
          }
          pipevd::DcOptions opt = base;
          opt.merge_on_device = path == "device" ? 1 : 0;
          pipevd::DeviceBuffer q(be, n * n);
          std::vector<double> d = d0;
          auto t0 = Clock::now();
          const int info = pipevd::tridiagonal_dc(be, n, d.data(), e0.data(), q.get(), n, opt);
          be.synchronize();
          const double dc_s = since(t0);
          double res = 0, orth = 0;
          sample_check(be, n, d0, e0, d, q.get(), &res, &orth);
          // The stage split: a second run waiting for the GPU at each boundary.
          pipevd::DcStats st;
          std::vector<double> d2 = d0;
          pipevd::tridiagonal_dc(be, n, d2.data(), e0.data(), q.get(), n, opt, &st);
          q.reset();
          // The D&C with its top merges folded (the engine's dc_fold): what is left on rank 0.
          double fold_s = 0;
          {
            std::vector<double> d3 = d0;
            pipevd::DcFold fold;
            const auto t2 = Clock::now();
            pipevd::tridiagonal_dc_fold(be, n, d3.data(), e0.data(), fold, opt);
            be.synchronize();
            fold_s = since(t2);
          }
          if (n <= dstedc_max && dref.empty()) {
            std::vector<double> dr = d0, er = e0, qr(static_cast<std::size_t>(n) * n);
            int rinfo = 0;
            std::thread th([&] {
              const auto t1 = Clock::now();
              rinfo = pipevd::tridiagonal_eigenpairs(n, dr.data(), er.data(), qr.data());
              dstedc_s = since(t1);
            });
            th.join();
            if (rinfo) std::printf("# dstedc info %d\n", rinfo);
            dref = dr;
          }
          double scale = DBL_MIN;
          for (long i = 0; i < n; ++i) scale = std::max(scale, std::fabs(d[i]));
          double diff = -1, pdiff = -1;
          if (!dref.empty()) {
            diff = 0;
            for (long i = 0; i < n; ++i) diff = std::max(diff, std::fabs(dref[i] - d[i]));
            diff /= scale * n * DBL_EPSILON;
          }
          if (dfirst.empty()) {
            dfirst = d;
          } else {
            pdiff = 0;
            for (long i = 0; i < n; ++i) pdiff = std::max(pdiff, std::fabs(dfirst[i] - d[i]));
            pdiff /= scale * DBL_EPSILON;
          }
          const bool ok = info == 0 && res < 10 && orth < 10 && (diff < 0 || diff < 1) &&
                          (pdiff < 0 || pdiff < 16);
          failures += !ok;
          std::printf(
              "%6ld %8s %6s %8.3f %8.3f | %8.3f %8.3f %8.3f %8.3f %8.3f %6.1f%% %7ld | %8.3f | "
              "%9.2e %8.3f %8.3f %9.2f %s\n",
              n, kind, path.c_str(), dc_s, fold_s, st.leaves, st.host_merge, st.upload,
              st.device_merge, st.gemm, 100.0 * st.deflated / n, st.threads, dstedc_s, diff, res,
              orth, pdiff, ok ? "ok" : "FAIL");
          std::fflush(stdout);
        }
      }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "dc_gpu_bench: %s\n", ex.what());
    failures = 1;
  }
  std::printf(
      "# eig_diff: max |lambda_dc - lambda_dstedc| / (n eps max|lambda|); resid, orthog: "
      "on 64 sampled columns, / (n eps ||T||) and / (n eps); defl%%: deflated roots "
      "summed over merges / n; path_diff: max |lambda - lambda_first_path| / (eps max|lambda|)\n");
  MPI_Finalize();
  return failures ? 1 : 0;
}
