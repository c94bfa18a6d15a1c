// One root of a D&C merge's secular equation, and the per-entry pieces of Gu-Eisenstat's z-hat
// and of the merge matrix, written once for the host (tests, the host backend's SecularMerge) and
// the GPU kernels (gpu/secular_merge.cu), where one warp solves one root.
//
// Problem. f(lambda) = 1/rho + sum_j z_j^2 / (d_j - lambda) (f of the secular equation divided by
// rho > 0), d ascending and distinct, z_j != 0 (deflation guarantees both). Root i lies in
// (d_i, d_{i+1}), the last one in (d_{k-1}, d_{k-1} + rho ||z||^2]. f increases on each interval.
//
// Shift. The root is sought as tau = lambda - d_o with o the nearer pole (f at the midpoint says
// which, as in LAPACK's dlaed4), so that delta_j = d_j - lambda = (d_j - d_o) - tau carries full
// relative accuracy even for roots a few ulps from a pole: the deltas are what the eigenvectors
// are made of.
//
// Method (ours, not dlaed4's code): the sums left (j <= i) and right (j > i) of the root are each
// replaced by one pole plus a constant matching value and derivative at the current tau (the
// "middle way" of Li / dlaed4), and the model's root in the interval is the next iterate. Every
// iterate's sign of f shrinks a bracket [lo, hi]; a step that leaves it, or a third step in a row
// that does not halve |f|, is replaced by bisection. Stop when |f| is below its rounding error
// bound (eps * (sum of |terms| + 2/rho + 3 |tau| f')), after one more model step from there,
// not evaluated (that bound leaves tau a few ulps from the root; the step costs no sums and
// brings it closer), or when the bracket is a few ulps wide.
#pragma once

#include <math.h>

#include "core/reflector_store.hpp"  // PIPEVD_HOST_DEVICE

namespace pipevd {

constexpr int kSecularMaxIterations = 400;

// Sums at the shift tau from origin o: psi over j <= i (poles left of the root, terms < 0), phi
// over j > i (terms > 0), and their derivatives (sums of z_j^2 / delta_j^2).
struct SecularSums {
  double psi = 0, dpsi = 0, phi = 0, dphi = 0;
};

struct SecularRoot {
  double tau = 0;      // lambda - d[origin]
  long origin = 0;     // the pole nearer the root
  int iterations = 0;  // function evaluations
  bool converged = false;
};

// Partial sums over j = j0, j0 + step, ... < k (step 1: all of them, in ascending order).
PIPEVD_HOST_DEVICE inline SecularSums secular_partial_sums(long k, const double* d, const double* z,
                                                           long i, long o, double tau, long j0,
                                                           long step) {
  SecularSums s;
  const double dorig = d[o];
  for (long j = j0; j < k; j += step) {
    const double delta = (d[j] - dorig) - tau;
    const double t = z[j] / delta;
    const double term = z[j] * t, dterm = t * t;
    if (j <= i) {
      s.psi += term;
      s.dpsi += dterm;
    } else {
      s.phi += term;
      s.dphi += dterm;
    }
  }
  return s;
}

// Root i (0-based) of the secular equation; znorm2 = sum z_j^2. eval(o, tau) returns the full
// SecularSums (the host sums serially, a warp reduces its lanes' partial sums in a fixed order).
template <class Eval>
PIPEVD_HOST_DEVICE SecularRoot secular_root(long k, const double* d, double rho, double znorm2,
                                            long i, Eval&& eval) {
  const double eps = 2.220446049250313e-16;
  const double rhoinv = 1.0 / rho;
  SecularRoot r;
  double lo, hi, tau;
  const bool last = i == k - 1;
  if (!last) {
    const double gap = d[i + 1] - d[i], mid = 0.5 * gap;
    const SecularSums s = eval(i, mid);
    ++r.iterations;
    if (rhoinv + s.psi + s.phi >= 0) {  // the root is at or left of the midpoint
      r.origin = i;
      lo = 0;
      hi = mid;
      tau = 0.5 * mid;
    } else {
      r.origin = i + 1;
      lo = -gap;
      hi = 0;
      tau = 0.5 * (mid - gap);
    }
  } else {
    // f(d_{k-1} + rho ||z||^2) >= 0, with equality where the other z_j vanish to rounding (k = 1
    // above all): the bound, widened by a few ulps (and its rounding), may be the root itself,
    // which the model's step must be allowed to reach.
    r.origin = i;
    lo = 0;
    hi = rho * znorm2 * (1.0 + 8.0 * eps);
    tau = 0.5 * hi;
  }
  const long o = r.origin;
  double wprev = INFINITY;
  int slow = 0;
  while (r.iterations < kSecularMaxIterations) {
    const SecularSums s = eval(o, tau);
    ++r.iterations;
    const double w = rhoinv + s.psi + s.phi;
    const double err =
        eps * (8.0 * (s.phi - s.psi) + 2.0 * rhoinv + 3.0 * fabs(tau) * (s.dpsi + s.dphi));
    const bool negligible = fabs(w) <= err;
    if (w > 0)
      hi = tau;
    else
      lo = tau;
    if (!negligible && hi - lo <= 4.0 * eps * fmax(fabs(lo), fabs(hi))) {
      r.converged = true;  // f changes sign within a few ulps of tau
      break;
    }
    // Slow progress (|f| not halved) twice in a row: bisect instead of the model's step.
    slow = fabs(w) > 0.5 * wprev ? slow + 1 : 0;
    wprev = fabs(w);
    // The model c + sa / (da - eta) + sb / (db - eta) of f at tau + eta.
    const double da = (d[i] - d[o]) - tau;
    const double sa = da * da * s.dpsi;
    double c = rhoinv + (s.psi - da * s.dpsi);
    double eta = 0;
    bool ok = false;
    if (!last) {
      const double db = (d[i + 1] - d[o]) - tau;
      const double sb = db * db * s.dphi;
      c += s.phi - db * s.dphi;
      // c eta^2 - a eta + b = 0; the model increases from -inf to +inf on (da, db), so exactly
      // one root lies there.
      const double a = c * (da + db) + sa + sb;
      const double b = c * da * db + sa * db + sb * da;
      if (c == 0) {
        if (a != 0) {
          eta = b / a;
          ok = true;
        }
      } else {
        const double disc = a * a - 4.0 * b * c;
        if (disc >= 0) {
          const double q = 0.5 * (a + copysign(sqrt(disc), a));
          const double e1 = q / c, e2 = q != 0 ? b / q : 0.0;
          const bool in1 = e1 > da && e1 < db, in2 = q != 0 && e2 > da && e2 < db;
          if (in1 != in2) {
            eta = in1 ? e1 : e2;
            ok = true;
          }
        }
      }
    } else if (c > 0) {  // one pole left of the root: c + sa / (da - eta) = 0
      eta = da + sa / c;
      ok = true;
    }
    const double next = tau + eta;
    if (negligible) {  // converged: the model's last step, unevaluated, if inside the bracket
      if (ok && next > lo && next < hi) tau = next;
      r.converged = true;
      break;
    }
    if (ok && slow < 2 && next > lo && next < hi && next != tau) {
      tau = next;
    } else {
      tau = 0.5 * (lo + hi);
      slow = 0;
      wprev = INFINITY;
    }
  }
  r.tau = tau;
  return r;
}

// The host's evaluator: serial sums in ascending j.
struct SerialSecularEval {
  long k;
  const double* d;
  const double* z;
  long i;
  PIPEVD_HOST_DEVICE SecularSums operator()(long o, double tau) const {
    return secular_partial_sums(k, d, z, i, o, tau, 0, 1);
  }
};

// d_j - lambda_i from root i's origin and shift (the deltas the eigenvectors are made of).
PIPEVD_HOST_DEVICE inline double secular_delta(const double* d, long j, long origin, double tau) {
  return j == origin ? -tau : (d[j] - d[origin]) - tau;
}

// Factor i != j of Gu-Eisenstat's zhat_j^2 = -(d_j - lambda_j)/rho prod_{i != j} (d_j - lambda_i)
// / (d_i - d_j) (the sign of each factor is positive in exact arithmetic).
PIPEVD_HOST_DEVICE inline double zhat_factor(const double* d, long j, long i, const long* origin,
                                             const double* tau) {
  return -secular_delta(d, j, origin[i], tau[i]) / (d[i] - d[j]);
}

}  // namespace pipevd
