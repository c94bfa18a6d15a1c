// The backend interface: the short list of operations the engine (core/) runs on a device.
//
// core/ writes each stage once against this interface; host/ implements it with BLAS/LAPACK and
// MPI (the reference backend), gpu/ with cuBLAS/cuSOLVER, custom kernels and NCCL. Device memory
// is handed out by the backend as plain `double*` that core/ never dereferences; host memory
// crosses the boundary only through copy_to_device / copy_to_host. Matrices are column-major with
// 64-bit sizes and leading dimensions. A device backend may run work asynchronously (streams) as
// long as each operation sees the results of those issued before it; synchronize() waits for all
// of it. The host backend runs everything in program order, so that is a no-op there.
//
// Complex Hermitian matrices (PZHEEVD's two-stage path) go through the same stages: memory and
// messages of std::complex<double> are the real operations on twice the doubles (the non-virtual
// overloads below), and the operations whose arithmetic differs have complex overloads. Their
// defaults here throw UnsupportedScalar for a backend without complex kernels; the host and GPU
// backends have them all (on GPUs, auto still chooses the one-stage path for complex matrices:
// core/engine_path.cpp's choose_hermitian_engine_path).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <memory>
#include <vector>

#include "base/errors.hpp"
#include "core/entry_scan.hpp"
#include "core/reflector_store.hpp"
#include "core/scalar.hpp"
#include "core/secular_merge.hpp"
#include "core/tridiagonal_solver.hpp"

namespace pipevd {

// A backend was handed work in a scalar type it has no kernels for.
class __attribute__((visibility("default"))) UnsupportedScalar : public ConfigurationError {
 public:
  using ConfigurationError::ConfigurationError;
};

// Rows [src_row, src_row + rows) of a matrix copied to rows [dst_row, dst_row + rows) of another
// (EngineBackend::copy_row_runs).
struct RowRun {
  long src_row = 0, dst_row = 0, rows = 0;
};

class EngineBackend {
 public:
  virtual ~EngineBackend() = default;
  virtual const char* name() const = 0;

  // --- Communicator: the engine ranks; every communication below is over it.
  virtual void bind(MPI_Comm engine) = 0;
  // The bound communicator (MPI_COMM_NULL before bind), over which a stage that sends messages
  // agrees on a rank's failure before that rank could leave the others waiting
  // (core/failure_agreement).
  virtual MPI_Comm communicator() const = 0;

  // --- Memory (device buffers, zero-initialized).
  virtual double* allocate(long count) = 0;
  // For a buffer written in full before it is read: a device backend may skip the zero fill.
  virtual double* allocate_unfilled(long count) { return allocate(count); }
  virtual void release(double* p) = 0;  // after the work issued on p before it
  virtual void copy_to_device(const double* host, double* dev, long count) = 0;
  virtual void copy_to_host(const double* dev, double* host, long count) = 0;
  // Page-locked host staging memory for uploads that overlap host work (GPU: pinned, kept and
  // reused between calls; host backend: plain memory). Not zero-initialized.
  virtual double* allocate_host_staging(long count) { return new double[std::max(1L, count)]; }
  virtual void release_host_staging(double* p) { delete[] p; }  // after wait_staging(p)
  // copy_to_device from staging memory that returns at once: `host` must stay unchanged until
  // wait_staging(host) (or synchronize()) returns. Ordered with the backend's other work as
  // copy_to_device is (later operations see the copied data).
  virtual void copy_to_device_async(const double* host, double* dev, long count) {
    copy_to_device(host, dev, count);
  }
  // Waits until every copy_to_device_async issued from `host` so far has read it.
  virtual void wait_staging(const double* /*host*/) {}
  // The direct one-stage path's upload (core/one_stage.hpp): the triangle uplo ('L' or 'U',
  // diagonal included) of the n x n host matrix `host` (ld ldh) into the same entries of dev (ld
  // ldd); dev's other strict triangle is not written (it holds what it held). Returns the entry
  // scan of that triangle (core/entry_scan.hpp: the non-finite flag and the max-norm, which the
  // call's refusal of a non-finite A and PDSYEVD's scaling take), so that A is read once for both.
  // The host backend copies and scans column by column (the reference); the GPU backend packs the
  // triangle (half of A's bytes cross to the device), scanning as it packs.
  virtual EntryScan upload_triangle(char uplo, long n, const double* host, long ldh, double* dev,
                                    long ldd) = 0;
  virtual EntryScan upload_triangle(char uplo, long n, const Complex* host, long ldh, Complex* dev,
                                    long ldd) = 0;
  // dst(0:m, 0:n) = src(0:m, 0:n), both on the device.
  virtual void copy_matrix(long m, long n, const double* src, long lds, double* dst, long ldd) = 0;
  // Each run's rows of columns 0:cols of src into dst (DBBR packs a rank's rows of W and Y, and
  // unpacks Z's gathered rows, in one call however many runs its columns form). The runs' rows
  // in dst do not overlap, nor src and dst. This default is one copy_matrix a run (the host
  // oracle); a device backend may copy them all in one kernel.
  virtual void copy_row_runs(long cols, const std::vector<RowRun>& runs, const double* src,
                             long lds, double* dst, long ldd) {
    for (const RowRun& r : runs)
      copy_matrix(r.rows, cols, src + r.src_row, lds, dst + r.dst_row, ldd);
  }
  // LAPACK's laset: off-diagonal entries alpha, diagonal entries beta.
  virtual void fill_matrix(long m, long n, double alpha, double beta, double* a, long lda) = 0;

  // The n x n a made symmetric from its triangle uplo ('L' or 'U'): the other strict triangle is
  // overwritten (whatever it held, NaN included, is never read).
  virtual void mirror_triangle(char uplo, long n, double* a, long lda) = 0;

  // --- BLAS3: C = alpha op(A) op(B) + beta C.
  virtual void gemm(char transa, char transb, long m, long n, long k, double alpha, const double* a,
                    long lda, const double* b, long ldb, double beta, double* c, long ldc) = 0;

  // The final GEMM with its download: c (host, ldc >= m) = a (m x k) b (k x n), a and b on the
  // device. A device backend may overlap the download of one panel of c's columns with the GEMM
  // of the next; this default forms all of c on the device, then copies it (ldc x n doubles; c's
  // padding rows, where ldc > m, go up first so that they come back unchanged).
  virtual void gemm_to_host(long m, long n, long k, const double* a, long lda, const double* b,
                            long ldb, double* c, long ldc) {
    if (m <= 0 || n <= 0) return;
    double* d = allocate(ldc * n);
    try {
      if (ldc > m) copy_to_device(c, d, ldc * n);
      gemm('N', 'N', m, n, k, 1.0, a, lda, b, ldb, 0.0, d, ldc);
      copy_to_host(d, c, ldc * n);
    } catch (...) {
      release(d);
      throw;
    }
    release(d);
  }

  // --- DBBR's trailing update on a symmetric C kept full (both triangles):
  // C := C + alpha (A B^T + B A^T), C n x n, A and B n x k. A backend may compute one triangle
  // (syr2k, half the flops) and mirror it; this default is the two GEMMs.
  virtual void syr2k_full(long n, long k, double alpha, const double* a, long lda, const double* b,
                          long ldb, double* c, long ldc) {
    gemm('N', 'T', n, n, k, alpha, a, lda, b, ldb, 1.0, c, ldc);
    gemm('N', 'T', n, n, k, alpha, b, ldb, a, lda, 1.0, c, ldc);
  }

  // --- DBBR's detached product: Z (m x k) = S W for the symmetric m x m S, stored full (both
  // triangles), given by its columns in two pieces: column c < split at s1 + c ld1, column c >=
  // split at s2 + (c - split) ld2 (the block's saved columns, then A's right of the block). A
  // backend may read only S's lower triangle (half the bytes); this default is one GEMM per piece
  // (S's column c is its row c).
  virtual void symmetric_product(long m, long k, long split, const double* s1, long ld1,
                                 const double* s2, long ld2, const double* w, long ldw, double* z,
                                 long ldz) {
    if (split > 0) gemm('T', 'N', split, k, m, 1.0, s1, ld1, w, ldw, 0.0, z, ldz);
    if (m > split) gemm('T', 'N', m - split, k, m, 1.0, s2, ld2, w, ldw, 0.0, z + split, ldz);
  }

  // --- DBBR panel: Householder QR of the m x nb panel in WY form, Q = I - W Y^T with Y unit lower
  // trapezoidal (explicit ones and zeros) and W = Y T. The panel is left holding R (zeros below
  // the diagonal), which is what the reduced matrix holds there. Columns past min(m, nb) of W and
  // Y are zero.
  virtual void panel_qr(long m, long nb, double* panel, long ldp, double* w, long ldw, double* y,
                        long ldy) = 0;
  // SBR-back's merge of two adjacent reflector blocks (paper Algorithm 3, line 12):
  // W(:, k1:k1+k2) -= W(:, 0:k1) * (Y(:, 0:k1)^T * W(:, k1:k1+k2)), so that
  // (I - W1 Y1^T)(I - W2 Y2^T) = I - [W1 | W2'] [Y1 | Y2]^T.
  virtual void merge_reflector_blocks(long m, long k1, long k2, double* w, long ldw,
                                      const double* y, long ldy) = 0;

  // --- Bulge chasing (band -> tridiagonal) and BC-back.
  // ab (device): the band in lower band storage (core/band_storage.hpp), not modified; d, e and
  // the reflectors U are on the host: T = Q_b^T B Q_b. host_copy false: a device backend may keep
  // U in its own memory only (u.held_by_backend), saving the n^2/2-double copy to the host.
  // beside_companion: a companion's work (SBR-back) runs on the device meanwhile; a device backend
  // may keep part of it to the chase, whose chain of steps slows where other blocks share its SMs.
  virtual void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                           ReflectorStore& u, bool host_copy = true,
                           bool beside_companion = false) = 0;
  // The same d and e without the reflectors (eigenvalues only): a device backend skips writing
  // and copying them.
  virtual void bulge_chase_values(long n, long b, const double* ab, long ldab, double* d,
                                  double* e) {
    ReflectorStore u;
    bulge_chase(n, b, ab, ldab, d, e, u);
  }
  // X := X * Q_b for the m x n row block X (device), reflectors in BC-back's dependency order.
  virtual void bc_back(const ReflectorStore& u, long m, double* x, long ldx) = 0;
  // Frees whatever the backend keeps of the reflectors for bc_back (a device copy), before the
  // final GEMM needs the room; a later bc_back uploads them again.
  virtual void release_reflectors() {}

  // --- Stage 3 without vectors: the n eigenvalues of T = (d, e) (host arrays, d and e not
  // modified) ascending into w (host). Returns 0 or, as dsterf, > 0 when it failed. Default: the
  // CPU reference, LAPACK dsterf; the GPU backend runs parallel bisection (sturm_bisection.hpp).
  virtual int tridiagonal_eigenvalues(long n, const double* d, const double* e, double* w) {
    return tridiagonal_eigenvalues_copy(n, d, e, w);
  }

  // --- The one-stage path (core/one_stage.hpp): every eigenvalue, and with want_vectors every
  // eigenvector, of the n x n symmetric a (backend memory; only its lower triangle is read) in one
  // call: w (host) ascending, a overwritten by the eigenvectors (with want_vectors; otherwise
  // destroyed). Returns 0 or, as LAPACK's dsyevd, > 0 where the solve failed to converge.
  // Default (core/dense_eigensolver.cpp): LAPACK dsyevd on host memory (a copy where the backend's
  // memory is not host memory); the GPU backend runs cuSOLVER's cusolverDnXsyevd on its device.
  virtual int symmetric_eigensolver(bool want_vectors, long n, double* a, long lda, double* w);
  // Its complex twin (PZHEEVD's one-stage path): the n x n Hermitian a (backend memory holding
  // complex<double>, only the triangle uplo, 'L' or 'U', read), w (host) ascending, a overwritten
  // by the eigenvectors (with want_vectors). Returns 0 or, as zheevd, > 0 where the solve failed.
  // Default: LAPACK zheevd (a host copy where backend memory is not host memory); the GPU backend
  // runs cusolverDnXsyevd on CUDA_C_64F.
  virtual int hermitian_eigensolver(bool want_vectors, char uplo, long n, std::complex<double>* a,
                                    long lda, double* w);

  // --- Stage 3 by D&C: a merge's secular roots and merge matrix made in backend memory
  // (core/secular_merge.hpp); nullptr where the backend has none.
  virtual std::unique_ptr<SecularMerge> secular_merge() { return nullptr; }

  // --- Communication over the bound engine communicator (device buffers).
  virtual void broadcast(double* buf, long count, int root) = 0;
  virtual void send(const double* buf, long count, int dest, int tag) = 0;
  virtual void recv(double* buf, long count, int source, int tag) = 0;
  // buf := the sum of every rank's buf, on every rank (DBBR's Yb^H W, Zb^H W and W^H A W from each
  // rank's rows).
  virtual void all_reduce_sum(double* buf, long count) = 0;
  // Rank q's part buf[begin[q], begin[q+1]) (begin: one entry per rank and one more, the same on
  // every rank) onto every rank: DBBR's rows of Z, formed where A's columns are.
  virtual void all_gather(double* buf, const std::vector<long>& begin) = 0;

  // --- Complex Hermitian (the two-stage engine over std::complex<double>). Memory, copies and
  // messages: the real operations on the same bytes.
  void copy_to_device(const Complex* host, Complex* dev, long count) {
    copy_to_device(as_words(host), as_words(dev), 2 * count);
  }
  void copy_to_host(const Complex* dev, Complex* host, long count) {
    copy_to_host(as_words(dev), as_words(host), 2 * count);
  }
  void copy_matrix(long m, long n, const Complex* src, long lds, Complex* dst, long ldd) {
    copy_matrix(2 * m, n, as_words(src), 2 * lds, as_words(dst), 2 * ldd);
  }
  void copy_row_runs(long cols, const std::vector<RowRun>& runs, const Complex* src, long lds,
                     Complex* dst, long ldd) {
    std::vector<RowRun> words(runs);
    for (RowRun& r : words) r = {2 * r.src_row, 2 * r.dst_row, 2 * r.rows};
    copy_row_runs(cols, words, as_words(src), 2 * lds, as_words(dst), 2 * ldd);
  }
  void broadcast(Complex* buf, long count, int root) { broadcast(as_words(buf), 2 * count, root); }
  void send(const Complex* buf, long count, int dest, int tag) {
    send(as_words(buf), 2 * count, dest, tag);
  }
  void recv(Complex* buf, long count, int source, int tag) {
    recv(as_words(buf), 2 * count, source, tag);
  }
  void all_reduce_sum(Complex* buf, long count) { all_reduce_sum(as_words(buf), 2 * count); }
  void all_gather(Complex* buf, const std::vector<long>& begin) {
    std::vector<long> words(begin);
    for (long& w : words) w *= 2;
    all_gather(as_words(buf), words);
  }
  // The operations whose arithmetic differs, as their real twins above with A^H for A^T: laset;
  // the Hermitian a from its triangle (the other conjugated, the diagonal's imaginary parts
  // zero, as zheevd reads them); GEMM with 'C'; the panel's QR by zgeqrf's reflectors
  // (Q = I - W Y^H); bulge chasing to the real tridiagonal T = D^H Q_b^H B Q_b D (u.phase holds
  // the diagonal unitary D, core/reflector_store.hpp); X := X Q_b D.
  virtual void fill_matrix(long m, long n, Complex alpha, Complex beta, Complex* a, long lda);
  virtual void mirror_triangle(char uplo, long n, Complex* a, long lda);
  virtual void gemm(char transa, char transb, long m, long n, long k, Complex alpha,
                    const Complex* a, long lda, const Complex* b, long ldb, Complex beta,
                    Complex* c, long ldc);
  virtual void panel_qr(long m, long nb, Complex* panel, long ldp, Complex* w, long ldw, Complex* y,
                        long ldy);
  virtual void bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                           ComplexReflectorStore& u, bool host_copy = true,
                           bool beside_companion = false);
  virtual void bulge_chase_values(long n, long b, const Complex* ab, long ldab, double* d,
                                  double* e) {
    ComplexReflectorStore u;
    bulge_chase(n, b, ab, ldab, d, e, u);
  }
  virtual void bc_back(const ComplexReflectorStore& u, long m, Complex* x, long ldx);
  // C := C + alpha A B^H + conj(alpha) B A^H (both triangles) by two GEMMs.
  virtual void syr2k_full(long n, long k, Complex alpha, const Complex* a, long lda,
                          const Complex* b, long ldb, Complex* c, long ldc) {
    gemm('N', 'C', n, n, k, alpha, a, lda, b, ldb, 1.0, c, ldc);
    gemm('N', 'C', n, n, k, std::conj(alpha), b, ldb, a, lda, 1.0, c, ldc);
  }
  // Z = S W for the Hermitian S stored full: S's row c is its column c's adjoint.
  virtual void symmetric_product(long m, long k, long split, const Complex* s1, long ld1,
                                 const Complex* s2, long ld2, const Complex* w, long ldw,
                                 Complex* z, long ldz) {
    if (split > 0) gemm('C', 'N', split, k, m, 1.0, s1, ld1, w, ldw, 0.0, z, ldz);
    if (m > split) gemm('C', 'N', m - split, k, m, 1.0, s2, ld2, w, ldw, 0.0, z + split, ldz);
  }
  // W(:, k1:k1+k2) -= W(:, 0:k1) (Y(:, 0:k1)^H W(:, k1:k1+k2)), by two GEMMs.
  virtual void merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw,
                                      const Complex* y, long ldy);

  // --- Ordering: wait for all work issued so far (no-op on the host).
  virtual void synchronize() = 0;
  // This backend's work issued from now on starts after the work issued on `other` so far, without
  // waiting on the host (GPU: an event of other's stream that this stream waits for), so that a
  // companion reads what `other` is still producing in order. Here: other's synchronisation.
  virtual void wait_for(EngineBackend& other) { other.synchronize(); }

  // A second backend on the same device with its own queue (GPU: stream and cuBLAS handle), for
  // work issued from another host thread while this one is in use (stage 3's D&C). Its memory is
  // this device's: this backend may use it once the companion has synchronised. Not bound.
  // urgent: its work goes ahead of this backend's where both wait for the device (GPU: a stream
  // of the highest priority), for the D&C, whose kernels otherwise queue behind BC-back's
  // long-running blocks (a whole BC-back wave can run before a queued kernel gets an SM).
  virtual std::unique_ptr<EngineBackend> companion(bool urgent) const = 0;
  // True where backend memory is host memory (the reference backend).
  virtual bool host_memory() const { return false; }
};

// Not zero-filled (EngineBackend::allocate_unfilled): for buffers written in full before they are
// read.
struct UnfilledBuffer {};

// A device buffer of `count` elements of T owned through its backend (which counts doubles).
template <class T>
class BasicDeviceBuffer {
 public:
  BasicDeviceBuffer() = default;
  BasicDeviceBuffer(EngineBackend& be, long count)
      : be_(&be), p_(count > 0 ? be.allocate(Scalar<T>::words * count) : nullptr), n_(count) {}
  using Unfilled = UnfilledBuffer;
  BasicDeviceBuffer(EngineBackend& be, long count, Unfilled)
      : be_(&be),
        p_(count > 0 ? be.allocate_unfilled(Scalar<T>::words * count) : nullptr),
        n_(count) {}
  ~BasicDeviceBuffer() { reset(); }
  BasicDeviceBuffer(BasicDeviceBuffer&& o) noexcept : be_(o.be_), p_(o.p_), n_(o.n_) {
    o.p_ = nullptr;
    o.n_ = 0;
  }
  BasicDeviceBuffer& operator=(BasicDeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      be_ = o.be_;
      p_ = o.p_;
      n_ = o.n_;
      o.p_ = nullptr;
      o.n_ = 0;
    }
    return *this;
  }
  BasicDeviceBuffer(const BasicDeviceBuffer&) = delete;
  BasicDeviceBuffer& operator=(const BasicDeviceBuffer&) = delete;
  void reset() {
    if (p_) be_->release(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* get() const { return reinterpret_cast<T*>(p_); }
  long size() const { return n_; }

 private:
  EngineBackend* be_ = nullptr;
  double* p_ = nullptr;
  long n_ = 0;
};

using DeviceBuffer = BasicDeviceBuffer<double>;

}  // namespace pipevd
