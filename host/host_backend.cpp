#include "host/host_backend.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "core/lapack_prototypes.hpp"
#include "core/packed_triangle.hpp"
#include "core/tridiagonal_bisection.hpp"
#include "core/tridiagonal_solver.hpp"
#include "host/bc_back.hpp"
#include "host/bulge_chasing.hpp"
#include "host/host_secular_merge.hpp"

extern "C" void dsyr2k_(const char* uplo, const char* trans, const int* n, const int* k,
                        const double* alpha, const double* a, const int* lda, const double* b,
                        const int* ldb, const double* beta, double* c, const int* ldc, std::size_t,
                        std::size_t);

namespace pipevd {
namespace {

// BLAS/LAPACK and MPI take int sizes: refuse what does not fit instead of wrapping.
int to_int(long v) {
  if (v < 0 || v > INT_MAX) throw std::length_error("pipevd host backend: size exceeds int");
  return static_cast<int>(v);
}

// MPI messages in pieces of at most this many doubles.
constexpr long kMessageChunk = 1L << 28;

// The BLAS/LAPACK routines of T's precision: LAPACK's d routines for double, its z routines
// (Hermitian where d is symmetric) for std::complex<double>.
template <class T>
struct Lapack;
template <>
struct Lapack<double> {
  static constexpr auto gemm = dgemm_;
  static constexpr auto rank_2k = dsyr2k_;
  static constexpr auto geqrf = dgeqrf_;
  static constexpr auto lacpy = dlacpy_;
  static constexpr auto laset = dlaset_;
  static constexpr auto larft = dlarft_;
  static constexpr auto trmm = dtrmm_;
};
template <>
struct Lapack<Complex> {
  static constexpr auto gemm = zgemm_;
  static constexpr auto rank_2k = zher2k_;
  static constexpr auto geqrf = zgeqrf_;
  static constexpr auto lacpy = zlacpy_;
  static constexpr auto laset = zlaset_;
  static constexpr auto larft = zlarft_;
  static constexpr auto trmm = ztrmm_;
};

template <class T>
void fill(long m, long n, T alpha, T beta, T* a, long lda) {
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < m; ++i) a[i + j * lda] = i == j ? beta : alpha;
}

// The other triangle conjugated; a Hermitian diagonal's imaginary parts zero, as zheevd reads it.
template <class T>
void mirror(char uplo, long n, T* a, long lda) {
  const bool lower = uplo == 'L' || uplo == 'l';
  for (long j = 0; j < n; ++j) {
    if constexpr (is_complex_v<T>) a[j + j * lda] = a[j + j * lda].real();
    for (long i = j + 1; i < n; ++i) {
      if (lower)
        a[j + i * lda] = conjugate(a[i + j * lda]);
      else
        a[i + j * lda] = conjugate(a[j + i * lda]);
    }
  }
}

// upload_triangle's reference: column j's rows of the triangle copied, and scanned.
template <class T>
EntryScan copy_triangle(char uplo, long n, const T* host, long ldh, T* dev, long ldd) {
  const bool lower = lower_triangle(uplo);
  EntryScanMax found;
  for (long j = 0; j < n; ++j) {
    const long first = packed_first_row(lower, j), rows = packed_column_rows(lower, n, j);
    const T* column = host + first + j * ldh;
    std::copy(column, column + rows, dev + first + j * ldd);
    found.add_column_part(column, rows, j - first);
  }
  return found.result();
}

template <class T>
void product(char transa, char transb, long m, long n, long k, T alpha, const T* a, long lda,
             const T* b, long ldb, T beta, T* c, long ldc) {
  if (m <= 0 || n <= 0) return;
  const int im = to_int(m), in = to_int(n), ik = to_int(k), ia = to_int(std::max(1L, lda)),
            ib = to_int(std::max(1L, ldb)), ic = to_int(ldc);
  Lapack<T>::gemm(&transa, &transb, &im, &in, &ik, &alpha, a, &ia, b, &ib, &beta, c, &ic, 1, 1);
}

// dsyr2k (zher2k) on the lower triangle, then the upper from it (zher2k leaves the diagonal real).
template <class T>
void rank_2k_full(long n, long k, T alpha, const T* a, long lda, const T* b, long ldb, T* c,
                  long ldc) {
  if (n <= 0 || k <= 0) return;
  const int in = to_int(n), ik = to_int(k), ia = to_int(std::max(1L, lda)),
            ib = to_int(std::max(1L, ldb)), ic = to_int(ldc);
  const double one = 1.0;
  Lapack<T>::rank_2k("L", "N", &in, &ik, &alpha, a, &ia, b, &ib, &one, c, &ic, 1, 1);
  for (long j = 1; j < n; ++j)
    for (long i = 0; i < j; ++i) c[i + j * ldc] = conjugate(c[j + i * ldc]);
}

// The panel's QR by LAPACK's reflectors: Q = H_1 ... H_kk = I - W Y^H (Y^T for real T).
template <class T>
void householder_qr(long m, long nb, T* panel, long ldp, T* w, long ldw, T* y, long ldy) {
  fill(m, nb, T(0), T(0), w, ldw);
  fill(m, nb, T(0), T(0), y, ldy);
  const long kk = std::min(m, nb);
  if (kk <= 0) return;
  const int im = to_int(m), inb = to_int(nb), ikk = to_int(kk), ip = to_int(ldp), iy = to_int(ldy),
            iw = to_int(ldw);
  std::vector<T> tau(kk), t(kk * kk);
  int info = 0, lwork = -1;
  T query = 0;
  Lapack<T>::geqrf(&im, &inb, panel, &ip, tau.data(), &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(std::real(query)));
  std::vector<T> work(lwork);
  Lapack<T>::geqrf(&im, &inb, panel, &ip, tau.data(), work.data(), &lwork, &info);
  // Y: the reflectors below the diagonal, explicit unit diagonal, zeros above.
  const T zero = 0.0, one = 1.0;
  Lapack<T>::lacpy("L", &im, &ikk, panel, &ip, y, &iy, 1);
  Lapack<T>::laset("U", &ikk, &ikk, &zero, &one, y, &iy, 1);
  // W = Y T.
  Lapack<T>::larft("F", "C", &im, &ikk, y, &iy, tau.data(), t.data(), &ikk, 1, 1);
  Lapack<T>::lacpy("A", &im, &ikk, y, &iy, w, &iw, 1);
  Lapack<T>::trmm("R", "U", "N", "N", &im, &ikk, &one, t.data(), &ikk, w, &iw, 1, 1, 1, 1);
  // The panel now holds R: zeros below the diagonal.
  if (m > 1) {
    const int im1 = im - 1;
    Lapack<T>::laset("L", &im1, &ikk, &zero, &zero, panel + 1, &ip, 1);
  }
}

// Its workspace is host memory outside the engine's buffers (not counted as the backend's).
template <class T>
void merge_blocks(EngineBackend& be, long m, long k1, long k2, T* w, long ldw, const T* y,
                  long ldy) {
  if (m <= 0 || k1 <= 0 || k2 <= 0) return;
  std::vector<T> s(k1 * k2);
  be.gemm(Scalar<T>::adjoint, 'N', k1, k2, m, T(1), y, ldy, w + k1 * ldw, ldw, T(0), s.data(), k1);
  be.gemm('N', 'N', m, k2, k1, T(-1), w, ldw, s.data(), k1, T(1), w + k1 * ldw, ldw);
}

template <class T>
void apply_bc_back(const BasicReflectorStore<T>& u, long m, T* x, long ldx) {
  if (u.held_by_backend)
    throw std::logic_error("bc_back: reflectors held by another backend's memory");
  host::apply_bc_back(u, m, x, ldx);
}

}  // namespace

double* HostBackend::allocate(long count) {
  void* p = std::calloc(static_cast<std::size_t>(std::max(1L, count)), sizeof(double));
  if (!p) throw std::bad_alloc();
  const long size = std::max(1L, count);
  MemoryCount& c = *count_;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.sizes[static_cast<const double*>(p)] = size;
  c.live += size;
  c.peak = std::max(c.peak, c.live);
  return static_cast<double*>(p);
}

void HostBackend::release(double* p) {
  {
    MemoryCount& c = *count_;
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.sizes.find(p);
    if (it != c.sizes.end()) {
      c.live -= it->second;
      c.sizes.erase(it);
    }
  }
  std::free(p);
}

long HostBackend::live_doubles() const {
  std::lock_guard<std::mutex> lock(count_->mutex);
  return count_->live;
}

long HostBackend::peak_doubles() const {
  std::lock_guard<std::mutex> lock(count_->mutex);
  return count_->peak;
}

void HostBackend::reset_peak() {
  std::lock_guard<std::mutex> lock(count_->mutex);
  count_->peak = count_->live;
}

std::unique_ptr<SecularMerge> HostBackend::secular_merge() { return make_host_secular_merge(); }

int HostBackend::tridiagonal_eigenvalues(long n, const double* d, const double* e, double* w) {
  if (bisection_) return tridiagonal_eigenvalues_bisection(n, d, e, w);
  return tridiagonal_eigenvalues_copy(n, d, e, w);
}

void HostBackend::copy_to_device(const double* host, double* dev, long count) {
  if (count > 0) std::memcpy(dev, host, static_cast<std::size_t>(count) * sizeof(double));
}

void HostBackend::copy_to_host(const double* dev, double* host, long count) {
  if (count > 0) std::memcpy(host, dev, static_cast<std::size_t>(count) * sizeof(double));
}

EntryScan HostBackend::upload_triangle(char uplo, long n, const double* host, long ldh, double* dev,
                                       long ldd) {
  return copy_triangle(uplo, n, host, ldh, dev, ldd);
}
EntryScan HostBackend::upload_triangle(char uplo, long n, const Complex* host, long ldh,
                                       Complex* dev, long ldd) {
  return copy_triangle(uplo, n, host, ldh, dev, ldd);
}

void HostBackend::copy_matrix(long m, long n, const double* src, long lds, double* dst, long ldd) {
  for (long j = 0; j < n; ++j)
    std::memmove(dst + j * ldd, src + j * lds, static_cast<std::size_t>(m) * sizeof(double));
}

void HostBackend::mirror_triangle(char uplo, long n, double* a, long lda) {
  mirror(uplo, n, a, lda);
}
void HostBackend::mirror_triangle(char uplo, long n, Complex* a, long lda) {
  mirror(uplo, n, a, lda);
}

void HostBackend::fill_matrix(long m, long n, double alpha, double beta, double* a, long lda) {
  fill(m, n, alpha, beta, a, lda);
}
void HostBackend::fill_matrix(long m, long n, Complex alpha, Complex beta, Complex* a, long lda) {
  fill(m, n, alpha, beta, a, lda);
}

void HostBackend::gemm(char transa, char transb, long m, long n, long k, double alpha,
                       const double* a, long lda, const double* b, long ldb, double beta, double* c,
                       long ldc) {
  product(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void HostBackend::gemm(char transa, char transb, long m, long n, long k, Complex alpha,
                       const Complex* a, long lda, const Complex* b, long ldb, Complex beta,
                       Complex* c, long ldc) {
  product(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void HostBackend::syr2k_full(long n, long k, double alpha, const double* a, long lda,
                             const double* b, long ldb, double* c, long ldc) {
  rank_2k_full(n, k, alpha, a, lda, b, ldb, c, ldc);
}
void HostBackend::syr2k_full(long n, long k, Complex alpha, const Complex* a, long lda,
                             const Complex* b, long ldb, Complex* c, long ldc) {
  rank_2k_full(n, k, alpha, a, lda, b, ldb, c, ldc);
}

void HostBackend::panel_qr(long m, long nb, double* panel, long ldp, double* w, long ldw, double* y,
                           long ldy) {
  householder_qr(m, nb, panel, ldp, w, ldw, y, ldy);
}
void HostBackend::panel_qr(long m, long nb, Complex* panel, long ldp, Complex* w, long ldw,
                           Complex* y, long ldy) {
  householder_qr(m, nb, panel, ldp, w, ldw, y, ldy);
}

void HostBackend::merge_reflector_blocks(long m, long k1, long k2, double* w, long ldw,
                                         const double* y, long ldy) {
  merge_blocks(*this, m, k1, k2, w, ldw, y, ldy);
}
void HostBackend::merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw,
                                         const Complex* y, long ldy) {
  merge_blocks(*this, m, k1, k2, w, ldw, y, ldy);
}

void HostBackend::bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                              ReflectorStore& u, bool /*host_copy: host memory is ours*/,
                              bool /*beside_companion: one thread, nothing shared*/) {
  host::bulge_chase(n, b, ab, ldab, d, e, u);
}
void HostBackend::bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                              ComplexReflectorStore& u, bool, bool) {
  host::bulge_chase(n, b, ab, ldab, d, e, u);
}

void HostBackend::bc_back(const ReflectorStore& u, long m, double* x, long ldx) {
  apply_bc_back(u, m, x, ldx);
}
void HostBackend::bc_back(const ComplexReflectorStore& u, long m, Complex* x, long ldx) {
  apply_bc_back(u, m, x, ldx);
}

void HostBackend::broadcast(double* buf, long count, int root) {
  for (long off = 0; off < count; off += kMessageChunk)
    MPI_Bcast(buf + off, static_cast<int>(std::min(kMessageChunk, count - off)), MPI_DOUBLE, root,
              comm_);
}

void HostBackend::send(const double* buf, long count, int dest, int tag) {
  for (long off = 0; off < count; off += kMessageChunk)
    MPI_Send(buf + off, static_cast<int>(std::min(kMessageChunk, count - off)), MPI_DOUBLE, dest,
             tag, comm_);
}

void HostBackend::recv(double* buf, long count, int source, int tag) {
  for (long off = 0; off < count; off += kMessageChunk)
    MPI_Recv(buf + off, static_cast<int>(std::min(kMessageChunk, count - off)), MPI_DOUBLE, source,
             tag, comm_, MPI_STATUS_IGNORE);
}

void HostBackend::all_reduce_sum(double* buf, long count) {
  for (long off = 0; off < count; off += kMessageChunk)
    MPI_Allreduce(MPI_IN_PLACE, buf + off, static_cast<int>(std::min(kMessageChunk, count - off)),
                  MPI_DOUBLE, MPI_SUM, comm_);
}

// One broadcast per part: the reference needs no more (MPI_Allgatherv takes int displacements).
void HostBackend::all_gather(double* buf, const std::vector<long>& begin) {
  for (std::size_t q = 0; q + 1 < begin.size(); ++q)
    if (begin[q + 1] > begin[q])
      broadcast(buf + begin[q], begin[q + 1] - begin[q], static_cast<int>(q));
}

}  // namespace pipevd
