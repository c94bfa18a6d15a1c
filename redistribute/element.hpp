// The element types a redistribution moves (base/scalar.hpp): messages describe them with their
// own MPI datatype (16-byte complex elements stay whole); the window and the kept buffers hold
// them as doubles.
#pragma once
#include <mpi.h>

#include <type_traits>

#include "base/scalar.hpp"

namespace pipevd {

template <class T>
struct Element {
  static_assert(std::is_same_v<T, double> || is_complex_v<T>,
                "a redistribution moves double or std::complex<double>");
  static MPI_Datatype mpi_type() { return is_complex_v<T> ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE; }
  static constexpr long doubles = words_per<T>;
};

// An MPI element type and its size, for code that moves either kind without knowing it.
struct ElementType {
  MPI_Datatype mpi = MPI_DOUBLE;
  long bytes = sizeof(double);
};
template <class T>
ElementType element_type() {
  return ElementType{Element<T>::mpi_type(), static_cast<long>(sizeof(T))};
}

}  // namespace pipevd
