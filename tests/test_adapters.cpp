// The CPU comparison adapters (ScaLAPACK, ELPA 1-stage and 2-stage) through the harness's own
// accuracy code, on every grid shape of 1-4 ranks; the distributed measures against the gathered
// ones; and the harness's verdict: a wrong eigenvector matrix gets no time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "bench/peers/root_copy.hpp"
#include "bench/peers/solver.hpp"
#include "bench/run_record.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/blacs_grid.hpp"
#include "tests/support/distributed_accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"

namespace pipevd::test {
namespace {

solvers::Problem problem_of(const BlacsGrid& g, const DistributedMatrix& a) {
  solvers::Problem p;
  p.n = a.layout.n;
  p.desc = a.desc;
  p.ictxt = g.ictxt;
  p.nprow = g.nprow;
  p.npcol = g.npcol;
  p.myrow = g.myrow;
  p.mycol = g.mycol;
  p.local_rows = a.local_rows;
  p.local_cols = a.local_cols;
  return p;
}

std::vector<GridShape> grid_shapes() {
  const int size = world_size();
  std::vector<GridShape> shapes{squarest_grid(size), {1, size}, {size, 1}};
  shapes.erase(std::unique(shapes.begin(), shapes.end(),
                           [](GridShape x, GridShape y) {
                             return x.nprow == y.nprow && x.npcol == y.npcol;
                           }),
               shapes.end());
  return shapes;
}

bool built(const std::string& name, std::string* why) {
  for (const auto& s : solvers::known_solvers())
    if (s.name == name) {
      *why = s.absent_reason;
      return s.built;
    }
  *why = "unknown";
  return false;
}

// solver, n, nb, jobz
using Case = std::tuple<std::string, int, int, char>;
class CpuAdapter : public testing::TestWithParam<Case> {};

TEST_P(CpuAdapter, AccurateOnEveryGrid) {
  const auto [name, n, nb, jobz] = GetParam();
  std::string why;
  if (!built(name, &why)) GTEST_SKIP() << name << ": " << why;
  auto solver = solvers::make_solver(name, &why);
  ASSERT_NE(solver, nullptr) << why;
  EXPECT_EQ(solver->device(), "cpu");

  for (const GridShape shape : grid_shapes()) {
    SCOPED_TRACE(std::to_string(shape.nprow) + "x" + std::to_string(shape.npcol));
    BlacsGrid g(shape.nprow, shape.npcol);
    DistributedMatrix a(g, {n, n, nb, nb}), work(g, {n, n, nb, nb}), z(g, {n, n, nb, nb});
    a.fill([](long i, long j) { return random_symmetric_entry(i, j, 7); });
    work.local = a.local;
    const solvers::Problem p = problem_of(g, a);
    const std::string no = solver->unsupported(p);
    if (!no.empty()) {
      // Only ELPA declines, and only where some process holds no block of the matrix.
      EXPECT_NE(name, "scalapack") << no;
      EXPECT_LT(n, nb * std::max(shape.nprow, shape.npcol)) << no;
      continue;
    }
    std::vector<double> w(n, 0.0);
    const solvers::Outcome out = solver->solve(p, jobz, work.data(), w.data(), z.data());
    ASSERT_EQ(out.info, 0) << out.error;

    const std::vector<double> full_a = a.gather(g);
    const std::vector<double> w_lapack = lapack_eigenvalues(n, full_a);
    EXPECT_LE(eigenvalue_difference(w, w_lapack), kScalapackThreshold * n * DBL_EPSILON);
    if (jobz == 'V') {
      const double res = distributed_residual(n, a.data(), z.data(), a.desc, w);
      const double orth = distributed_orthogonality(n, z.data(), a.desc);
      EXPECT_LE(res, kScalapackThreshold);
      EXPECT_LE(orth, kScalapackThreshold);
      // The distributed measures are the gathered ones (tests/support/accuracy) up to the rounding
      // of the measurement itself, which is of the order of the unit (n eps) they are given in.
      const std::vector<double> full_z = z.gather(g);
      EXPECT_NEAR(res, residual(n, full_a, full_z, w), 0.5);
      EXPECT_NEAR(orth, orthogonality(n, full_z), 0.5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, CpuAdapter,
                         testing::Combine(testing::Values("scalapack", "elpa1", "elpa2"),
                                          testing::Values(1, 37, 96), testing::Values(8, 16),
                                          testing::Values('V', 'N')),
                         [](const testing::TestParamInfo<Case>& info) {
                           return std::get<0>(info.param) + "_n" +
                                  std::to_string(std::get<1>(info.param)) + "_nb" +
                                  std::to_string(std::get<2>(info.param)) + "_" +
                                  std::get<3>(info.param);
                         });

// The one-process GPU peers (cuSOLVER, cuSOLVERMg) see the matrix through RootCopy: the full
// matrix on grid process (0, 0) and the eigenvectors scattered back into the caller's layout.
TEST(RootCopy, GathersToProcessZeroAndScattersBack) {
  for (const GridShape shape : grid_shapes()) {
    SCOPED_TRACE(std::to_string(shape.nprow) + "x" + std::to_string(shape.npcol));
    BlacsGrid g(shape.nprow, shape.npcol);
    const int n = 45;
    DistributedMatrix a(g, {n, n, 4, 4}), back(g, {n, n, 4, 4});
    a.fill([](long i, long j) { return 1000.0 * i + j; });  // not symmetric: orientation shows
    const solvers::Problem p = problem_of(g, a);
    solvers::RootCopy copy(p, 7L * n);  // PDGEMR2D in panels of 7 columns (the last one 3)
    std::vector<double> full;
    copy.gather(a.data(), full);
    EXPECT_EQ(copy.is_root(), g.myrow == 0 && g.mycol == 0);
    if (copy.is_root()) {
      ASSERT_EQ(full.size(), size_t(n) * n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) ASSERT_EQ(full[i + size_t(j) * n], 1000.0 * i + j);
      for (double& x : full) x = -x;
    }
    copy.scatter(full, back.data());
    for (size_t k = 0; k < a.local.size(); ++k) ASSERT_EQ(back.local[k], -a.local[k]);
    std::vector<double> w(n, copy.is_root() ? 3.0 : 0.0);
    copy.broadcast(w.data());
    EXPECT_EQ(w, std::vector<double>(n, 3.0));
  }
}

TEST(Registry, EveryPeerIsKnownAndBuiltOnesConstruct) {
  const auto all = solvers::known_solvers();
  std::vector<std::string> names;
  for (const auto& s : all) {
    names.push_back(s.name);
    std::string why;
    auto made = solvers::make_solver(s.name, &why);
    EXPECT_EQ(made != nullptr, s.built) << s.name << ": " << why;
    if (!s.built) EXPECT_FALSE(s.absent_reason.empty()) << s.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"pipevd", "scalapack", "elpa1", "elpa2", "elpa1-gpu",
                                             "elpa2-gpu", "cusolver", "cusolvermg", "cusolvermp"}));
  std::string why;
  EXPECT_EQ(solvers::make_solver("lapack-on-a-napkin", &why), nullptr);
  EXPECT_NE(why.find("unknown"), std::string::npos);
}

TEST(Verdict, WrongEigenvectorsGetNoTime) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid g(shape.nprow, shape.npcol);
  const int n = 50;
  DistributedMatrix a(g, {n, n, 8, 8}), z(g, {n, n, 8, 8});
  a.fill([](long i, long j) { return random_symmetric_entry(i, j, 3); });
  // Z = I with the true eigenvalues: orthogonal, eigenvalues right, residual far off.
  z.fill([](long i, long j) { return i == j ? 1.0 : 0.0; });
  const std::vector<double> w = lapack_eigenvalues(n, a.gather(g));

  bench::RunRecord r;
  r.solver = "wrong";
  r.n = n;
  r.seconds = 0.125;
  r.accuracy.has_vectors = r.accuracy.has_reference = true;
  r.accuracy.residual = distributed_residual(n, a.data(), z.data(), a.desc, w);
  r.accuracy.orthogonality = distributed_orthogonality(n, z.data(), a.desc);
  r.accuracy.eigenvalue_diff = 0;
  EXPECT_GT(r.accuracy.residual, kScalapackThreshold);
  EXPECT_LE(r.accuracy.orthogonality, 1.0);
  EXPECT_EQ(bench::status(r, kScalapackThreshold), "accuracy-failed");
  const std::string json = bench::to_json(r, kScalapackThreshold);
  EXPECT_NE(json.find("\"time_s\":null"), std::string::npos) << json;
  EXPECT_EQ(json.find("0.125"), std::string::npos) << json;

  // Each measure alone vetoes the time; NaN never passes; all passing reports it.
  bench::Accuracy good{true, true, 1.0, 1.0, 0.0};
  EXPECT_TRUE(bench::accuracy_passed(good, n, kScalapackThreshold));
  for (int k = 0; k < 4; ++k) {
    bench::Accuracy bad = good;
    if (k == 0) bad.residual = 1e3;
    if (k == 1) bad.orthogonality = 1e3;
    if (k == 2) bad.eigenvalue_diff = 1e-6;
    if (k == 3) bad.residual = std::nan("");
    EXPECT_FALSE(bench::accuracy_passed(bad, n, kScalapackThreshold)) << k;
  }
  r.accuracy = good;
  EXPECT_NE(bench::to_json(r, kScalapackThreshold).find("\"time_s\":0.125"), std::string::npos);
  // The solver's path (pipevd: two_stage or one_stage) where it reported one, else null.
  EXPECT_NE(bench::to_json(r, kScalapackThreshold).find("\"path\":null"), std::string::npos);
  r.path = "one_stage";
  EXPECT_NE(bench::to_json(r, kScalapackThreshold).find("\"path\":\"one_stage\""),
            std::string::npos);
  // Where the matrix was formed (pipevd-bench --generate) where said, else no such field.
  EXPECT_EQ(bench::to_json(r, kScalapackThreshold).find("\"generated\""), std::string::npos);
  r.generated = "gpu";
  EXPECT_NE(bench::to_json(r, kScalapackThreshold).find("\"generated\":\"gpu\""),
            std::string::npos);
  r.info = 3;
  EXPECT_EQ(bench::status(r, kScalapackThreshold), "solver-failed");
  EXPECT_NE(bench::to_json(r, kScalapackThreshold).find("\"time_s\":null"), std::string::npos);
}

}  // namespace
}  // namespace pipevd::test
