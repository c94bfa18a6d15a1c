#include "core/tridiagonal_bisection.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <thread>

#include "base/parallel_for.hpp"

namespace pipevd {

SturmProblem prepare_sturm(long n, const double* d, const double* e, SturmArrays& arrays,
                           double abstol) {
  SturmProblem p;
  p.n = n;
  arrays.d.assign(static_cast<std::size_t>(std::max(1L, n)), 0.0);
  arrays.e2.assign(static_cast<std::size_t>(std::max(1L, n - 1)), 0.0);
  p.d = arrays.d.data();
  p.e2 = arrays.e2.data();
  if (n <= 0) return p;
  double tmax = 0;
  bool finite = true;
  for (long i = 0; i < n; ++i) {
    finite = finite && std::isfinite(d[i]);
    tmax = std::max(tmax, std::fabs(d[i]));
  }
  for (long i = 0; i + 1 < n; ++i) {
    finite = finite && std::isfinite(e[i]);
    tmax = std::max(tmax, std::fabs(e[i]));
  }
  if (!finite) {
    p.lo = p.hi = std::numeric_limits<double>::quiet_NaN();
    return p;
  }
  // Scale by 2^-k with max|T| * 2^-k in [0.5, 1): exact (but for entries below 2^-1074 of max|T|),
  // unscaled by 2^k at the end.
  int k = 0;
  if (tmax > 0) std::frexp(tmax, &k);
  // 2^-k as two normal factors (k ranges over -1073 .. 1024).
  const int k1 = -k / 2, k2 = -k - k1;
  const double s1 = std::ldexp(1.0, k1), s2 = std::ldexp(1.0, k2);
  auto scaled = [s1, s2](double x) { return x * s1 * s2; };
  p.unscale = std::ldexp(1.0, -k1);
  p.unscale2 = std::ldexp(1.0, -k2);
  double e2max = 0;
  for (long i = 0; i < n; ++i) arrays.d[i] = scaled(d[i]);
  for (long i = 0; i + 1 < n; ++i) {
    const double s = scaled(e[i]);
    arrays.e2[i] = s * s;
    e2max = std::max(e2max, arrays.e2[i]);
  }
  const double safmin = DBL_MIN, ulp = DBL_EPSILON;  // dlamch 'S' and 'P'
  p.pivmin = safmin * std::max(1.0, e2max);
  // Gershgorin discs of the scaled T.
  double gl = arrays.d[0], gu = arrays.d[0];
  for (long i = 0; i < n; ++i) {
    const double r =
        (i > 0 ? std::fabs(scaled(e[i - 1])) : 0.0) + (i + 1 < n ? std::fabs(scaled(e[i])) : 0.0);
    gl = std::min(gl, arrays.d[i] - r);
    gu = std::max(gu, arrays.d[i] + r);
  }
  const double tnorm = std::max(std::fabs(gl), std::fabs(gu));
  // Widened as dstebz does, so that the counts at the ends are surely 0 and n.
  const double widen = 2.1 * tnorm * ulp * static_cast<double>(n) + 4.2 * p.pivmin;
  p.lo = gl - widen;
  p.hi = gu + widen;
  p.abstol = abstol > 0 ? scaled(abstol) : ulp * tnorm;
  p.abstol = std::max(p.abstol, p.pivmin);
  p.reltol = 2 * ulp;
  return p;
}

int tridiagonal_eigenvalues_bisection(long n, const double* d, const double* e, double* w,
                                      int threads, double abstol) {
  if (n <= 0) return 0;
  SturmArrays arrays;
  const SturmProblem p = prepare_sturm(n, d, e, arrays, abstol);
  if (std::isnan(p.lo)) {
    std::fill(w, w + n, std::numeric_limits<double>::quiet_NaN());
    return 1;
  }
  if (p.unscale == 1 && p.unscale2 == 1 && p.hi - p.lo <= 10 * p.pivmin) {  // T = 0
    std::fill(w, w + n, 0.0);
    return 0;
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<long>(threads, std::max(1L, n / 64)));
  auto part = [&](int t) {  // eigenvalues interleaved: the expensive ones spread over threads
    for (long i = t; i < n; i += threads) w[i] = bisect_eigenvalue(p, i);
  };
  // The library's pool: a thread that cannot start leaves its share to the others, and every
  // thread is joined before an exception leaves (no std::terminate in the caller's job).
  parallel_for(threads, threads, [&](long t) { part(static_cast<int>(t)); });
  // Counts are monotone in x in IEEE arithmetic, so w is ascending already; sorting makes it so
  // whatever the compiler did.
  std::sort(w, w + n);
  return 0;
}

}  // namespace pipevd
