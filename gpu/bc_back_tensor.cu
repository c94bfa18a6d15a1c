// BC-back on the FP64 tensor cores (see bc_back_tensor.cuh).
#include <cuda_pipeline.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/bc_back_tensor.cuh"
#include "gpu/dmma.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/group_lanes.cuh"
#include "gpu/kernel_preload.hpp"
#include "gpu/reflector_blocks.cuh"
#include "gpu/resident_blocks.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kBlock = kReflectorBlock;
constexpr int kSpan = 5;   // 8-column tiles a block touches: its b + 7 <= 39 columns
constexpr int kBmax = 32;  // widest band: a reflector block spans at most kSpan tiles

// One warp per (sweep block K, step t): reflectors (8K + i, t), i < 8 (tau = 0, v = 0 where the
// sweep or its step does not exist), placed at columns i .. i + b - 1 of the block's 40. Gram
// matrix by warp reductions (lane c holds columns c and c + 32), then T by dlarft's forward
// recurrence, T(i, i) = tau_i, T(0:i, i) = -tau_i T(0:i, 0:i) V(:, 0:i)^T v_i, written in the DMMA
// B-fragment order of W = D T: lane l holds (T(2q, g), T(2q + 1, g)).
__global__ void __launch_bounds__(256)
    reflector_block_t(ReflectorLayout L, const double* __restrict__ v,
                      const double* __restrict__ tau, const long* __restrict__ off,
                      double* __restrict__ tf) {
  const long K = blockIdx.y;
  const long t = static_cast<long>(blockIdx.x) * 8 + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (t >= L.steps(kBlock * K)) return;  // uniform over the warp
  const long b = L.b, sweeps = L.sweeps();
  double lo[kBlock], hi[kBlock], ta[kBlock];
#pragma unroll
  for (int i = 0; i < kBlock; ++i) {
    const long s = kBlock * K + i;
    const bool valid = s < sweeps && t < L.steps(s);
    const long idx = valid ? L.index(s, t) : 0;
    ta[i] = valid ? tau[idx] : 0.0;
    const long j0 = lane - i, j1 = lane + 32 - i;
    lo[i] = valid && j0 >= 0 && j0 < b ? v[idx * b + j0] : 0.0;
    hi[i] = valid && j1 < b ? v[idx * b + j1] : 0.0;
  }
  double gram[kBlock][kBlock];
#pragma unroll
  for (int a = 0; a < kBlock; ++a)
#pragma unroll
    for (int c = a + 1; c < kBlock; ++c) {
      double p = fma(lo[a], lo[c], hi[a] * hi[c]);
#pragma unroll
      for (int o = 16; o > 0; o /= 2) p += __shfl_xor_sync(0xffffffffu, p, o);
      gram[a][c] = p;
    }
  double T[kBlock][kBlock];
#pragma unroll
  for (int i = 0; i < kBlock; ++i) {
#pragma unroll
    for (int l = 0; l < kBlock; ++l) T[l][i] = 0.0;
    T[i][i] = ta[i];
#pragma unroll
    for (int l = 0; l < i; ++l) {
      double s = 0.0;
#pragma unroll
      for (int k = l; k < i; ++k) s = fma(T[l][k], gram[k][i], s);
      T[l][i] = -ta[i] * s;
    }
  }
  // Every lane holds T; lane 0 puts it in shared memory for the fragment gather.
  __shared__ double tw[8][kBlock * kBlock];
  double* tw_ = tw[threadIdx.x / 32];
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < kBlock; ++r)
#pragma unroll
      for (int c = 0; c < kBlock; ++c) tw_[r * kBlock + c] = T[r][c];
  __syncwarp();
  const int g = lane / 4, q2 = 2 * (lane % 4);
  const double f0 = tw_[q2 * kBlock + g], f1 = tw_[(q2 + 1) * kBlock + g];
  reinterpret_cast<double2*>(tf)[(off[K] + t) * 32 + lane] = make_double2(f0, f1);
}

// Shared memory of the main kernel, in doubles: V's fragments for X V and for W V^T, T's fragments,
// the next step's raw vectors (32 per reflector) and T fragments, with PFX the next step's
// incoming 32 columns of the block's rows; then G + G / 8 longs (sweep and block offsets).
template <int G, int MT, int NW, bool PFX>
__host__ __device__ constexpr size_t shared_doubles() {
  return static_cast<size_t>(G / kBlock) * (2 * kSpan * 64 + 64 + 64) + G * kBmax +
         (PFX ? 32 * (8 * MT * NW + 2) : 0);
}
template <int G, int MT, int NW, bool PFX>
constexpr size_t shared_bytes() {
  return sizeof(double) * shared_doubles<G, MT, NW, PFX>() + sizeof(long) * (G + G / kBlock);
}

// Rows of X in blocks of 8 MT NW (warp w holds rows 8 (w MT + mt) + lane / 4 of the block), sweeps
// in groups of G, steps of a group bottom to top, as bc_back_rows (gpu/bc_back.cu): the window of
// b + G - 1 columns of step t starts at base = s0 + 1 + t b, and with b = 32 it slides by 4 tiles
// a step (only the incoming tiles loaded, the outgoing stored). Window tile j of a row is in
// xl[mt][j] in the DMMA's C layout: columns 8 j + 2 q + {0, 1}. Reflector block kq (sweeps
// s0 + 8 kq ..) covers window columns 8 kq .. 8 kq + 39, tiles kq .. kq + 4.
//
// The contraction index of a DMMA can be permuted freely, so the C layout serves as A fragments:
// A_e(g, q) = X(g, 8 j + 2 q + e) with B_e(q, n) = V(8 j + 2 q + e, n), e = 0, 1.
template <int G, int MT, int NW, bool PFX>
__global__ void __launch_bounds__(NW * 32)
    bc_back_rows_tensor(ReflectorLayout L, const double* __restrict__ v,
                        const double* __restrict__ tf, const long* __restrict__ off, long m,
                        double* __restrict__ x, long ldx, GroupLanes lanes) {
  constexpr int NB = G / kBlock;  // reflector blocks per group
  constexpr int WT = NB + 4;      // window tiles: b + G - 1 <= 8 WT
  constexpr int SH = 4;           // tiles the window slides by (b = 32)
  constexpr int NT = NW * 32;
  constexpr int RB = 8 * MT * NW;  // rows per block
  constexpr int XS = RB + 2;       // xs column stride: conflict-free C-layout reads
  static_assert(G % kBlock == 0, "groups of whole reflector blocks");
  static_assert(MT % 2 == 0, "8-row tiles in pairs: the 16 x 8 products");
  extern __shared__ __align__(16) double smem[];
  double* vd = smem;                  // NB x 5 x 32 pairs: B fragments of D = X V
  double* vq = vd + NB * kSpan * 64;  // NB x 5 x 32 pairs: B fragments of X -= W V^T
  double* ts = vq + NB * kSpan * 64;  // NB x 32 pairs: T fragments
  double* raw_v = ts + NB * 64;       // G x 32: the next step's vectors (j < b)
  double* raw_t = raw_v + G * kBmax;  // NB x 64: the next step's T fragments
  double* xs = raw_t + NB * 64;       // PFX: 32 x XS, the next step's incoming columns
  long* so = reinterpret_cast<long*>(smem + shared_doubles<G, MT, NW, PFX>());  // sweep offsets
  long* bo = so + G;                                                            // T offsets
  const double2* vd2 = reinterpret_cast<const double2*>(vd);
  const double2* vq2 = reinterpret_cast<const double2*>(vq);
  const double2* ts2 = reinterpret_cast<const double2*>(ts);

  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const long n = L.n, b = L.b, sweeps = L.sweeps();
  const long nk = blocks_of_sweeps(L);
  const int bi = static_cast<int>(b);
  const bool slide = b == kBmax;
  const long wlen = b + G - 1;
  const int K = lanes.count;
  const LaneWorkItem item = take_lane_work_item(lanes, tid);
  const long rblk = item.row_block * RB;
  unsigned long long seen = 0;    // thread 0: the predecessor's progress last read
  const int cq = 2 * (lane & 3);  // the thread's first column of a tile
  long row[MT];
  bool active[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    row[mt] = rblk + 8 * (warp * MT + mt) + lane / 4;
    active[mt] = row[mt] < m;
  }
  for (size_t k = tid; k < shared_doubles<G, MT, NW, PFX>(); k += NT) smem[k] = 0.0;
  double xl[MT][WT][2];

  for (long s0 = item.lane * G; s0 < sweeps; s0 += static_cast<long>(K) * G) {
    const long s1 = s0 + G < sweeps ? s0 + G : sweeps;
    const long g = s0 / G;
    unsigned long long* mine = lanes.progress + item.row_block * K + item.lane;
    const unsigned long long* before =
        lanes.progress + item.row_block * K + (item.lane + K - 1) % K;
    const long tmax_before = g > 0 ? L.steps(s0 - G) - 1 : 0;
    auto last_sweep = [&](long t) { return static_cast<int>(L.last_sweep_with_step(t, s1) - s0); };
    // Step t's vectors, T fragments and (with_x) incoming columns, asynchronously.
    auto prefetch = [&](long t, bool with_x) {
      const int gl = last_sweep(t);
#pragma unroll 1
      for (int k = tid; k < (gl + 1) * bi; k += NT) {
        const int g = k / bi, j = k - g * bi;
        __pipeline_memcpy_async(raw_v + g * kBmax + j, v + (so[g] + t) * b + j, sizeof(double));
      }
      for (int k = tid; k < (gl / kBlock + 1) * 32; k += NT)
        __pipeline_memcpy_async(raw_t + 2 * k, tf + 2 * ((bo[k / 32] + t) * 32 + k % 32),
                                2 * sizeof(double));
      if (PFX && with_x) {
        const long base = s0 + 1 + t * b;
#pragma unroll 1
        for (int k = tid; k < 32 * RB; k += NT) {
          const int c = k / RB, r = k - c * RB;
          if (rblk + r < m)
            __pipeline_memcpy_async(xs + c * XS + r, x + (base + c) * ldx + rblk + r,
                                    sizeof(double));
        }
      }
      __pipeline_commit();
    };
    __syncthreads();  // the previous group's offsets are no longer read
    for (int g = tid; g < G; g += NT) so[g] = s0 + g < s1 ? L.sweep_offset(s0 + g) : 0;
    for (int k = tid; k < NB; k += NT) bo[k] = s0 / kBlock + k < nk ? off[s0 / kBlock + k] : 0;
    const long tmax = L.steps(s0) - 1;
    __syncthreads();
    prefetch(tmax, false);
    for (long t = tmax; t >= 0; --t) {
      const int glast = last_sweep(t);
      // Step t reads columns the previous group writes up to its own step t (then they leave its
      // window for good); the barrier below hands thread 0's acquire to the block.
      if (K > 1 && g > 0 && tid == 0)
        wait_for_lane_progress(before, lane_progress_value(g - 1, lanes.stride, tmax_before, t),
                               seen);
      __pipeline_wait_prior(0);
      __syncthreads();  // raw_v / raw_t / xs written; the previous step's fragments not read
      // Vector j of reflector 8 kq + i sits at block column c = i + j, tile c / 8: to the
      // fragments (kq, tile, lane, e) of D = X V (lane 4 i + c % 8 / 2, e = c % 2) and of
      // X -= W V^T (lane 4 (c % 8) + i / 2, e = i % 2). Other entries stay zero.
#pragma unroll 1
      for (int k = tid; k < G * kBmax; k += NT) {
        const int g = k / kBmax, j = k % kBmax, i = g % kBlock, kq = g / kBlock;
        const int c = i + j, tile = kq * kSpan + c / 8, cc = c % 8;
        const double val = raw_v[k];
        vd[(tile * 32 + 4 * i + cc / 2) * 2 + cc % 2] = val;
        vq[(tile * 32 + 4 * cc + i / 2) * 2 + i % 2] = val;
      }
#pragma unroll 1
      for (int k = tid; k < NB * 64; k += NT) ts[k] = raw_t[k];
      const long base = s0 + 1 + t * b;  // first_row(s0, t)
      if (!slide || t == tmax) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = 0; j < WT; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int c = 8 * j + cq + e;
              const long col = base + c;
              const bool in = col < n && (slide || c < wlen) && active[mt];
              xl[mt][j][e] = in ? __ldcg(x + col * ldx + row[mt]) : 0.0;
            }
      } else {  // the incoming tiles; their columns lie left of the last step's base (< n)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = 0; j < SH; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int c = 8 * j + cq + e;
              if (PFX)
                xl[mt][j][e] = xs[c * XS + (row[mt] - rblk)];
              else
                xl[mt][j][e] = active[mt] ? __ldcg(x + (base + c) * ldx + row[mt]) : 0.0;
            }
      }
      __syncthreads();  // fragments staged; raw_v, raw_t and xs free
      if (t > 0) prefetch(t - 1, slide);

#pragma unroll
      for (int kq = 0; kq < NB; ++kq) {
        if (kBlock * kq > glast) break;  // uniform over the block
        // Pairs of 8-row tiles (rows g and g + 8) as one 16-row product per tile: the contraction
        // index q + 4 e is window column 8 j + 2 q + e (A from the C layout as is). D = X V:
        // tiles (0, 1) and (2, 3) as 16 x 8 x 16 products, tile 4 as 16 x 8 x 8.
        double d[MT / 2][2][4];
#pragma unroll
        for (int p = 0; p < MT / 2; ++p)
#pragma unroll
          for (int k = 0; k < 4; ++k) d[p][0][k] = d[p][1][k] = 0.0;
#pragma unroll
        for (int u = 0; u < kSpan; u += 2) {
          const double2 f = vd2[(kq * kSpan + u) * 32 + lane];
          if (u + 1 < kSpan) {
            const double2 f1 = vd2[(kq * kSpan + u + 1) * 32 + lane];
            const double b[4] = {f.x, f.y, f1.x, f1.y};
#pragma unroll
            for (int p = 0; p < MT / 2; ++p) {
              const double a[8] = {xl[2 * p][kq + u][0],     xl[2 * p + 1][kq + u][0],
                                   xl[2 * p][kq + u][1],     xl[2 * p + 1][kq + u][1],
                                   xl[2 * p][kq + u + 1][0], xl[2 * p + 1][kq + u + 1][0],
                                   xl[2 * p][kq + u + 1][1], xl[2 * p + 1][kq + u + 1][1]};
              dmma16x2(d[p][(u / 2) % 2], a, b);
            }
          } else {
#pragma unroll
            for (int p = 0; p < MT / 2; ++p) {
              const double(&x0)[2] = xl[2 * p][kq + u];
              const double(&x1)[2] = xl[2 * p + 1][kq + u];
              dmma16(d[p][(u / 2) % 2], x0[0], x1[0], x0[1], x1[1], f.x, f.y);
            }
          }
        }
        const double2 tt = ts2[kq * 32 + lane];
        double w[MT / 2][4];
#pragma unroll
        for (int p = 0; p < MT / 2; ++p) {
          double a[4];
#pragma unroll
          for (int k = 0; k < 4; ++k) a[k] = d[p][0][k] + d[p][1][k], w[p][k] = 0.0;
          dmma16(w[p], a[0], a[2], a[1], a[3], tt.x, tt.y);
#pragma unroll
          for (int k = 0; k < 4; ++k) w[p][k] = -w[p][k];
        }
#pragma unroll
        for (int u = 0; u < kSpan; ++u) {
          const double2 f = vq2[(kq * kSpan + u) * 32 + lane];
#pragma unroll
          for (int p = 0; p < MT / 2; ++p) {
            double c[4] = {xl[2 * p][kq + u][0], xl[2 * p][kq + u][1], xl[2 * p + 1][kq + u][0],
                           xl[2 * p + 1][kq + u][1]};
            dmma16(c, w[p][0], w[p][2], w[p][1], w[p][3], f.x, f.y);
            xl[2 * p][kq + u][0] = c[0], xl[2 * p][kq + u][1] = c[1];
            xl[2 * p + 1][kq + u][0] = c[2], xl[2 * p + 1][kq + u][1] = c[3];
          }
        }
      }

      const bool last = !slide || t == 0;
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < WT; ++j) {
          if (!last && j < WT - SH) continue;  // sliding: only the tiles that leave the window
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int c = 8 * j + cq + e;
            const long col = base + c;
            if (col < n && (slide || c < wlen) && active[mt]) x[col * ldx + row[mt]] = xl[mt][j][e];
          }
        }
      if (!last) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = WT - 1; j >= SH; --j) {
            xl[mt][j][0] = xl[mt][j - SH][0];
            xl[mt][j][1] = xl[mt][j - SH][1];
          }
      }
      if (K > 1) {  // every thread's stores of step t before the release
        __syncthreads();
        if (tid == 0) publish_lane_progress(mine, lane_progress_value(g, lanes.stride, tmax, t));
      }
    }
    if (K > 1 && tid == 0)  // the whole group, also where it has no step
      publish_lane_progress(mine, lane_progress_value(g, lanes.stride, tmax, 0));
  }
}

template <int G, int MT, int NW, bool PFX>
auto prepared_kernel() {
  constexpr size_t smem = shared_bytes<G, MT, NW, PFX>();
  auto kernel = bc_back_rows_tensor<G, MT, NW, PFX>;
  if (smem > 48 * 1024)
    PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  return kernel;
}

template <int G, int MT, int NW, bool PFX>
void launch(const ReflectorLayout& L, const double* v, const double* tf, const long* off, long m,
            double* x, long ldx, GroupLanes lanes, cudaStream_t stream) {
  constexpr long rb = 8L * MT * NW;
  const long blocks = (m + rb - 1) / rb * lanes.count;
  if (blocks > 0x7fffffffL) throw std::invalid_argument("gpu::bc_back_tensor: too many rows");
  auto kernel = prepared_kernel<G, MT, NW, PFX>();
  kernel<<<static_cast<int>(blocks), NW * 32, shared_bytes<G, MT, NW, PFX>(), stream>>>(
      L, v, tf, off, m, x, ldx, lanes);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

template <int G, int MT, int NW, bool PFX>
long wave_rows(int device) {
  return resident_blocks(prepared_kernel<G, MT, NW, PFX>(), NW * 32, shared_bytes<G, MT, NW, PFX>(),
                         device) *
         8 * MT * NW;
}

struct Shape {
  BcBackTensorShape s;
  size_t smem;
  void (*fn)(const ReflectorLayout&, const double*, const double*, const long*, long, double*, long,
             GroupLanes, cudaStream_t);
  long (*wave)(int);
};
template <int G, int MT, int NW, bool PFX>
constexpr Shape shape() {
  return {{G, MT, NW, PFX},
          shared_bytes<G, MT, NW, PFX>(),
          launch<G, MT, NW, PFX>,
          wave_rows<G, MT, NW, PFX>};
}
const Shape kShapes[] = {
    shape<128, 2, 8, true>(),
    shape<128, 2, 8, false>(),
    shape<96, 2, 8, true>(),
    shape<64, 2, 4, true>(),
};

const Shape* find_shape(const BcBackTensorShape& s) {
  for (const Shape& k : kShapes)
    if (k.s.group == s.group && k.s.mtiles == s.mtiles && k.s.warps == s.warps &&
        k.s.prefetch_x == s.prefetch_x)
      return &k;
  return nullptr;
}

// Workspace: the offsets (nK + 1 longs), then the T factors at a 16-byte boundary, then the group
// lanes' ticket and progress counters (gpu/group_lanes.cuh).
size_t lanes_offset(const ReflectorLayout& L) {
  return reflector_block_offsets_bytes(L) +
         sizeof(double) * 64 * static_cast<size_t>(reflector_block_count(L));
}

long rows_per_block(const BcBackTensorShape& s) { return 8L * s.mtiles * s.warps; }
long row_blocks_of(const BcBackTensorShape& s, long m) {
  return (m + rows_per_block(s) - 1) / rows_per_block(s);
}

// The X prefetch reads a step's columns before its wait: no lanes.
long group_lanes(const Shape& k, int requested, long groups, long m, int device) {
  return choose_group_lanes(!k.s.prefetch_x, requested, row_blocks_of(k.s, m),
                            k.wave(device) / rows_per_block(k.s), groups);
}
long groups_of(const ReflectorLayout& L, const BcBackTensorShape& s) {
  return (L.sweeps() + s.group - 1) / s.group;
}

}  // namespace

std::vector<BcBackTensorShape> bc_back_tensor_shapes() {
  std::vector<BcBackTensorShape> out;
  for (const Shape& k : kShapes) out.push_back(k.s);
  return out;
}

bool bc_back_tensor_compiled(const BcBackTensorShape& s) { return find_shape(s) != nullptr; }

bool bc_back_tensor_fits(const BcBackTensorShape& s, int device) {
  const Shape* k = find_shape(s);
  int major = 0, optin = 0;
  if (!k) return false;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  PIPEVD_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return major >= 8 && k->smem <= static_cast<size_t>(optin);
}

size_t bc_back_tensor_workspace_bytes(const ReflectorLayout& L) {
  return lanes_offset(L) + kGroupLanesBytes;
}

void bc_back_tensor(const ReflectorLayout& L, const double* d_v, const double* d_tau, long m,
                    double* d_x, long ldx, const BcBackTensorShape& s, void* work,
                    cudaStream_t stream) {
  if (m < 0 || (m > 0 && ldx < m) || L.n < 0)
    throw std::invalid_argument("gpu::bc_back_tensor: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx) + ", n = " + std::to_string(L.n));
  const Shape* k = find_shape(s);
  if (!k)
    throw std::invalid_argument(
        "gpu::bc_back_tensor: no compiled shape group = " + std::to_string(s.group) +
        ", mtiles = " + std::to_string(s.mtiles) + ", warps = " + std::to_string(s.warps));
  if (m == 0 || L.count() == 0) return;
  if (L.b < 2 || L.b > kBmax)
    throw std::invalid_argument("gpu::bc_back_tensor: b = " + std::to_string(L.b));
  const long nk = blocks_of_sweeps(L);
  long* off = static_cast<long*>(work);
  double* tf =
      reinterpret_cast<double*>(static_cast<char*>(work) + reflector_block_offsets_bytes(L));
  reflector_block_offsets(L, off, stream);
  const long tblocks = (L.steps(0) + 7) / 8;
  if (tblocks > 0x7fffffffL || nk > 65535)
    throw std::invalid_argument("gpu::bc_back_tensor: n = " + std::to_string(L.n) +
                                " too large for the T-factor grid");
  reflector_block_t<<<dim3(static_cast<unsigned>(tblocks), static_cast<unsigned>(nk)), 256, 0,
                      stream>>>(L, d_v, d_tau, off, tf);
  PIPEVD_CUDA_CHECK_LAUNCH();
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  const int count = static_cast<int>(group_lanes(*k, s.group_lanes, groups_of(L, s), m, device));
  const GroupLanes lanes = group_lanes_at(static_cast<char*>(work) + lanes_offset(L), count,
                                          row_blocks_of(s, m), L.steps(0) + 2, stream);
  k->fn(L, d_v, tf, off, m, d_x, ldx, lanes, stream);
}

int bc_back_tensor_group_lanes(const ReflectorLayout& L, long m, const BcBackTensorShape& s,
                               int device) {
  const Shape* k = find_shape(s);
  return k ? static_cast<int>(group_lanes(*k, s.group_lanes, groups_of(L, s), m, device)) : 0;
}

long bc_back_tensor_wave_rows(const BcBackTensorShape& s, long m, int device) {
  const Shape* k = find_shape(s);
  if (!k) return 0;
  constexpr long kManyGroups = 1L << 30;  // a planning question: the groups do not limit the lanes
  // A round runs whole row blocks only (group_lane_rounds): the resident blocks over the lanes,
  // rounded down.
  const long resident = k->wave(device) / rows_per_block(k->s);
  return resident / group_lanes(*k, s.group_lanes, kManyGroups, m, device) * rows_per_block(k->s);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bc_back_tensor_kernel_anchor() {
  return reinterpret_cast<const void*>(&reflector_block_t);
}

}  // namespace pipevd::gpu
