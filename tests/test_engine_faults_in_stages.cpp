// A failure inside an engine stage that sends messages, on one engine rank (core/fault_injection's
// steps inside the stages: A's upload, an outer block's buffers in DBBR (its first, middle and
// last block), a panel's own work between DBBR's messages, the band's, the row block X's and Q_d's
// buffers, SBR-back's start beside DBBR and its queueing in a thread of its own): the call returns
// on every rank, which the test's timeout (far below any wait for a rank that left) checks, with
// the same INFO (-1002 out of memory, -1003 otherwise) and A, W and Z untouched; under
// PIPEVD_BACKEND=auto the call goes to ScaLAPACK instead, whose result passes the residual checks.
// The next call, fault cleared, is right. Every caller rank is an engine rank (the host engine on
// one node, the GPU engine with a GPU per rank), and PIPEVD_BAND and PIPEVD_BLOCK
// (tests/CMakeLists.txt) give DBBR several outer blocks on each rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/fault_injection.hpp"
#include "interface/engine_options.hpp"
#include "interface/info_codes.hpp"
#include "interface/policy.hpp"
#include "tests/support/accuracy.hpp"
#include "tests/support/distributed_matrix.hpp"
#include "tests/support/interposed_pdsyevd.hpp"

namespace pipevd::test {
namespace {

constexpr int kN = 150, kNb = 8;
constexpr double kSentinel = -1.5;

bool forwards() {
  const char* s = std::getenv("PIPEVD_BACKEND");
  return s && std::string(s) == "auto";
}

struct Step {
  std::string name;
  long index;
  FaultInjection::Kind kind;
};

std::string describe(const Step& s, int rank) {
  return s.name + (s.index >= 0 ? " " + std::to_string(s.index) : "") + " on engine rank " +
         std::to_string(rank) + " kind " + std::to_string(s.kind);
}

bool on_gpu() {
  const char* backend = std::getenv("PIPEVD_BACKEND");
  return backend && std::string(backend) != "host";
}

// The engine's options as the route makes them for this test's calls: on the GPU engine one
// engine rank per caller (n = 150 fits every rank's memory plan, so DBBR's columns stay as
// engine_options chooses them).
EngineOptions route_options() {
  return engine_options(process_policy().policy, true, on_gpu() ? world_size() : 0);
}

// SBR-back beside DBBR as the route takes it for this test's calls (several engine ranks, asked
// for), and SBR-back queued on a companion (beside DBBR, or beside bulge chasing on the GPU engine
// unless off; n = 150 fits every rank's memory plan with it).
bool sbr_back_beside_dbbr(const std::string& setting) {
  return setting == "dbbr" && world_size() > 1;
}
bool sbr_back_queued(const std::string& setting) {
  return sbr_back_beside_dbbr(setting) || (on_gpu() && setting != "off");
}

// The steps to fail: the binding (where NCCL's communicator is made or found), DBBR's first,
// middle and last outer block (as the route's layout and its DBBR columns have them) and the
// second panel of its middle block (its messages half done), with several engine ranks the move
// of the columns into DBBR's cyclic outer blocks, beside the single ones; where SBR-back is queued
// on a companion, its queueing in a thread of its own, and beside DBBR its start after DBBR.
std::vector<Step> steps() {
  const EngineOptions opt = route_options();
  const long b = opt.b;
  const long bw = effective_bandwidth(kN, b);
  DbbrOptions dbbr{b, opt.k};
  dbbr.cyclic_blocks = opt.dbbr_cyclic_blocks;
  const std::vector<OuterBlock> blocks =
      outer_blocks(plan_engine_layout(kN, world_size(), b), dbbr);
  const long last = static_cast<long>(blocks.size()) - 1, mid = last / 2;
  const OuterBlock& middle = blocks[mid];
  const long panel = (middle.end - middle.begin > bw ? middle.begin + bw : middle.begin) / bw;
  const auto oom = FaultInjection::OutOfMemory;
  std::vector<Step> list = {{"bind", -1, FaultInjection::Communication},
                            {"upload", -1, oom},
                            {"dbbr_outer_block", 0, oom},
                            {"dbbr_outer_block", mid, oom},
                            {"dbbr_outer_block", last, oom},
                            {"dbbr_panel", panel, oom},
                            {"dbbr_panel", panel, FaultInjection::Device},
                            {"gather_band", -1, oom},
                            {"x_allocation", -1, oom},
                            {"qd_allocation", -1, oom}};
  if (dbbr.cyclic_blocks && world_size() > 1)
    list.push_back({"column_exchange", -1, FaultInjection::Device});
  const std::string beside = process_policy().policy.sbr_back_beside;
  if (sbr_back_beside_dbbr(beside)) list.push_back({"sbr_back_start", -1, oom});
  if (sbr_back_queued(beside)) {
    list.push_back({"sbr_back_queue", -1, oom});
    list.push_back({"sbr_back_queue", -1, FaultInjection::Device});
  }
  return list;
}

std::vector<double> full_matrix(double (*entry)(long, long)) {
  std::vector<double> full(static_cast<std::size_t>(kN) * kN);
  for (long j = 0; j < kN; ++j)
    for (long i = 0; i < kN; ++i) full[i + j * kN] = entry(i, j);
  return full;
}

double entry(long i, long j) { return random_symmetric_entry(i, j, 23); }

// Z and W of a call that returned 0: the residual and orthogonality ScaLAPACK's tester accepts,
// the eigenvalues LAPACK's.
void expect_right(const BlacsGrid& grid, const DistributedMatrix& z, const std::vector<double>& w,
                  const std::vector<double>& full, const std::vector<double>& w_ref) {
  const std::vector<double> z_full = z.gather(grid);
  EXPECT_LE(residual(kN, full, z_full, w), kScalapackThreshold);
  EXPECT_LE(orthogonality(kN, z_full), kScalapackThreshold);
  EXPECT_LE(eigenvalue_difference(w, w_ref), 1e-12);
}

TEST(EngineFaultsInStages, OneRanksFailureReturnsOnEveryRank) {
  const GridShape shape = squarest_grid(world_size());
  BlacsGrid grid(shape.nprow, shape.npcol);
  const BlockCyclicLayout layout{kN, kN, kNb, kNb, 0, 0, 0};
  const std::vector<double> full = full_matrix(entry);
  const std::vector<double> w_ref = lapack_eigenvalues(kN, full);
  for (const Step& step : steps())
    for (int rank = 0; rank < world_size(); ++rank) {
      SCOPED_TRACE(describe(step, rank));
      DistributedMatrix a(grid, layout), z(grid, layout);
      a.fill(entry);
      z.fill([](long, long) { return kSentinel; });
      const std::vector<double> a_before = a.local, z_before = z.local;
      std::vector<double> w(kN, kSentinel);
      set_fault_injection({step.name, rank, step.kind, step.index});
      const int info =
          call_pdsyevd('V', 'L', kN, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc);
      set_fault_injection({});
      EXPECT_TRUE(same_on_every_rank(info)) << "ranks returned different INFO";
      if (forwards()) {
        ASSERT_EQ(info, 0);
        expect_right(grid, z, w, full, w_ref);
      } else {
        EXPECT_EQ(info,
                  step.kind == FaultInjection::OutOfMemory ? kInfoOutOfMemory : kInfoEngineFailure);
        EXPECT_EQ(a.local, a_before) << "A changed";
        EXPECT_EQ(z.local, z_before) << "Z changed";
        for (double v : w) ASSERT_EQ(v, kSentinel) << "W changed";
      }
      // The next call, without the fault, is right.
      a.fill(entry);
      ASSERT_EQ(
          call_pdsyevd('V', 'L', kN, a.data(), 1, 1, a.desc, w.data(), z.data(), 1, 1, z.desc), 0);
      expect_right(grid, z, w, full, w_ref);
    }
}

}  // namespace
}  // namespace pipevd::test
