#include "core/engine_plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/dbbr.hpp"

namespace pipevd {

EngineLayout plan_engine_layout(long n, int ranks, long b, long k, double slack) {
  EngineLayout L;
  L.n = n;
  const long be = effective_bandwidth(n, b);
  // Whole units of b columns, the first ranks one more where they do not divide evenly (later
  // ranks already do more of DBBR: every earlier panel updates their columns); the last rank also
  // takes the n mod b remainder.
  const long units = n / be, base = units / ranks, extra = units % ranks;
  L.col_begin.assign(ranks + 1, n);
  for (int e = 0; e < ranks; ++e) L.col_begin[e] = be * (e * base + std::min<long>(e, extra));
  L.col_begin[ranks] = n;
  const std::vector<long> h = balanced_row_heights(n, L.col_begin, b, k, slack);
  L.row_begin.assign(ranks + 1, 0);
  for (int e = 0; e < ranks; ++e) L.row_begin[e + 1] = L.row_begin[e] + h[e];
  return L;
}

std::vector<double> dbbr_flops_per_rank(long n, const std::vector<long>& col_begin, long b,
                                        long k) {
  const int ranks = static_cast<int>(col_begin.size()) - 1;
  const long bw = effective_bandwidth(n, b);
  const long kw = std::max(bw, (std::max(k, bw) + bw - 1) / bw * bw);
  std::vector<double> f(ranks, 0.0);
  auto own = [&](int q, long from) {  // this rank's columns >= from
    return static_cast<double>(std::max(0L, col_begin[q + 1] - std::max(from, col_begin[q])));
  };
  for (int p = 0; p < ranks; ++p)
    for (long i = col_begin[p]; i < col_begin[p + 1]; i += kw) {
      const long e = std::min(i + kw, col_begin[p + 1]);
      for (long j = i; j < e && n - j - bw >= 2; j += bw) {
        const double m = static_cast<double>(n - j - bw);
        for (int q = p; q < ranks; ++q) f[q] += 2.0 * m * bw * own(q, j + bw);  // A W rows
        f[p] += 4.0 * m * bw * bw + 8.0 * m * bw * (j - i);  // panel QR, Z corrections
      }
      const double width = static_cast<double>(e - i);
      f[p] += 2.0 * (n - i) * width * width;  // recursive panel updates (about half of 4 m w^2)
      for (int q = p; q < ranks; ++q) f[q] += 4.0 * (n - e) * own(q, e) * width;  // trailing
    }
  return f;
}

std::vector<long> balanced_row_heights(long n, const std::vector<long>& col_begin, long b, long k,
                                       double slack) {
  const int ranks = static_cast<int>(col_begin.size()) - 1;
  std::vector<long> h(ranks, 0);
  if (ranks <= 0) return h;
  const double base = static_cast<double>(n) / ranks;
  const std::vector<double> f = dbbr_flops_per_rank(n, col_begin, b, k);
  // SBR-back (~2n^2), BC-back (~2n^2) and the final GEMM (2n^2) per row.
  const double per_row = std::max(1.0, 6.0 * static_cast<double>(n) * n);
  // The common finish time T at which the clamped heights sum to n (bisection: the sum grows
  // with T), so the clamp never has to be broken by a later rescaling.
  const double lo = (1 - slack) * base, hi = (1 + slack) * base;
  auto heights_at = [&](double finish, std::vector<double>& x) {
    double sum = 0;
    for (int e = 0; e < ranks; ++e) sum += x[e] = std::clamp((finish - f[e]) / per_row, lo, hi);
    return sum;
  };
  std::vector<double> ideal(ranks);
  double t_lo = *std::min_element(f.begin(), f.end()),
         t_hi = *std::max_element(f.begin(), f.end()) + per_row * (hi + 1);
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (t_lo + t_hi);
    (heights_at(mid, ideal) < n ? t_lo : t_hi) = mid;
  }
  heights_at(t_hi, ideal);
  // Integer heights summing to n: scale to n, then hand out the rounding remainder in order.
  const double sum = std::accumulate(ideal.begin(), ideal.end(), 0.0);
  long given = 0;
  for (int e = 0; e < ranks; ++e) {
    h[e] = static_cast<long>(std::floor(ideal[e] * n / sum));
    given += h[e];
  }
  for (int e = 0; given < n; e = (e + 1) % ranks, ++given) ++h[e];
  return h;
}

}  // namespace pipevd
