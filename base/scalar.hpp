// The two element types pipevd computes with and moves: double (PDSYEVD's real symmetric
// matrices) and std::complex<double> (PZHEEVD's Hermitian ones). Memory that every layer holds as
// doubles (backend buffers and messages, the redistribution's window and kept buffers) holds a
// complex element as two of them (std::complex<double> is laid out as double[2]); the mirrored
// triangle of a Hermitian matrix is the conjugate of the stored one.
#pragma once
#include <complex>
#include <type_traits>

namespace pipevd {

using Complex = std::complex<double>;

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<double>>;

// Doubles per element.
template <class T>
inline constexpr long words_per = is_complex_v<T> ? 2 : 1;

inline double conjugate(double x) { return x; }
inline std::complex<double> conjugate(std::complex<double> x) { return std::conj(x); }

// Memory holding T as the doubles it is held and moved as, and back.
template <class T>
double* as_words(T* p) {
  return reinterpret_cast<double*>(p);
}
template <class T>
const double* as_words(const T* p) {
  return reinterpret_cast<const double*>(p);
}
template <class T>
T* elements_in(double* p) {
  return reinterpret_cast<T*>(p);
}

}  // namespace pipevd
