// The GPU engine on several ranks, one GPU each (NCCL between them), against the host backend on
// as many ranks and against itself on one GPU:
//   - NCCL broadcast, send, receive, all-reduce and all-gather move exact data, also a message
//     over 2^30 elements;
//   - two engine ranks on one GPU are refused, and with PIPEVD_GPU_SHARING=1 talk through MPI (the
//     band, Q_sb and eigenvalue tests also run so on one GPU: gpu_multigpu_shared);
//   - DBBR's band and each rank's rows of Q_sb = Q_s Q_b equal the host backend's on the same
//     ranks (to rounding), and DBBR with Z formed on every rank equals it with Z formed on the
//     panel's owner;
//   - run_engine on all ranks gives the eigenvalues of run_engine on one GPU (to rounding), and a
//     gathered Z with residual and orthogonality under ScaLAPACK's threshold;
//   - the D&C's top merge folded into the final GEMM gives the unfolded run's eigenvalues and Z;
//   - DBBR on cyclic outer blocks (the columns moved there by NCCL) gives the blockwise run's
//     band and reflectors, and the engine with either the same eigenvalues (to rounding).
// Every rank drives GPU (node-local rank mod visible GPUs), as the engine route picks it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/column_exchange.hpp"
#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/reflector_store.hpp"
#include "core/sbr_back.hpp"
#include "gpu/gpu_backend.hpp"
#include "gpu/gpu_context.hpp"
#include "host/host_backend.hpp"
#include "interface/gpu_options.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/band_readback.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/hermitian.hpp"
#include "tests/support/vector_compare.hpp"

namespace pipevd {
namespace {

using Mat = std::vector<double>;
using test::max_abs;
using test::max_abs_diff;
using test::world_rank;
using test::world_size;

// The device the engine route gives this rank: its node-local rank modulo the visible GPUs.
int my_device() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  return local % gpu::visible_device_count();
}

Mat random_symmetric(long n, unsigned seed) {
  Mat a(static_cast<std::size_t>(n * n));
  for (long j = 0; j < n; ++j)
    for (long i = 0; i < n; ++i) a[i + j * n] = test::random_symmetric_entry(i, j, seed);
  return a;
}

// Ranks [0, E) of the world as one communicator (every rank calls; others get MPI_COMM_NULL).
MPI_Comm first_ranks(int e) {
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank() < e ? 0 : MPI_UNDEFINED, world_rank(), &c);
  return c;
}

TEST(MultiGpu, NcclMovesExactData) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  gpu::GpuBackend be(my_device());
  be.set_tuning(gpu_tuning(process_policy().policy));  // PIPEVD_GPU_SHARING where set
  be.bind(MPI_COMM_WORLD);
  ASSERT_TRUE(be.uses_nccl());
  const int rank = world_rank(), size = world_size();
  // Broadcast from the last rank: 3 x 1001 with rank-dependent values on the root only.
  const long m = 3, n = 1001;
  DeviceBuffer buf(be, m * n);
  if (rank == size - 1) be.fill_matrix(m, n, 2.5, -7.0, buf.get(), m);
  be.broadcast(buf.get(), m * n, size - 1);
  Mat got(m * n), want(m * n, 2.5);
  for (long i = 0; i < std::min(m, n); ++i) want[i + i * m] = -7.0;
  be.copy_to_host(buf.get(), got.data(), m * n);
  EXPECT_EQ(got, want);
  // A ring of sends (rank r -> r + 1) with odd counts, posted as the engine posts them: the
  // receiver of a pair first, so no rank waits on a send nobody receives.
  const long count = 12345 + rank;
  DeviceBuffer out(be, count), in(be, 12345 + (rank + size - 1) % size);
  be.fill_matrix(count, 1, rank + 1.0, rank + 1.0, out.get(), count);  // every entry rank + 1
  for (int step = 0; step < size; ++step) {
    if (rank == step) be.send(out.get(), count, (rank + 1) % size, 0);
    if ((rank + size - 1) % size == step) be.recv(in.get(), 12345 + step, step, 0);
  }
  Mat r(12345 + (rank + size - 1) % size);
  be.copy_to_host(in.get(), r.data(), static_cast<long>(r.size()));
  const double from = (rank + size - 1) % size + 1.0;
  EXPECT_EQ(std::count(r.begin(), r.end(), from), static_cast<long>(r.size()));
}

// DBBR's sums over the ranks (Yb^T W, Zb^T W, W^T A W) and its gather of Z's rows: exact, with
// parts of unequal size, one of them empty (rank 1's), as the rows of ranks left of a panel are.
TEST(MultiGpu, AllReduceAndAllGatherMoveExactData) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  gpu::GpuBackend be(my_device());
  be.set_tuning(gpu_tuning(process_policy().policy));  // PIPEVD_GPU_SHARING where set
  be.bind(MPI_COMM_WORLD);
  const int rank = world_rank(), size = world_size();
  const long count = 1001;
  DeviceBuffer sum(be, count);
  be.fill_matrix(count, 1, rank + 1.0, rank + 1.0, sum.get(), count);
  be.all_reduce_sum(sum.get(), count);
  Mat got(count);
  be.copy_to_host(sum.get(), got.data(), count);
  EXPECT_EQ(std::count(got.begin(), got.end(), size * (size + 1) / 2.0), count);
  std::vector<long> begin(size + 1, 0);
  for (int q = 0; q < size; ++q) begin[q + 1] = begin[q] + (q == 1 ? 0 : 777 + 13 * q);
  DeviceBuffer parts(be, begin[size]);
  const long mine = begin[rank + 1] - begin[rank];
  if (mine > 0) be.fill_matrix(mine, 1, rank + 1.0, rank + 1.0, parts.get() + begin[rank], mine);
  be.all_gather(parts.get(), begin);
  Mat all(begin[size]);
  be.copy_to_host(parts.get(), all.data(), begin[size]);
  for (int q = 0; q < size; ++q)
    EXPECT_EQ(std::count(all.begin() + begin[q], all.begin() + begin[q + 1], q + 1.0),
              begin[q + 1] - begin[q])
        << "part " << q;
}

TEST(MultiGpu, BroadcastOverTwoToTheThirtyElements) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  gpu::GpuBackend be(my_device());
  be.set_tuning(gpu_tuning(process_policy().policy));  // PIPEVD_GPU_SHARING where set
  be.bind(MPI_COMM_WORLD);
  const long count = (1L << 30) + 5;  // 8 GiB: cut into two NCCL pieces
  DeviceBuffer buf(be, count);
  if (world_rank() == 0) {
    be.fill_matrix(count, 1, 3.0, 3.0, buf.get(), count);
    be.fill_matrix(1, 1, 11.0, 11.0, buf.get() + count - 1, 1);
  }
  be.broadcast(buf.get(), count, 0);
  double head = 0, mid = 0, tail = 0;
  be.copy_to_host(buf.get(), &head, 1);
  be.copy_to_host(buf.get() + (1L << 30), &mid, 1);
  be.copy_to_host(buf.get() + count - 1, &tail, 1);
  EXPECT_EQ(head, 3.0);
  EXPECT_EQ(mid, 3.0);
  EXPECT_EQ(tail, 11.0);
}

TEST(MultiGpu, TwoEngineRanksOnOneGpuAreRefusedUnlessShared) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm pair = first_ranks(2);
  if (pair == MPI_COMM_NULL) return;
  {
    gpu::GpuBackend be(0);
    EXPECT_THROW(be.bind(pair), gpu::GpuError);
  }
  {
    gpu::GpuBackend be(0);
    gpu::GpuTuning shared;
    shared.sharing = true;  // PIPEVD_GPU_SHARING=1
    be.set_tuning(shared);
    be.bind(pair);
    EXPECT_FALSE(be.uses_nccl());
    DeviceBuffer buf(be, 777);
    if (world_rank() == 1) be.fill_matrix(777, 1, 4.0, 4.0, buf.get(), 777);
    be.broadcast(buf.get(), 777, 1);
    Mat got(777);
    be.copy_to_host(buf.get(), got.data(), 777);
    EXPECT_EQ(std::count(got.begin(), got.end(), 4.0), 777);
  }
  MPI_Comm_free(&pair);
}

// The engine's stages 1, 2 and 4 on this rank: the band (every rank holds all of it) and this
// rank's rows of Q_sb = Q_s Q_b.
struct Stages {
  Mat band, qsb;
};

Stages stages(EngineBackend& be, MPI_Comm comm, const EngineLayout& L, const Mat& a, long b,
              long k) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  be.bind(comm);
  const long n = L.n, bw = effective_bandwidth(n, b);
  const long w = L.width(rank), h = L.height(rank), r0 = L.row_begin[rank], ldx = std::max(1L, h);
  DeviceBuffer da(be, n * w);
  be.copy_to_device(a.data() + L.col_begin[rank] * n, da.get(), n * w);
  const DbbrOptions opt{b, k, true};
  ReflectorPanels panels = reduce_to_band(be, L, rank, da.get(), opt);
  DeviceBuffer ab = gather_band(be, L, rank, da.get(), opt);
  Stages s;
  s.band.resize(n * (bw + 1));
  be.copy_to_host(ab.get(), s.band.data(), n * (bw + 1));
  Mat d(n), e(n);
  ReflectorStore u;
  be.bulge_chase(n, bw, ab.get(), bw + 1, d.data(), e.data(), u);
  DeviceBuffer x(be, ldx * n);
  be.fill_matrix(h, n, 0.0, 0.0, x.get(), ldx);
  be.fill_matrix(h, h, 0.0, 1.0, x.get() + r0 * ldx, ldx);
  const auto blocks = merge_reflector_panels(be, panels, k, true);
  apply_sbr_back(be, blocks, h, x.get(), ldx);
  if (h > 0) be.bc_back(u, h, x.get(), ldx);
  s.qsb.resize(ldx * n);
  be.copy_to_host(x.get(), s.qsb.data(), h > 0 ? ldx * n : 0);
  be.synchronize();
  return s;
}

TEST(MultiGpu, BandAndQsbRowsEqualHostOnTheSameRanks) {
  for (long n : {777L, 1999L}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const long b = 32, k = 256;
    const EngineLayout L = plan_engine_layout(n, world_size(), b);
    const Mat a = random_symmetric(n, static_cast<unsigned>(n + 5));
    HostBackend host;
    gpu::GpuBackend gpu(my_device());
    gpu.set_tuning(gpu_tuning(process_policy().policy));
    // The last rank's panels take A W through the one-triangle kernel at these sizes too (the
    // engine's default from 8192 rows on a device that has it).
    gpu.set_symmetric_product_min_rows(1);
    const Stages h = stages(host, MPI_COMM_WORLD, L, a, b, k);
    const Stages g = stages(gpu, MPI_COMM_WORLD, L, a, b, k);
    const double tol = 100.0 * n * DBL_EPSILON;
    EXPECT_LT(max_abs_diff(g.band, h.band) / max_abs(a), tol) << "band";
    EXPECT_LT(max_abs_diff(g.qsb, h.qsb), 10 * tol) << "Q_sb rows";
  }
}

// DBBR on the world's ranks from the full matrix a: the band (every rank) and Q_s's panels' W and
// Y, read back; real symmetric or complex Hermitian.
template <class T>
test::BandReadback<T> band_of(EngineBackend& be, const EngineLayout& L, const std::vector<T>& a,
                              const DbbrOptions& opt) {
  const int rank = world_rank();
  const long n = L.n, width = L.width(rank);
  BasicDeviceBuffer<T> da(be, n * width);
  be.copy_to_device(a.data() + L.col_begin[rank] * n, da.get(), n * width);
  return test::reduce_and_read_back(be, L, rank, da.get(), opt);
}

// Both of DBBR's Z schemes on `a` (the GPU backend, NCCL where the ranks have their own GPUs):
// the same band and reflectors to rounding (the sums' order differs).
template <class T>
void expect_z_schemes_agree(const std::vector<T>& a, long n) {
  const long b = 32, k = 256;
  const EngineLayout L = plan_engine_layout(n, world_size(), b);
  gpu::GpuBackend be(my_device());
  be.set_tuning(gpu_tuning(process_policy().policy));
  be.bind(MPI_COMM_WORLD);
  DbbrOptions opt{b, k, true};
  const test::BandReadback<T> every = band_of(be, L, a, opt);
  opt.z_on_every_rank = false;
  const test::BandReadback<T> owner = band_of(be, L, a, opt);
  const double tol = 100.0 * n * DBL_EPSILON;
  EXPECT_LT(max_abs_diff(every.band, owner.band) / max_abs(a), tol) << "band";
  ASSERT_EQ(every.w.size(), owner.w.size());
  for (std::size_t p = 0; p < every.w.size(); ++p) {
    EXPECT_LT(max_abs_diff(every.w[p], owner.w[p]), tol) << "W " << p;
    EXPECT_LT(max_abs_diff(every.y[p], owner.y[p]), tol) << "Y " << p;
  }
}

// Z formed on every rank (its rows, the sums all-reduced by NCCL, the rows gathered) against Z
// formed on the panel's owner, real and complex.
TEST(MultiGpu, ZOnEveryRankEqualsZOnTheOwner) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  for (long n : {777L, 1999L}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " real");
    expect_z_schemes_agree(random_symmetric(n, static_cast<unsigned>(n + 9)), n);
  }
  for (long n : {777L, 1201L}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " complex");
    std::vector<double> lambda(n);
    for (long i = 0; i < n; ++i) lambda[i] = -1.0 + 2.0 * static_cast<double>(i) / n;
    expect_z_schemes_agree(test::hermitian_with_eigenvalues(lambda, static_cast<unsigned>(n)), n);
  }
}

// run_engine on `comm` (ranks of the world from 0) with this rank's columns of a; Z gathered to
// every rank of comm.
struct EngineRun {
  Mat w, z;
  int info = 0;
  EngineStats stats;
};

EngineRun engine_on(MPI_Comm comm, const Mat& a, long n, const EngineOptions& opt = {}) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const EngineLayout L = plan_engine_layout(n, size, opt.b);
  gpu::GpuBackend be(my_device());
  be.set_tuning(gpu_tuning(process_policy().policy));  // PIPEVD_GPU_SHARING where set
  const long h = L.height(rank);
  Mat rows(std::max(1L, h) * n);
  EngineRun r;
  r.w.assign(n, 0.0);
  r.info = run_engine(be, comm, L, a.data() + L.col_begin[rank] * n, r.w.data(), rows.data(), opt,
                      &r.stats);
  // Gather the row blocks into the full Z (column by column through one Allgatherv per rank's
  // block: the block is h x n column-major, placed at rows [r0, r0 + h)).
  r.z.assign(n * n, 0.0);
  for (int q = 0; q < size; ++q) {
    const long hq = L.height(q);
    Mat blk(std::max(1L, hq) * n);
    if (q == rank) blk = rows;
    MPI_Bcast(blk.data(), static_cast<int>(blk.size()), MPI_DOUBLE, q, comm);
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < hq; ++i) r.z[L.row_begin[q] + i + j * n] = blk[i + j * std::max(1L, hq)];
  }
  return r;
}

TEST(MultiGpu, AllGpusAndOneGpuGiveTheSameEigenvalues) {
  for (long n : {1999L, 2500L}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Mat a = random_symmetric(n, static_cast<unsigned>(3 * n + 1));
    const EngineRun all = engine_on(MPI_COMM_WORLD, a, n);
    ASSERT_EQ(all.info, 0);
    // One GPU: every rank alone on its own GPU (the same problem, E = 1).
    const EngineRun one = engine_on(MPI_COMM_SELF, a, n);
    ASSERT_EQ(one.info, 0);
    EXPECT_LT(test::eigenvalue_difference(all.w, one.w), 1e-12);
    const int ni = static_cast<int>(n);
    EXPECT_LT(test::residual(ni, a, all.z, all.w), test::kScalapackThreshold);
    EXPECT_LT(test::orthogonality(ni, all.z), test::kScalapackThreshold);
  }
}

// The D&C's top merge folded into the final GEMM (rank 0's Q_pre and M broadcast over NCCL, every
// rank's Z = (X Q_pre) M) against the whole Q_d on the same ranks: the same eigenvalues bitwise, Z
// to rounding, residual and orthogonality under ScaLAPACK's threshold.
TEST(MultiGpu, FoldedAndWholeDcGiveTheSameEigenvalues) {
  for (long n : {1999L, 2500L}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Mat a = random_symmetric(n, static_cast<unsigned>(5 * n + 3));
    EngineOptions opt;
    opt.tridiagonal = TridiagonalSolver::Dc;
    const EngineRun whole = engine_on(MPI_COMM_WORLD, a, n, opt);
    opt.dc_fold = true;
    const EngineRun folded = engine_on(MPI_COMM_WORLD, a, n, opt);
    ASSERT_EQ(whole.info, 0);
    ASSERT_EQ(folded.info, 0);
    EXPECT_TRUE(folded.stats.dc_folded);
    EXPECT_FALSE(whole.stats.dc_folded);
    EXPECT_EQ(folded.w, whole.w);
    EXPECT_LT(max_abs_diff(folded.z, whole.z), 1e-10);
    const int ni = static_cast<int>(n);
    EXPECT_LT(test::residual(ni, a, folded.z, folded.w), test::kScalapackThreshold);
    EXPECT_LT(test::orthogonality(ni, folded.z), test::kScalapackThreshold);
  }
}

// DBBR's cyclic outer blocks on the GPUs: the layout's columns moved there by NCCL's point-to-point
// messages (each rank's cyclic columns exactly), then the band and the reflectors equal the
// blockwise run's to rounding (the last outer block's owner, which holds every trailing row, takes
// A W through the one-triangle kernel as the blockwise last rank does).
template <class T>
void expect_cyclic_equals_blockwise(const std::vector<T>& a, long n, long k) {
  const long b = 32;
  const int rank = world_rank();
  const EngineLayout L = plan_engine_layout(n, world_size(), b);
  gpu::GpuBackend gpu(my_device());
  gpu.set_tuning(gpu_tuning(process_policy().policy));
  gpu.set_symmetric_product_min_rows(1);
  gpu.bind(MPI_COMM_WORLD);
  EngineBackend& be = gpu;  // its complex copies
  DbbrOptions opt{b, k, true};
  const test::BandReadback<T> blockwise = band_of(be, L, a, opt);
  opt.cyclic_blocks = true;
  const DbbrColumns from = DbbrColumns::blockwise(L), to = dbbr_columns(L, opt);
  BasicDeviceBuffer<T> uploaded(be, n * L.width(rank)), moved(be, n * to.width(rank));
  be.copy_to_device(a.data() + L.col_begin[rank] * n, uploaded.get(), n * L.width(rank));
  exchange_columns(be, from, to, rank, uploaded.get(), moved.get());
  std::vector<T> got(n * to.width(rank)), want(got.size());
  be.copy_to_host(moved.get(), got.data(), static_cast<long>(got.size()));
  for (const ColumnSegment& s : to.segments(rank))
    std::copy(a.begin() + s.begin * n, a.begin() + s.end * n, want.begin() + s.local * n);
  EXPECT_TRUE(got == want) << "the columns moved into the cyclic outer blocks";
  const test::BandReadback<T> cyclic = test::reduce_and_read_back(be, L, rank, moved.get(), opt);
  const double tol = 100.0 * n * DBL_EPSILON;
  EXPECT_LT(max_abs_diff(cyclic.band, blockwise.band) / max_abs(a), tol) << "band";
  ASSERT_EQ(cyclic.w.size(), blockwise.w.size());
  for (std::size_t p = 0; p < cyclic.w.size(); ++p) {
    EXPECT_LT(max_abs_diff(cyclic.w[p], blockwise.w[p]), tol) << "W " << p;
    EXPECT_LT(max_abs_diff(cyclic.y[p], blockwise.y[p]), tol) << "Y " << p;
  }
}

TEST(MultiGpu, CyclicOuterBlocksEqualBlockwise) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  for (long n : {777L, 1999L}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " real");
    expect_cyclic_equals_blockwise(random_symmetric(n, static_cast<unsigned>(n + 13)), n, 128);
  }
  {
    SCOPED_TRACE("n=1201 complex");
    const long n = 1201;
    std::vector<double> lambda(n);
    for (long i = 0; i < n; ++i) lambda[i] = -1.0 + 2.0 * static_cast<double>(i) / n;
    expect_cyclic_equals_blockwise(test::hermitian_with_eigenvalues(lambda, 7), n, 128);
  }
}

// Z's residual and orthogonality under ScaLAPACK's threshold.
void expect_accurate(const Mat& a, long n, const EngineRun& r) {
  const int ni = static_cast<int>(n);
  EXPECT_LT(test::residual(ni, a, r.z, r.w), test::kScalapackThreshold);
  EXPECT_LT(test::orthogonality(ni, r.z), test::kScalapackThreshold);
}

// The engine on every rank under opt, then under opt as `edit` changes it: both runs, each with
// INFO = 0.
template <class Edit>
std::pair<EngineRun, EngineRun> engine_before_after(const Mat& a, long n, EngineOptions opt,
                                                    Edit edit) {
  EngineRun before = engine_on(MPI_COMM_WORLD, a, n, opt);
  edit(opt);
  EngineRun after = engine_on(MPI_COMM_WORLD, a, n, opt);
  EXPECT_EQ(before.info, 0);
  EXPECT_EQ(after.info, 0);
  return {std::move(before), std::move(after)};
}

// SBR-back beside DBBR (the companion's stream waits for each outer block's panels by an event)
// against beside bulge chasing on the same ranks, DBBR's columns blockwise and cyclic: the same
// eigenvalues bitwise (DBBR and the chase do the same work), Z to rounding (the same GEMMs, on a
// stream that runs beside other work), residual and orthogonality under ScaLAPACK's threshold.
TEST(MultiGpu, BesideDbbrAndBesideChaseGiveTheSameEigenvalues) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  for (const bool cyclic : {false, true})
    for (long n : {1999L, 2500L}) {
      SCOPED_TRACE("n=" + std::to_string(n) + (cyclic ? " cyclic" : " blockwise"));
      const Mat a = random_symmetric(n, static_cast<unsigned>(11 * n + 5));
      EngineOptions opt;
      opt.k = 256;
      opt.dbbr_cyclic_blocks = cyclic;
      opt.overlap_sbr_back = true;
      const auto [chase, dbbr] =
          engine_before_after(a, n, opt, [](EngineOptions& o) { o.sbr_back_beside_dbbr = true; });
      EXPECT_TRUE(test::bitwise_equal(dbbr.w, chase.w)) << "eigenvalues";
      EXPECT_LT(test::max_abs_diff(dbbr.z, chase.z), 1e-10) << "Z";
      expect_accurate(a, n, dbbr);
    }
}

// The engine with DBBR's columns cyclic (moved after the upload) and blockwise: the
// same eigenvalues to rounding, each Z under ScaLAPACK's thresholds.
TEST(MultiGpu, EngineWithCyclicAndBlockwiseDbbrColumns) {
  for (long n : {1999L, 2500L}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Mat a = random_symmetric(n, static_cast<unsigned>(7 * n + 1));
    EngineOptions opt;
    opt.k = 256;
    opt.dbbr_cyclic_blocks = true;
    const auto [cyclic, blockwise] =
        engine_before_after(a, n, opt, [](EngineOptions& o) { o.dbbr_cyclic_blocks = false; });
    EXPECT_LT(test::eigenvalue_difference(cyclic.w, blockwise.w), 1e-12);
    for (const EngineRun* r : {&cyclic, &blockwise}) expect_accurate(a, n, *r);
  }
}

}  // namespace
}  // namespace pipevd
