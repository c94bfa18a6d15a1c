// The GPU's SecularMerge (see secular_merge.cuh). Every reduction runs in a fixed order (lanes'
// strided partial sums, then an xor butterfly, whose pairwise sums are the same in every lane;
// blocks: a fixed tree in shared memory), so repeated runs are bitwise identical.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/secular_root.hpp"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/secular_merge.cuh"

namespace pipevd::gpu {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
constexpr int kColumnThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

// Sums over the warp's lanes (each lane's partial sum over j = lane, lane + 32, ...).
struct WarpSecularEval {
  long k;
  const double* d;
  const double* z;
  long i;
  __device__ SecularSums operator()(long o, double tau) const {
    SecularSums s = secular_partial_sums(k, d, z, i, o, tau, threadIdx.x % kWarp, kWarp);
    for (int m = kWarp / 2; m >= 1; m /= 2) {
      s.psi += __shfl_xor_sync(kFull, s.psi, m);
      s.dpsi += __shfl_xor_sync(kFull, s.dpsi, m);
      s.phi += __shfl_xor_sync(kFull, s.phi, m);
      s.dphi += __shfl_xor_sync(kFull, s.dphi, m);
    }
    return s;
  }
};

// One warp per root i: its origin, shift tau, eigenvalue and whether it converged.
__global__ void secular_roots_kernel(long kk, const double* d, const double* z, double rho,
                                     double znorm2, long* origin, double* tau, double* lambda,
                                     int* converged) {
  const long i = blockIdx.x * static_cast<long>(kWarpsPerBlock) + threadIdx.x / kWarp;
  if (i >= kk) return;  // whole warps leave together
  const SecularRoot r = secular_root(kk, d, rho, znorm2, i, WarpSecularEval{kk, d, z, i});
  if (threadIdx.x % kWarp == 0) {
    origin[i] = r.origin;
    tau[i] = r.tau;
    lambda[i] = d[r.origin] + r.tau;
    converged[i] = r.converged ? 1 : 0;
  }
}

// One warp per entry j of z-hat: sqrt(|-(d_j - lambda_j)/rho prod_{i != j} (d_j - lambda_i) /
// (d_i - d_j)|) with z's sign (Gu-Eisenstat), the product over lanes' strided partial products.
__global__ void zhat_kernel(long kk, const double* d, const double* z, double rho,
                            const long* origin, const double* tau, double* zh) {
  const long j = blockIdx.x * static_cast<long>(kWarpsPerBlock) + threadIdx.x / kWarp;
  if (j >= kk) return;
  const int lane = threadIdx.x % kWarp;
  double p = 1.0;
  for (long i = lane; i < kk; i += kWarp)
    if (i != j) p *= zhat_factor(d, j, i, origin, tau);
  for (int m = kWarp / 2; m >= 1; m /= 2) p *= __shfl_xor_sync(kFull, p, m);
  if (lane == 0) {
    p *= -secular_delta(d, j, origin[j], tau[j]) / rho;
    zh[j] = copysign(sqrt(fabs(p)), z[j]);
  }
}

// Sum of v over the block in a fixed order (blockDim.x == kColumnThreads, a power of two).
__device__ double block_sum(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int m = kColumnThreads / 2; m >= 1; m /= 2) {
    if (threadIdx.x < m) shared[threadIdx.x] += shared[threadIdx.x + m];
    __syncthreads();
  }
  const double s = shared[0];
  __syncthreads();
  return s;
}

// Rotation with its slots mapped to rows of M.
struct RowRotation {
  long ra, rb;
  double c, s;
};

// One block per column c0 + blockIdx.x of M: zeros, then the root's unit eigenvector
// zh ./ delta(root) (or the deflated slot's unit vector) in the rows perm[nd[j]], then the
// deflation rotations last to first. Rotations come in chains (each one's slot a is the previous
// one's b) that touch disjoint rows: a thread per chain, rotations [chain[h], chain[h + 1]).
__global__ void merge_columns_kernel(long k, long kk, const double* d, const long* origin,
                                     const double* tau, const double* zh, const long* row_of,
                                     const long* col, long nchains, const long* chain,
                                     const RowRotation* rot, long c0, double* m) {
  __shared__ double shared[kColumnThreads];
  const long c = c0 + blockIdx.x;
  double* out = m + blockIdx.x * k;
  for (long r = threadIdx.x; r < k; r += blockDim.x) out[r] = 0.0;
  __syncthreads();
  const long src = col[c];
  if (src < 0) {
    if (threadIdx.x == 0) out[-src - 1] = 1.0;  // row_of for deflated slots is folded in on upload
  } else {
    const long o = origin[src];
    const double t = tau[src];
    double part = 0;
    for (long j = threadIdx.x; j < kk; j += blockDim.x) {
      const double v = zh[j] / secular_delta(d, j, o, t);
      part += v * v;
    }
    const double scale = 1.0 / sqrt(block_sum(part, shared));
    for (long j = threadIdx.x; j < kk; j += blockDim.x)
      out[row_of[j]] = zh[j] / secular_delta(d, j, o, t) * scale;
  }
  __syncthreads();
  for (long h = threadIdx.x; h < nchains; h += blockDim.x)
    for (long r = chain[h + 1] - 1; r >= chain[h]; --r) {
      const RowRotation g = rot[r];
      const double a = out[g.ra], b = out[g.rb];
      if (a == 0 && b == 0) continue;
      out[g.ra] = g.c * a + g.s * b;
      out[g.rb] = -g.s * a + g.c * b;
    }
}

// A device buffer that only grows, freed in stream order.
class Grow {
 public:
  void* get(std::size_t bytes, cudaStream_t stream) {
    if (bytes > bytes_ || !p_) {
      if (p_) PIPEVD_CUDA_CHECK(cudaFreeAsync(p_, stream));
      p_ = nullptr;
      bytes_ = std::max<std::size_t>(bytes, 256);
      PIPEVD_CUDA_CHECK(pool_malloc(&p_, bytes_, stream));
    }
    return p_;
  }
  void free(cudaStream_t stream) {
    if (p_) cudaFreeAsync(p_, stream);
    p_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

class GpuSecularMerge final : public SecularMerge {
 public:
  GpuSecularMerge(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  ~GpuSecularMerge() override {
    const ScopedDevice guard(device_, std::nothrow);  // a destructor must not throw
    for (Grow* g :
         {&d_, &z_, &origin_, &tau_, &lambda_, &conv_, &zh_, &row_of_, &col_, &rot_, &chain_})
      g->free(stream_);
  }

  int solve(long kk, const double* dl, const double* zl, double rho, double* lambda) override {
    kk_ = kk;
    if (kk == 0) return 0;  // deflated whole: no roots, and a launch of no blocks is an error
    ScopedDevice guard(device_);
    double znorm2 = 0;
    for (long j = 0; j < kk; ++j) znorm2 += zl[j] * zl[j];
    const std::size_t bytes = sizeof(double) * kk;
    double* d = static_cast<double*>(d_.get(bytes, stream_));
    double* z = static_cast<double*>(z_.get(bytes, stream_));
    long* origin = static_cast<long*>(origin_.get(sizeof(long) * kk, stream_));
    double* tau = static_cast<double*>(tau_.get(bytes, stream_));
    double* lam = static_cast<double*>(lambda_.get(bytes, stream_));
    int* conv = static_cast<int*>(conv_.get(sizeof(int) * kk, stream_));
    double* zh = static_cast<double*>(zh_.get(bytes, stream_));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(d, dl, bytes, cudaMemcpyHostToDevice, stream_));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(z, zl, bytes, cudaMemcpyHostToDevice, stream_));
    const unsigned blocks = static_cast<unsigned>((kk + kWarpsPerBlock - 1) / kWarpsPerBlock);
    secular_roots_kernel<<<blocks, kWarpsPerBlock * kWarp, 0, stream_>>>(kk, d, z, rho, znorm2,
                                                                         origin, tau, lam, conv);
    PIPEVD_CUDA_CHECK_LAUNCH();
    zhat_kernel<<<blocks, kWarpsPerBlock * kWarp, 0, stream_>>>(kk, d, z, rho, origin, tau, zh);
    PIPEVD_CUDA_CHECK_LAUNCH();
    std::vector<int> ok(kk);
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(lambda, lam, bytes, cudaMemcpyDeviceToHost, stream_));
    PIPEVD_CUDA_CHECK(
        cudaMemcpyAsync(ok.data(), conv, sizeof(int) * kk, cudaMemcpyDeviceToHost, stream_));
    PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (long i = 0; i < kk; ++i)
      if (!ok[i]) return static_cast<int>(i + 1);
    return 0;
  }

  void set_columns(const MergeColumnPlan& plan) override {
    ScopedDevice guard(device_);
    k_ = plan.k;
    nrot_ = plan.nrot;
    // Slots mapped to rows here, once, so the kernel reads one index per entry: the root rows
    // perm[nd[j]], the deflated columns' row perm[slot] (folded into col), rotations' rows.
    host_row_of_.resize(kk_);
    for (long j = 0; j < kk_; ++j) host_row_of_[j] = plan.perm[plan.nd[j]];
    host_col_.resize(k_);
    for (long c = 0; c < k_; ++c) {
      const long s = plan.col[c];
      host_col_[c] = s >= 0 ? s : -(plan.perm[-s - 1] + 1);
    }
    host_rot_.resize(nrot_);
    for (long r = 0; r < nrot_; ++r)
      host_rot_[r] = {plan.perm[plan.rot[r].a], plan.perm[plan.rot[r].b], plan.rot[r].c,
                      plan.rot[r].s};
    host_chain_.assign(1, 0);
    for (long r = 1; r < nrot_; ++r)
      if (plan.rot[r].a != plan.rot[r - 1].b) host_chain_.push_back(r);
    if (nrot_ > 0) host_chain_.push_back(nrot_);
    nchains_ = static_cast<long>(host_chain_.size()) - 1;
    long* chain = static_cast<long*>(chain_.get(sizeof(long) * (nchains_ + 1), stream_));
    PIPEVD_CUDA_CHECK(cudaMemcpyAsync(chain, host_chain_.data(), sizeof(long) * (nchains_ + 1),
                                      cudaMemcpyHostToDevice, stream_));
    long* row_of = static_cast<long*>(row_of_.get(sizeof(long) * kk_, stream_));
    long* col = static_cast<long*>(col_.get(sizeof(long) * k_, stream_));
    auto* rot =
        static_cast<RowRotation*>(rot_.get(sizeof(RowRotation) * std::max(1L, nrot_), stream_));
    if (kk_ > 0)
      PIPEVD_CUDA_CHECK(cudaMemcpyAsync(row_of, host_row_of_.data(), sizeof(long) * kk_,
                                        cudaMemcpyHostToDevice, stream_));
    PIPEVD_CUDA_CHECK(
        cudaMemcpyAsync(col, host_col_.data(), sizeof(long) * k_, cudaMemcpyHostToDevice, stream_));
    if (nrot_ > 0)
      PIPEVD_CUDA_CHECK(cudaMemcpyAsync(rot, host_rot_.data(), sizeof(RowRotation) * nrot_,
                                        cudaMemcpyHostToDevice, stream_));
    // The host vectors are read by the copies above: wait before they may change.
    PIPEVD_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void build_panel(long c0, long c1, double* m) override {
    if (c1 <= c0) return;
    ScopedDevice guard(device_);
    merge_columns_kernel<<<static_cast<unsigned>(c1 - c0), kColumnThreads, 0, stream_>>>(
        k_, kk_, static_cast<const double*>(d_.get(0, stream_)),
        static_cast<const long*>(origin_.get(0, stream_)),
        static_cast<const double*>(tau_.get(0, stream_)),
        static_cast<const double*>(zh_.get(0, stream_)),
        static_cast<const long*>(row_of_.get(0, stream_)),
        static_cast<const long*>(col_.get(0, stream_)), nchains_,
        static_cast<const long*>(chain_.get(0, stream_)),
        static_cast<const RowRotation*>(rot_.get(0, stream_)), c0, m);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }

 private:
  int device_;
  cudaStream_t stream_;
  long kk_ = 0, k_ = 0, nrot_ = 0, nchains_ = 0;
  Grow d_, z_, origin_, tau_, lambda_, conv_, zh_, row_of_, col_, rot_, chain_;
  std::vector<long> host_row_of_, host_col_, host_chain_;
  std::vector<RowRotation> host_rot_;
};

}  // namespace

std::unique_ptr<SecularMerge> make_gpu_secular_merge(int device, cudaStream_t stream) {
  return std::make_unique<GpuSecularMerge>(device, stream);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* secular_merge_kernel_anchor() { return reinterpret_cast<const void*>(&zhat_kernel); }

}  // namespace pipevd::gpu
