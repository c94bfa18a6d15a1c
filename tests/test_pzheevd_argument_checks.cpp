// PZHEEVD's argument checks: every bad argument gets the INFO ScaLAPACK's PZHEEVD gives, with
// WORK(1), RWORK(1) and IWORK(1) written (or not) exactly as it writes them and nothing else
// touched; workspace queries (LWORK, LRWORK or LIWORK = -1) give its answers. Each case runs
// through pipevd_pzheevd and through ScaLAPACK's own pzheevd_ in the same process, on every rank,
// over several grids.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "bench/peers/scalapack/scalapack_reference.hpp"
#include "include/pipevd.h"
#include "tests/support/argument_check_grids.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd::test {
namespace {

using namespace pipevd::scalapack;
using Complex = std::complex<double>;

struct Args {
  // Strings, so that ScaLAPACK gets their true Fortran length.
  std::string jobz = "V", uplo = "L";
  int n = 37, ia = 1, ja = 1, iz = 1, jz = 1, lwork = 0, lrwork = 0, liwork = 0;
  int desca[9] = {}, descz[9] = {};
};

struct Outcome {
  int info;
  double work0, rwork0;
  int iwork0;
  bool rest_untouched;  // A, W, Z, WORK(2:), RWORK(2:), IWORK(2:) as they were before the call
};

constexpr int kInfoSentinel = 12345;
constexpr double kWorkSentinel = -1.0;
constexpr int kIworkSentinel = -1;

using Caller =
    std::function<void(Args&, Complex*, double*, Complex*, Complex*, double*, int*, int*)>;

// Runs one call through fn with private copies of every array, sized generously so a bad
// descriptor or workspace size is only a number, never an overflow.
Outcome run(const Caller& fn, Args args) {
  auto a_value = [](size_t i) { return Complex(1.0 + static_cast<double>(i % 97), 0.5); };
  std::vector<Complex> a(200 * 200), z(200 * 200, 7.0), work(200000, kWorkSentinel);
  for (size_t i = 0; i < a.size(); ++i) a[i] = a_value(i);
  std::vector<double> w(600, 3.0), rwork(100000, kWorkSentinel);
  std::vector<int> iwork(40000, kIworkSentinel);
  int info = kInfoSentinel;
  fn(args, a.data(), w.data(), z.data(), work.data(), rwork.data(), iwork.data(), &info);
  bool same =
      std::all_of(z.begin(), z.end(), [](Complex v) { return v == 7.0; }) &&
      std::all_of(w.begin(), w.end(), [](double v) { return v == 3.0; }) &&
      std::all_of(work.begin() + 1, work.end(), [](Complex v) { return v == kWorkSentinel; }) &&
      std::all_of(rwork.begin() + 1, rwork.end(), [](double v) { return v == kWorkSentinel; }) &&
      std::all_of(iwork.begin() + 1, iwork.end(), [](int v) { return v == kIworkSentinel; });
  for (size_t i = 0; i < a.size() && same; ++i) same = a[i] == a_value(i);
  return {info, work[0].real(), rwork[0], iwork[0], same};
}

Outcome via_pipevd(const Args& args) {
  return run(
      [](Args& g, Complex* a, double* w, Complex* z, Complex* work, double* rwork, int* iwork,
         int* info) {
        pipevd_pzheevd(g.jobz.c_str(), g.uplo.c_str(), &g.n, a, &g.ia, &g.ja, g.desca, w, z, &g.iz,
                       &g.jz, g.descz, work, &g.lwork, rwork, &g.lrwork, iwork, &g.liwork, info);
      },
      args);
}

Outcome via_scalapack(const Args& args) {
  return run(
      [](Args& g, Complex* a, double* w, Complex* z, Complex* work, double* rwork, int* iwork,
         int* info) {
        const pzheevd_fn fn = scalapack_pzheevd();
        const bool lower = !g.uplo.empty() && (g.uplo[0] == 'L' || g.uplo[0] == 'l');
        paint_stack(lower ? 1 : 0);
        fn(g.jobz.c_str(), g.uplo.c_str(), &g.n, a, &g.ia, &g.ja, g.desca, w, z, &g.iz, &g.jz,
           g.descz, work, &g.lwork, rwork, &g.lrwork, iwork, &g.liwork, info, g.jobz.size(),
           g.uplo.size());
      },
      args);
}

// Both sides agree on INFO, WORK(1), RWORK(1), IWORK(1), and on leaving everything else alone.
void expect_same(const Args& g, const std::string& what, bool bad_call) {
  const Outcome ours = via_pipevd(g), theirs = via_scalapack(g);
  const std::string where = what + " (rank " + std::to_string(world_rank()) + ")";
  EXPECT_EQ(ours.info, theirs.info) << where;
  EXPECT_EQ(ours.work0, theirs.work0) << where;
  EXPECT_EQ(ours.rwork0, theirs.rwork0) << where;
  EXPECT_EQ(ours.iwork0, theirs.iwork0) << where;
  EXPECT_TRUE(ours.rest_untouched) << where;
  EXPECT_TRUE(theirs.rest_untouched) << where;
  if (bad_call) EXPECT_LT(theirs.info, 0) << where << ": the case is not a bad call";
}

// Any of the three workspace sizes at -1 is a query, whatever the other two hold (as long as
// LWORK and LRWORK are not too small).
TEST(PzheevdArgumentChecks, WorkspaceQueriesEqualScalapack) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    for (int n : {1, 5, 37, 100})
      for (int nb : {1, 4, 32})
        for (int src : {0, 1})
          for (int off : {0, 1}) {  // IA = JA = IZ = JZ = off*NB + 1
            const int rsrc = src % gc.nprow, csrc = (gc.nprow - 1 + src) % gc.npcol;
            const int m = n + off * nb;
            if (m > 130) continue;  // keeps the local arrays within run()'s
            for (int which : {0, 1, 2}) {
              Args g;
              g.n = n;
              g.ia = g.ja = g.iz = g.jz = off * nb + 1;
              g.lwork = which == 0 ? -1 : 200000;
              g.lrwork = which == 1 ? -1 : 100000;
              g.liwork = which == 2 ? -1 : 1;
              describe_a_and_z(grid, m, nb, rsrc, csrc, g);
              expect_same(g,
                          "query " + std::to_string(which) + " grid=" + grid_name(grid, gc.order) +
                              " n=" + std::to_string(n) + " nb=" + std::to_string(nb) +
                              " src=" + std::to_string(rsrc) + "," + std::to_string(csrc) +
                              " ia=" + std::to_string(g.ia),
                          false);
            }
          }
  }
}

// JOBZ and UPLO as Fortran passes them: any case, any length, only the first letter counts.
TEST(PzheevdArgumentChecks, LetterCaseAndLongStrings) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    for (const char* jobz : {"V", "v", "Vectors", "N", "n", "X", ""})
      for (const char* uplo : {"L", "l", "Lower", "U", "u", "Upper", "X", "Left"})
        for (int lwork : {-1, 1}) {
          Args g;
          g.jobz = jobz;
          g.uplo = uplo;
          g.lwork = lwork;  // a query, or a bad LWORK: never a real call
          g.lrwork = 100000;
          g.liwork = 1;
          describe_a_and_z(grid, g.n, 4, 0, 0, g);
          expect_same(g,
                      "grid=" + grid_name(grid, gc.order) + " jobz='" + jobz + "' uplo='" + uplo +
                          "' lwork=" + std::to_string(lwork),
                      false);
        }
  }
}

struct BadCase {
  std::string name;
  std::function<void(Args&)> spoil;
};

// A and Z made m x m (their local leading dimensions with them).
void resize(Args& g, int m) {
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&g.desca[CTXT_], &nprow, &npcol, &myrow, &mycol);
  for (int* d : {g.desca, g.descz}) {
    d[M_] = d[N_] = m;
    if (myrow >= 0) d[LLD_] = std::max(1, numroc_(&m, &d[MB_], &myrow, &d[RSRC_], &nprow));
  }
}

// One bad input at a time (and a few pairs, where the smaller position must win).
std::vector<BadCase> bad_cases(const BlacsGrid& grid, int other_ctxt, int lwmin, int lrwmin) {
  std::vector<BadCase> c = {
      {"JOBZ=N", [](Args& g) { g.jobz = "N"; }},
      {"JOBZ=x", [](Args& g) { g.jobz = "x"; }},
      {"UPLO=X", [](Args& g) { g.uplo = "X"; }},
      {"JOBZ and UPLO", [](Args& g) { g.jobz = "E", g.uplo = "E"; }},
      {"N=-1", [](Args& g) { g.n = -1; }},
      {"N>M_", [](Args& g) { g.n = 38; }},
      {"IA=0", [](Args& g) { g.ia = 0; }},
      {"JA=0", [](Args& g) { g.ja = 0; }},
      {"IA=2", [](Args& g) { g.ia = 2; }},
      {"IA>M_", [](Args& g) { g.ia = 38; }},
      {"JA>N_", [](Args& g) { g.ja = 38; }},
      {"IZ=0", [](Args& g) { g.iz = 0; }},
      {"JZ=0", [](Args& g) { g.jz = 0; }},
      {"IZ=2", [](Args& g) { g.iz = 2; }},
      {"JZ>N_", [](Args& g) { g.jz = 38; }},
      // Submatrices inside a larger matrix: misaligned A rows, Z rows in another block row.
      {"IA=JA=2 M=41", [](Args& g) { g.ia = g.ja = 2, resize(g, 41); }},
      {"IA=2 JA=1 M=41", [](Args& g) { g.ia = 2, resize(g, 41); }},
      {"IZ=2 M=41", [](Args& g) { g.iz = 2, resize(g, 41); }},
      // LWORK / LRWORK.
      {"LWORK=0", [](Args& g) { g.lwork = 0; }},
      {"LWORK=-2", [](Args& g) { g.lwork = -2; }},
      {"LWORK=LWMIN-1", [lwmin](Args& g) { g.lwork = lwmin - 1; }},
      {"LRWORK=0", [](Args& g) { g.lrwork = 0; }},
      {"LRWORK=LRWMIN-1", [lrwmin](Args& g) { g.lrwork = lrwmin - 1; }},
      {"LWORK=0 LRWORK=0", [](Args& g) { g.lwork = 0, g.lrwork = 0; }},
      {"LRWORK=-1 LWORK=0", [](Args& g) { g.lrwork = -1, g.lwork = 0; }},
      {"LIWORK=-1 LRWORK=0", [](Args& g) { g.liwork = -1, g.lrwork = 0; }},
      {"LWORK=-1 UPLO=X", [](Args& g) { g.lwork = -1, g.uplo = "X"; }},
      {"LWORK=-1 IA=0", [](Args& g) { g.lwork = -1, g.ia = 0; }},
      // Z's descriptor against A's.
      {"DESCZ M_=41", [](Args& g) { g.descz[M_] = g.descz[N_] = 41; }},
      {"DESCZ N_=41", [](Args& g) { g.descz[N_] = 41; }},
      {"DESCA M_=41", [](Args& g) { g.desca[M_] = g.desca[N_] = 41; }},
      {"DESCZ MB_=NB_=8", [](Args& g) { g.descz[MB_] = g.descz[NB_] = 8; }},
      {"DESCA MB_=NB_=8", [](Args& g) { g.desca[MB_] = g.desca[NB_] = 8; }},
      {"DESCA MB_=8", [](Args& g) { g.desca[MB_] = 8; }},
      {"DESCA NB_=8", [](Args& g) { g.desca[NB_] = 8; }},
      {"DESCZ MB_=8", [](Args& g) { g.descz[MB_] = 8; }},
      {"DESCZ NB_=8", [](Args& g) { g.descz[NB_] = 8; }},
      {"DESCA CTXT_=-1", [](Args& g) { g.desca[CTXT_] = -1; }},
      {"DESCZ CTXT_=-1", [](Args& g) { g.descz[CTXT_] = -1; }},
      // Bad pairs: the smaller position wins.
      {"DESCA LLD_ and DESCZ DTYPE_", [](Args& g) { g.desca[LLD_] = 0, g.descz[DTYPE_] = 2; }},
      {"DESCA DTYPE_ and N=-1", [](Args& g) { g.desca[DTYPE_] = 2, g.n = -1; }},
      {"DESCZ DTYPE_ and JOBZ", [](Args& g) { g.descz[DTYPE_] = 2, g.jobz = "X"; }},
      {"DESCZ MB_ and LWORK", [](Args& g) { g.descz[MB_] = 8, g.lwork = 0; }},
      {"LRWORK and IA=2", [](Args& g) { g.lrwork = 0, g.ia = 2, resize(g, 41); }},
  };
  // Every descriptor field of A (7) and of Z (12).
  for (int which : {0, 1}) {
    const std::string arg = which == 0 ? "DESCA" : "DESCZ";
    auto field = [which](Args& g, Desc e) -> int& { return which == 0 ? g.desca[e] : g.descz[e]; };
    auto add = [&](const std::string& name, std::function<void(Args&)> f) {
      c.push_back({arg + " " + name, std::move(f)});
    };
    add("DTYPE_=2", [=](Args& g) { field(g, DTYPE_) = 2; });
    add("M_=0", [=](Args& g) { field(g, M_) = 0; });
    add("M_=36", [=](Args& g) { field(g, M_) = 36; });
    add("N_=-3", [=](Args& g) { field(g, N_) = -3; });
    add("N_=36", [=](Args& g) { field(g, N_) = 36; });
    add("MB_=0", [=](Args& g) { field(g, MB_) = 0; });
    add("NB_=0", [=](Args& g) { field(g, NB_) = 0; });
    add("RSRC_=-1", [=](Args& g) { field(g, RSRC_) = -1; });
    add("RSRC_=NPROW", [=, &grid](Args& g) { field(g, RSRC_) = grid.nprow; });
    add("CSRC_=-1", [=](Args& g) { field(g, CSRC_) = -1; });
    add("CSRC_=NPCOL", [=, &grid](Args& g) { field(g, CSRC_) = grid.npcol; });
    add("LLD_=0", [=](Args& g) { field(g, LLD_) = 0; });
    add("LLD_=1", [=](Args& g) { field(g, LLD_) = 1; });  // every process holds > 1 row
    add("CTXT_=other", [=](Args& g) { field(g, CTXT_) = other_ctxt; });
    if (grid.nprow > 1) add("RSRC_=1", [=](Args& g) { field(g, RSRC_) = 1; });
  }
  return c;
}

// The table: each bad input, every grid, the same INFO and workspace answers as ScaLAPACK on every
// rank, A and Z untouched.
TEST(PzheevdArgumentChecks, BadInputsGiveScalapacksInfo) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    BlacsGrid other(gc.nprow, gc.npcol, gc.order);  // a second context, same processes
    Args base;
    describe_a_and_z(grid, base.n, 4, 0, 0, base);
    Args q = base;  // LWMIN and LRWMIN are local: ScaLAPACK's for this process
    q.lwork = q.lrwork = q.liwork = -1;
    const Outcome query = via_scalapack(q);
    ASSERT_EQ(query.info, 0);
    base.lwork = static_cast<int>(query.work0);
    base.lrwork = static_cast<int>(query.rwork0);
    base.liwork = query.iwork0;
    for (const char* uplo : {"L", "U"})
      for (const BadCase& bc : bad_cases(grid, other.ictxt, base.lwork, base.lrwork)) {
        Args g = base;
        g.uplo = uplo;
        bc.spoil(g);
        expect_same(g, "grid=" + grid_name(grid, gc.order) + " uplo=" + uplo + " " + bc.name, true);
      }
  }
}

// What PZHEEVD's checks let through although its computation cannot take it: LIWORK below its
// LIWMIN (never checked), JA or JZ off a block boundary, and aligned submatrices of a larger
// matrix (ScaLAPACK 2.2.1 then describes its real copy of Z with DESCZ's M_ but N's local rows, and
// returns DESCINIT's INFO = -9 after computing). The same workspace answers on both sides; pipevd
// (its forward gives ScaLAPACK a copy at (1, 1) and the IWORK it needs) returns INFO = 0.
TEST(PzheevdArgumentChecks, UncheckedValuesPassAsInScalapack) {
  const std::vector<BadCase> cases = {
      {"LIWORK=1", [](Args& g) { g.liwork = 1; }},
      {"JA=2 M=41", [](Args& g) { g.ja = 2, resize(g, 41); }},
      {"JZ=3 M=41", [](Args& g) { g.jz = 3, resize(g, 41); }},
      {"IA=IZ=5 M=41", [](Args& g) { g.ia = g.iz = 5, resize(g, 41); }},
      {"IA=JA=IZ=JZ=5 M=41", [](Args& g) { g.ia = g.ja = g.iz = g.jz = 5, resize(g, 41); }},
  };
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    if (!grid.in_grid()) continue;
    for (const BadCase& bc : cases) {
      Args g;
      describe_a_and_z(grid, g.n, 4, 0, 0, g);
      g.lwork = 200000;
      g.lrwork = 100000;
      g.liwork = 40000;
      bc.spoil(g);
      const Outcome ours = via_pipevd(g), theirs = via_scalapack(g);
      const std::string where = grid_name(grid, gc.order) + " " + bc.name;
      EXPECT_EQ(ours.info, 0) << where;
      EXPECT_TRUE(theirs.info == 0 || theirs.info == -9) << where << ": " << theirs.info;
      EXPECT_EQ(ours.work0, theirs.work0) << where;
      EXPECT_EQ(ours.rwork0, theirs.rwork0) << where;
      EXPECT_EQ(ours.iwork0, theirs.iwork0) << where;
    }
  }
}

// N = 0 returns at once: INFO = 0 (PZHEEVD, unlike PDSYEVD, sets it first), nothing else written.
TEST(PzheevdArgumentChecks, NZeroQuickReturn) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    Args g;
    g.n = 0;
    describe_a_and_z(grid, 37, 4, 0, 0, g);
    for (int lwork : {-1, 0, 100000}) {
      g.lwork = g.lrwork = g.liwork = lwork;
      const Outcome ours = via_pipevd(g);
      EXPECT_EQ(ours.info, 0);
      EXPECT_EQ(ours.work0, kWorkSentinel);
      EXPECT_EQ(ours.rwork0, kWorkSentinel);
      EXPECT_EQ(ours.iwork0, kIworkSentinel);
      expect_same(g, "N=0 lwork=" + std::to_string(lwork), false);
    }
  }
}

// Ranks outside a smaller grid see NPROW = -1 (INFO = -702) while the grid's ranks go on.
TEST(PzheevdArgumentChecks, ProcessOutsideTheGrid) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs a rank outside the grid";
  for (const GridCase& gc : std::vector<GridCase>{{1, 1, 'R'}, {p - 1, 1, 'R'}, {1, p - 1, 'C'}}) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    for (int lwork : {-1, 0}) {
      Args g;
      g.lwork = lwork;
      g.lrwork = 100000;
      g.liwork = 1;
      describe_a_and_z(grid, g.n, 4, 0, 0, g);
      expect_same(g,
                  "grid=" + grid_name(grid, gc.order) + (grid.in_grid() ? " inside" : " outside") +
                      " lwork=" + std::to_string(lwork),
                  !grid.in_grid() || lwork == 0);
    }
  }
}

// Values that must agree over the grid (PCHK2MAT, which takes both A's and Z's) but differ on one
// rank: every rank gets the INFO ScaLAPACK gives it.
TEST(PzheevdArgumentChecks, InconsistentAcrossRanks) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  const std::vector<BadCase> cases = {
      {"N", [](Args& g) { g.n = 36; }},
      {"UPLO", [](Args& g) { g.uplo = "U"; }},
      {"JOBZ", [](Args& g) { g.jobz = "N"; }},
      {"LWORK=-1", [](Args& g) { g.lwork = -1; }},
      {"LWORK small", [](Args& g) { g.lwork = 1; }},
      {"LRWORK small", [](Args& g) { g.lrwork = 1; }},
      {"IA", [](Args& g) { g.ia = 2; }},
      {"IZ", [](Args& g) { g.iz = 5; }},
      {"JZ", [](Args& g) { g.jz = 5; }},
      {"DESCA M_", [](Args& g) { g.desca[M_] = 40; }},
      {"DESCA NB_", [](Args& g) { g.desca[NB_] = 5; }},
      {"DESCZ M_", [](Args& g) { g.descz[M_] = 40; }},
      {"DESCZ NB_", [](Args& g) { g.descz[NB_] = 5; }},
      {"DESCZ CSRC_", [](Args& g) { g.descz[CSRC_] = 1; }},
      {"DESCZ DTYPE_", [](Args& g) { g.descz[DTYPE_] = 3; }},
  };
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    Args base;
    describe_a_and_z(grid, base.n, 4, 0, 0, base);
    base.lwork = 200000;
    base.lrwork = 100000;
    base.liwork = 40000;
    for (int odd : {p - 1, 0})
      for (const BadCase& bc : cases) {
        Args g = base;
        if (world_rank() == odd) bc.spoil(g);
        if (bc.name == "DESCZ CSRC_" && grid.npcol < 2) continue;
        expect_same(
            g,
            "grid=" + grid_name(grid, gc.order) + " " + bc.name + " on rank " + std::to_string(odd),
            true);
      }
  }
}

}  // namespace
}  // namespace pipevd::test
