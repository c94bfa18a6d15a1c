// PIPEVD_VERBOSE=2's stage timeline (core/timeline) from pdsyevd_ on the host engine: one JSON
// file (PIPEVD_TIMELINE) written by engine rank 0 with every rank's intervals: each rank has each
// stage of the engine and the redistribution, rank 0 also the D&C thread's; every interval lies
// in [0, total], a rank's main-thread stages follow each other without overlap, and the D&C
// thread's interval lies within the engine's (it starts after bulge chasing, ends before GEMM);
// every rank's release thread (the engine's buffers, next to Z's redistribution) starts after the
// final GEMM; the plan's steps lie within the plan's interval. With PIPEVD_DC_FOLD=on the final
// GEMM's parts are the folded product's. "%c" in the file name keeps each call's file.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

struct Interval {
  int rank, gpu;
  std::string stage, thread;
  double start, end;
};

std::vector<Interval> read_intervals(const std::string& text) {
  static const std::regex re(
      R"re(\{"rank": (\d+), "gpu": (-?\d+), "stage": "(\w+)", "thread": "(\w+)", "start": ([-0-9.e]+), "end": ([-0-9.e]+)\})re");
  std::vector<Interval> v;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    v.push_back({std::stoi(m[1]), std::stoi(m[2]), m[3], m[4], std::stod(m[5]), std::stod(m[6])});
  }
  return v;
}

// One pdsyevd call at verbose 2 on a random symmetric n x n matrix (blocks nb, layout's last
// field `lld_pad`), every rank's timeline then read back: its text on rank 0, nothing elsewhere
// (where the caller returns). `size` is the number of ranks.
std::optional<std::string> one_call_timeline(char jobz, int n, int nb, int lld_pad, unsigned seed,
                                             int* size) {
  const char* path = std::getenv("PIPEVD_TIMELINE");
  EXPECT_NE(path, nullptr) << "the test is registered with PIPEVD_TIMELINE";
  if (!path) return std::nullopt;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  if (rank == 0) std::remove(path);
  MPI_Barrier(MPI_COMM_WORLD);

  const GridShape shape = grid_shape('s');
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const BlockCyclicLayout layout{n, n, nb, nb, 0, 0, lld_pad};
  DistributedMatrix a(grid, layout), z(grid, layout);
  a.fill([seed](long i, long j) { return random_symmetric_entry(i, j, seed); });
  std::vector<double> w(n);
  EXPECT_EQ(call_pdsyevd(jobz, 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc),
            0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) return std::nullopt;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Timeline, VerboseTwoWritesEveryRanksStages) {
  int size = 1;
  const std::optional<std::string> timeline = one_call_timeline('V', 301, 16, 2, 71, &size);
  if (!timeline) return;
  const std::string& text = *timeline;
  EXPECT_NE(text.find("\"format\": \"pipevd-timeline-1\""), std::string::npos);
  EXPECT_NE(text.find("\"ranks\": " + std::to_string(size)), std::string::npos);
  EXPECT_NE(text.find("\"backend\": \"host\""), std::string::npos);
  const std::vector<Interval> v = read_intervals(text);
  ASSERT_FALSE(v.empty());
  double total = 0;
  for (const Interval& i : v) total = std::max(total, i.end);
  std::map<int, std::vector<Interval>> rows;
  for (const Interval& i : v) {
    // The call's entry (agreement, entry scan) comes before the origin and ends at it.
    if (i.stage == "entry") {
      EXPECT_LE(i.start, 0);
      EXPECT_NEAR(i.end, 0, 0.05);
    } else {
      EXPECT_GE(i.start, 0) << i.stage;
    }
    EXPECT_LE(i.start, i.end) << i.stage;
    EXPECT_LE(i.end, total) << i.stage;
    EXPECT_EQ(i.gpu, -1);
    rows[i.rank].push_back(i);
  }
  ASSERT_EQ(static_cast<int>(rows.size()), size) << "one row per engine rank";
  // Stage 5 in its parts: the wait for rank 0's D&C, Q_d's broadcast, the GEMM with Z's copy to
  // the host; with the D&C's top merge folded (PIPEVD_DC_FOLD=on, stage 3 by dc), Q_pre's
  // broadcast, the product with it, M's broadcast, the GEMM.
  // The engine's release runs in a thread of its own next to Z's redistribution.
  const char* fold = std::getenv("PIPEVD_DC_FOLD");
  const bool folded = fold && std::string(fold) == "on";
  // The failure agreements over the caller ranks (after the set-up, after the engine) and W's
  // broadcast are intervals of their own: time outside the engine's stages.
  std::vector<std::string> main_stages = {
      "entry",       "plan",   "redistribute_in", "engine_setup",  "failure_agreement",
      "engine_bind", "dbbr",   "sbr_back_start",  "bulge_chasing", "sbr_back",
      "bc_back",     "dc_wait"};
  for (const char* part :
       folded ? std::vector<const char*>{"qpre_broadcast", "pre_gemm", "m_broadcast", "gemm"}
              : std::vector<const char*>{"qd_broadcast", "gemm"})
    main_stages.push_back(part);
  for (const char* part : {"failure_agreement", "w_broadcast", "redistribute_out"})
    main_stages.push_back(part);
  const auto at = [&](const char* stage) {
    return static_cast<std::size_t>(std::find(main_stages.begin(), main_stages.end(), stage) -
                                    main_stages.begin());
  };
  for (auto& [r, row] : rows) {
    SCOPED_TRACE("rank " + std::to_string(r));
    std::vector<Interval> main;
    for (const Interval& i : row)
      if (i.thread == "main") main.push_back(i);
    ASSERT_EQ(main.size(), main_stages.size());
    for (std::size_t s = 0; s < main.size(); ++s) {
      EXPECT_EQ(main[s].stage, main_stages[s]);
      if (s > 0) EXPECT_GE(main[s].start, main[s - 1].end) << main[s].stage;
    }
    // The plan's steps (first call: communicators, device queries, collectives), one after the
    // other on a row of their own inside the plan's interval.
    const std::vector<std::string> plan_steps = {"plan_wave_rows",      "plan_device_memory",
                                                 "plan_device_kernels", "plan_call",
                                                 "plan_redistribution", "plan_host_memory"};
    std::vector<Interval> steps;
    for (const Interval& i : row)
      if (i.thread == "plan") steps.push_back(i);
    ASSERT_EQ(steps.size(), plan_steps.size());
    for (std::size_t s = 0; s < steps.size(); ++s) {
      EXPECT_EQ(steps[s].stage, plan_steps[s]);
      EXPECT_GE(steps[s].start, main[at("plan")].start - 1e-6) << steps[s].stage;
      EXPECT_LE(steps[s].end, main[at("plan")].end + 1e-6) << steps[s].stage;
      if (s > 0) EXPECT_GE(steps[s].start, steps[s - 1].end) << steps[s].stage;
    }
    const bool has_dc = std::any_of(row.begin(), row.end(), [](const Interval& i) {
      return i.stage == "dc" && i.thread == "dc";
    });
    EXPECT_EQ(has_dc, r == 0) << "the D&C thread runs on engine rank 0 only";
    const auto release = std::find_if(row.begin(), row.end(), [](const Interval& i) {
      return i.stage == "engine_release" && i.thread == "release";
    });
    ASSERT_NE(release, row.end()) << "every engine rank releases its backend in a thread";
    EXPECT_GE(release->start, main[at("gemm")].end - 1e-4)
        << "the release starts after the final GEMM";
    for (const Interval& i : row)
      if (i.stage == "dc") {
        EXPECT_GE(i.start, main[at("bulge_chasing")].end - 1e-4)
            << "D&C starts after bulge chasing";
        EXPECT_LE(i.end, main[at("dc_wait")].end + 1e-4)
            << "D&C ends within its wait, before Q_d moves";
      }
  }
}

// A first call whose engine ranks' A buffers are fresh memory: each populates its buffer in a
// thread of its own ("populate" row), from after the plan, finished within the redistribution in.
TEST(Timeline, FirstCallPopulatesItsABufferInAThreadOfItsOwn) {
  // An engine rank's columns of A past the smallest kept buffer (8 MiB): fresh pages.
  int size = 1;
  const std::optional<std::string> timeline = one_call_timeline('N', 1500, 32, 0, 79, &size);
  if (!timeline) return;
  const std::string& text = *timeline;
  std::map<int, std::map<std::string, Interval>> rows;
  for (const Interval& i : read_intervals(text)) rows[i.rank][i.stage + "/" + i.thread] = i;
  ASSERT_EQ(static_cast<int>(rows.size()), size);
  for (auto& [r, row] : rows) {
    SCOPED_TRACE("rank " + std::to_string(r));
    ASSERT_EQ(row.count("a_populate/populate"), 1u) << "the fresh buffer's population";
    ASSERT_EQ(row.count("plan/main"), 1u);
    ASSERT_EQ(row.count("redistribute_in/main"), 1u);
    const Interval& p = row["a_populate/populate"];
    EXPECT_GE(p.start, row["plan/main"].end - 1e-4) << "allocated after the plan";
    EXPECT_LE(p.start, row["redistribute_in/main"].start + 1e-4)
        << "begun before the redistribution";
    EXPECT_LE(p.end, row["redistribute_in/main"].end + 1e-4)
        << "finished within the redistribution";
  }
}

// "%c" in PIPEVD_TIMELINE becomes the process's timed-call number: two calls, two files (the
// first call's timeline kept beside the repeated call's), each with every rank's intervals.
TEST(Timeline, CallNumberInThePathKeepsEachCallsFile) {
  const char* asked = std::getenv("PIPEVD_TIMELINE");
  if (!asked || std::string(asked).find("%c") == std::string::npos)
    GTEST_SKIP() << "registered with %c in PIPEVD_TIMELINE";
  const std::string pattern = asked;
  const auto path_of = [&](const std::string& call) {
    return pattern.substr(0, pattern.find("%c")) + call + pattern.substr(pattern.find("%c") + 2);
  };
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0)
    for (const char* call : {"1", "2", "3", "%c"}) std::remove(path_of(call).c_str());
  MPI_Barrier(MPI_COMM_WORLD);

  const GridShape shape = grid_shape('s');
  BlacsGrid grid(shape.nprow, shape.npcol, shape.order);
  const int n = 157;
  const BlockCyclicLayout layout{n, n, 16, 16, 0, 0, 2};
  for (int call = 0; call < 2; ++call) {
    DistributedMatrix a(grid, layout), z(grid, layout);
    a.fill([](long i, long j) { return random_symmetric_entry(i, j, 73); });
    std::vector<double> w(n);
    ASSERT_EQ(call_pdsyevd('V', 'L', n, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc),
              0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) return;
  for (const char* call : {"1", "2"}) {
    std::ifstream f(path_of(call));
    ASSERT_TRUE(f.good()) << path_of(call);
    std::stringstream ss;
    ss << f.rdbuf();
    std::map<int, int> per_rank;
    for (const Interval& i : read_intervals(ss.str())) ++per_rank[i.rank];
    EXPECT_EQ(static_cast<int>(per_rank.size()), size) << path_of(call);
  }
  EXPECT_FALSE(std::ifstream(path_of("3")).good()) << "two calls, two files";
  EXPECT_FALSE(std::ifstream(path_of("%c")).good()) << "the pattern itself is no file name";
}

}  // namespace
}  // namespace pipevd::test
