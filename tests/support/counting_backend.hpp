// A decorator over the host backend that counts the calls of the operations whose launches a
// device pays per call (gemm, copy_matrix, copy_row_runs), real and complex alike, and forwards
// every operation to the host backend. Tests read the counts to check how many launches the
// engine issues, which the host backend's results alone cannot show. Made with poison_unfilled, it
// fills the buffers allocated unfilled with NaN (the host backend zero-fills them, which hides a
// read before the first write that a device's memory pool would not): results equal to the host
// backend's bit for bit show that every element read was written first.
#pragma once
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "host/host_backend.hpp"

namespace pipevd::test {

struct BackendCallCounts {
  long gemm = 0, copy_matrix = 0, copy_row_runs = 0;
  long total() const { return gemm + copy_matrix + copy_row_runs; }
};

class CountingBackend final : public EngineBackend {
 public:
  explicit CountingBackend(bool poison_unfilled = false) : poison_(poison_unfilled) {}
  const BackendCallCounts& counts() const { return counts_; }

  const char* name() const override { return "counting host"; }
  void bind(MPI_Comm engine) override { host_.bind(engine); }
  MPI_Comm communicator() const override { return host_.communicator(); }

  double* allocate(long count) override { return host_.allocate(count); }
  double* allocate_unfilled(long count) override {
    double* p = host_.allocate_unfilled(count);
    if (poison_) std::fill(p, p + count, std::numeric_limits<double>::quiet_NaN());
    return p;
  }
  void release(double* p) override { host_.release(p); }
  void copy_to_device(const double* h, double* d, long count) override {
    host_.copy_to_device(h, d, count);
  }
  void copy_to_host(const double* d, double* h, long count) override {
    host_.copy_to_host(d, h, count);
  }
  EntryScan upload_triangle(char uplo, long n, const double* h, long ldh, double* d,
                            long ldd) override {
    return host_.upload_triangle(uplo, n, h, ldh, d, ldd);
  }
  EntryScan upload_triangle(char uplo, long n, const Complex* h, long ldh, Complex* d,
                            long ldd) override {
    return host_.upload_triangle(uplo, n, h, ldh, d, ldd);
  }
  void copy_matrix(long m, long n, const double* src, long lds, double* dst, long ldd) override {
    ++counts_.copy_matrix;
    host_.copy_matrix(m, n, src, lds, dst, ldd);
  }
  void copy_row_runs(long cols, const std::vector<RowRun>& runs, const double* src, long lds,
                     double* dst, long ldd) override {
    ++counts_.copy_row_runs;
    host_.copy_row_runs(cols, runs, src, lds, dst, ldd);
  }
  using EngineBackend::copy_row_runs;
  void fill_matrix(long m, long n, double alpha, double beta, double* a, long lda) override {
    host_.fill_matrix(m, n, alpha, beta, a, lda);
  }
  void mirror_triangle(char uplo, long n, double* a, long lda) override {
    host_.mirror_triangle(uplo, n, a, lda);
  }
  void gemm(char ta, char tb, long m, long n, long k, double alpha, const double* a, long lda,
            const double* b, long ldb, double beta, double* c, long ldc) override {
    ++counts_.gemm;
    host_.gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void syr2k_full(long n, long k, double alpha, const double* a, long lda, const double* b,
                  long ldb, double* c, long ldc) override {
    host_.syr2k_full(n, k, alpha, a, lda, b, ldb, c, ldc);
  }
  void panel_qr(long m, long nb, double* p, long ldp, double* w, long ldw, double* y,
                long ldy) override {
    host_.panel_qr(m, nb, p, ldp, w, ldw, y, ldy);
  }
  void merge_reflector_blocks(long m, long k1, long k2, double* w, long ldw, const double* y,
                              long ldy) override {
    host_.merge_reflector_blocks(m, k1, k2, w, ldw, y, ldy);
  }
  void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                   ReflectorStore& u, bool host_copy, bool beside) override {
    host_.bulge_chase(n, b, ab, ldab, d, e, u, host_copy, beside);
  }
  void bc_back(const ReflectorStore& u, long m, double* x, long ldx) override {
    host_.bc_back(u, m, x, ldx);
  }
  void broadcast(double* buf, long count, int root) override { host_.broadcast(buf, count, root); }
  void send(const double* buf, long count, int dest, int tag) override {
    host_.send(buf, count, dest, tag);
  }
  void recv(double* buf, long count, int source, int tag) override {
    host_.recv(buf, count, source, tag);
  }
  void all_reduce_sum(double* buf, long count) override { host_.all_reduce_sum(buf, count); }
  void all_gather(double* buf, const std::vector<long>& begin) override {
    host_.all_gather(buf, begin);
  }

  // Complex: the operations whose arithmetic differs (memory and messages are the real ones).
  using EngineBackend::bc_back;
  using EngineBackend::bulge_chase;
  using EngineBackend::fill_matrix;
  using EngineBackend::gemm;
  using EngineBackend::merge_reflector_blocks;
  using EngineBackend::mirror_triangle;
  using EngineBackend::panel_qr;
  using EngineBackend::syr2k_full;
  void fill_matrix(long m, long n, Complex alpha, Complex beta, Complex* a, long lda) override {
    host_.fill_matrix(m, n, alpha, beta, a, lda);
  }
  void mirror_triangle(char uplo, long n, Complex* a, long lda) override {
    host_.mirror_triangle(uplo, n, a, lda);
  }
  void gemm(char ta, char tb, long m, long n, long k, Complex alpha, const Complex* a, long lda,
            const Complex* b, long ldb, Complex beta, Complex* c, long ldc) override {
    ++counts_.gemm;
    host_.gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void syr2k_full(long n, long k, Complex alpha, const Complex* a, long lda, const Complex* b,
                  long ldb, Complex* c, long ldc) override {
    host_.syr2k_full(n, k, alpha, a, lda, b, ldb, c, ldc);
  }
  void panel_qr(long m, long nb, Complex* p, long ldp, Complex* w, long ldw, Complex* y,
                long ldy) override {
    host_.panel_qr(m, nb, p, ldp, w, ldw, y, ldy);
  }
  void merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw, const Complex* y,
                              long ldy) override {
    host_.merge_reflector_blocks(m, k1, k2, w, ldw, y, ldy);
  }
  void bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                   ComplexReflectorStore& u, bool host_copy, bool beside) override {
    host_.bulge_chase(n, b, ab, ldab, d, e, u, host_copy, beside);
  }
  void bc_back(const ComplexReflectorStore& u, long m, Complex* x, long ldx) override {
    host_.bc_back(u, m, x, ldx);
  }

  void synchronize() override {}
  std::unique_ptr<EngineBackend> companion(bool urgent) const override {
    return host_.companion(urgent);
  }
  bool host_memory() const override { return true; }

 private:
  HostBackend host_;
  BackendCallCounts counts_;
  bool poison_ = false;
};

}  // namespace pipevd::test
