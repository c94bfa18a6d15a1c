// The engine's scalar types: double (PDSYEVD's real symmetric matrices) and std::complex<double>
// (PZHEEVD's Hermitian ones). core/ writes each stage once over the scalar; what differs is
// gathered here: the adjoint's BLAS op ('T' for real, 'C' for complex, so the GPU backend's real
// calls stay exactly as they were), the conjugate, and how many doubles an element occupies
// (backend memory and messages are counted in doubles; std::complex<double> is laid out as two).
#pragma once
#include <complex>
#include <type_traits>

namespace pipevd {

using Complex = std::complex<double>;

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<double>>;

template <class T>
struct Scalar {
  static_assert(std::is_same_v<T, double> || is_complex_v<T>,
                "the engine's scalars are double and std::complex<double>");
  static constexpr char adjoint = is_complex_v<T> ? 'C' : 'T';  // BLAS op of A^H (A^T for real)
  static constexpr long words = is_complex_v<T> ? 2 : 1;        // doubles per element
};

inline double conjugate(double x) { return x; }
inline std::complex<double> conjugate(std::complex<double> x) { return std::conj(x); }

// Backend memory holding T, as the doubles the backend hands out and moves.
template <class T>
double* as_words(T* p) {
  return reinterpret_cast<double*>(p);
}
template <class T>
const double* as_words(const T* p) {
  return reinterpret_cast<const double*>(p);
}

}  // namespace pipevd
