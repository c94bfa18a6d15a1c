// The direct one-stage path's upload with the entry scan (EngineBackend::upload_triangle), one test
// body over every backend (a Host/ and a Gpu/ instance; the host backend is the reference): on
// fresh random matrices of several n (odd ones, packed triangles of several pinned chunks with a
// short last one), both triangles, real and complex, host leading dimension n and more, the
// triangle arrives bit for bit and the other one is left as it was; the scan's flag and max-norm
// equal a plain loop's (bit for bit) with a NaN or an infinity in the triangle (found) or in the
// other one (ignored). The one-stage path with that upload gives the W and Z of the path without
// it, bit for bit, and a scan its caller refuses stops it with W and Z untouched.
//
// The GPU backend's pipeline is the packing (core/packed_triangle.hpp) through two staging chunks
// (base/chunk_pipeline.hpp) and a device unpack at core/packed_triangle's offsets: those host
// parts are also checked here without a device, with a transfer that reads each chunk late, so a
// chunk refilled too early shows.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/chunk_pipeline.hpp"
#include "base/engine_layout.hpp"
#include "core/backend_factory.hpp"
#include "core/engine.hpp"
#include "core/one_stage.hpp"
#include "core/packed_triangle.hpp"
#include "tests/support/fresh_seed.hpp"
#include "tests/support/gpu_instance.hpp"

namespace pipevd {
namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

template <class S>
bool same_bits(const S& a, const S& b) {
  return std::memcmp(&a, &b, sizeof(S)) == 0;
}

bool finite(double v) { return std::isfinite(v); }
bool finite(Complex v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); }
// PDLANSY's / PZLANHE's 'M' norm's term: |a_ij|, a complex entry's modulus, a Hermitian
// diagonal's |real part|.
double modulus(double v, bool) { return std::fabs(v); }
double modulus(Complex v, bool diagonal) { return diagonal ? std::fabs(v.real()) : std::abs(v); }

bool in_triangle(bool lower, long i, long j) { return lower ? i >= j : i <= j; }

// The plain scan: every entry of the triangle, once.
template <class S>
EntryScan plain_scan(char uplo, long n, const S* a, long lda) {
  const bool lower = uplo == 'L';
  EntryScan e;
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) {
      if (!in_triangle(lower, i, j)) continue;
      const S v = a[i + j * lda];
      e.non_finite = e.non_finite || !finite(v);
      e.max_abs = std::max(e.max_abs, modulus(v, i == j));
    }
  return e;
}

void expect_same_scan(const EntryScan& got, const EntryScan& want, const std::string& what) {
  EXPECT_EQ(got.non_finite, want.non_finite) << what;
  if (!want.non_finite && !got.non_finite)
    EXPECT_TRUE(same_bits(got.max_abs, want.max_abs))
        << what << ": max_abs " << got.max_abs << " expected " << want.max_abs;
}

template <class S>
S random_entry(std::mt19937_64& rng);
template <>
double random_entry<double>(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(-1, 1)(rng);
}
template <>
Complex random_entry<Complex>(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  const double re = u(rng);
  return {re, u(rng)};
}

// A host matrix: random entries in the triangle uplo, scaled by a random power of two; the other
// strict triangle `other` (NaN: never to be read).
template <class S>
std::vector<S> random_triangle(std::mt19937_64& rng, char uplo, long n, long lda, S other) {
  std::vector<S> a(static_cast<std::size_t>(lda) * n, S(kNan));
  const double scale = std::ldexp(1.0, std::uniform_int_distribution<int>(-40, 40)(rng));
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i)
      a[i + j * lda] = in_triangle(uplo == 'L', i, j) ? random_entry<S>(rng) * scale : other;
  return a;
}

// --- The GPU pipeline's host parts, without a device.

// A transfer that reads its chunk some time after send returns, on a thread of its own: a chunk
// that the producers refill before wait_sent shows as wrong data at its destination.
struct LateTransfer {
  double* dst;
  double* const* chunk;
  std::unique_ptr<std::thread> copy[2];
  std::mt19937 rng{std::random_device{}()};
  void send(long off, long len, int buffer) {
    if (copy[buffer]) throw std::logic_error("buffer sent twice without wait_sent");
    const int micros = std::uniform_int_distribution<int>(0, 300)(rng);
    copy[buffer] = std::make_unique<std::thread>([this, off, len, buffer, micros] {
      std::this_thread::sleep_for(std::chrono::microseconds(micros));
      std::memcpy(dst + off, chunk[buffer], sizeof(double) * len);
    });
  }
  void wait_sent(int buffer) {
    if (!copy[buffer]) return;
    copy[buffer]->join();
    copy[buffer].reset();
  }
  ~LateTransfer() {
    for (int b = 0; b < 2; ++b) wait_sent(b);
  }
};

TEST(ChunkPipeline, EveryPieceOnceInPlaceWhateverTheThreads) {
  struct Shape {
    long count, size, piece;
  };
  for (const Shape& s : {Shape{1, 8, 8}, Shape{7, 8, 4}, Shape{64, 16, 4}, Shape{1000, 64, 8},
                         Shape{1001, 64, 64}, Shape{4099, 256, 32}})
    for (int threads : {1, 2, 3, 8}) {
      SCOPED_TRACE("count=" + std::to_string(s.count) + " size=" + std::to_string(s.size) +
                   " piece=" + std::to_string(s.piece) + " threads=" + std::to_string(threads));
      std::vector<double> a(s.size), b(s.size), out(s.count, -1);
      double* const chunk[2] = {a.data(), b.data()};
      std::vector<std::atomic<int>> produced(s.count);
      std::atomic<bool> bad_worker{false};
      {
        LateTransfer t{out.data(), chunk};
        produce_through_two_chunks(
            s.count, chunk, s.size, s.piece, threads,
            [&](long begin, long len, double* dst, int worker) {
              if (worker < 0 || worker >= threads) bad_worker = true;
              for (long i = 0; i < len; ++i) {
                dst[i] = static_cast<double>(begin + i);
                ++produced[begin + i];
              }
            },
            [&](long off, long len, int buffer) { t.send(off, len, buffer); },
            [&](int buffer) { t.wait_sent(buffer); });
      }
      EXPECT_FALSE(bad_worker);
      long wrong = 0, twice = 0;
      for (long i = 0; i < s.count; ++i) {
        wrong += out[i] != static_cast<double>(i);
        twice += produced[i] != 1;
      }
      EXPECT_EQ(wrong, 0);
      EXPECT_EQ(twice, 0);
    }
}

TEST(ChunkPipeline, ASendThatThrowsStopsTheThreads) {
  std::vector<double> a(16), b(16);
  double* const chunk[2] = {a.data(), b.data()};
  int sends = 0;
  EXPECT_THROW(produce_through_two_chunks(
                   1000, chunk, 16, 4, 4, [](long, long, double*, int) {},
                   [&](long, long, int) {
                     if (++sends == 3) throw std::runtime_error("transfer failed");
                   },
                   [](int) {}),
               std::runtime_error);
  EXPECT_THROW(
      produce_through_two_chunks(
          10, chunk, 16, 3, 2, [](long, long, double*, int) {}, [](long, long, int) {}, [](int) {}),
      std::invalid_argument);
}

// The GPU backend's upload on the host: packed by threads through two late-read chunks, unpacked
// at core/packed_triangle's offsets (the device kernel's), against the host backend's reference.
template <class S>
void check_packed_pipeline(std::mt19937_64& rng, char uplo, long n, long lda, int threads) {
  SCOPED_TRACE(std::string(is_complex_v<S> ? "complex" : "real") + " uplo=" + uplo +
               " n=" + std::to_string(n) + " lda=" + std::to_string(lda) +
               " threads=" + std::to_string(threads));
  const std::vector<S> a = random_triangle<S>(rng, uplo, n, lda, S(kNan));
  const TrianglePacker<S> packer(uplo, n, a.data(), lda);
  ASSERT_EQ(packer.size(), n * (n + 1) / 2);
  constexpr long words = words_per<S>;
  const long count = packer.size() * words, size = 64, piece = 8;
  std::vector<double> c0(size), c1(size), packed(count);
  double* const chunk[2] = {c0.data(), c1.data()};
  std::vector<EntryScanMax> found(threads);
  {
    LateTransfer t{packed.data(), chunk};
    produce_through_two_chunks(
        count, chunk, size, piece, threads,
        [&](long begin, long len, double* dst, int worker) {
          packer.pack(begin / words, len / words, elements_in<S>(dst), found[worker]);
        },
        [&](long off, long len, int buffer) { t.send(off, len, buffer); },
        [&](int buffer) { t.wait_sent(buffer); });
  }
  const bool lower = uplo == 'L';
  const S sentinel = S(7.5);
  std::vector<S> got(static_cast<std::size_t>(n) * n, sentinel), want = got;
  const S* p = elements_in<S>(packed.data());
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < packed_column_rows(lower, n, j); ++i)
      got[packed_first_row(lower, j) + i + j * n] = p[packed_column_begin(lower, n, j) + i];
  EntryScanMax all;
  for (const EntryScanMax& f : found) all.add(f);
  const std::unique_ptr<EngineBackend> host = make_host_backend();
  const EntryScan ref = host->upload_triangle(uplo, n, a.data(), lda, want.data(), n);
  long differ = 0;
  for (std::size_t k = 0; k < got.size(); ++k) differ += !same_bits(got[k], want[k]);
  EXPECT_EQ(differ, 0);
  expect_same_scan(all.result(), ref, "packed scan against the reference");
  expect_same_scan(all.result(), plain_scan(uplo, n, a.data(), lda), "packed scan");
}

TEST(PackedTriangle, ThroughTwoChunksEqualsTheReference) {
  const auto seed = test::fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (long n : {1L, 2L, 3L, 10L, 11L, 33L, 100L})
    for (char uplo : {'L', 'U'})
      for (int threads : {1, 3}) {
        check_packed_pipeline<double>(rng, uplo, n, n + (n % 2), threads);
        check_packed_pipeline<Complex>(rng, uplo, n, n + 1 - (n % 2), threads);
      }
}

// --- Every backend.

enum class Kind { Host, Gpu };

class UploadTriangle : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::Gpu) test::skip_gpu_instance_without_device();
  }
  // host_threads: the GPU backend's packing threads.
  std::unique_ptr<EngineBackend> backend(int host_threads = 1) const {
    if (GetParam() == Kind::Host) return make_host_backend();
    GpuBackendSettings settings;
    settings.host_threads = host_threads;
    return make_gpu_backend(0, settings);
  }
};

std::string kind_name(const testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::Host ? "Host" : "Gpu";
}

// One upload of `a` on `be`: the triangle bit for bit, the other strict triangle as it was, the
// scan as the plain loop's and the host backend's.
template <class S>
void check_upload(EngineBackend& be, const std::vector<S>& a, char uplo, long n, long lda,
                  const std::string& what) {
  SCOPED_TRACE(what + std::string(is_complex_v<S> ? " complex" : " real") + " uplo=" + uplo +
               " n=" + std::to_string(n) + " lda=" + std::to_string(lda));
  constexpr long words = words_per<S>;
  const S sentinel = S(-3.25);
  const std::vector<S> before(static_cast<std::size_t>(n) * n, sentinel);
  std::vector<S> after(before.size());
  double* dev = be.allocate(std::max(1L, n * n * words));
  be.copy_to_device(as_words(before.data()), dev, n * n * words);
  const EntryScan got = be.upload_triangle(uplo, n, a.data(), lda, elements_in<S>(dev), n);
  be.synchronize();
  be.copy_to_host(dev, as_words(after.data()), n * n * words);
  be.release(dev);
  long differ = 0, other_written = 0;
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) {
      const S& v = after[i + j * n];
      if (in_triangle(uplo == 'L', i, j))
        differ += !same_bits(v, a[i + j * lda]);
      else
        other_written += !same_bits(v, sentinel);
    }
  EXPECT_EQ(differ, 0) << "triangle entries that differ";
  EXPECT_EQ(other_written, 0) << "entries of the other triangle written";
  expect_same_scan(got, plain_scan(uplo, n, a.data(), lda), "scan against the plain loop");
  std::vector<S> copy(static_cast<std::size_t>(n) * n);
  expect_same_scan(got,
                   make_host_backend()->upload_triangle(uplo, n, a.data(), lda, copy.data(), n),
                   "scan against the host backend's");
}

// A NaN or an infinity at one random entry of the triangle (found), or of the other one
// (ignored); complex entries also with the value in the imaginary part only.
template <class S>
void check_one_value(EngineBackend& be, std::mt19937_64& rng, char uplo, long n, long lda) {
  const bool lower = uplo == 'L';
  for (double value : {kNan, -kInf})
    for (bool referenced : {true, false})
      for (bool imaginary : {false, true}) {
        if (imaginary && !is_complex_v<S>) continue;
        if (!referenced && n == 1) continue;
        std::vector<S> a = random_triangle<S>(rng, uplo, n, lda, S(0.5));
        std::uniform_int_distribution<long> pick(0, n - 1);
        long i = 0, j = 0;
        do {
          i = pick(rng);
          j = pick(rng);
        } while (in_triangle(lower, i, j) != referenced || (!referenced && i == j));
        S& entry = a[i + j * lda];
        if constexpr (is_complex_v<S>)
          entry = imaginary ? S(entry.real(), value) : S(value, entry.imag());
        else
          entry = value;
        check_upload(be, a, uplo, n, lda,
                     std::string(std::isnan(value) ? "NaN" : "-Inf") + (imaginary ? " (im)" : "") +
                         (referenced ? " in the triangle" : " in the other triangle") + " at (" +
                         std::to_string(i) + "," + std::to_string(j) + ")");
      }
}

TEST_P(UploadTriangle, TheTriangleArrivesAndIsScanned) {
  const auto seed = test::fresh_seed();
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Packed triangles of one pinned chunk up to several, with a short last one (a chunk is at
  // least 2^18 doubles: n = 725 is just past one chunk of real entries, 2001 several of complex).
  const std::vector<long> sizes = {1, 2, 3, 17, 64, 255, 725, 1000, 2001};
  for (int threads : GetParam() == Kind::Gpu ? std::vector<int>{1, 4} : std::vector<int>{1}) {
    SCOPED_TRACE("host threads=" + std::to_string(threads));
    const std::unique_ptr<EngineBackend> be = backend(threads);
    be->bind(MPI_COMM_SELF);
    for (long n : sizes)
      for (char uplo : {'L', 'U'})
        for (long lda : {n, n + 3}) {
          check_upload(*be, random_triangle<double>(rng, uplo, n, lda, kNan), uplo, n, lda,
                       "NaN in the other triangle");
          check_upload(*be, random_triangle<Complex>(rng, uplo, n, lda, Complex(kNan, kNan)), uplo,
                       n, lda, "NaN in the other triangle");
          if (n > 1000 || (n > 300 && lda != n)) continue;  // special values: fewer large sizes
          check_one_value<double>(*be, rng, uplo, n, lda);
          check_one_value<Complex>(*be, rng, uplo, n, lda);
        }
  }
}

// The first entry the packing reads, the last (the stream's last element, a vectorised loop's
// tail) and the first column's far end.
TEST_P(UploadTriangle, ValuesAtTheEnds) {
  const std::unique_ptr<EngineBackend> be = backend(3);
  be->bind(MPI_COMM_SELF);
  std::mt19937_64 rng(test::fresh_seed());
  for (long n : {1L, 9L, 725L})
    for (char uplo : {'L', 'U'}) {
      const std::vector<std::pair<long, long>> ends = {
          {0, 0},
          {n - 1, n - 1},
          uplo == 'L' ? std::pair<long, long>{n - 1, 0} : std::pair<long, long>{0, n - 1}};
      for (const auto& [i, j] : ends) {
        std::vector<double> a = random_triangle<double>(rng, uplo, n, n, kNan);
        a[i + j * n] = kInf;
        check_upload(*be, a, uplo, n, n, "Inf at an end");
        std::vector<Complex> c = random_triangle<Complex>(rng, uplo, n, n, Complex(kNan, 0));
        c[i + j * n] = Complex(0, kNan);
        check_upload(*be, c, uplo, n, n, "NaN (im) at an end");
      }
    }
}

// The one-stage path on `be` with and without the upload's scan, on A with NaN in the other
// triangle: W and Z the same bits (the solver reads the triangle only).
template <class S>
void check_one_stage(EngineBackend& be, std::mt19937_64& rng, char uplo, long n, bool vectors) {
  SCOPED_TRACE(std::string(is_complex_v<S> ? "complex" : "real") + " uplo=" + uplo +
               " n=" + std::to_string(n) + " vectors=" + (vectors ? "yes" : "no"));
  std::vector<S> a = random_triangle<S>(rng, uplo, n, n, S(kNan));
  if constexpr (is_complex_v<S>)  // a Hermitian diagonal, as a caller holds it
    for (long j = 0; j < n; ++j) a[j + j * n] = a[j + j * n].real();
  EngineLayout layout;
  layout.n = n;
  layout.col_begin = {0, n};
  layout.row_begin = {0, n};
  EngineOptions opt;
  opt.want_vectors = vectors;
  opt.symmetrize = uplo;
  std::vector<double> w_plain(n, -1.0), w_scanned(n, -1.0);
  std::vector<S> z_plain(static_cast<std::size_t>(n) * n, S(-1.0)), z_scanned = z_plain;
  ASSERT_EQ(run_one_stage(be, MPI_COMM_SELF, layout, a.data(), w_plain.data(), z_plain.data(), opt,
                          nullptr),
            0);
  UploadScan scan;
  scan.proceed = [](const EntryScan& found) { return !found.non_finite; };
  ASSERT_EQ(run_one_stage(be, MPI_COMM_SELF, layout, a.data(), w_scanned.data(), z_scanned.data(),
                          opt, nullptr, &scan),
            0);
  EXPECT_TRUE(scan.scanned);
  EXPECT_FALSE(scan.stopped);
  expect_same_scan(scan.found, plain_scan(uplo, n, a.data(), n), "the path's scan");
  EXPECT_EQ(std::memcmp(w_plain.data(), w_scanned.data(), sizeof(double) * n), 0) << "W";
  EXPECT_EQ(std::memcmp(z_plain.data(), z_scanned.data(), sizeof(S) * n * n), 0) << "Z";

  // Refused: nothing solved, W and Z untouched.
  std::vector<double> w(n, -2.0);
  std::vector<S> z(static_cast<std::size_t>(n) * n, S(-2.0));
  UploadScan refuse;
  refuse.proceed = [](const EntryScan&) { return false; };
  ASSERT_EQ(
      run_one_stage(be, MPI_COMM_SELF, layout, a.data(), w.data(), z.data(), opt, nullptr, &refuse),
      0);
  EXPECT_TRUE(refuse.scanned);
  EXPECT_TRUE(refuse.stopped);
  for (double v : w) ASSERT_EQ(v, -2.0);
  for (const S& v : z) ASSERT_TRUE(same_bits(v, S(-2.0)));
}

TEST_P(UploadTriangle, OneStagePathGivesTheSameBits) {
  const std::unique_ptr<EngineBackend> be = backend(2);
  std::mt19937_64 rng(test::fresh_seed());
  for (long n : {1L, 2L, 37L, 300L})
    for (char uplo : {'L', 'U'})
      for (bool vectors : {true, false}) {
        check_one_stage<double>(*be, rng, uplo, n, vectors);
        check_one_stage<Complex>(*be, rng, uplo, n, vectors);
      }
}

// ctest runs Host/ in CI (upload_triangle) and Gpu/ under the label gpu (gpu_upload_triangle).
INSTANTIATE_TEST_SUITE_P(Host, UploadTriangle, testing::Values(Kind::Host), kind_name);
INSTANTIATE_TEST_SUITE_P(Gpu, UploadTriangle, testing::Values(Kind::Gpu), kind_name);

}  // namespace
}  // namespace pipevd
