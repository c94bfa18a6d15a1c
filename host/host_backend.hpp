// The reference backend: the engine's operations on the CPU with BLAS/LAPACK and MPI. Device
// memory is host memory, streams and events are program order. It is the oracle the GPU backend
// is tested against and the engine's backend where no GPU is present.
#pragma once
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/backend.hpp"

namespace pipevd {

class HostBackend final : public EngineBackend {
 public:
  const char* name() const override { return "host"; }
  void bind(MPI_Comm engine) override { comm_ = engine; }
  MPI_Comm communicator() const override { return comm_; }

  double* allocate(long count) override;
  void release(double* p) override;
  void copy_to_device(const double* host, double* dev, long count) override;
  void copy_to_host(const double* dev, double* host, long count) override;
  void copy_matrix(long m, long n, const double* src, long lds, double* dst, long ldd) override;
  void fill_matrix(long m, long n, double alpha, double beta, double* a, long lda) override;
  // The reference: each column's part of the triangle copied, then scanned from the copy's source.
  EntryScan upload_triangle(char uplo, long n, const double* host, long ldh, double* dev,
                            long ldd) override;
  EntryScan upload_triangle(char uplo, long n, const Complex* host, long ldh, Complex* dev,
                            long ldd) override;

  void mirror_triangle(char uplo, long n, double* a, long lda) override;

  void gemm(char transa, char transb, long m, long n, long k, double alpha, const double* a,
            long lda, const double* b, long ldb, double beta, double* c, long ldc) override;
  void syr2k_full(long n, long k, double alpha, const double* a, long lda, const double* b,
                  long ldb, double* c, long ldc) override;
  void panel_qr(long m, long nb, double* panel, long ldp, double* w, long ldw, double* y,
                long ldy) override;
  void merge_reflector_blocks(long m, long k1, long k2, double* w, long ldw, const double* y,
                              long ldy) override;

  void bulge_chase(long n, long b, const double* ab, long ldab, double* d, double* e,
                   ReflectorStore& u, bool host_copy = true,
                   bool beside_companion = false) override;
  void bc_back(const ReflectorStore& u, long m, double* x, long ldx) override;

  void broadcast(double* buf, long count, int root) override;
  void send(const double* buf, long count, int dest, int tag) override;
  void recv(double* buf, long count, int source, int tag) override;
  void all_reduce_sum(double* buf, long count) override;
  void all_gather(double* buf, const std::vector<long>& begin) override;

  // Complex Hermitian: the same operations by LAPACK's z routines (core/backend.hpp).
  using EngineBackend::all_gather;
  using EngineBackend::all_reduce_sum;
  using EngineBackend::bc_back;
  using EngineBackend::broadcast;
  using EngineBackend::bulge_chase;
  using EngineBackend::copy_matrix;
  using EngineBackend::copy_to_device;
  using EngineBackend::copy_to_host;
  using EngineBackend::fill_matrix;
  using EngineBackend::gemm;
  using EngineBackend::merge_reflector_blocks;
  using EngineBackend::mirror_triangle;
  using EngineBackend::panel_qr;
  using EngineBackend::recv;
  using EngineBackend::send;
  using EngineBackend::syr2k_full;
  void fill_matrix(long m, long n, Complex alpha, Complex beta, Complex* a, long lda) override;
  void mirror_triangle(char uplo, long n, Complex* a, long lda) override;
  void gemm(char transa, char transb, long m, long n, long k, Complex alpha, const Complex* a,
            long lda, const Complex* b, long ldb, Complex beta, Complex* c, long ldc) override;
  void syr2k_full(long n, long k, Complex alpha, const Complex* a, long lda, const Complex* b,
                  long ldb, Complex* c, long ldc) override;
  void panel_qr(long m, long nb, Complex* panel, long ldp, Complex* w, long ldw, Complex* y,
                long ldy) override;
  void merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw, const Complex* y,
                              long ldy) override;
  void bulge_chase(long n, long b, const Complex* ab, long ldab, double* d, double* e,
                   ComplexReflectorStore& u, bool host_copy = true,
                   bool beside_companion = false) override;
  void bc_back(const ComplexReflectorStore& u, long m, Complex* x, long ldx) override;

  void synchronize() override {}
  // Its allocations count in this backend's accounting (the D&C's buffers are the engine's too).
  std::unique_ptr<EngineBackend> companion(bool /*urgent*/) const override {
    auto c = std::make_unique<HostBackend>();
    c->count_ = count_;
    return c;
  }
  bool host_memory() const override { return true; }
  // The device merge's code run serially on the host (host/host_secular_merge.hpp).
  std::unique_ptr<SecularMerge> secular_merge() override;

  // Eigenvalues only: dsterf (the reference) unless bisection is asked for, then the host
  // implementation of the GPU's parallel bisection (core/tridiagonal_bisection.hpp).
  int tridiagonal_eigenvalues(long n, const double* d, const double* e, double* w) override;
  void use_bisection(bool on) { bisection_ = on; }

  // Memory accounting of allocate/release (doubles), shared with its companions (their threads
  // allocate at the same time): what the engine holds at once, to check the memory plan
  // (core/memory_plan.hpp) against.
  long live_doubles() const;
  long peak_doubles() const;
  void reset_peak();

 private:
  struct MemoryCount {
    std::mutex mutex;
    long live = 0, peak = 0;
    std::unordered_map<const double*, long> sizes;
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool bisection_ = false;
  std::shared_ptr<MemoryCount> count_ = std::make_shared<MemoryCount>();
};

}  // namespace pipevd
