// Time to move an n x n symmetric matrix block-cyclic -> engine columns and engine rows ->
// block-cyclic, next to ScaLAPACK's PDGEMR2D between the same two layouts and a plain
// MPI_Alltoall of the same byte count, in the same run.
//
//   mpiexec -n 4 redistribute_bench [n=16384] [nb=64] [repetitions=3] [engine_ranks_per_node=ranks]
//                                   [pdgemr2d=1] [variants=typed1,typed,packed] [max_threads=0]
//                                   [segment_mib=0]
//
// pdgemr2d=0 leaves PDGEMR2D out (quicker runs when only ours and the all-to-all are compared).
// variants: the settings of ours to time side by side, each "typed" (messages of long segments
// described in place by datatypes, the default) or "packed" (every message packed, contiguous
// exchange), followed by a thread count for packing and unpacking (none: the default, from the
// affinity mask, capped by max_threads), then optionally cK: K chunks, packing and unpacking
// overlapping nonblocking all-to-alls (packs everything). typed1 = the settings before threads;
// packedc4 = packed, default threads, 4 chunks. "push" and "pull" (pushN, pullN): both ways
// through a shared window when all ranks are on one node (ExchangeOptions::node_memory, no
// messages; block_cyclic_to_engine_on_node.hpp, engine_to_block_cyclic_on_node.hpp: "out" pulls
// for both); pullplain, pushplain...: without non-temporal stores
// (ExchangeOptions::streaming_stores). max_threads > 0 caps the default thread count (what
// PIPEVD_THREADS does for pdsyevd_), for the variants that name none. segment_mib > 0: the node
// window's segments hold at most this many MiB (ExchangeOptions::node_segment_bytes; past it in
// rounds), else the default.
//
// Bytes compared: MPI_Alltoall moves n^2/P^2 doubles per pair (self included), n^2 doubles in
// all; ours moves n^2 doubles in all too (the engine's columns, each rank's own part copied
// locally as the all-to-all's self part is), but "in" reads only the stored triangle (n^2/2) and
// writes its off-diagonal part twice (the symmetrisation).
//
// Each time is the slowest rank's, after a barrier; the operations take turns in every
// repetition; the table gives the best and the median of the repetitions, GB/s of the best
// (matrix bytes over time), and ratios best/best and median/median against the same run's
// MPI_Alltoall and PDGEMR2D. Phases of push and pull: pack = the copy into the window ("in"
// push: every element at its engine place; "in" pull: the stored triangle of the local array;
// "out": the engine's rows), exchange = the barrier, unpack = the copy out of it ("in" push: the
// engine's segment, contiguous; "in" pull: the engine's columns' elements from every process's
// segment; "out": each process's local Z from the engines' segments).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "base/scalapack_api.hpp"
#include "redistribute/block_cyclic_to_engine.hpp"
#include "redistribute/engine_comm.hpp"
#include "redistribute/engine_to_block_cyclic.hpp"
#include "redistribute/node_window.hpp"
#include "redistribute/parallel_pieces.hpp"

extern "C" {
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridexit(int ictxt);
}

namespace {

struct Stats {
  double best = 0, median = 0;
};

// One timed run of f after a barrier: the slowest rank's time.
double time_once(const std::function<void()>& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  f();
  double dt = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return dt;
}

Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

int grid_ctxt(int nprow, int npcol, const std::vector<int>& usermap) {
  int ctxt = 0;
  Cblacs_get(0, 0, &ctxt);
  std::vector<int> map = usermap;
  Cblacs_gridmap(&ctxt, map.data(), nprow, nprow, npcol);
  return ctxt;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? std::atoi(argv[1]) : 16384;
  const int nb = argc > 2 ? std::atoi(argv[2]) : 64;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const int g = argc > 4 && std::atoi(argv[4]) > 0 ? std::atoi(argv[4]) : size;
  const bool with_gemr = argc > 5 ? std::atoi(argv[5]) != 0 : true;
  const int max_threads = argc > 7 ? std::atoi(argv[7]) : 0;
  const long segment_mib = argc > 8 ? std::atol(argv[8]) : 0;
  struct Variant {
    std::string name;
    pipevd::ExchangeOptions options;
    pipevd::PhaseTimes in_phases, out_phases;  // repetitions after the first (when reps > 1)
    pipevd::PhaseTimes first_in, first_out;    // the first: fresh buffers or window pages
    std::vector<double> t_in, t_out;
  };
  std::vector<Variant> variants;
  {
    std::stringstream list(argc > 6 ? argv[6] : "typed1,typed,packed");
    for (std::string v; std::getline(list, v, ',');) {
      Variant var;
      var.name = v;
      const bool push = v.rfind("push", 0) == 0, pull = v.rfind("pull", 0) == 0;
      const bool node = push || pull, plain = node && v.rfind("plain", 4) == 4;
      const bool packed = node || v.rfind("packed", 0) == 0;
      if (!packed && v.rfind("typed", 0) != 0) {
        if (rank == 0) std::fprintf(stderr, "unknown variant %s\n", v.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      if (packed) var.options.min_typed_segment = 1L << 40;
      var.options.node_memory = push   ? pipevd::NodeMemory::push
                                : pull ? pipevd::NodeMemory::pull
                                       : pipevd::NodeMemory::off;
      var.options.streaming_stores = !plain;
      if (segment_mib > 0) var.options.node_segment_bytes = segment_mib << 20;
      std::string rest = v.substr(plain ? 9 : node ? 4 : packed ? 6 : 5);
      const size_t c = rest.find('c');
      if (c != std::string::npos) {
        var.options.chunks = std::atoi(rest.c_str() + c + 1);
        rest = rest.substr(0, c);
      }
      var.options.threads = rest.empty() ? 0 : std::atoi(rest.c_str());
      if (var.options.threads == 0 && max_threads > 0) var.options.threads = -1;  // capped below
      variants.push_back(var);
    }
  }

  // The caller's grid: the squarest, row-major.
  int nprow = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) nprow = d;
  const int npcol = size / nprow;
  int ictxt = 0;
  Cblacs_get(0, 0, &ictxt);
  Cblacs_gridinit(&ictxt, "R", nprow, npcol);
  int myrow, mycol, pr, pc;
  Cblacs_gridinfo(ictxt, &pr, &pc, &myrow, &mycol);
  const int zero = 0, one = 1;
  const int lr = numroc_(&n, &nb, &myrow, &zero, &nprow),
            lc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  const int lld = std::max(1, lr);
  int desc[9], info = 0;
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ictxt, &lld, &info);
  std::vector<double> a(static_cast<size_t>(lld) * std::max(1, lc)), z(a.size());
  for (size_t k = 0; k < a.size(); ++k) a[k] = std::sin(static_cast<double>(k + rank));

  // Engine layout: even column and row blocks, so PDGEMR2D can describe it (1 x E and E x 1).
  const pipevd::EngineComm& comm = pipevd::engine_comm_for(ictxt, g);
  const int engines = comm.engine_ranks();
  const int w = (n + engines - 1) / engines;
  pipevd::EngineLayout layout;
  layout.n = n;
  for (int e = 0; e <= engines; ++e) layout.col_begin.push_back(std::min<long>(n, 1L * e * w));
  layout.row_begin = layout.col_begin;
  const int default_threads =
      pipevd::redistribution_threads(0, pipevd::ranks_on_this_node(comm.caller));
  for (Variant& v : variants)
    if (v.options.threads < 0) v.options.threads = std::min(default_threads, max_threads);
  // Whether push and pull can take the shared window or fall back to packed messages.
  const bool one_node = pipevd::ranks_on_this_node(comm.caller) == size;
  const bool have_window = one_node && pipevd::node_window(comm.caller, 0, 1) != nullptr;
  const int e = comm.engine_rank;
  const long width = e >= 0 ? layout.width(e) : 0;
  std::vector<double> cols(static_cast<size_t>(n) * std::max(1L, width));

  // The engine layouts as block-cyclic descriptors over the engine ranks (world ranks here).
  std::vector<int> engine_world(engines);
  {
    MPI_Group caller, world;
    MPI_Comm_group(comm.caller, &caller);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_translate_ranks(caller, engines, comm.engine_to_caller.data(), world,
                              engine_world.data());
    MPI_Group_free(&caller);
    MPI_Group_free(&world);
  }
  const int cols_ctxt = grid_ctxt(1, engines, engine_world);
  const int rows_ctxt = grid_ctxt(engines, 1, engine_world);
  int desc_cols[9] = {0, -1, 0, 0, 1, 1, 0, 0, 1}, desc_rows[9] = {0, -1, 0, 0, 1, 1, 0, 0, 1};
  if (e >= 0) {
    descinit_(desc_cols, &n, &n, &n, &w, &zero, &zero, &cols_ctxt, &n, &info);
    const int ldr = std::max(1L, width);
    descinit_(desc_rows, &n, &n, &w, &n, &zero, &zero, &rows_ctxt, &ldr, &info);
  }
  int all_ctxt = 0;
  Cblacs_get(0, 0, &all_ctxt);
  Cblacs_gridinit(&all_ctxt, "R", 1, size);

  // The same bytes (n^2 doubles over all ranks) in equal pieces, one MPI_Alltoall.
  const long per_peer = static_cast<long>(n) * n / (static_cast<long>(size) * size);
  std::vector<double> s(static_cast<size_t>(per_peer) * size, 1.0), r(s.size());

  // The operations take turns within each repetition, so that a busy machine slows them alike.
  std::vector<double> t_gemr_in, t_gemr_out, t_plain;
  for (int rep = 0; rep < reps; ++rep) {
    for (Variant& v : variants) {
      v.t_in.push_back(time_once([&] {
        pipevd::block_cyclic_to_engine('L', n, a.data(), 1, 1, desc, layout, comm,
                                       e >= 0 ? cols.data() : nullptr, v.options,
                                       rep == 0 && reps > 1 ? &v.first_in : &v.in_phases);
      }));
      v.t_out.push_back(time_once([&] {
        pipevd::engine_to_block_cyclic(n, e >= 0 ? cols.data() : nullptr, layout, comm, z.data(), 1,
                                       1, desc, v.options,
                                       rep == 0 && reps > 1 ? &v.first_out : &v.out_phases);
      }));
    }
    if (with_gemr) {
      t_gemr_in.push_back(time_once([&] {
        pdgemr2d_(&n, &n, a.data(), &one, &one, desc, cols.data(), &one, &one, desc_cols,
                  &all_ctxt);
      }));
      t_gemr_out.push_back(time_once([&] {
        pdgemr2d_(&n, &n, cols.data(), &one, &one, desc_rows, z.data(), &one, &one, desc,
                  &all_ctxt);
      }));
    }
    t_plain.push_back(time_once([&] {
      MPI_Alltoall(s.data(), static_cast<int>(per_peer), MPI_DOUBLE, r.data(),
                   static_cast<int>(per_peer), MPI_DOUBLE, MPI_COMM_WORLD);
    }));
  }
  if (!with_gemr) t_gemr_in = t_gemr_out = {0.0};
  const Stats gemr_in = stats_of(t_gemr_in), gemr_out = stats_of(t_gemr_out),
              plain = stats_of(t_plain);

  if (rank == 0) {
    const double gb = 8.0 * n * n / 1e9;
    std::printf("n=%d nb=%d ranks=%d grid=%dx%d engine_ranks=%d reps=%d (matrix %.2f GB)\n", n, nb,
                size, nprow, npcol, engines, reps, gb);
    // Ratios: best against best and median against median of the same run.
    std::printf(
        "threads (this rank's default): %d, cap %d; node window (push, pull): %s, segments of at "
        "most %ld MiB\n",
        default_threads, max_threads,
        !one_node     ? "no, ranks on several nodes"
        : have_window ? "yes"
                      : "refused by MPI",
        variants.empty() ? 0L : variants.front().options.node_segment_bytes >> 20);
    std::printf("%-32s %8s %8s %8s %17s %17s\n", "operation", "best s", "median s", "GB/s",
                "vs alltoall b/m", "vs PDGEMR2D b/m");
    auto row = [&](const char* name, Stats s, const Stats* plain_ref, const Stats* gemr_ref) {
      std::printf("%-32s %8.3f %8.3f %8.2f", name, s.best, s.median, gb / s.best);
      if (plain_ref)
        std::printf("     %5.2fx %5.2fx", s.best / plain_ref->best, s.median / plain_ref->median);
      else
        std::printf(" %17s", "");
      if (gemr_ref)
        std::printf("     %5.2fx %5.2fx", s.best / gemr_ref->best, s.median / gemr_ref->median);
      std::printf("\n");
    };
    for (const Variant& v : variants) {
      row(("in  " + v.name + ": block-cyclic -> engine").c_str(), stats_of(v.t_in), &plain,
          with_gemr ? &gemr_in : nullptr);
      row(("out " + v.name + ": engine -> block-cyclic").c_str(), stats_of(v.t_out), &plain,
          with_gemr ? &gemr_out : nullptr);
    }
    if (with_gemr) {
      row("PDGEMR2D block-cyclic -> 1xE", gemr_in, &plain, nullptr);
      row("PDGEMR2D Ex1 -> block-cyclic", gemr_out, &plain, nullptr);
    }
    row("MPI_Alltoall, same bytes", plain, nullptr, nullptr);
  }
  // Phases, mean over the repetitions after the first, slowest rank per phase (own, mirror:
  // summed over threads); then the first call's times, where the first variant to use the kept
  // message buffers or node window pays for their fresh pages.
  for (Variant& v : variants)
    for (pipevd::PhaseTimes* p : {&v.in_phases, &v.out_phases}) {
      double t[7] = {p->plan, p->pack, p->exchange, p->unpack, p->own, p->mirror, p->types};
      for (double& x : t) x /= std::max(1, reps - 1);
      MPI_Allreduce(MPI_IN_PLACE, t, 7, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0)
        std::printf(
            "phases %-3s %-8s plan %.3f  pack %.3f (own %.3f, mirror %.3f thread-s)  types %.3f  "
            "exchange %.3f  unpack %.3f s\n",
            p == &v.in_phases ? "in" : "out", v.name.c_str(), t[0], t[1], t[4], t[5], t[6], t[2],
            t[3]);
    }
  for (Variant& v : variants) {
    double t[2] = {v.first_in.plan, v.first_out.plan};
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && reps > 1)
      std::printf("first call %-8s in %.3f s (plan %.3f)  out %.3f s (plan %.3f)\n", v.name.c_str(),
                  v.t_in.front(), t[0], v.t_out.front(), t[1]);
  }
  if (e >= 0) {
    Cblacs_gridexit(cols_ctxt);
    Cblacs_gridexit(rows_ctxt);
  }
  Cblacs_gridexit(all_ctxt);
  Cblacs_gridexit(ictxt);
  MPI_Finalize();
  return 0;
}
