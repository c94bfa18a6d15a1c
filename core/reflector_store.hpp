// The Householder reflectors of bulge chasing (stage 2), in the layout that BC-back streams.
//
// Sweeps and steps. Bulge chasing reduces a symmetric band matrix B (order n, bandwidth b >= 2) to
// a tridiagonal T in n - 2 sweeps s = 0 .. n-3. Sweep s annihilates column s below the
// subdiagonal, then chases the bulge this creates down the band in steps t = 0, 1, ...:
//
//   step t of sweep s uses the reflector H(s,t) = I - tau v v^T on rows/columns
//     first_row(s,t) = s + 1 + t*b .. first_row + length - 1,  length(s,t) = min(b, n - first_row)
//   (t = 0 annihilates B(s+2 .. s+length, s); t >= 1 the bulge's column first_row - b).
//   Sweep s has steps(s) = floor((n - 3 - s) / b) + 1 steps: exactly those with length >= 2.
//
// With b = 1 (already tridiagonal) or n < 3 there are no reflectors. b here is the layout's b,
// the band's clamped to n - 1 (host::bulge_chase makes it so; a GPU writer must do the same).
//
// The product. Q_b = H(0,0) H(0,1) ... H(0,steps(0)-1) H(1,0) ... H(n-3, steps(n-3)-1), the
// reflectors in the order bulge chasing generates them, and T = Q_b^T B Q_b (so B = Q_b T Q_b^T).
//
// Normalisation (LAPACK dlarfg's, which both the host and the GPU kernel must follow): v[0] = 1,
// H^T (alpha, x)^T = (beta, 0)^T with beta = -sign(alpha) * ||(alpha, x)||, tau = (beta - alpha) /
// beta in [1, 2], v[1:] = x / (alpha - beta); tau = 0 (H = I, v = e_1) when x = 0. H is symmetric
// and orthogonal. T's subdiagonal therefore carries these betas' signs (e may be negative).
//
// Storage. Reflector (s,t) has the index
//   index(s,t) = P(s) + t,  P(s) = sum_{s' < s} steps(s')  (closed form below, no search),
// so the reflectors are numbered sweep by sweep, step by step (generation order), and a kernel
// that owns one sweep can write its reflectors anywhere in parallel with the others. Vector and
// scalar live in two arrays:
//   v[index * b + i], i = 0 .. b-1: v[0] = 1 stored explicitly, v[1 .. length-1] the
//                                   reflector, v[length .. b-1] = 0 (only a sweep's last step can
//                                   be shorter than b);
//   tau[index].
//
// Dependencies (which orders of applying the reflectors give X * Q_b). Reflectors of one sweep
// act on disjoint index ranges and commute. H(s+1,t) overlaps H(s,t) and H(s,t+1) and no other
// reflector of sweep s. So X * Q_b needs H(s+1,t) applied after H(s,t) and H(s,t+1) (and
// Q_b * X, the conventional order of the pipelined paper's §2.1.2, the reverse: H(s,t) after
// H(s+1,t-1) and H(s+1,t)). Any order respecting these edges gives bitwise the same X when each
// reflector's application is computed the same way, because reflectors that are not ordered
// touch disjoint columns of X. for_each_in_bc_back_order() gives the GPU kernel's order.
//
// Complex Hermitian B (the same layout, complex v and tau). Normalisation of LAPACK zlarfg:
// H = I - tau v v^H with v[0] = 1, H^H (alpha, x)^T = (beta, 0)^T with beta real, so H is unitary
// but not Hermitian (tau complex); each step applies H^H from the left and H from the right, and
// Q_b^H B Q_b is a Hermitian tridiagonal whose diagonal is real and whose subdiagonal is real
// where a reflector made it (beta) and complex elsewhere (the last entry, every entry for b = 1).
// A diagonal unitary D (phase, |D(j,j)| = 1) makes it real: T = D^H Q_b^H B Q_b D with
// T(j+1, j) = |e_j| >= 0, so the real D&C runs on T and the back transformation is Q_b D.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

#if defined(__CUDACC__)
#define PIPEVD_HOST_DEVICE __host__ __device__
#else
#define PIPEVD_HOST_DEVICE
#endif

namespace pipevd {

// Index arithmetic of the reflectors of bulge chasing (usable on host and device).
struct ReflectorLayout {
  long n = 0;  // order of the band matrix
  long b = 0;  // its bandwidth

  PIPEVD_HOST_DEVICE long sweeps() const { return (n >= 3 && b >= 2) ? n - 2 : 0; }
  // Number of steps (reflectors) of sweep s, 0 <= s < sweeps().
  PIPEVD_HOST_DEVICE long steps(long s) const { return (n - 3 - s) / b + 1; }
  PIPEVD_HOST_DEVICE long first_row(long s, long t) const { return s + 1 + t * b; }
  // The last of the sweeps before `end` that has a step t (sweep s has one iff t b <= n - 3 - s,
  // so steps(s) decreases with s): what a group of sweeps [s0, end) applies at step t.
  PIPEVD_HOST_DEVICE long last_sweep_with_step(long t, long end) const {
    const long last = n - 3 - t * b;
    return end - 1 < last ? end - 1 : last;
  }
  PIPEVD_HOST_DEVICE long length(long s, long t) const {
    const long rest = n - first_row(s, t);
    return rest < b ? rest : b;
  }
  // P(s): reflectors of the sweeps before s. With F(K) = sum_{k=0}^{K} (floor(k/b) + 1) (F(-1) =
  // 0), steps(s') = floor((n-3-s')/b) + 1 gives P(s) = F(n-3) - F(n-3-s).
  PIPEVD_HOST_DEVICE long sweep_offset(long s) const {
    return sweeps() == 0 ? 0 : steps_prefix(n - 3) - steps_prefix(n - 3 - s);
  }
  PIPEVD_HOST_DEVICE long index(long s, long t) const { return sweep_offset(s) + t; }
  // Total number of reflectors.
  PIPEVD_HOST_DEVICE long count() const { return sweep_offset(sweeps()); }
  // Pipelined sweeps (the GPU's schedule, band-to-bidiagonal paper §IV): step (s,t), s >= 1, may
  // start once sweep s-1 has completed its step prerequisite(s,t). Steps t-1 .. t+2 of sweep s-1
  // touch entries that step (s,t) touches (t+2: the bulge column that (s-1,t+2) annihilates is
  // updated by (s,t)'s right update), later ones do not; so sweep s-1 stays three steps ahead.
  PIPEVD_HOST_DEVICE long prerequisite(long s, long t) const {
    return prerequisite_given_last(t, steps(s - 1) - 1);
  }
  // The same with last = steps(s-1) - 1 known (a kernel computes it once per sweep: no division
  // per step).
  PIPEVD_HOST_DEVICE static long prerequisite_given_last(long t, long last) {
    return t + 2 < last ? t + 2 : last;
  }
  // Two steps ahead instead, for a chase that defers one update: step (s,t) and step (s-1,t+2)
  // share exactly one entry, A(s + (t+2)b, s + (t+1)b), the alpha of the column (s-1,t+2)
  // annihilates and the last entry of (s,t)'s last right-block row (row first_row(s,t) + 2b - 1).
  // If (s,t) leaves that row's right update to the start of (s,t+1), which runs after (s-1,t+2),
  // every entry sees the sequential order, and (s,t) may start once (s-1,t+1) is complete. (The
  // row exists only when step t+1 of sweep s does.) The chain of dependent steps shrinks from
  // about 3n to about 2n.
  PIPEVD_HOST_DEVICE static long prerequisite_deferred_given_last(long t, long last) {
    return t + 1 < last ? t + 1 : last;
  }
  // Offset of v(s,t)[0] in the vector array; each vector has a slot of b doubles.
  PIPEVD_HOST_DEVICE long vector_offset(long s, long t) const { return index(s, t) * b; }
  PIPEVD_HOST_DEVICE long vector_array_size() const { return count() * b; }

 private:
  PIPEVD_HOST_DEVICE long steps_prefix(long K) const {
    if (K < 0) return 0;
    const long q = K / b, r = K % b;
    return (K + 1) + b * q * (q - 1) / 2 + q * (r + 1);
  }
};

// All reflectors of one bulge chasing, on the host; or, when held_by_backend, only in the memory
// of the backend whose bulge_chase made them (v and tau empty: only its bc_back can use them, until
// its release_reflectors()). backend_token: the device chase they came from (unique in the
// process; 0 for a host chase), so that backend can reuse its device copy. T: double, or
// std::complex<double> for a Hermitian band.
template <class T>
struct BasicReflectorStore {
  ReflectorLayout layout;
  std::vector<T> v;    // layout.vector_array_size() elements, see above
  std::vector<T> tau;  // layout.count() elements
  // Complex: D's diagonal, n entries (empty for real: D = I, T's subdiagonal keeps its signs).
  std::vector<T> phase;
  bool held_by_backend = false;
  unsigned long backend_token = 0;

  BasicReflectorStore() = default;
  BasicReflectorStore(long n, long b)
      : layout{n, b},
        v(static_cast<std::size_t>(layout.vector_array_size()), T(0)),
        tau(static_cast<std::size_t>(layout.count()), T(0)) {}

  T* vector(long s, long t) { return v.data() + layout.vector_offset(s, t); }
  const T* vector(long s, long t) const { return v.data() + layout.vector_offset(s, t); }
  T& tau_of(long s, long t) { return tau[static_cast<std::size_t>(layout.index(s, t))]; }
  T tau_of(long s, long t) const { return tau[static_cast<std::size_t>(layout.index(s, t))]; }
};

using ReflectorStore = BasicReflectorStore<double>;
using ComplexReflectorStore = BasicReflectorStore<std::complex<double>>;

// The BC-back order of the pipelined paper §4.3 (Figure 11) for X * Q_b (equivalently Q_b^T * Y):
// sweeps are taken in blocks of `group` consecutive sweeps, blocks left to right; inside a block
// the steps go bottom to top (largest t first); inside a step, sweeps left to right. This
// respects the dependencies above for any group >= 1 (H(s',t') of a later sweep in the same block
// overlaps H(s,t) only when t' <= t). Calls f(s, t) for every reflector once.
template <class F>
void for_each_in_bc_back_order(const ReflectorLayout& layout, long group, F&& f) {
  const long sweeps = layout.sweeps();
  if (group < 1) group = 1;
  for (long s0 = 0; s0 < sweeps; s0 += group) {
    const long s1 = s0 + group < sweeps ? s0 + group : sweeps;
    for (long t = layout.steps(s0) - 1; t >= 0; --t)
      for (long s = s0; s < s1 && t < layout.steps(s); ++s) f(s, t);
  }
}

}  // namespace pipevd
