// SBR-back's two orders (core/sbr_back.hpp), real and complex, one test body per check over the
// backends (a Host/ and a Gpu/ instance), on merged blocks from the backend's panel QR of random
// panels laid out as DBBR's (panel j on rows [(j + 1) b, n), the last ones shorter than b), merged
// k / b at a time: n odd and not a multiple of b or k, one panel per block, one block for all.
// On a rank that holds every row, Q_s formed from the left in reverse order equals the product
// from the right to rounding and is unitary; on part of the rows, and with the right order forced
// on every row, apply_sbr_back is bitwise the product from the right (the multi-rank path as it
// was). Results computed twice must be bitwise identical (a moving result is a race).
//
// The host backend runs on one rank (sbr_back_order.np1); the GPU backend on one GPU
// (gpu_sbr_back_order.np1, label gpu), also at the engine's default b and k, where it is skipped
// without a CUDA device (failed with PIPEVD_REQUIRE_GPU=1).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/backend_factory.hpp"
#include "core/sbr_back.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/gpu_instance.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/reduction_shape.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using test::bitwise_equal;
using test::max_abs_diff;
using Shape = test::ReductionShape;
using test::name;

enum class Backend { Host, Gpu };

// Odd n, n a multiple of neither b nor k; one panel per block (k = b), several, one block for all
// (k >= n). The GPU also runs the engine's default blocking over a few merged blocks.
std::vector<Shape> test_shapes(Backend backend) {
  std::vector<Shape> v = {{37, 4, 12}, {101, 8, 32},  {100, 8, 1024}, {77, 4, 4},
                          {3, 2, 2},   {257, 32, 32}, {513, 16, 96}};
  if (backend == Backend::Gpu)
    for (Shape s : {Shape{2000, 32, 1024}, Shape{2501, 32, 1024}, Shape{1537, 32, 256}})
      v.push_back(s);
  return v;
}

std::vector<double> random_entries(long count, unsigned seed, double*) {
  return test::random_vector(count, seed);
}
std::vector<Complex> random_entries(long count, unsigned seed, Complex*) {
  return test::random_complex_vector(count, seed);
}

double orthogonality(int n, const std::vector<double>& q) { return test::orthogonality(n, q); }
double orthogonality(int n, const std::vector<Complex>& q) {
  return test::unitary_orthogonality(n, q);
}

// Q_s's merged blocks for s: DBBR's panels (width b on rows [j + b, n) for j = 0, b, ... while at
// least two rows remain), each the backend's panel QR of a random panel, merged k / b at a time.
template <class T>
std::vector<BasicMergedReflectorBlock<T>> random_blocks(EngineBackend& be, const Shape& s,
                                                        unsigned seed) {
  BasicReflectorPanels<T> panels;
  panels.n = s.n;
  panels.b = s.b;
  for (long j = 0; s.n - j - s.b >= 2; j += s.b) {
    BasicReflectorPanel<T> p;
    p.row0 = j + s.b;
    p.m = s.n - p.row0;
    p.width = s.b;
    const std::vector<T> a =
        random_entries(p.m * p.width, seed + static_cast<unsigned>(j), static_cast<T*>(nullptr));
    BasicDeviceBuffer<T> da(be, p.m * p.width);
    be.copy_to_device(a.data(), da.get(), p.m * p.width);
    p.w = BasicDeviceBuffer<T>(be, p.m * p.width);
    p.y = BasicDeviceBuffer<T>(be, p.m * p.width);
    be.panel_qr(p.m, p.width, da.get(), p.m, p.w.get(), p.m, p.y.get(), p.m);
    panels.panels.push_back(std::move(p));
  }
  return merge_reflector_panels(be, panels, s.k);
}

// Rows [r0, r0 + h) of I Q_s by apply_sbr_back in `order` (or, with `right_product`, by
// multiply_by_q_s itself), read back with ld max(1, h).
template <class T>
std::vector<T> q_s_rows(EngineBackend& be, const std::vector<BasicMergedReflectorBlock<T>>& blocks,
                        long n, long r0, long h, SbrBackOrder order, bool right_product = false) {
  const long ld = std::max(1L, h);
  BasicDeviceBuffer<T> x(be, ld * n);  // zero-filled
  if (h > 0) be.fill_matrix(h, h, T(0), T(1), x.get() + r0 * ld, ld);
  if (right_product)
    multiply_by_q_s(be, blocks, h, x.get(), ld);
  else
    apply_sbr_back(be, blocks, h, x.get(), ld, order);
  std::vector<T> v(ld * n);
  be.copy_to_host(x.get(), v.data(), ld * n);
  be.synchronize();
  return v;
}

class SbrBackOrders : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::Gpu) test::skip_gpu_instance_without_device();
  }
  std::unique_ptr<EngineBackend> bound_backend() const {
    std::unique_ptr<EngineBackend> be = GetParam() == Backend::Host
                                            ? make_host_backend()
                                            : make_gpu_backend(0, GpuBackendSettings{});
    be->bind(MPI_COMM_SELF);
    return be;
  }
  // check(be, n, blocks) on each shape's random merged blocks, real and complex.
  template <class Check>
  void for_each_case(unsigned seed, const Check& check) const {
    const std::unique_ptr<EngineBackend> be = bound_backend();
    for (const Shape& s : test_shapes(GetParam())) {
      SCOPED_TRACE(name(s));
      {
        SCOPED_TRACE("real");
        check(*be, s.n, random_blocks<double>(*be, s, seed));
      }
      {
        SCOPED_TRACE("complex");
        check(*be, s.n, random_blocks<Complex>(*be, s, seed + 1));
      }
    }
  }
};

// Every row: the left order against the right one, to rounding, and unitary.
TEST_P(SbrBackOrders, LeftOrderOnEveryRowEqualsRightOrder) {
  for_each_case(41, [](EngineBackend& be, long n, const auto& blocks) {
    const auto left = q_s_rows(be, blocks, n, 0, n, SbrBackOrder::Auto);
    const auto right = q_s_rows(be, blocks, n, 0, n, SbrBackOrder::Right);
    // Q_s's entries are at most 1 and each sums O(n) rounded products.
    EXPECT_LT(max_abs_diff(left, right), 4 * DBL_EPSILON * n) << blocks.size() << " blocks";
    EXPECT_LT(orthogonality(static_cast<int>(n), left), 20.0);
    EXPECT_TRUE(bitwise_equal(left, q_s_rows(be, blocks, n, 0, n, SbrBackOrder::Auto)))
        << "left order run twice";
  });
}

// Part of the rows (auto), and every row with the right order forced: multiply_by_q_s's bits.
TEST_P(SbrBackOrders, PartOfTheRowsAndForcedRightOrderAreTheRightProduct) {
  for_each_case(47, [](EngineBackend& be, long n, const auto& blocks) {
    const auto right_product = [&](long r0, long h) {
      return q_s_rows(be, blocks, n, r0, h, SbrBackOrder::Auto, /*right_product=*/true);
    };
    EXPECT_TRUE(
        bitwise_equal(q_s_rows(be, blocks, n, 0, n, SbrBackOrder::Right), right_product(0, n)))
        << "every row, right order forced";
    for (auto [r0, h] : {std::pair<long, long>{0, n - 1},
                         {1, n - 1},
                         {n / 3, std::min(5L, n - n / 3)},
                         {n - 1, 1},
                         {0, 0}})
      for (SbrBackOrder order : {SbrBackOrder::Auto, SbrBackOrder::Right})
        EXPECT_TRUE(bitwise_equal(q_s_rows(be, blocks, n, r0, h, order), right_product(r0, h)))
            << "rows " << r0 << ".." << r0 + h
            << (order == SbrBackOrder::Auto ? " auto" : " right");
  });
}

std::string backend_name(const testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::Host ? "host" : "gpu";
}

// ctest runs Host/ as sbr_back_order.np1 and Gpu/ as gpu_sbr_back_order.np1 (label gpu).
INSTANTIATE_TEST_SUITE_P(Host, SbrBackOrders, testing::Values(Backend::Host), backend_name);
INSTANTIATE_TEST_SUITE_P(Gpu, SbrBackOrders, testing::Values(Backend::Gpu), backend_name);

}  // namespace
}  // namespace pipevd
