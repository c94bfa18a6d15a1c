// Sequential model of gpu/panel_qr.cu's fused kernel arithmetic (one block): per-column power-of-2
// pre-scaling, dots x^T slab(:,k) with UNSCALED x (slot k), the 2^600-scaled x^T x (slot nb),
// dlarfg-like beta/tau, w_k and z_k = rowj + red*sc/den, update, T by dlarft recurrence.
// fix=1: every dot taken with x scaled by 2^600 (sc always applied to the dots).
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "orthogonality_loss.hpp"
using V = std::vector<double>;
int main(int argc, char** argv) {
  long m = atol(argv[1]);
  int nb = atoi(argv[2]);
  int fix = atoi(argv[3]);
  int kind = argc > 4 ? atoi(argv[4]) : 0;
  std::mt19937_64 g(m * 131 + nb);
  std::uniform_real_distribution<double> u(-1, 1);
  V a(m * nb);
  for (auto& x : a) x = u(g);
  for (int j = 0; j < nb; ++j)
    for (long i = 0; i < m; ++i)
      if (kind == 0 && j % 2 == 1) a[i + j * m] = a[i];
  V s = a;
  std::vector<int> e(nb);
  for (int k = 0; k < nb; ++k) {
    double mx = 0;
    for (long i = 0; i < m; ++i) mx = fmax(mx, fabs(s[i + k * m]));
    e[k] = mx > 0 ? -ilogb(mx) : 0;
    for (long i = 0; i < m; ++i) s[i + k * m] = scalbn(s[i + k * m], e[k]);
  }
  const double kUp = 0x1p600, kDown = 0x1p-600, kTiny = 0x1p-800;
  int kk = std::min<long>(m, nb);
  V t(kk * kk, 0.0), tau(kk);
  for (int j = 0; j < kk; ++j) {
    V red(nb + 1, 0.0);
    double pre = fix ? kUp : 1.0;
    for (int k = 0; k <= nb; ++k) {
      double acc = 0;
      for (long i = j + 1; i < m; ++i) {
        double xi = s[i + j * m];
        if (k == nb)
          acc = fma(xi * kUp, xi * kUp, acc);
        else
          acc = fma(xi * pre, s[i + k * m], acc);
      }
      red[k] = acc;
    }
    double alpha = s[j + j * m], xx = fix ? red[j] * kDown * kDown : red[j];
    // fix: xx from the scaled dot (x^T x 2^600, times 2^-1200 would underflow: use slot nb if tiny)
    double sc = 1, xnorm = sqrt(fix ? 0 : xx);
    if (fix) {
      xnorm = sqrt(red[nb]) * kDown;
      if (red[nb] * kDown * kDown < kTiny) {
        sc = kUp;
        xnorm = sqrt(red[nb]);
      }
    } else if (xx < kTiny) {
      sc = kUp;
      xnorm = sqrt(red[nb]);
    }
    double beta = alpha, ta = 0, den = 1;
    if (xnorm != 0) {
      double aa = alpha * sc, bs = -copysign(hypot(aa, xnorm), aa);
      ta = (bs - aa) / bs;
      den = aa - bs;
      beta = sc == 1 ? bs : bs * kDown;
    }
    if (getenv("TRACE"))
      printf("j=%d log2 xnorm=%.1f sc=%g tau=%g\n", j, xnorm > 0 ? log2(xnorm / sc) : -9999.0, sc,
             ta);
    V wk(nb, 0.0);
    for (int k = 0; k < nb; ++k)
      if (k != j) {
        double dot =
            fix ? red[k] * (sc == 1 ? kDown : 1.0) : red[k];  // x^T col at the scale of sc x
        double c = ta != 0 ? s[j + k * m] + (fix ? dot : dot * sc) / den : 0;
        if (k > j)
          wk[k] = ta * c;
        else
          t[k + j * kk] = c;
      }
    t[j + j * kk] = ta;
    tau[j] = ta;
    if (ta != 0)
      for (long i = j; i < m; ++i) {
        double v = 1;
        if (i == j)
          s[i + j * m] = beta;
        else {
          v = s[i + j * m] * sc / den;
          s[i + j * m] = v;
        }
        for (int k = j + 1; k < nb; ++k) s[i + k * m] = fma(-v, wk[k], s[i + k * m]);
      }
  }
  // T (dlarft recurrence from z in t's upper part)
  V ts(kk * kk, 0.0);
  for (int j = 0; j < kk; ++j)
    for (int i = 0; i <= j; ++i) {
      double tj = t[j + j * kk];
      if (i == j) {
        ts[i + j * kk] = tj;
        continue;
      }
      double sum = 0;
      if (tj != 0)
        for (int l = i; l < j; ++l) sum = fma(ts[i + l * kk], t[l + j * kk], sum);
      ts[i + j * kk] = tj != 0 ? -tj * sum : 0;
    }
  int worst_c = -1;
  const double worst = orthogonality_loss(s, ts, m, kk, &worst_c);
  printf("m=%ld nb=%d fix=%d kind=%s  max|Q^TQ y - y|/|y| = %.3e (column %d) eps*(m+nb)=%.1e\n", m,
         nb, fix, kind == 0 ? "repeated" : "random", worst, worst_c, DBL_EPSILON * (m + nb));
}
