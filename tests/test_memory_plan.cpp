// The engine's device memory plan (core/memory_plan.hpp) and the decision built on it
// (core/memory_check.hpp): the prediction grows with n, bounds the peak a counting backend
// (HostBackend's allocate/release accounting) measures while run_engine runs, on every rank count,
// with DBBR's columns cyclic (their move there included) or blockwise, and is not loose by more
// than the GPU-only buffers; the usable bytes, margin and fit test; the collective check agrees on
// every rank; the complex plan on the GPU and the reflectors' host copies; the D&C's top merge
// folded into the final GEMM, and the call plan's agreed choice of it; and the n = 49152 plan on
// one 80 GB H100.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/call_plan.hpp"
#include "core/dbbr.hpp"
#include "core/engine.hpp"
#include "core/engine_plan.hpp"
#include "core/host_memory_room.hpp"
#include "core/memory_check.hpp"
#include "core/memory_plan.hpp"
#include "core/reflector_store.hpp"
#include "host/host_backend.hpp"
#include "interface/policy.hpp"
#include "tests/support/blacs_grid.hpp"

namespace pipevd {
namespace {

using test::world_rank;
using test::world_size;

TEST(MemoryPlan, MonotoneInN) {
  for (bool vectors : {true, false})
    for (int ranks : {1, 3}) {
      long last = 0;
      for (long n = 1; n <= 3000; n += n < 100 ? 7 : 173) {
        const EngineLayout L = plan_engine_layout(n, ranks, 32);
        long worst = 0;
        for (int r = 0; r < ranks; ++r)
          worst = std::max(worst, plan_engine_memory(L, r, 32, 1024, vectors).peak);
        EXPECT_GE(worst, last) << "n=" << n << " ranks=" << ranks << " vectors=" << vectors;
        last = worst;
      }
    }
}

// The prediction (without the GPU backend's own buffers) against the measured peak of the host
// backend's allocations, for several n, b, k and JOBZ on this run's rank count.
// DBBR's A W through the one-triangle kernel (the route's default on a device that has it): DBBR's
// stage gains its workspace on the rank whose columns reach n (gpu/symmetric_product.cuh: about
// m^2/16 doubles, above it for small m), at most kSymmetricProductWorkspace; nothing on the other
// ranks, on the host engine, or where the backend takes its GEMMs (b > 32, or fewer than
// kSymmetricProductMinRows rows in the rank's first panel). With DBBR's cyclic outer blocks the
// rank reaching n is the last block's owner, whose rows are that block's.
TEST(MemoryPlan, SymmetricProductWorkspaceOnTheRankReachingN) {
  const auto extra = [](const EngineLayout& L, int r, bool gpu, long b = 32, long k = 1024,
                        bool cyclic = false) {
    const EngineMemoryPlan with =
        plan_engine_memory(L, r, b, k, false, gpu, false, false, true, false, 1, cyclic);
    const EngineMemoryPlan without =
        plan_engine_memory(L, r, b, k, false, gpu, false, false, false, false, 1, cyclic);
    EXPECT_EQ(without.symmetric_product_workspace, 0);
    // DBBR's stage holds the larger of this and the trailing syr2k's workspace.
    EXPECT_EQ(with.dbbr - without.dbbr,
              std::max(0L, with.symmetric_product_workspace - with.syr2k_workspace));
    return with.symmetric_product_workspace;
  };
  for (long n : {8224L, 12288L, 20000L}) {
    const EngineLayout one = plan_engine_layout(n, 1, 32);
    EXPECT_GE(extra(one, 0, true), n * n / 16) << n;
    EXPECT_LE(extra(one, 0, true), n * n / 8) << n;
    EXPECT_EQ(extra(one, 0, false), 0) << n;
    EXPECT_EQ(extra(plan_engine_layout(n, 1, 64), 0, true, 64), 0) << n;  // b > 32: GEMMs
    const EngineLayout two = plan_engine_layout(n, 2, 32);
    EXPECT_EQ(extra(two, 0, true), 0) << n;
    const long m1 = n - two.col_begin[1] - 32;  // rank 1's first panel
    if (m1 >= kSymmetricProductMinRows)
      EXPECT_GT(extra(two, 1, true), 0) << n;
    else
      EXPECT_EQ(extra(two, 1, true), 0) << n;
    for (int r = 0; r < 2; ++r)  // the last outer block, < 1024 rows
      EXPECT_EQ(extra(two, r, true, 32, 1024, true), 0) << n << " cyclic, rank " << r;
    EXPECT_EQ(extra(one, 0, true, 32, 1024, true), extra(one, 0, true)) << n << " cyclic, 1 rank";
  }
  // Cyclic, two outer blocks of 16384: the second one's owner, rank 1, runs the kernel.
  const EngineLayout two = plan_engine_layout(32768, 2, 32);
  EXPECT_EQ(extra(two, 0, true, 32, 16384, true), 0);
  EXPECT_GE(extra(two, 1, true, 32, 16384, true), 16384L * 16384 / 16);
  EXPECT_EQ(extra(plan_engine_layout(8223, 1, 32), 0, true), 0);  // m = 8191: GEMMs
  EXPECT_EQ(extra(plan_engine_layout(65536, 1, 32), 0, true), kSymmetricProductWorkspace);
}

// gpu/syr2k's workspace for DBBR's trailing update (the packed [A B], [B A] up to depth
// kSyr2kPackMaxK, and the diagonal blocks' products): on a device backend only, sized for the
// widest of the rank's segments of DBBR's columns (blockwise its own columns, one rank the
// trailing matrix right of the first panel; cyclic an outer block).
TEST(MemoryPlan, Syr2kWorkspaceOfTheTrailingUpdate) {
  const Syr2kWorkspace w = syr2k_workspace(1000, 96);
  EXPECT_EQ(w.diagonal_block, 512);
  EXPECT_EQ(w.diagonal, 2 * 512 * 512);  // two blocks, the second one cut by n
  EXPECT_EQ(w.packed, 4 * 1000 * 96);
  EXPECT_EQ(syr2k_workspace(1000, kSyr2kPackMaxK + 1).packed, 0);  // two GEMMs, nothing packed
  EXPECT_EQ(syr2k_workspace(100, 8).diagonal_block, 128);          // n rounded up to 32
  EXPECT_EQ(syr2k_workspace(0, 8).total(), 0);
  for (long n : {3001L, 32768L}) {
    const EngineLayout one = plan_engine_layout(n, 1, 32);
    const EngineMemoryPlan gpu = plan_engine_memory(one, 0, 32, 1024, true);
    EXPECT_EQ(gpu.syr2k_workspace, syr2k_workspace(n - 32, 1024).total()) << n;
    EXPECT_EQ(plan_engine_memory(one, 0, 32, 1024, true, false).syr2k_workspace, 0) << n;
    const EngineLayout two = plan_engine_layout(n, 2, 32);
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(plan_engine_memory(two, r, 32, 1024, true, true, false, false, false, false, 1,
                                   /*dbbr_cyclic=*/false)
                    .syr2k_workspace,
                syr2k_workspace(std::min(two.width(r), n - 32), 1024).total())
          << n << " rank " << r;
      // Cyclic outer blocks: each of the rank's blocks is a diagonal block of its own.
      EXPECT_EQ(plan_engine_memory(two, r, 32, 1024, true, true, false, false, false, false, 1,
                                   /*dbbr_cyclic=*/true)
                    .syr2k_workspace,
                syr2k_workspace(1024, 1024).total())
          << n << " rank " << r << " cyclic";
    }
  }
}

TEST(MemoryPlan, BoundsTheMeasuredPeak) {
  const int me = world_rank(), ranks = world_size();
  struct Case {
    long n, b, k;
  };
  // {400, 4, 8}: DBBR's outer blocks so narrow that, values only, moving the columns into the
  // cyclic ones (both copies of them at once) is the stage's peak.
  for (const Case c :
       {Case{37, 4, 8}, Case{150, 8, 32}, Case{257, 16, 64}, Case{400, 8, 64}, Case{400, 4, 8}})
    // vectors, values only, vectors overlapped, vectors with the D&C's top merge folded (the D&C's
    // companion allocates through the counting backend too); DBBR's columns cyclic or blockwise
    // and SBR-back beside DBBR (its companion's blocks counted too), cyclic or blockwise.
    for (int variant = 0; variant < 10; ++variant) {
      const bool beside_dbbr = variant >= 8;
      const bool vectors = beside_dbbr || variant % 4 != 1;
      const bool overlap = beside_dbbr || variant % 4 == 2;
      const bool fold = !beside_dbbr && variant % 4 == 3;
      const bool cyclic = variant < 4 || variant == 8;
      const EngineLayout L = plan_engine_layout(c.n, ranks, c.b);
      std::mt19937_64 gen(c.n);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<double> a(c.n * c.n);
      for (long j = 0; j < c.n; ++j)
        for (long i = j; i < c.n; ++i) a[i + j * c.n] = a[j + i * c.n] = u(gen);
      const long c0 = L.col_begin[me], w = L.width(me), ldz = std::max(1L, L.height(me));
      std::vector<double> mine(a.begin() + c0 * c.n, a.begin() + (c0 + w) * c.n);
      std::vector<double> ev(c.n), z(ldz * c.n);
      HostBackend be;
      EngineOptions opt;
      opt.b = c.b;
      opt.k = c.k;
      opt.want_vectors = vectors;
      opt.overlap_sbr_back = overlap;
      opt.sbr_back_beside_dbbr = beside_dbbr;
      opt.dbbr_cyclic_blocks = cyclic;
      if (fold) {
        opt.tridiagonal = TridiagonalSolver::Dc;
        opt.dc.leaf = 16;
        opt.dc_fold = true;
      }
      EngineStats st;
      ASSERT_EQ(run_engine(be, MPI_COMM_WORLD, L, mine.data(), ev.data(), z.data(), opt, &st), 0);
      EXPECT_EQ(st.dc_folded, fold);
      EXPECT_EQ(be.live_doubles(), 0) << "buffers left allocated";
      const EngineMemoryPlan p = plan_engine_memory(L, me, c.b, c.k, vectors, false, overlap, false,
                                                    false, fold, 1, cyclic, beside_dbbr);
      const long measured = be.peak_doubles();
      EXPECT_GE(p.peak, measured) << "n=" << c.n << " b=" << c.b << " k=" << c.k
                                  << " vectors=" << vectors << " overlap=" << overlap
                                  << " fold=" << fold << " cyclic=" << cyclic
                                  << " beside_dbbr=" << beside_dbbr << " rank " << me;
      // Not loose: within 1.6x of what was measured plus the few panel-sized terms bounded
      // generously (3 n k + 5 n b).
      EXPECT_LE(p.peak, 1.6 * measured + 3 * c.n * std::max(c.k, c.b) + 5 * c.n * c.b)
          << "n=" << c.n << " measured " << measured << " predicted " << p.peak;
    }
}

// The complex Hermitian engine: the plan with 16-byte elements (words = 2) bounds what the host
// backend holds at once, as tightly as the real plan.
TEST(MemoryPlan, BoundsTheMeasuredPeakOfTheComplexEngine) {
  const int me = world_rank(), ranks = world_size();
  struct Case {
    long n, b, k;
  };
  for (const Case c : {Case{37, 4, 8}, Case{150, 8, 32}, Case{257, 16, 64}})
    for (const bool vectors : {true, false}) {
      const EngineLayout L = plan_engine_layout(c.n, ranks, c.b);
      std::mt19937_64 gen(c.n);
      std::uniform_real_distribution<double> u(-1, 1);
      std::vector<Complex> a(c.n * c.n);
      for (long j = 0; j < c.n; ++j) {
        a[j + j * c.n] = u(gen);
        for (long i = j + 1; i < c.n; ++i) {
          a[i + j * c.n] = Complex(u(gen), u(gen));
          a[j + i * c.n] = std::conj(a[i + j * c.n]);
        }
      }
      const long c0 = L.col_begin[me], w = L.width(me), ldz = std::max(1L, L.height(me));
      std::vector<Complex> mine(a.begin() + c0 * c.n, a.begin() + (c0 + w) * c.n);
      std::vector<Complex> z(ldz * c.n);
      std::vector<double> ev(c.n);
      HostBackend be;
      EngineOptions opt;
      opt.b = c.b;
      opt.k = c.k;
      opt.want_vectors = vectors;
      ASSERT_EQ(run_engine(be, MPI_COMM_WORLD, L, mine.data(), ev.data(), z.data(), opt, nullptr),
                0);
      EXPECT_EQ(be.live_doubles(), 0) << "buffers left allocated";
      const EngineMemoryPlan p =
          plan_engine_memory(L, me, c.b, c.k, vectors, false, false, false, false, false, 2);
      const long measured = be.peak_doubles();
      EXPECT_GE(p.peak, measured) << "n=" << c.n << " b=" << c.b << " vectors=" << vectors;
      EXPECT_LE(p.peak, 1.6 * measured + 2 * (3 * c.n * std::max(c.k, c.b) + 5 * c.n * c.b))
          << "n=" << c.n << " measured " << measured << " predicted " << p.peak;
    }
}

// The GPU engine's complex plan: DBBR holds neither gpu/syr2k's nor the one-triangle A W's
// workspace (its complex kernels are cublasZher2k and ZGEMM), whatever the route asks; every buffer
// of bulge chasing (the band, its working copy, d and the subdiagonal, U) is 16-byte, and the final
// GEMM's X and Z are while Q_d stays real.
TEST(MemoryPlan, ComplexOnTheGpu) {
  for (int ranks : {1, 2, 4})
    for (long n : {1000L, 12288L, 32768L}) {
      const EngineLayout L = plan_engine_layout(n, ranks, 32);
      for (int r = 0; r < ranks; ++r) {
        SCOPED_TRACE("ranks=" + std::to_string(ranks) + " n=" + std::to_string(n) +
                     " rank=" + std::to_string(r));
        const EngineMemoryPlan z =
            plan_engine_memory(L, r, 32, 1024, true, true, false, false, true, false, 2);
        const EngineMemoryPlan d = plan_engine_memory(L, r, 32, 1024, true, true);
        EXPECT_EQ(z.syr2k_workspace, 0);
        EXPECT_EQ(z.symmetric_product_workspace, 0);
        EXPECT_EQ(z.bulge_chasing, 2 * d.bulge_chasing);
        const long ldx = std::max(1L, L.height(r));
        EXPECT_EQ(z.final_gemm, d.final_gemm + 2 * ldx * n);
        EXPECT_GT(z.peak, d.peak);
      }
    }
}

// The reflectors of bulge chasing on the host (host_reflector_doubles): the host engine's chase
// holds its whole store (v, tau and, complex, D with the chased subdiagonal); the GPU engine's
// chase keeps v and tau on the device, so only its complex D and subdiagonal (4n doubles) are on
// the host, not the n^2 doubles (8 GiB at n = 32768) of a host copy; nothing without eigenvectors.
TEST(MemoryPlan, ReflectorsOnTheHost) {
  for (long n : {1L, 2L, 3L, 37L, 1000L, 4099L})
    for (long b : {4L, 32L, 64L}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " b=" + std::to_string(b));
      const long bw = effective_bandwidth(n, b);
      const ComplexReflectorStore cu(n, bw);
      const ReflectorStore ru(n, bw);
      const long complex_store = 2 * static_cast<long>(cu.v.size() + cu.tau.size() + n);
      EXPECT_EQ(host_reflector_doubles(n, b, true, true, 2), 4 * n);
      EXPECT_EQ(host_reflector_doubles(n, b, true, false, 2), complex_store + 2 * n);
      EXPECT_EQ(host_reflector_doubles(n, b, true, false, 1),
                static_cast<long>(ru.v.size() + ru.tau.size()));
      EXPECT_EQ(host_reflector_doubles(n, b, true, true, 1), 0);
      for (bool gpu : {true, false})
        for (long words : {1L, 2L}) EXPECT_EQ(host_reflector_doubles(n, b, false, gpu, words), 0);
    }
  EXPECT_GE(host_reflector_doubles(32768, 32, true, false, 2), 32768L * 32768);
  EXPECT_EQ(host_reflector_doubles(32768, 32, true, true, 2), 4 * 32768L);
}

// The D&C's top merge folded into the final GEMM: on a device backend only engine rank 0's final
// GEMM grows (its D&C's two buffers through the product with Q_pre), by n^2, and stays below its
// BC-back next to the D&C with several ranks; the other ranks' plans are unchanged (Q_pre and X go
// before M comes). On the host engine the D&C's buffers count on rank 0 as well.
TEST(MemoryPlan, FoldGrowsOnlyRankZerosFinalGemm) {
  for (int ranks : {1, 2, 3, 4})
    for (long n : {37L, 1000L, 32768L, 49152L}) {
      const EngineLayout L = plan_engine_layout(n, ranks, 32, 0.05);
      for (int r = 0; r < ranks; ++r) {
        SCOPED_TRACE("ranks=" + std::to_string(ranks) + " n=" + std::to_string(n) +
                     " rank=" + std::to_string(r));
        for (bool gpu : {true, false}) {
          const EngineMemoryPlan whole = plan_engine_memory(L, r, 32, 1024, true, gpu);
          const EngineMemoryPlan fold =
              plan_engine_memory(L, r, 32, 1024, true, gpu, false, false, false, true);
          EXPECT_EQ(fold.dbbr, whole.dbbr);
          EXPECT_EQ(fold.bulge_chasing, whole.bulge_chasing);
          EXPECT_EQ(fold.final_gemm, whole.final_gemm + (r == 0 ? n * n : 0));
          if (gpu || r != 0)
            EXPECT_EQ(fold.back_transformation, whole.back_transformation);
          else  // BC-back next to the host engine's D&C through its backend: X, Q_pre and M
            EXPECT_GE(fold.back_transformation, std::max(1L, L.height(r)) * n + 2 * n * n);
          if (gpu && r != 0) EXPECT_EQ(fold.peak, whole.peak);
          if (gpu && ranks > 1 && n >= 1000) EXPECT_EQ(fold.peak, whole.peak) << "rank 0";
        }
      }
    }
}

// PIPEVD_DC_FOLD through the call plan, collective: auto folds with several engine ranks where
// every rank's plan with it fits (rank 0's alone falling short stops every rank's), on wherever
// stage 3 is dc with eigenvectors (its plan the one checked), off never; nowhere with dstedc or
// without eigenvectors. The same answer on every rank.
TEST(CallPlan, DcFoldIsAgreedOverTheRanks) {
  const int ranks = world_size(), me = world_rank();
  CallPlanInput in;
  in.n = 2000;
  in.engine_ranks = ranks;
  in.engine_rank = me;
  in.dc_solver = true;
  const auto fold = [&](DcFoldSetting setting, long free_bytes, bool vectors = true,
                        bool dc = true) {
    CallPlanInput i = in;
    i.dc_fold = setting;
    i.free_bytes = free_bytes;
    i.want_vectors = vectors;
    i.dc_solver = dc;
    const bool folds = plan_call(MPI_COMM_WORLD, i).dc_fold;
    EXPECT_TRUE(test::same_on_every_rank(folds ? 1 : 0));
    return folds;
  };
  EXPECT_EQ(fold(DcFoldSetting::Auto, -1), ranks > 1);
  EXPECT_TRUE(fold(DcFoldSetting::On, -1));
  EXPECT_FALSE(fold(DcFoldSetting::Off, -1));
  for (DcFoldSetting s : {DcFoldSetting::Auto, DcFoldSetting::On}) {
    EXPECT_FALSE(fold(s, -1, false)) << "JOBZ = N";
    EXPECT_FALSE(fold(s, -1, true, false)) << "dstedc";
  }
  // Rank 0 has room for the plan without the fold, not with it.
  const EngineLayout L = plan_engine_layout(in.n, ranks, in.b);
  const long whole = plan_engine_memory(L, 0, in.b, in.k, true, false).peak_bytes();
  const long folded =
      plan_engine_memory(L, 0, in.b, in.k, true, false, false, false, false, true).peak_bytes();
  const long room = whole + engine_memory_margin(whole);
  ASSERT_FALSE(engine_memory_fits(folded, room));
  EXPECT_FALSE(fold(DcFoldSetting::Auto, me == 0 ? room : -1));
  EXPECT_THROW(fold(DcFoldSetting::On, me == 0 ? room : -1), EngineMemoryShortage);
  EXPECT_EQ(fold(DcFoldSetting::Auto, me == 0 ? 2 * room : -1), ranks > 1);
  EXPECT_EQ(dc_fold_setting("on"), DcFoldSetting::On);
  EXPECT_EQ(dc_fold_setting("auto"), DcFoldSetting::Auto);
  EXPECT_EQ(dc_fold_setting("off"), DcFoldSetting::Off);
  EXPECT_THROW(dc_fold_setting("1"), std::invalid_argument);
}

// This rank's call plan on a GPU, n = 1000, every rank an engine rank, after `edit` changes the
// input.
template <class Edit>
CallPlan gpu_call_plan(Edit edit) {
  CallPlanInput in;
  in.n = 1000;
  in.engine_ranks = world_size();
  in.engine_rank = world_rank();
  in.on_gpu = true;
  edit(in);
  return plan_call(MPI_COMM_WORLD, in);
}

// PIPEVD_SBR_BACK_BESIDE through the call plan: SBR-back beside bulge chasing on a GPU engine
// rank with eigenvectors where the plan with it fits, unless the setting is off; never without
// eigenvectors or on the host engine.
TEST(CallPlan, SbrBackBesideFollowsTheSetting) {
  const auto beside = [](SbrBackBesideSetting setting, bool vectors = true, bool gpu = true) {
    return gpu_call_plan([&](CallPlanInput& i) {
             i.sbr_back_beside = setting;
             i.want_vectors = vectors;
             i.on_gpu = gpu;
           })
        .overlap_sbr_back;
  };
  EXPECT_TRUE(beside(SbrBackBesideSetting::Auto));
  EXPECT_TRUE(beside(SbrBackBesideSetting::On));
  EXPECT_FALSE(beside(SbrBackBesideSetting::Off));
  EXPECT_FALSE(beside(SbrBackBesideSetting::On, false)) << "JOBZ = N";
  EXPECT_FALSE(beside(SbrBackBesideSetting::On, true, false)) << "host engine";
  EXPECT_EQ(sbr_back_beside_setting("off"), SbrBackBesideSetting::Off);
  EXPECT_EQ(sbr_back_beside_setting("dbbr"), SbrBackBesideSetting::Dbbr);
  EXPECT_THROW(sbr_back_beside_setting("no"), std::invalid_argument);
}

// PIPEVD_SBR_BACK_BESIDE=dbbr through the call plan: beside DBBR (and so beside bulge chasing)
// with several engine ranks and eigenvectors, on the host engine too, where every engine rank's
// plan with it fits; where one rank's does not, every rank falls back to beside bulge chasing.
TEST(CallPlan, SbrBackBesideDbbrIsAgreedAndFallsBack) {
  const int me = world_rank(), ranks = world_size();
  const auto plan = [](bool vectors, bool gpu, long free_bytes) {
    return gpu_call_plan([&](CallPlanInput& i) {
      i.sbr_back_beside = SbrBackBesideSetting::Dbbr;
      i.want_vectors = vectors;
      i.on_gpu = gpu;
      i.free_bytes = free_bytes;
    });
  };
  for (const bool gpu : {true, false}) {
    const CallPlan p = plan(true, gpu, -1);
    EXPECT_EQ(p.sbr_back_beside_dbbr, ranks > 1) << "gpu " << gpu;
    EXPECT_EQ(p.overlap_sbr_back, ranks > 1 || gpu) << "gpu " << gpu;
  }
  EXPECT_FALSE(plan(false, true, -1).sbr_back_beside_dbbr) << "JOBZ = N";
  if (ranks < 2) return;
  // The last rank has room for beside bulge chasing, not beside DBBR.
  const EngineLayout L = plan_engine_layout(1000, ranks, 32);
  const int last = ranks - 1;
  const long chase =
      plan_engine_memory(L, last, 32, 1024, true, true, true, false, false, false).peak_bytes();
  const long dbbr =
      plan_engine_memory(L, last, 32, 1024, true, true, true, false, false, false, 1, false, true)
          .peak_bytes();
  const long room = chase + engine_memory_margin(chase);
  ASSERT_FALSE(engine_memory_fits(dbbr, room));
  const CallPlan p = plan(true, true, me == last ? room : -1);
  EXPECT_FALSE(p.sbr_back_beside_dbbr) << "agreed over the ranks";
  EXPECT_TRUE(p.overlap_sbr_back) << "beside bulge chasing instead";
}

// DBBR's cyclic columns through the call plan: forced, kept (or refused, where some engine rank
// cannot fit them); as the default (PIPEVD_DBBR_COLUMNS=auto), taken where every engine rank's plan
// with them fits and blockwise on every rank where one rank's does not. The same on every rank.
TEST(CallPlan, DbbrCyclicDefaultFallsBackToBlockwiseWhereItDoesNotFit) {
  const int me = world_rank(), ranks = world_size();
  const auto plan = [](bool cyclic, bool by_default, long free_bytes) {
    const CallPlan p = gpu_call_plan([&](CallPlanInput& i) {
      i.dbbr_cyclic = cyclic;
      i.dbbr_cyclic_default = by_default;
      i.free_bytes = free_bytes;
    });
    EXPECT_TRUE(test::same_on_every_rank(p.dbbr_cyclic ? 1 : 0));
    return p;
  };
  EXPECT_FALSE(plan(false, false, -1).dbbr_cyclic);
  EXPECT_FALSE(plan(false, true, -1).dbbr_cyclic);
  EXPECT_TRUE(plan(true, false, -1).dbbr_cyclic);
  EXPECT_TRUE(plan(true, true, -1).dbbr_cyclic);
  if (ranks < 2) return;
  // Rank 0, whose peak the cyclic columns raise at this order, has room for its blockwise plan
  // without overlaps, not for the cyclic one.
  const EngineLayout L = plan_engine_layout(1000, ranks, 32);
  const auto peak = [&](bool cyclic) {
    return plan_engine_memory(L, 0, 32, 1024, true, true, false, false, false, false, 1, cyclic)
        .peak_bytes();
  };
  const long room = peak(false) + engine_memory_margin(peak(false));
  ASSERT_FALSE(engine_memory_fits(peak(true), room));
  EXPECT_FALSE(plan(true, true, me == 0 ? room : -1).dbbr_cyclic) << "agreed over the ranks";
  EXPECT_THROW(plan(true, false, me == 0 ? room : -1), EngineMemoryShortage) << "forced";
}

// PIPEVD_DC_EARLY through the call plan: engine rank 0's D&C at SBR-back with several engine ranks
// (auto) or any number (on) where the plan with it fits, never with off, never on other ranks or
// without eigenvectors.
TEST(CallPlan, DcEarlyFollowsTheSetting) {
  const int ranks = world_size(), me = world_rank();
  const auto early = [](DcEarlySetting setting, bool vectors = true) {
    return gpu_call_plan([&](CallPlanInput& i) {
             i.dc_early = setting;
             i.want_vectors = vectors;
           })
        .dc_at_sbr_back;
  };
  EXPECT_EQ(early(DcEarlySetting::Auto), ranks > 1 && me == 0);
  EXPECT_EQ(early(DcEarlySetting::On), me == 0);
  EXPECT_FALSE(early(DcEarlySetting::Off));
  EXPECT_FALSE(early(DcEarlySetting::On, false)) << "JOBZ = N";
  EXPECT_EQ(dc_early_setting("on"), DcEarlySetting::On);
  EXPECT_THROW(dc_early_setting("early"), std::invalid_argument);
}

TEST(MemoryCheck, UsableBytesAndFit) {
  EXPECT_EQ(usable_engine_bytes(-1, 0), -1);  // host engine, no limit
  EXPECT_EQ(usable_engine_bytes(-1, 1000), 1000);
  EXPECT_EQ(usable_engine_bytes(5000, 1000), 1000);
  EXPECT_EQ(usable_engine_bytes(500, 1000), 500);
  EXPECT_EQ(usable_engine_bytes(500, 0), 500);
  EXPECT_TRUE(engine_memory_fits(1L << 40, -1));
  const long need = 10L << 30;
  EXPECT_FALSE(engine_memory_fits(need, need));  // the margin is required
  EXPECT_TRUE(engine_memory_fits(need, need + engine_memory_margin(need)));
  EXPECT_FALSE(engine_memory_fits(need, need + engine_memory_margin(need) - 1));
}

TEST(MemoryCheck, PolicyParsesTheLimit) {
  auto with = [](const char* value) {
    return parse_policy([value](const char* name) -> const char* {
      return std::string(name) == "PIPEVD_GPU_MEMORY_LIMIT" ? value : nullptr;
    });
  };
  EXPECT_EQ(with("123456789012").policy.gpu_memory_limit, 123456789012L);
  EXPECT_EQ(with(nullptr).policy.gpu_memory_limit, 0);
  EXPECT_EQ(with("").policy.gpu_memory_limit, 0);  // empty: unset
  for (const char* bad : {"0", "-5", "12GB"})
    EXPECT_NE(with(bad).error.find("PIPEVD_GPU_MEMORY_LIMIT"), std::string::npos) << bad;
}

// Collective: the rank that does not fit makes every rank throw, with its numbers.
TEST(MemoryCheck, ShortageIsAgreedOnEveryRank) {
  const int ranks = world_size(), me = world_rank();
  const EngineLayout L = plan_engine_layout(2000, ranks, 32);
  EXPECT_NO_THROW(check_engine_memory(MPI_COMM_WORLD, L, me, 32, 1024, true, true, -1, 0));
  const long need = plan_engine_memory(L, ranks - 1, 32, 1024, true).peak_bytes();
  // Only the last rank is short of memory (a mocked free byte count).
  const long free_bytes = me == ranks - 1 ? need : 1L << 50;
  try {
    check_engine_memory(MPI_COMM_WORLD, L, me, 32, 1024, true, true, free_bytes, 0);
    ADD_FAILURE() << "no EngineMemoryShortage on rank " << me;
  } catch (const EngineMemoryShortage& e) {
    EXPECT_NE(std::string(e.what()).find("(" + std::to_string(need) + " bytes"), std::string::npos)
        << e.what();
  }
  // PIPEVD_GPU_MEMORY_LIMIT caps even unlimited (host) memory, and is named.
  try {
    check_engine_memory(MPI_COMM_WORLD, L, me, 32, 1024, false, false, -1, 4096);
    ADD_FAILURE() << "limit ignored";
  } catch (const EngineMemoryShortage& e) {
    EXPECT_NE(std::string(e.what()).find("PIPEVD_GPU_MEMORY_LIMIT"), std::string::npos);
  }
}

// Issue 7's size on one GPU: the plan (its peak is BC-back next to the D&C), and that it fits an 80
// GB H100 (79.6 GiB usable of its 81559 MiB after the CUDA context).
// The memory cgroup's room: limit less usage, the least over the group and its ancestors, v1
// where its memory controller is mounted (also in a hybrid hierarchy), v2 otherwise; a missing
// group directory (a cgroup namespace) reads the mount's own files; "max" and v1's 2^63 - 4096
// are no limit.
TEST(HostMemoryRoom, CgroupLimitLessUsage) {
  namespace fs = std::filesystem;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const fs::path root = fs::temp_directory_path() / ("pipevd_cgroup_" + std::to_string(::getpid()) +
                                                     "_" + std::to_string(rank));
  fs::remove_all(root);
  auto put = [](const fs::path& dir, const char* file, const std::string& v) {
    fs::create_directories(dir);
    std::ofstream(dir / file) << v << "\n";
  };
  // v2: job limit 10 GiB with 4 GiB used, the step below it 8 GiB with 5 used: 3 GiB left.
  const long g = 1L << 30;
  put(root / "v2" / "job", "memory.max", std::to_string(10 * g));
  put(root / "v2" / "job", "memory.current", std::to_string(4 * g));
  put(root / "v2" / "job" / "step", "memory.max", std::to_string(8 * g));
  put(root / "v2" / "job" / "step", "memory.current", std::to_string(5 * g));
  EXPECT_EQ(cgroup_memory_room("0::/job/step\n", (root / "v2").string()), 3 * g);
  put(root / "v2" / "job" / "step", "memory.max", "max");
  EXPECT_EQ(cgroup_memory_room("0::/job/step\n", (root / "v2").string()), 6 * g);
  put(root / "v2" / "job", "memory.max", "max");
  EXPECT_EQ(cgroup_memory_room("0::/job/step\n", (root / "v2").string()), -1);
  // A namespace: the group's path is not under the mount; the mount's files are the group's.
  put(root / "ns", "memory.max", std::to_string(2 * g));
  put(root / "ns", "memory.current", std::to_string(g / 2));
  EXPECT_EQ(cgroup_memory_room("0::/elsewhere/x\n", (root / "ns").string()), g + g / 2);
  // v1 (hybrid: a unified line too): memory's own hierarchy, "no limit" as 2^63 rounded down.
  put(root / "v1" / "memory" / "job", "memory.limit_in_bytes", std::to_string(6 * g));
  put(root / "v1" / "memory" / "job", "memory.usage_in_bytes", std::to_string(g));
  put(root / "v1" / "memory", "memory.limit_in_bytes", "9223372036854771712");
  EXPECT_EQ(cgroup_memory_room("4:memory:/job\n0::/\n", (root / "v1").string()), 5 * g);
  EXPECT_EQ(cgroup_memory_room("4:memory:/\n0::/\n", (root / "v1").string()), -1);
  // Usage past the limit: no room, not a negative count.
  put(root / "v1" / "memory" / "job", "memory.usage_in_bytes", std::to_string(7 * g));
  EXPECT_EQ(cgroup_memory_room("4:cpu,memory:/job\n", (root / "v1").string()), 0);
  EXPECT_EQ(cgroup_memory_room("", (root / "v1").string()), -1);
  fs::remove_all(root);
}

TEST(MemoryPlan, N49152OnOneGpu) {
  const long n = 49152;
  const EngineLayout L = plan_engine_layout(n, 1, 32);
  const EngineMemoryPlan v = plan_engine_memory(L, 0, 32, 1024, true);
  const EngineMemoryPlan e = plan_engine_memory(L, 0, 32, 1024, false);
  const double gib = 1073741824.0, unit = 8.0 * n * n;
  if (world_rank() == 0)
    std::printf(
        "n=49152 one GPU, JOBZ=V: dbbr %.2f bc %.2f back %.2f gemm %.2f -> peak %.2f GiB "
        "(%.2f n^2 doubles); JOBZ=N peak %.2f GiB\n",
        8 * v.dbbr / gib, 8 * v.bulge_chasing / gib, 8 * v.back_transformation / gib,
        8 * v.final_gemm / gib, v.peak_bytes() / gib, v.peak_bytes() / unit, e.peak_bytes() / gib);
  EXPECT_TRUE(engine_memory_fits(static_cast<long>(v.peak_bytes()), static_cast<long>(79.6 * gib)));
  // BC-back next to the D&C on rank 0 is the largest stage.
  EXPECT_GE(v.back_transformation, std::max({v.dbbr, v.bulge_chasing, v.final_gemm}));
  EXPECT_LT(e.peak_bytes(), v.peak_bytes() / 2);
  // The D&C started at SBR-back (EngineOptions::dc_at_sbr_back) adds its 2 n^2 there: the route
  // must not choose it here (it does not fit), but it fits 2 ranks at n = 32768 on 80 GB.
  const EngineMemoryPlan early = plan_engine_memory(L, 0, 32, 1024, true, true, false, true);
  EXPECT_GT(early.back_transformation, v.back_transformation);
  EXPECT_FALSE(
      engine_memory_fits(static_cast<long>(early.peak_bytes()), static_cast<long>(79.6 * gib)));
  const EngineLayout two = plan_engine_layout(32768, 2, 32);
  EXPECT_TRUE(engine_memory_fits(
      static_cast<long>(plan_engine_memory(two, 0, 32, 1024, true, true, false, true).peak_bytes()),
      static_cast<long>(79.6 * gib)));
}

}  // namespace
}  // namespace pipevd
