#include "host/host_secular_merge.hpp"

#include <cmath>
#include <vector>

#include "core/secular_root.hpp"

namespace pipevd {
namespace {

class HostSecularMerge final : public SecularMerge {
 public:
  int solve(long kk, const double* dl, const double* zl, double rho, double* lambda) override {
    dl_.assign(dl, dl + kk);
    origin_.resize(kk);
    tau_.resize(kk);
    zh_.resize(kk);
    double znorm2 = 0;
    for (long j = 0; j < kk; ++j) znorm2 += zl[j] * zl[j];
    int info = 0;
    for (long i = 0; i < kk; ++i) {
      const SecularRoot r = secular_root(kk, dl, rho, znorm2, i, SerialSecularEval{kk, dl, zl, i});
      if (!r.converged && info == 0) info = static_cast<int>(i + 1);
      origin_[i] = r.origin;
      tau_[i] = r.tau;
      lambda[i] = dl[r.origin] + r.tau;
    }
    for (long j = 0; j < kk; ++j) {
      double p = -secular_delta(dl, j, origin_[j], tau_[j]) / rho;
      for (long i = 0; i < kk; ++i)
        if (i != j) p *= zhat_factor(dl, j, i, origin_.data(), tau_.data());
      zh_[j] = std::copysign(std::sqrt(std::fabs(p)), zl[j]);
    }
    return info;
  }

  void set_columns(const MergeColumnPlan& plan) override {
    k_ = plan.k;
    perm_.assign(plan.perm, plan.perm + plan.k);
    nd_.assign(plan.nd, plan.nd + static_cast<long>(dl_.size()));
    rot_.assign(plan.rot, plan.rot + plan.nrot);
    col_.assign(plan.col, plan.col + plan.k);
  }

  void build_panel(long c0, long c1, double* m) override {
    const long kk = static_cast<long>(dl_.size());
    for (long c = c0; c < c1; ++c) {
      double* out = m + (c - c0) * k_;
      for (long r = 0; r < k_; ++r) out[r] = 0.0;
      const long src = col_[c];
      if (src < 0) {
        out[perm_[-src - 1]] = 1.0;
      } else {
        double nrm = 0;
        for (long j = 0; j < kk; ++j) {
          const double v = zh_[j] / secular_delta(dl_.data(), j, origin_[src], tau_[src]);
          nrm += v * v;
        }
        const double scale = 1.0 / std::sqrt(nrm);
        for (long j = 0; j < kk; ++j)
          out[perm_[nd_[j]]] =
              zh_[j] / secular_delta(dl_.data(), j, origin_[src], tau_[src]) * scale;
      }
      for (auto r = rot_.rbegin(); r != rot_.rend(); ++r) {
        double& ya = out[perm_[r->a]];
        double& yb = out[perm_[r->b]];
        const double a = ya, b = yb;
        if (a == 0 && b == 0) continue;
        ya = r->c * a + r->s * b;
        yb = -r->s * a + r->c * b;
      }
    }
  }

 private:
  long k_ = 0;
  std::vector<double> dl_, tau_, zh_;
  std::vector<long> origin_, perm_, nd_, col_;
  std::vector<MergeRotation> rot_;
};

}  // namespace

std::unique_ptr<SecularMerge> make_host_secular_merge() {
  return std::make_unique<HostSecularMerge>();
}

}  // namespace pipevd
