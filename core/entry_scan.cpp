#include "core/entry_scan.hpp"

#include <algorithm>
#include <cmath>

namespace pipevd {
namespace {

// The largest |a_k| over the doubles a[0, count) (a complex entry's two parts are two of them) and
// whether every a_k is finite. Written so that compilers vectorise it at the project's flags (-O2,
// no -march): kGroups independent pairs of lanes (each pair one vector of two doubles), unrolled,
// so that no chain of dependent compares limits the loop, and no NaN branch: x > m ? x : m is the
// vector max, which leaves m as it was where x is a NaN, while v - v (0 for a finite v, NaN for a
// NaN or an infinity) turns the lane's sum into a NaN for good.
struct PartMax {
  double max = 0;
  bool finite = true;
};
constexpr int kLanes = 2, kGroups = 4;
PartMax part_max(const double* a, long count) {
  double m[kGroups][kLanes] = {}, bad[kGroups][kLanes] = {};
  long k = 0;
  for (; k + kGroups * kLanes <= count; k += kGroups * kLanes)
#pragma GCC unroll 4
    for (int g = 0; g < kGroups; ++g)
      for (int l = 0; l < kLanes; ++l) {
        const double v = a[k + g * kLanes + l], x = std::fabs(v);
        m[g][l] = x > m[g][l] ? x : m[g][l];
        bad[g][l] += v - v;
      }
  PartMax r;
  double sum = 0;
  for (; k < count; ++k) {
    const double x = std::fabs(a[k]);
    r.max = x > r.max ? x : r.max;
    sum += a[k] - a[k];
  }
  for (int g = 0; g < kGroups; ++g)
    for (int l = 0; l < kLanes; ++l) {
      r.max = m[g][l] > r.max ? m[g][l] : r.max;
      sum += bad[g][l];
    }
  r.finite = sum == 0;
  return r;
}

}  // namespace

void EntryScanMax::add_diagonal(double v) {
  finite_ = finite_ && std::isfinite(v);
  modulus_ = std::max(modulus_, std::fabs(v));
}

void EntryScanMax::add_diagonal(Complex v) {
  finite_ = finite_ && std::isfinite(v.real()) && std::isfinite(v.imag());
  modulus_ = std::max(modulus_, std::fabs(v.real()));
}

void EntryScanMax::add_range(const double* a, long count) {
  if (count <= 0) return;
  const PartMax p = part_max(a, count);
  finite_ = finite_ && p.finite;
  modulus_ = std::max(modulus_, p.max);
}

// The modulus is the costly part of a complex entry (a call to hypot, as PZLANHE's ABS): it is
// taken only where it may exceed `floor`, a value the result reaches anyway. An entry's modulus
// is at most sqrt(2) times its larger part, which kRootTwoAbove (above sqrt(2) by some ulps, for
// the rounding of the product and of hypot) and kTinyAbove (for subnormal products) bound from
// above. floor: the largest modulus so far, or the range's largest part where larger, which
// the modulus of the entry that holds it reaches (hypot is never below either part).
void EntryScanMax::add_range(const Complex* a, long count) {
  if (count <= 0) return;
  const PartMax p = part_max(reinterpret_cast<const double*>(a), 2 * count);
  finite_ = finite_ && p.finite;
  if (!finite_) return;  // the norm means nothing now
  constexpr double kRootTwoAbove = 1.4142135623731, kTinyAbove = 0x1p-1060;
  double floor = std::max(modulus_, p.max);
  for (long k = 0; k < count; ++k) {
    const double re = std::fabs(a[k].real()), im = std::fabs(a[k].imag());
    if (std::max(re, im) * kRootTwoAbove + kTinyAbove <= floor) continue;
    const double z = std::abs(a[k]);
    modulus_ = std::max(modulus_, z);
    floor = std::max(floor, z);
  }
}

void EntryScanMax::add(const EntryScanMax& other) {
  finite_ = finite_ && other.finite_;
  modulus_ = std::max(modulus_, other.modulus_);
}

}  // namespace pipevd
