// The element types a redistribution moves: double (PDSYEVD's real symmetric A and Z) and
// std::complex<double> (PZHEEVD's Hermitian A and unitary Z). Messages describe them with their
// own MPI datatype (16-byte complex elements stay whole); the window and the kept buffers, which
// hold doubles, hold a complex element as two of them (std::complex<double> is laid out as
// double[2]). The mirrored triangle of a Hermitian matrix is the conjugate of the stored one.
#pragma once
#include <mpi.h>

#include <complex>

namespace pipevd {

template <class T>
struct Element;

template <>
struct Element<double> {
  static MPI_Datatype mpi_type() { return MPI_DOUBLE; }
  static constexpr long doubles = 1;
  static double mirrored(double v) { return v; }
};

template <>
struct Element<std::complex<double>> {
  static MPI_Datatype mpi_type() { return MPI_C_DOUBLE_COMPLEX; }
  static constexpr long doubles = 2;
  static std::complex<double> mirrored(std::complex<double> v) { return std::conj(v); }
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

// Elements of type T over memory held as doubles (a kept buffer, a window's segment).
template <class T>
T* elements_in(double* p) {
  return reinterpret_cast<T*>(p);
}
template <class T>
double* doubles_of(T* p) {
  return reinterpret_cast<double*>(p);
}
template <class T>
const double* doubles_of(const T* p) {
  return reinterpret_cast<const double*>(p);
}

}  // namespace pipevd
