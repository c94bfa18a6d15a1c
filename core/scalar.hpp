// The engine's scalar types (base/scalar.hpp): core/ writes each stage once over the scalar; what
// differs for the backends' BLAS calls is gathered here: the adjoint's op ('T' for real, 'C' for
// complex, so the GPU backend's real calls stay exactly as they were).
#pragma once
#include <type_traits>

#include "base/scalar.hpp"

namespace pipevd {

template <class T>
struct Scalar {
  static_assert(std::is_same_v<T, double> || is_complex_v<T>,
                "the engine's scalars are double and std::complex<double>");
  static constexpr char adjoint = is_complex_v<T> ? 'C' : 'T';  // BLAS op of A^H (A^T for real)
  static constexpr long words = words_per<T>;                   // doubles per element
};

}  // namespace pipevd
