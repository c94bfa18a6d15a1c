// Model of the fused kernel as of c8a140c (where nb = 64 failed): no column scaling, dlassq norm,
// beta/tau/denom in plain double (subnormal when x and alpha are), v = x / denom, dots v^T A_k.
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
  std::mt19937_64 g(m * 131 + nb);
  std::uniform_real_distribution<double> u(-1, 1);
  V s(m * nb);
  for (auto& x : s) x = u(g);
  for (int j = 1; j < nb; j += 2)
    for (long i = 0; i < m; ++i) s[i + j * m] = s[i];
  int kk = std::min<long>(m, nb);
  V t(kk * kk, 0.0);
  for (int j = 0; j < kk; ++j) {
    double mx = 0;
    for (long i = j + 1; i < m; ++i) mx = fmax(mx, fabs(s[i + j * m]));
    double q = 0;
    if (mx > 0)
      for (long i = j + 1; i < m; ++i) q += (s[i + j * m] / mx) * (s[i + j * m] / mx);
    double xnorm = mx * sqrt(q), alpha = s[j + j * m], beta = alpha, tau = 0, den = 1;
    if (xnorm != 0) {
      beta = -copysign(hypot(alpha, xnorm), alpha);
      tau = (beta - alpha) / beta;
      den = alpha - beta;
    }
    if (getenv("TRACE"))
      printf("j=%d log2|x|=%.1f tau=%.17g\n", j, xnorm > 0 ? log2(xnorm) : -9999.0, tau);
    if (tau != 0)
      for (long i = j + 1; i < m; ++i) s[i + j * m] /= den;
    auto vi = [&](long i) { return i == j ? 1.0 : s[i + j * m]; };
    V wk(nb, 0.0);
    if (tau != 0)
      for (int k = 0; k < nb; ++k) {
        if (k == j) continue;
        double acc = 0;
        for (long i = j; i < m; ++i) acc += vi(i) * s[i + k * m];
        wk[k] = k > j ? tau * acc : acc;
      }
    if (tau != 0)
      for (int k = j + 1; k < nb; ++k)
        for (long i = j; i < m; ++i) s[i + k * m] -= vi(i) * wk[k];
    s[j + j * m] = beta;
    for (int r = 0; r <= j; ++r) {
      double tij = r == j ? tau : 0;
      if (r < j && tau != 0) {
        for (int l = r; l < j; ++l) tij += t[r + l * kk] * wk[l];
        tij *= -tau;
      }
      t[r + j * kk] = tij;
    }
  }
  int wc = -1;
  const double worst = orthogonality_loss(s, t, m, kk, &wc);
  printf("old kernel model m=%ld nb=%d repeated: max|Q^TQ y - y|/|y| = %.3e (column %d)\n", m, nb,
         worst, wc);
}
