#include "core/tridiagonal_dc.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/parallel_for.hpp"
#include "core/block_diagonal.hpp"
#include "core/lapack_prototypes.hpp"

namespace pipevd {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// mpirun binds each rank to one core by default, and the D&C thread inherits that binding, so its
// workers would share one core. The D&C thread's affinity is widened to every online CPU (the
// kernel keeps only those the cgroup allows) before the workers are made, and restored after.
class WideAffinity {
 public:
  explicit WideAffinity(bool verbose) {
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int before = CPU_COUNT(&saved_);
    if (online > before) {
      cpu_set_t all;
      CPU_ZERO(&all);
      for (long i = 0; i < online && i < CPU_SETSIZE; ++i) CPU_SET(i, &all);
      changed_ = sched_setaffinity(0, sizeof all, &all) == 0;
    }
    cpu_set_t now;
    CPU_ZERO(&now);
    cpus_ = sched_getaffinity(0, sizeof now, &now) == 0 ? CPU_COUNT(&now) : before;
    if (verbose && changed_)
      std::fprintf(stderr, "pipevd: D&C thread affinity widened from %d to %d CPUs\n", before,
                   cpus_);
  }
  ~WideAffinity() {
    if (changed_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  int cpus() const { return std::max(1, cpus_); }

 private:
  cpu_set_t saved_;
  bool changed_ = false;
  int cpus_ = 1;
};

using Rotation = MergeRotation;

// One merge [lo, hi) of a block (indices local to the block), its children split at mid.
struct Merge {
  long lo = 0, mid = 0, hi = 0;
  double rho = 0;          // the torn off-diagonal entry (scaled T)
  std::vector<double> z;   // last row of Q1, first row of Q2 (fetched)
  std::vector<long> perm;  // slot p (d ascending) -> column of diag(Q1, Q2)
  std::vector<Rotation> rot;
  std::vector<long> nd;               // slots left in the secular problem, ascending
  std::vector<double> dl, zh;         // their poles and Gu-Eisenstat's z-hat
  std::vector<double> lambda, dorig;  // per root: eigenvalue, d(origin) - lambda
  std::vector<long> origin;           // per root: the pole closest to it
  std::vector<double> small;          // k' <= 2: dlaed4's eigenvectors, k' x k'
  std::vector<long> col;              // output column -> root (>= 0) or -(slot + 1)
  std::vector<double> dout;           // the merge's eigenvalues, ascending
  // Left by plan_deflate for the roots and the output order.
  double rho2 = 0;             // rho of the secular equation (2 |rho|)
  std::vector<double> ds, zl;  // poles after the rotations (every slot); z of the kept ones
  std::vector<char> deflated;  // per slot
  bool on_device = false;      // roots and M made by the backend's SecularMerge
  long k() const { return hi - lo; }
  long kk() const { return static_cast<long>(nd.size()); }
  int info = 0;
};

// dl_j - lambda_i from the root's distance to its closest pole (accurate to a few ulps of the
// larger of the two terms, which do not cancel by more than a factor 2).
inline double pole_gap(const Merge& m, long j, long i) {
  const long o = m.origin[i];
  return j == o ? m.dorig[i] : (m.dl[j] - m.dl[o]) + m.dorig[i];
}

// Deflation of one merge: permutation, rotations and the secular problem (m.dl, m.zl, m.rho2);
// d holds the children's eigenvalues (each half ascending), m.z the fetched rows.
void plan_deflate(Merge& m, const double* d) {
  const long k = m.k(), n1 = m.mid - m.lo;
  const double eps = std::numeric_limits<double>::epsilon();
  // T = diag(T1', T2') + |rho| u u^T, u = [e_last; sign(rho) e_first]; z = Q^T u / sqrt(2).
  const double sgn = m.rho < 0 ? -1.0 : 1.0, rho = 2.0 * std::fabs(m.rho);
  std::vector<double> z(k);
  for (long j = 0; j < k; ++j) z[j] = (j < n1 ? 1.0 : sgn) * m.z[j] / std::sqrt(2.0);
  m.perm.resize(k);
  std::iota(m.perm.begin(), m.perm.end(), 0L);
  std::stable_sort(m.perm.begin(), m.perm.end(), [&](long a, long b) { return d[a] < d[b]; });
  std::vector<double> ds(k), zs(k);
  double dmax = 0, zmax = 0;
  for (long p = 0; p < k; ++p) {
    ds[p] = d[m.perm[p]];
    zs[p] = z[m.perm[p]];
    dmax = std::max(dmax, std::fabs(ds[p]));
    zmax = std::max(zmax, std::fabs(zs[p]));
  }
  const double tol = 8.0 * eps * std::max(dmax, rho * zmax);

  // Deflation: small rho z_p, or two poles close enough that a rotation zeroes one z.
  std::vector<char> deflated(k, 0);
  long pj = -1;
  for (long p = 0; p < k; ++p) {
    if (rho * std::fabs(zs[p]) <= tol) {
      deflated[p] = 1;
      continue;
    }
    if (pj >= 0) {
      const double tau = std::hypot(zs[pj], zs[p]);
      const double c = zs[p] / tau, s = zs[pj] / tau;
      if (std::fabs(c * s * (ds[pj] - ds[p])) <= tol) {
        const double da = ds[pj], db = ds[p];
        ds[pj] = c * c * da + s * s * db;
        ds[p] = s * s * da + c * c * db;
        zs[pj] = 0;
        zs[p] = tau;
        deflated[pj] = 1;
        m.rot.push_back({pj, p, c, s});
        pj = p;
        continue;
      }
      m.nd.push_back(pj);
    }
    pj = p;
  }
  if (pj >= 0) m.nd.push_back(pj);

  const long kk = m.kk();
  m.dl.resize(kk);
  m.zl.resize(kk);
  for (long j = 0; j < kk; ++j) {
    m.dl[j] = ds[m.nd[j]];
    m.zl[j] = zs[m.nd[j]];
  }
  m.lambda.resize(kk);
  m.rho2 = rho;
  m.ds = std::move(ds);
  m.deflated = std::move(deflated);
}

// Secular roots (dlaed4) and z-hat of one deflated merge on the host.
void plan_roots(Merge& m, int threads) {
  const long kk = m.kk();
  const double rho = m.rho2;
  const std::vector<double>& zl = m.zl;
  if (kk > 0 && kk <= 2) {  // dlaed4 returns these eigenvectors themselves, not the pole gaps
    m.small.assign(kk * kk, 0.0);
    const int ik = static_cast<int>(kk);
    for (int i = 0; i < ik; ++i) {
      int ii = i + 1, info = 0;
      dlaed4_(&ik, &ii, m.dl.data(), zl.data(), m.small.data() + i * kk, &rho, &m.lambda[i], &info);
      if (info) m.info = info;
    }
  } else if (kk > 2) {
    m.origin.resize(kk);
    m.dorig.resize(kk);
    std::vector<int> infos(kk, 0);
    const int ik = static_cast<int>(kk);
    parallel_for_ranges(kk, threads, 64, [&](long b, long e) {
      std::vector<double> delta(kk);
      for (long i = b; i < e; ++i) {
        int ii = static_cast<int>(i + 1), info = 0;
        dlaed4_(&ik, &ii, m.dl.data(), zl.data(), delta.data(), &rho, &m.lambda[i], &info);
        infos[i] = info;
        const long o = (i + 1 < kk && std::fabs(delta[i + 1]) < std::fabs(delta[i])) ? i + 1 : i;
        m.origin[i] = o;
        m.dorig[i] = delta[o];
      }
    });
    for (int info : infos)
      if (info) m.info = info;
    // z-hat from the computed roots (Gu-Eisenstat): D + rho zhat zhat^T has exactly these
    // eigenvalues, so the eigenvectors below are orthogonal to working precision.
    m.zh.resize(kk);
    parallel_for_ranges(kk, threads, 64, [&](long b, long e) {
      for (long j = b; j < e; ++j) {
        double p = -pole_gap(m, j, j) / rho;
        for (long i = 0; i < kk; ++i)
          if (i != j) p *= -pole_gap(m, j, i) / (m.dl[i] - m.dl[j]);
        m.zh[j] = std::copysign(std::sqrt(std::fabs(p)), zl[j]);
      }
    });
  }
}

// The output order of one merge's columns: roots and deflated values, ascending.
void plan_output(Merge& m) {
  const long k = m.k(), kk = m.kk();
  const std::vector<double>& ds = m.ds;
  const std::vector<char>& deflated = m.deflated;
  std::vector<std::pair<double, long>> out;
  out.reserve(k);
  for (long i = 0; i < kk; ++i) out.push_back({m.lambda[i], i});
  for (long p = 0; p < k; ++p)
    if (deflated[p]) out.push_back({ds[p], -(p + 1)});
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  m.col.resize(k);
  m.dout.resize(k);
  for (long c = 0; c < k; ++c) {
    m.dout[c] = out[c].first;
    m.col[c] = out[c].second;
  }
}

// Columns [c0, c1) of the merge matrix M (k x (c1 - c0), leading dimension k): rows in the
// column order of diag(Q1, Q2), so Q_new(:, c0:c1) = diag(Q1, Q2) M.
void build_panel(const Merge& m, long c0, long c1, double* out, int threads) {
  const long k = m.k(), kk = m.kk();
  parallel_for_ranges(c1 - c0, threads, 16, [&](long b, long e) {
    std::vector<double> y(k);
    for (long c = c0 + b; c < c0 + e; ++c) {
      std::fill(y.begin(), y.end(), 0.0);
      const long src = m.col[c];
      if (src < 0) {
        y[-src - 1] = 1.0;
      } else if (kk <= 2) {
        for (long j = 0; j < kk; ++j) y[m.nd[j]] = m.small[j + src * kk];
      } else {
        double nrm = 0;
        for (long j = 0; j < kk; ++j) {
          const double v = m.zh[j] / pole_gap(m, j, src);
          y[m.nd[j]] = v;
          nrm += v * v;
        }
        nrm = 1.0 / std::sqrt(nrm);
        for (long j = 0; j < kk; ++j) y[m.nd[j]] *= nrm;
      }
      for (auto r = m.rot.rbegin(); r != m.rot.rend(); ++r) {
        const double ya = y[r->a], yb = y[r->b];
        if (ya == 0 && yb == 0) continue;
        y[r->a] = r->c * ya + r->s * yb;
        y[r->b] = -r->s * ya + r->c * yb;
      }
      double* o = out + (c - c0) * k;
      for (long p = 0; p < k; ++p) o[m.perm[p]] = y[p];
    }
  });
}

// Page-locked host memory from the backend (for asynchronous uploads), released with it.
class HostStaging {
 public:
  // pinned false: ordinary host memory, uploaded synchronously.
  HostStaging(EngineBackend& be, long count, bool pinned)
      : be_(be), pinned_(pinned), p_(pinned ? be.allocate_host_staging(count) : nullptr) {
    if (!pinned_) plain_.resize(static_cast<std::size_t>(std::max(1L, count)));
  }
  ~HostStaging() {
    try {
      if (pinned_) be_.release_host_staging(p_);
    } catch (...) {  // the backend reports its errors at the next operation
    }
  }
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  double* get() { return pinned_ ? p_ : plain_.data(); }
  // Its first count doubles to dev: asynchronously from pinned memory, else synchronously.
  void upload(double* dev, long count) {
    if (pinned_)
      be_.copy_to_device_async(p_, dev, count);
    else
      be_.copy_to_device(plain_.data(), dev, count);
  }

 private:
  EngineBackend& be_;
  bool pinned_;
  double* p_;
  std::vector<double> plain_;
};

struct Context {
  EngineBackend& be;
  long ldq;
  int threads;
  long leaf, panel;
  bool timed;
  DcStats st;
  std::unique_ptr<SecularMerge> sm;  // the backend's merge, where merges of k >= sm_min use it
  long sm_min = 0;
  bool pinned = false;  // M panels in page-locked staging, uploaded asynchronously
  // Each block's top merge keeps its M (in bufs[0]) instead of multiplying diag(Q1, Q2) by it,
  // which stay in bufs[1] (tridiagonal_dc_fold).
  bool fold = false;
};

// Deflation on the host, then roots and z-hat either on the host (dlaed4) or by the backend's
// SecularMerge (the plan's columns go up with them), then the output order. A merge of order
// k >= sm_min goes to the backend whatever deflation leaves of its secular problem: with k' <= 2
// roots, or none (M a rotated permutation), its M is still k x k and would cross whole from the
// host, and a clustered spectrum's large merges are all of that kind.
void plan_merge(Context& cx, Merge& m, const double* d, int threads, bool allow_device) {
  plan_deflate(m, d);
  m.on_device = allow_device && cx.sm && m.k() >= cx.sm_min;
  if (!m.on_device) {
    plan_roots(m, threads);
    plan_output(m);
    return;
  }
  const int info = cx.sm->solve(m.kk(), m.dl.data(), m.zl.data(), m.rho2, m.lambda.data());
  if (info) m.info = info;
  plan_output(m);
  MergeColumnPlan plan;
  plan.k = m.k();
  plan.perm = m.perm.data();
  plan.nd = m.nd.data();
  plan.nrot = static_cast<long>(m.rot.size());
  plan.rot = m.rot.data();
  plan.col = m.col.data();
  cx.sm->set_columns(plan);
  ++cx.st.device_merges;
}

// Wait for the backend only when the caller asked for the stage split.
void mark(Context& cx, double& slot, Clock::time_point& t) {
  if (cx.timed) cx.be.synchronize();
  slot += since(t);
  t = Clock::now();
}

// One unreduced block T(s:s+m, s:s+m) (scaled), its eigenvectors into bufs[0] at (s, s); folded,
// its Q_pre blocks into bufs[1] and its M into bufs[0] (the identity where no merge splits it).
int solve_block(Context& cx, long s, long m, double* d, const double* e, double* bufs[2]) {
  EngineBackend& be = cx.be;
  const long ldq = cx.ldq;
  // Levels of halving until the intervals fit a leaf; every leaf at the same depth L, so level l
  // lives in bufs[l % 2] and the root ends in bufs[0].
  std::vector<std::vector<std::pair<long, long>>> levels{{{0, m}}};
  while (true) {
    std::vector<std::pair<long, long>> next;
    bool split = false;
    for (auto [a, b] : levels.back()) split = split || b - a > cx.leaf;
    if (!split) break;
    for (auto [a, b] : levels.back()) {
      const long h = a + (b - a) / 2;
      next.push_back({a, h});
      next.push_back({h, b});
    }
    levels.push_back(std::move(next));
  }
  const long depth = static_cast<long>(levels.size()) - 1;
  std::vector<double> dd(d, d + m);
  std::vector<std::vector<Merge>> merges(depth);
  for (long l = 0; l < depth; ++l)
    for (auto [a, b] : levels[l]) {
      Merge mg;
      mg.lo = a;
      mg.hi = b;
      mg.mid = a + (b - a) / 2;
      mg.rho = e[mg.mid - 1];
      dd[mg.mid - 1] -= std::fabs(mg.rho);
      dd[mg.mid] -= std::fabs(mg.rho);
      merges[l].push_back(std::move(mg));
    }

  // Leaves on the host (dsteqr), packed, uploaded once, placed on the block diagonal.
  auto t = Clock::now();
  const auto& leaves = levels[depth];
  std::vector<long> off(leaves.size() + 1, 0);
  for (std::size_t i = 0; i < leaves.size(); ++i)
    off[i + 1] =
        off[i] + (leaves[i].second - leaves[i].first) * (leaves[i].second - leaves[i].first);
  std::vector<double> packed(off.back());
  std::vector<int> leaf_info(leaves.size(), 0);
  parallel_for_ranges(static_cast<long>(leaves.size()), cx.threads, 1, [&](long b, long en) {
    for (long i = b; i < en; ++i) {
      const auto [a, c] = leaves[i];
      const int ml = static_cast<int>(c - a);
      std::vector<double> el(e + a, e + a + std::max(0, ml - 1)), work(std::max(1, 2 * ml - 2));
      el.push_back(0.0);
      int info = 0;
      dsteqr_("I", &ml, dd.data() + a, el.data(), packed.data() + off[i], &ml, work.data(), &info,
              1);
      leaf_info[i] = info;
    }
  });
  for (int info : leaf_info)
    if (info) return info;
  {
    DeviceBuffer stage(be, off.back());
    be.copy_to_device(packed.data(), stage.get(), off.back());
    const bool whole_leaf = cx.fold && depth == 0;  // all of Q_pre's block, M's the identity
    double* dst = bufs[whole_leaf ? 1 : depth % 2];
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const long a = leaves[i].first, ml = leaves[i].second - a;
      be.copy_matrix(ml, ml, stage.get() + off[i], ml, dst + (s + a) + (s + a) * ldq, ldq);
    }
    if (whole_leaf) be.fill_matrix(m, m, 0.0, 1.0, bufs[0] + s + s * ldq, ldq);
  }
  mark(cx, cx.st.leaves, t);

  for (long l = depth - 1; l >= 0; --l) {
    double* src = bufs[(l + 1) % 2];
    double* dst = bufs[l % 2];
    auto& level = merges[l];
    // z for every merge of the level: two rows each, fetched in one transfer.
    {
      DeviceBuffer rows(be, m);
      long at = 0;
      for (auto& mg : level) {
        const long n1 = mg.mid - mg.lo, n2 = mg.hi - mg.mid;
        be.copy_matrix(1, n1, src + (s + mg.mid - 1) + (s + mg.lo) * ldq, ldq, rows.get() + at, 1);
        be.copy_matrix(1, n2, src + (s + mg.mid) + (s + mg.mid) * ldq, ldq, rows.get() + at + n1,
                       1);
        at += n1 + n2;
      }
      std::vector<double> host(m);
      be.copy_to_host(rows.get(), host.data(), m);
      at = 0;
      for (auto& mg : level) {
        mg.z.assign(host.begin() + at, host.begin() + at + mg.k());
        at += mg.k();
      }
    }
    mark(cx, cx.st.gemm, t);  // the fetch waited for the previous level's GEMMs

    const long count = static_cast<long>(level.size());
    const long k = level.front().k();
    // Columns [c0, c1) of Q_new = diag(Q1, Q2) M from M's panel mp; folded, the top merge's M
    // itself, for the caller's product.
    auto gemms = [&](const Merge& mg, const double* mp, long c0, long c1) {
      const long n1 = mg.mid - mg.lo, n2 = mg.hi - mg.mid, kk = mg.k();
      double* out = dst + (s + mg.lo) + (s + mg.lo + c0) * ldq;
      if (cx.fold && l == 0) {
        be.copy_matrix(kk, c1 - c0, mp, kk, out, ldq);
        return;
      }
      be.gemm('N', 'N', n1, c1 - c0, n1, 1.0, src + (s + mg.lo) + (s + mg.lo) * ldq, ldq, mp, kk,
              0.0, out, ldq);
      be.gemm('N', 'N', n2, c1 - c0, n2, 1.0, src + (s + mg.mid) + (s + mg.mid) * ldq, ldq, mp + n1,
              kk, 0.0, out + n1, ldq);
    };
    // A level's merges differ in order by one at most: one of order >= sm_min sends the level
    // merge by merge, so that every merge of that order takes the backend's path.
    const bool device_level =
        cx.sm && std::any_of(level.begin(), level.end(),
                             [&](const Merge& mg) { return mg.k() >= cx.sm_min; });
    if (count > 1 && k <= 2048 && !device_level) {
      // Many small merges: plans and whole Ms in parallel over merges, one upload for the level.
      std::vector<long> moff(count + 1, 0);
      for (long i = 0; i < count; ++i) moff[i + 1] = moff[i] + level[i].k() * level[i].k();
      HostStaging mh(be, moff.back(), cx.pinned);
      const int inner = std::max(1, cx.threads / static_cast<int>(count));
      parallel_for_ranges(count, cx.threads, 1, [&](long b, long en) {
        for (long i = b; i < en; ++i) {
          plan_merge(cx, level[i], dd.data() + level[i].lo, inner, false);
          build_panel(level[i], 0, level[i].k(), mh.get() + moff[i], inner);
        }
      });
      mark(cx, cx.st.host_merge, t);
      DeviceBuffer md(be, moff.back());
      mh.upload(md.get(), moff.back());
      ++cx.st.panels;
      mark(cx, cx.st.upload, t);
      for (long i = 0; i < count; ++i) gemms(level[i], md.get() + moff[i], 0, level[i].k());
      mark(cx, cx.st.gemm, t);
      be.wait_staging(mh.get());
      mark(cx, cx.st.upload, t);
    } else {
      for (auto& mg : level) {
        plan_merge(cx, mg, dd.data() + mg.lo, cx.threads, true);
        mark(cx, mg.on_device ? cx.st.device_merge : cx.st.host_merge, t);
        const long kk = mg.k(), pw = std::min(kk, std::max(1L, cx.panel));
        if (mg.on_device) {  // M's panels made in backend memory: nothing crosses from the host
          DeviceBuffer md(be, kk * pw);
          for (long c0 = 0; c0 < kk; c0 += pw) {
            const long c1 = std::min(kk, c0 + pw);
            cx.sm->build_panel(c0, c1, md.get());
            mark(cx, cx.st.device_merge, t);
            gemms(mg, md.get(), c0, c1);
            mark(cx, cx.st.gemm, t);
          }
          continue;
        }
        // Two pinned host panels: panel p + 1 is built while panel p uploads and its GEMMs run.
        // One device panel suffices: the backend orders the upload of p + 1 after p's GEMMs.
        const bool two = kk > pw;
        HostStaging mh0(be, kk * pw, cx.pinned);
        std::unique_ptr<HostStaging> mh1(two ? new HostStaging(be, kk * pw, cx.pinned) : nullptr);
        DeviceBuffer md(be, kk * pw);
        for (long c0 = 0, p = 0; c0 < kk; c0 += pw, ++p) {
          const long c1 = std::min(kk, c0 + pw);
          HostStaging& mh = (p % 2 == 0 || !two) ? mh0 : *mh1;
          be.wait_staging(mh.get());  // panel p - 2's upload has read it
          mark(cx, cx.st.upload, t);
          build_panel(mg, c0, c1, mh.get(), cx.threads);
          mark(cx, cx.st.host_merge, t);
          mh.upload(md.get(), kk * (c1 - c0));
          ++cx.st.panels;
          mark(cx, cx.st.upload, t);
          gemms(mg, md.get(), c0, c1);
          mark(cx, cx.st.gemm, t);
        }
      }
    }
    for (auto& mg : level) {
      if (mg.info) return mg.info;
      std::copy(mg.dout.begin(), mg.dout.end(), dd.begin() + mg.lo);
      cx.st.deflated += mg.k() - mg.kk();
      ++cx.st.merges;
      mg = Merge();  // free the plan
    }
  }
  std::copy(dd.begin(), dd.end(), d);
  return 0;
}

using Blocks = std::vector<std::pair<long, long>>;

// Folded, Q_pre's adjacent diagonal blocks are joined up to this order (core/block_diagonal.hpp):
// a T split into many small blocks then costs GEMMs of about this order, not one per block.
constexpr long kJoinedBlock = 256;

// The merge context of one call: the leaf and panel sizes, and the backend's merge where the
// merges run there (by default on a device backend only: the host backend's version is serial,
// dlaed4 runs on threads).
Context make_context(EngineBackend& be, const DcOptions& opt, long ldq, int threads, bool timed) {
  Context cx{be, ldq, threads, std::max(2L, opt.leaf), std::max(1L, opt.panel), timed, DcStats{}};
  cx.st.threads = threads;
  const int on_device = opt.merge_on_device >= 0 ? opt.merge_on_device : (be.host_memory() ? 0 : 1);
  cx.pinned = opt.pinned_staging > 0;
  if (on_device > 0) {
    cx.sm = be.secular_merge();
    cx.sm_min = std::max(1L, opt.device_merge_min);
  }
  return cx;
}

// Unreduced blocks [a, b) of T: |e_i| <= eps sqrt(|d_i| |d_i+1|) is negligible.
Blocks unreduced_blocks(long n, const double* d, const double* e) {
  const double eps = std::numeric_limits<double>::epsilon();
  Blocks blocks;
  long s = 0;
  for (long i = 0; i + 1 < n; ++i)
    if (std::fabs(e[i]) <= eps * std::sqrt(std::fabs(d[i])) * std::sqrt(std::fabs(d[i + 1]))) {
      blocks.push_back({s, i + 1});
      s = i + 1;
    }
  blocks.push_back({s, n});
  return blocks;
}

// max |T(a:b, a:b)|: the block's scale, 0 where it is zero (diagonal already).
double block_scale(long a, long b, const double* d, const double* e) {
  double scale = 0;
  for (long i = a; i < b; ++i) scale = std::max(scale, std::fabs(d[i]));
  for (long i = a; i + 1 < b; ++i) scale = std::max(scale, std::fabs(e[i]));
  return scale;
}

// Q_pre's diagonal blocks: the top merge's two children where solve_block splits a block (larger
// than a leaf, not zero), else the block.
std::vector<long> fold_orders(long leaf, const Blocks& blocks, const double* d, const double* e) {
  std::vector<long> orders;
  for (auto [a, b] : blocks) {
    const long m = b - a;
    if (m > leaf && block_scale(a, b, d, e) != 0) {
      orders.push_back(m / 2);  // solve_block's top merge splits at mid = m / 2
      orders.push_back(m - m / 2);
    } else {
      orders.push_back(m);
    }
  }
  return orders;
}

// Every block, scaled, solved in place (solve_block) and its eigenvalues scaled back into d;
// diagonal blocks as the identity (folded: in Q_pre and in M).
int solve_blocks(Context& cx, const Blocks& blocks, double* d, const double* e, double* bufs[2]) {
  for (auto [a, b] : blocks) {
    const long m = b - a;
    const double scale = block_scale(a, b, d, e);
    if (m == 1 || scale == 0) {
      for (int i = 0; i < (cx.fold ? 2 : 1); ++i)
        cx.be.fill_matrix(m, m, 0.0, 1.0, bufs[i] + a + a * cx.ldq, cx.ldq);
      continue;
    }
    std::vector<double> ds(d + a, d + b), es(e + a, e + b - 1);
    for (auto& x : ds) x /= scale;
    for (auto& x : es) x /= scale;
    if (const int info = solve_block(cx, a, m, ds.data(), es.data(), bufs)) return info;
    for (long i = 0; i < m; ++i) d[a + i] = ds[i] * scale;
  }
  return 0;
}

// The column order that makes the eigenvalues ascending across the blocks (each block's are
// already), and d sorted by it.
std::vector<long> sort_across_blocks(long n, double* d) {
  std::vector<long> order(n);
  std::iota(order.begin(), order.end(), 0L);
  std::stable_sort(order.begin(), order.end(), [&](long x, long y) { return d[x] < d[y]; });
  std::vector<double> sorted(n);
  for (long c = 0; c < n; ++c) sorted[c] = d[order[c]];
  std::copy(sorted.begin(), sorted.end(), d);
  return order;
}

// q(:, c) = work(:, order[c]) on its block's rows, zero elsewhere: copied in runs of consecutive
// columns of one block.
void permute_blocks_into(EngineBackend& be, long n, const Blocks& blocks,
                         const std::vector<long>& order, const double* work, double* q, long ldq) {
  std::vector<long> block_of(n);
  for (std::size_t i = 0; i < blocks.size(); ++i)
    for (long j = blocks[i].first; j < blocks[i].second; ++j) block_of[j] = static_cast<long>(i);
  be.fill_matrix(n, n, 0.0, 0.0, q, ldq);
  for (long c = 0; c < n;) {
    const long j0 = order[c], bi = block_of[j0];
    long r = 1;
    while (c + r < n && order[c + r] == j0 + r && block_of[j0 + r] == bi) ++r;
    const long a = blocks[bi].first, m = blocks[bi].second - a;
    be.copy_matrix(m, r, work + a + j0 * ldq, ldq, q + a + c * ldq, ldq);
    c += r;
  }
}

// a(:, c) := a(:, order[c]) for every c, in place along the permutation's cycles through one
// column of scratch (no second n x n buffer next to Q_pre and M).
void permute_columns_in_place(EngineBackend& be, long n, const std::vector<long>& order, double* a,
                              long lda) {
  DeviceBuffer column;
  std::vector<char> done(n, 0);
  for (long c0 = 0; c0 < n; ++c0) {
    if (done[c0] || order[c0] == c0) continue;
    if (!column.get()) column = DeviceBuffer(be, n);
    be.copy_matrix(n, 1, a + c0 * lda, lda, column.get(), n);
    long c = c0;
    for (; order[c] != c0; c = order[c]) {
      be.copy_matrix(n, 1, a + order[c] * lda, lda, a + c * lda, lda);
      done[c] = 1;
    }
    be.copy_matrix(n, 1, column.get(), n, a + c * lda, lda);
    done[c] = 1;
  }
}

int dc_threads(const DcOptions& opt, const WideAffinity& affinity) {
  return opt.threads > 0 ? opt.threads : affinity.cpus();
}

void report(const Context& cx, long n, std::size_t blocks, bool verbose, Clock::time_point t_start,
            DcStats* stats) {
  DcStats st = cx.st;
  st.total = since(t_start);
  if (verbose)
    std::fprintf(stderr,
                 "pipevd: D&C n=%ld blocks=%zu threads=%ld merges=%ld (%ld on the device) "
                 "deflated=%ld%s: leaves %.3f s, host merge %.3f s, upload %.3f s (%ld panels), "
                 "device merge %.3f s, gemm %.3f s, total %.3f s%s\n",
                 n, blocks, st.threads, st.merges, st.device_merges, st.deflated,
                 cx.fold ? " top merges folded" : "", st.leaves, st.host_merge, st.upload,
                 st.panels, st.device_merge, st.gemm, st.total,
                 cx.timed ? "" : " (untimed: parts overlap)");
  if (stats) *stats = st;
}

}  // namespace

int tridiagonal_dc(EngineBackend& be, long n, double* d, const double* e, double* q, long ldq,
                   const DcOptions& opt, DcStats* stats) {
  const auto t_start = Clock::now();
  if (n <= 0) return 0;
  if (ldq < n) throw std::invalid_argument("pipevd: tridiagonal_dc: ldq < n");
  WideAffinity affinity(opt.verbose);
  Context cx = make_context(be, opt, ldq, dc_threads(opt, affinity), stats != nullptr);
  const Blocks blocks = unreduced_blocks(n, d, e);
  const bool several = blocks.size() > 1;
  bool need_work = several;
  for (auto [a, b] : blocks) need_work = need_work || b - a > cx.leaf;
  DeviceBuffer work;
  if (need_work) work = DeviceBuffer(be, ldq * n);
  // Several blocks are solved in work, then permuted into q.
  double* bufs[2] = {several ? work.get() : q, several ? q : work.get()};
  const int info = solve_blocks(cx, blocks, d, e, bufs);
  if (info == 0 && several)
    permute_blocks_into(be, n, blocks, sort_across_blocks(n, d), work.get(), q, ldq);
  be.synchronize();
  work.reset();
  report(cx, n, blocks.size(), opt.verbose, t_start, stats);
  return info;
}

int tridiagonal_dc_fold(EngineBackend& be, long n, double* d, const double* e, DcFold& out,
                        const DcOptions& opt, DcStats* stats) {
  const auto t_start = Clock::now();
  out = DcFold{};
  if (n <= 0) return 0;
  const Blocks blocks = unreduced_blocks(n, d, e);
  const std::vector<long> orders = fold_orders(std::max(2L, opt.leaf), blocks, d, e);
  if (orders.size() == blocks.size()) {  // no top merge, nothing to fold: Q_d itself
    out.m = DeviceBuffer(be, n * n);
    const int info = tridiagonal_dc(be, n, d, e, out.m.get(), n, opt, stats);
    if (info) out = DcFold{};
    return info;
  }
  WideAffinity affinity(opt.verbose);
  Context cx = make_context(be, opt, n, dc_threads(opt, affinity), stats != nullptr);
  cx.fold = true;
  // Both zero-filled: outside the blocks' diagonal squares nothing writes them, so M is zero
  // there and Q_pre's joined blocks hold their zeros.
  DeviceBuffer m(be, n * n), pre(be, n * n);
  double* bufs[2] = {m.get(), pre.get()};
  const int info = solve_blocks(cx, blocks, d, e, bufs);
  if (info == 0) {
    if (blocks.size() > 1) permute_columns_in_place(be, n, sort_across_blocks(n, d), m.get(), n);
    out.orders = join_small_blocks(orders, kJoinedBlock);
    pack_diagonal_blocks(be, pre.get(), n, out.orders);
    out.folded = true;
    out.q_pre = std::move(pre);
    out.m = std::move(m);
  }
  be.synchronize();
  report(cx, n, blocks.size(), opt.verbose, t_start, stats);
  return info;
}

}  // namespace pipevd
