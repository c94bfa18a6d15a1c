// Every bad argument gets the INFO ScaLAPACK's PDSYEVD gives, with WORK(1)/IWORK(1) written (or
// not) exactly as it writes them and nothing else touched; workspace queries give its answers. Each
// case is run through pipevd_pdsyevd and through ScaLAPACK's own pdsyevd_ in the same process, on
// every rank, over several grids.
#include <gtest/gtest.h>

#include <algorithm>
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

struct Args {
  // Strings, so that ScaLAPACK gets their true Fortran length.
  std::string jobz = "V", uplo = "L";
  int n = 37, ia = 1, ja = 1, iz = 1, jz = 1, lwork = 0, liwork = 0;
  int desca[9] = {}, descz[9] = {};
};

struct Outcome {
  int info;
  double work0;
  int iwork0;
  bool rest_untouched;  // A, W, Z, WORK(2:), IWORK(2:) as they were before the call
};

constexpr int kInfoSentinel = 12345;
constexpr double kWorkSentinel = -1.0;
constexpr int kIworkSentinel = -1;

using Caller = std::function<void(Args&, double*, double*, double*, double*, int*, int*)>;

// Runs one call through fn with private copies of every array, sized generously so a bad
// descriptor, LWORK or LIWORK is only a number, never an overflow.
Outcome run(const Caller& fn, Args args) {
  auto a_value = [](size_t i) { return 1.0 + static_cast<double>(i % 97); };
  std::vector<double> a(300 * 300), z(300 * 300, 7.0), w(600, 3.0), work(400000, kWorkSentinel);
  for (size_t i = 0; i < a.size(); ++i) a[i] = a_value(i);
  std::vector<int> iwork(40000, kIworkSentinel);
  int info = kInfoSentinel;
  fn(args, a.data(), w.data(), z.data(), work.data(), iwork.data(), &info);
  bool same =
      std::all_of(z.begin(), z.end(), [](double v) { return v == 7.0; }) &&
      std::all_of(w.begin(), w.end(), [](double v) { return v == 3.0; }) &&
      std::all_of(work.begin() + 1, work.end(), [](double v) { return v == kWorkSentinel; }) &&
      std::all_of(iwork.begin() + 1, iwork.end(), [](int v) { return v == kIworkSentinel; });
  for (size_t i = 0; i < a.size() && same; ++i) same = a[i] == a_value(i);
  return {info, work[0], iwork[0], same};
}

Outcome via_pipevd(const Args& args) {
  return run(
      [](Args& g, double* a, double* w, double* z, double* work, int* iwork, int* info) {
        pipevd_pdsyevd(g.jobz.c_str(), g.uplo.c_str(), &g.n, a, &g.ia, &g.ja, g.desca, w, z, &g.iz,
                       &g.jz, g.descz, work, &g.lwork, iwork, &g.liwork, info);
      },
      args);
}

Outcome via_scalapack(const Args& args) {
  return run(
      [](Args& g, double* a, double* w, double* z, double* work, int* iwork, int* info) {
        const pdsyevd_fn fn = scalapack_pdsyevd();
        const bool upper = !g.uplo.empty() && (g.uplo[0] == 'U' || g.uplo[0] == 'u');
        paint_stack(upper ? 1 : 0);
        fn(g.jobz.c_str(), g.uplo.c_str(), &g.n, a, &g.ia, &g.ja, g.desca, w, z, &g.iz, &g.jz,
           g.descz, work, &g.lwork, iwork, &g.liwork, info, g.jobz.size(), g.uplo.size());
      },
      args);
}

// Both sides agree on INFO, WORK(1), IWORK(1), and on leaving everything else alone.
void expect_same(const Args& g, const std::string& what, bool bad_call) {
  const Outcome ours = via_pipevd(g), theirs = via_scalapack(g);
  const std::string where = what + " (rank " + std::to_string(world_rank()) + ")";
  EXPECT_EQ(ours.info, theirs.info) << where;
  EXPECT_EQ(ours.work0, theirs.work0) << where;
  EXPECT_EQ(ours.iwork0, theirs.iwork0) << where;
  EXPECT_TRUE(ours.rest_untouched) << where;
  EXPECT_TRUE(theirs.rest_untouched) << where;
  if (bad_call) EXPECT_LT(theirs.info, 0) << where << ": the case is not a bad call";
}

TEST(ArgumentChecks, WorkspaceQueryEqualsScalapack) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    for (int n : {1, 5, 37, 100, 129})
      for (int nb : {1, 4, 8, 32})
        for (int src : {0, 1})
          for (int off : {0, 1, 2}) {  // IA = JA = IZ = JZ = off*NB + 1
            const int rsrc = src % gc.nprow, csrc = (gc.nprow - 1 + src) % gc.npcol;
            const int m = n + off * nb;
            if (m > 160) continue;  // keeps the local arrays within run()'s
            Args g;
            g.n = n;
            g.ia = g.ja = g.iz = g.jz = off * nb + 1;
            g.lwork = -1;
            g.liwork = 1;
            describe_a_and_z(grid, m, nb, rsrc, csrc, g);
            expect_same(g,
                        "query grid=" + grid_name(grid, gc.order) + " n=" + std::to_string(n) +
                            " nb=" + std::to_string(nb) + " src=" + std::to_string(rsrc) + "," +
                            std::to_string(csrc) + " ia=" + std::to_string(g.ia),
                        false);
          }
  }
}

// JOBZ and UPLO as Fortran passes them: any case, any length, only the first letter counts.
TEST(ArgumentChecks, LetterCaseAndLongStrings) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    for (const char* jobz : {"V", "v", "Vectors", "vectors", "N", "n", "X", "", " V"})
      for (const char* uplo : {"L", "l", "Lower", "U", "u", "Upper", "X", "x", "Left"})
        for (int lwork : {-1, 1}) {
          Args g;
          g.jobz = jobz;
          g.uplo = uplo;
          g.lwork = lwork;  // a query, or a bad LWORK: never a real call
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

// One bad input at a time (and a few pairs, where the smaller position must win). Some cases
// need the grid: RSRC/CSRC mismatches two process rows/columns, CTXT mismatches a second context.
std::vector<BadCase> bad_cases(const BlacsGrid& grid, int other_ctxt, int lwmin, int liwmin) {
  const int nb = 4;
  std::vector<BadCase> c = {
      {"JOBZ=N", [](Args& g) { g.jobz = "N"; }},
      {"JOBZ=x", [](Args& g) { g.jobz = "x"; }},
      {"UPLO=X", [](Args& g) { g.uplo = "X"; }},
      {"UPLO=' '", [](Args& g) { g.uplo = " "; }},
      {"JOBZ and UPLO", [](Args& g) { g.jobz = "E", g.uplo = "E"; }},
      {"N=-1", [](Args& g) { g.n = -1; }},
      {"N=-1 JOBZ=X", [](Args& g) { g.n = -1, g.jobz = "X"; }},
      {"N>M_", [](Args& g) { g.n = 38; }},
      {"IA=0", [](Args& g) { g.ia = 0; }},
      {"JA=0", [](Args& g) { g.ja = 0; }},
      {"IA=2", [](Args& g) { g.ia = 2; }},
      {"JA=2", [](Args& g) { g.ja = 2; }},
      {"IA>M_", [](Args& g) { g.ia = 38; }},
      {"JA>N_", [](Args& g) { g.ja = 38; }},
      {"IZ=0", [](Args& g) { g.iz = 0; }},
      {"JZ=0", [](Args& g) { g.jz = 0; }},
      {"IZ=2", [](Args& g) { g.iz = 2; }},
      {"JZ>N_", [](Args& g) { g.jz = 38; }},
      // Submatrices inside a larger matrix: misaligned A, misaligned Z, A and Z offsets differ.
      {"IA=JA=2 M=41",
       [](Args& g) {
         g.ia = g.ja = 2, g.desca[M_] = g.desca[N_] = g.descz[M_] = g.descz[N_] = 41;
       }},
      {"IA=2 JA=1 M=41",
       [](Args& g) { g.ia = 2, g.desca[M_] = g.desca[N_] = g.descz[M_] = g.descz[N_] = 41; }},
      {"JA=2 M=41",
       [](Args& g) { g.ja = 2, g.desca[M_] = g.desca[N_] = g.descz[M_] = g.descz[N_] = 41; }},
      {"IZ=JZ=2 M=41",
       [](Args& g) {
         g.iz = g.jz = 2, g.desca[M_] = g.desca[N_] = g.descz[M_] = g.descz[N_] = 41;
       }},
      {"IZ=2 JZ=1 M=41",
       [](Args& g) { g.iz = 2, g.desca[M_] = g.desca[N_] = g.descz[M_] = g.descz[N_] = 41; }},
      {"IA=JA=5 IZ=JZ=2 M=41",
       [nb](Args& g) {
         g.ia = g.ja = nb + 1, g.iz = g.jz = 2,
         g.desca[M_] = g.desca[N_] = g.descz[M_] = g.descz[N_] = 41;
       }},
      // LWORK / LIWORK.
      {"LWORK=0", [](Args& g) { g.lwork = 0; }},
      {"LWORK=-2", [](Args& g) { g.lwork = -2; }},
      {"LWORK=LWMIN-1", [lwmin](Args& g) { g.lwork = lwmin - 1; }},
      {"LIWORK=0", [](Args& g) { g.liwork = 0; }},
      {"LIWORK=LIWMIN-1", [liwmin](Args& g) { g.liwork = liwmin - 1; }},
      {"LWORK=0 LIWORK=0", [](Args& g) { g.lwork = 0, g.liwork = 0; }},
      {"LWORK=-1 UPLO=X", [](Args& g) { g.lwork = -1, g.uplo = "X"; }},
      {"LWORK=-1 IA=0", [](Args& g) { g.lwork = -1, g.ia = 0; }},
      // Z's descriptor against A's.
      {"DESCZ M_=41", [](Args& g) { g.descz[M_] = g.descz[N_] = 41; }},
      {"DESCA M_=41", [](Args& g) { g.desca[M_] = g.desca[N_] = 41; }},
      {"DESCZ MB_=NB_=8", [](Args& g) { g.descz[MB_] = g.descz[NB_] = 8; }},
      {"DESCA MB_=NB_=8", [](Args& g) { g.desca[MB_] = g.desca[NB_] = 8; }},
      {"DESCA MB_=8", [](Args& g) { g.desca[MB_] = 8; }},
      {"DESCA NB_=8", [](Args& g) { g.desca[NB_] = 8; }},
      {"DESCZ MB_=8", [](Args& g) { g.descz[MB_] = 8; }},
      {"DESCZ NB_=8", [](Args& g) { g.descz[NB_] = 8; }},
      {"DESCZ CTXT_=-1", [](Args& g) { g.descz[CTXT_] = -1; }},
      {"DESCZ CTXT_=-1 DESCA DTYPE_=0", [](Args& g) { g.descz[CTXT_] = -1, g.desca[DTYPE_] = 0; }},
      // Bad pairs: the smaller position wins.
      {"DESCA LLD_ and DESCZ DTYPE_", [](Args& g) { g.desca[LLD_] = 0, g.descz[DTYPE_] = 2; }},
      {"DESCA DTYPE_ and N=-1", [](Args& g) { g.desca[DTYPE_] = 2, g.n = -1; }},
      {"DESCZ DTYPE_ and JOBZ", [](Args& g) { g.descz[DTYPE_] = 2, g.jobz = "X"; }},
      {"DESCZ MB_ and LWORK", [](Args& g) { g.descz[MB_] = 8, g.lwork = 0; }},
  };
  // Every descriptor field of A (7) and of Z (12).
  for (int which : {0, 1}) {
    const std::string arg = which == 0 ? "DESCA" : "DESCZ";
    auto field = [which](Args& g, Desc e) -> int& { return which == 0 ? g.desca[e] : g.descz[e]; };
    auto add = [&](const std::string& name, std::function<void(Args&)> f) {
      c.push_back({arg + " " + name, std::move(f)});
    };
    add("DTYPE_=2", [=](Args& g) { field(g, DTYPE_) = 2; });
    add("DTYPE_=0", [=](Args& g) { field(g, DTYPE_) = 0; });
    add("M_=0", [=](Args& g) { field(g, M_) = 0; });
    add("M_=-1", [=](Args& g) { field(g, M_) = -1; });
    add("M_=36", [=](Args& g) { field(g, M_) = 36; });
    add("N_=0", [=](Args& g) { field(g, N_) = 0; });
    add("N_=-3", [=](Args& g) { field(g, N_) = -3; });
    add("N_=36", [=](Args& g) { field(g, N_) = 36; });
    add("MB_=0", [=](Args& g) { field(g, MB_) = 0; });
    add("NB_=0", [=](Args& g) { field(g, NB_) = 0; });
    add("NB_=-4", [=](Args& g) { field(g, NB_) = -4; });
    add("RSRC_=-1", [=](Args& g) { field(g, RSRC_) = -1; });
    add("RSRC_=NPROW", [=, &grid](Args& g) { field(g, RSRC_) = grid.nprow; });
    add("CSRC_=-1", [=](Args& g) { field(g, CSRC_) = -1; });
    add("CSRC_=NPCOL", [=, &grid](Args& g) { field(g, CSRC_) = grid.npcol; });
    add("LLD_=0", [=](Args& g) { field(g, LLD_) = 0; });
    add("LLD_=-1", [=](Args& g) { field(g, LLD_) = -1; });
    add("LLD_=1", [=](Args& g) { field(g, LLD_) = 1; });  // every process holds > 1 row
    add("MB_=0 LLD_=0", [=](Args& g) { field(g, MB_) = 0, field(g, LLD_) = 0; });
    add("DTYPE_=2 M_=0", [=](Args& g) { field(g, DTYPE_) = 2, field(g, M_) = 0; });
    add("CTXT_=other", [=](Args& g) { field(g, CTXT_) = other_ctxt; });
    if (grid.nprow > 1) add("RSRC_=1", [=](Args& g) { field(g, RSRC_) = 1; });
    if (grid.npcol > 1) add("CSRC_=1", [=](Args& g) { field(g, CSRC_) = 1; });
  }
  return c;
}

// The table: each bad input, every grid, same INFO / WORK(1) / IWORK(1) as ScaLAPACK on every rank,
// A and Z untouched.
TEST(ArgumentChecks, BadInputsGiveScalapacksInfo) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    BlacsGrid other(gc.nprow, gc.npcol, gc.order);  // a second context, same processes
    Args base;
    describe_a_and_z(grid, base.n, 4, 0, 0, base);
    // LWMIN and LIWMIN are local: ask ScaLAPACK for this process's.
    Args q = base;
    q.lwork = -1;
    q.liwork = 1;
    const Outcome query = via_scalapack(q);
    ASSERT_EQ(query.info, 0);
    base.lwork = static_cast<int>(query.work0);
    base.liwork = query.iwork0;
    ASSERT_LE(base.lwork, 400000);
    // UPLO = 'L' and 'U': both values of the UPPER that PDSYEVD sends to PCHK1MAT.
    for (const char* uplo : {"L", "U"})
      for (const BadCase& bc : bad_cases(grid, other.ictxt, base.lwork, base.liwork)) {
        Args g = base;
        g.uplo = uplo;
        bc.spoil(g);
        expect_same(g, "grid=" + grid_name(grid, gc.order) + " uplo=" + uplo + " " + bc.name, true);
      }
  }
}

// N = 0 returns at once: INFO untouched, nothing written, descriptors not even read.
TEST(ArgumentChecks, NZeroQuickReturn) {
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    Args g;
    g.n = 0;
    describe_a_and_z(grid, 37, 4, 0, 0, g);
    for (int lwork : {-1, 0, 100000}) {
      g.lwork = lwork;
      g.liwork = lwork;
      const Outcome ours = via_pipevd(g);
      EXPECT_EQ(ours.info, kInfoSentinel);
      EXPECT_EQ(ours.work0, kWorkSentinel);
      EXPECT_EQ(ours.iwork0, kIworkSentinel);
      expect_same(g, "N=0 lwork=" + std::to_string(lwork), false);
    }
    Args junk = g;  // garbage everywhere else: still a quick return
    junk.jobz = junk.uplo = "?";
    junk.ia = junk.iz = -5;
    std::fill(junk.desca, junk.desca + 9, -7);
    std::fill(junk.descz, junk.descz + 9, 0);
    expect_same(junk, "N=0 with garbage arguments", false);
    EXPECT_EQ(via_pipevd(junk).info, kInfoSentinel);
  }
}

// Ranks outside a smaller grid see NPROW = -1 (INFO = -602) while the grid's ranks go on.
TEST(ArgumentChecks, ProcessOutsideTheGrid) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs a rank outside the grid";
  for (const GridCase& gc : std::vector<GridCase>{{1, 1, 'R'}, {p - 1, 1, 'R'}, {1, p - 1, 'C'}}) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    for (int lwork : {-1, 0}) {  // a query inside the grid, and a bad LWORK inside the grid
      Args g;
      g.lwork = lwork;
      g.liwork = 1;
      describe_a_and_z(grid, g.n, 4, 0, 0, g);
      expect_same(g,
                  "grid=" + grid_name(grid, gc.order) + (grid.in_grid() ? " inside" : " outside") +
                      " lwork=" + std::to_string(lwork),
                  !grid.in_grid() || lwork == 0);
    }
  }
}

// CHK1MAT checks LLD only on processes that hold columns of the matrix: a too small LLD on one
// that holds none is no error (the bad LWORK makes the call a bad one all the same).
TEST(ArgumentChecks, LldCheckedOnlyWhereColumnsAre) {
  const int p = world_size();
  if (p < 3) GTEST_SKIP() << "needs a process column without columns of the matrix";
  BlacsGrid grid(1, p);
  const int n = 37, nb = 32;  // columns on process columns 0 and 1 only
  for (int lld : {1, 0}) {
    Args g;
    g.n = n;
    g.lwork = 0;
    g.liwork = 40000;
    describe_a_and_z(grid, n, nb, 0, 0, g);
    if (grid.mycol >= 2) g.desca[LLD_] = g.descz[LLD_] = lld;  // LLD = 0 is an error anywhere
    expect_same(g, "LLD_=" + std::to_string(lld) + " where no columns are", true);
  }
}

// Values that must agree over the grid (PCHK1MAT) but differ on one rank, and local errors on one
// rank only: every rank gets the INFO ScaLAPACK gives it.
TEST(ArgumentChecks, InconsistentAcrossRanks) {
  const int p = world_size();
  if (p < 2) GTEST_SKIP() << "needs two ranks";
  const std::vector<BadCase> cases = {
      {"N", [](Args& g) { g.n = 36; }},
      {"UPLO", [](Args& g) { g.uplo = "U"; }},
      {"UPLO bad", [](Args& g) { g.uplo = "B"; }},
      {"JOBZ", [](Args& g) { g.jobz = "N"; }},
      {"LWORK=-1", [](Args& g) { g.lwork = -1; }},
      {"LWORK small", [](Args& g) { g.lwork = 1; }},
      {"LIWORK small", [](Args& g) { g.liwork = 1; }},
      {"IA", [](Args& g) { g.ia = 2; }},
      {"JA", [](Args& g) { g.ja = 5; }},
      {"DESCA M_", [](Args& g) { g.desca[M_] = 40; }},
      {"DESCA N_", [](Args& g) { g.desca[N_] = 40; }},
      {"DESCA MB_", [](Args& g) { g.desca[MB_] = 5; }},
      {"DESCA NB_", [](Args& g) { g.desca[NB_] = 5; }},
      {"DESCA DTYPE_", [](Args& g) { g.desca[DTYPE_] = 3; }},
      {"DESCZ M_", [](Args& g) { g.descz[M_] = 40; }},
      {"DESCZ NB_", [](Args& g) { g.descz[NB_] = 5; }},
      {"DESCZ LLD_", [](Args& g) { g.descz[LLD_] = 0; }},
      {"LLD_ larger", [](Args& g) { g.desca[LLD_] += 3; }},
  };
  for (const GridCase& gc : grids()) {
    BlacsGrid grid(gc.nprow, gc.npcol, gc.order);
    Args base;
    describe_a_and_z(grid, base.n, 4, 0, 0, base);
    // A valid LWORK/LIWORK everywhere; the odd rank is the last rank, then rank 0 (process (0,0)).
    base.lwork = 400000;
    base.liwork = 40000;
    for (int odd : {p - 1, 0})
      for (const BadCase& bc : cases) {
        Args g = base;
        // Some rank must hold a bad value for the call to be a bad call; "LLD_ larger" is a valid
        // difference (LLD is local), so pair it with a bad LWORK on the odd rank.
        if (world_rank() == odd) {
          bc.spoil(g);
          if (bc.name == "LLD_ larger") g.lwork = 0;
        }
        expect_same(
            g,
            "grid=" + grid_name(grid, gc.order) + " " + bc.name + " on rank " + std::to_string(odd),
            true);
      }
  }
}

}  // namespace
}  // namespace pipevd::test
