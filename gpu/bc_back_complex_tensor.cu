// Complex BC-back on the FP64 tensor cores (see bc_back_complex_tensor.cuh).
#include <cuda_pipeline.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/cuda_check.hpp"
#include "gpu/bc_back_complex_tensor.cuh"
#include "gpu/dmma.cuh"
#include "gpu/group_lanes.cuh"
#include "gpu/kernel_preload.hpp"
#include "gpu/reflector_blocks.cuh"
#include "gpu/resident_blocks.hpp"

namespace pipevd::gpu {
namespace {

using Z = cuDoubleComplex;  // a double2

constexpr int kBlock = kReflectorBlock;
constexpr int kSpan = 5;     // 8-column tiles a block touches: its b + 7 <= 39 columns
constexpr int kBmax = 32;    // widest band: a reflector block spans at most kSpan tiles
constexpr int kFrag = 128;   // doubles of one block's -T fragments: (re, im) x 32 lanes x 2
constexpr int kVFrag = 128;  // doubles of one tile's V fragments: (re, im) x 32 lanes x 2

// One warp per (sweep block K, step t): reflectors (8K + i, t), i < 8 (tau = 0, v = 0 where the
// sweep or its step does not exist), placed at columns i .. i + b - 1 of the block's 40. Gram
// matrix V^H V by warp reductions (lane c holds columns c and c + 32), then T by zlarft's forward
// recurrence, T(i, i) = tau_i, T(0:i, i) = -tau_i T(0:i, 0:i) V(:, 0:i)^H v_i. Written negated (the
// main kernel only accumulates) in the B-fragment order of W = D (-T): for part p (re, im) lane l
// holds (-T(2q, g), -T(2q + 1, g)) at (p * 32 + l) * 2.
__global__ void __launch_bounds__(256)
    complex_block_t(ReflectorLayout L, const Z* __restrict__ v, const Z* __restrict__ tau,
                    const long* __restrict__ off, double* __restrict__ tf) {
  const long K = blockIdx.y;
  const long t = static_cast<long>(blockIdx.x) * 8 + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (t >= L.steps(kBlock * K)) return;  // uniform over the warp
  const long b = L.b, sweeps = L.sweeps();
  const Z zero = make_cuDoubleComplex(0.0, 0.0);
  Z lo[kBlock], hi[kBlock], ta[kBlock];
#pragma unroll
  for (int i = 0; i < kBlock; ++i) {
    const long s = kBlock * K + i;
    const bool valid = s < sweeps && t < L.steps(s);
    const long idx = valid ? L.index(s, t) : 0;
    ta[i] = valid ? tau[idx] : zero;
    const long j0 = lane - i, j1 = lane + 32 - i;
    lo[i] = valid && j0 >= 0 && j0 < b ? v[idx * b + j0] : zero;
    hi[i] = valid && j1 < b ? v[idx * b + j1] : zero;
  }
  Z gram[kBlock][kBlock];  // (a, c), a < c: v_a^H v_c
#pragma unroll
  for (int a = 0; a < kBlock; ++a)
#pragma unroll
    for (int c = a + 1; c < kBlock; ++c) {
      double re =
          fma(lo[a].x, lo[c].x, fma(lo[a].y, lo[c].y, fma(hi[a].x, hi[c].x, hi[a].y * hi[c].y)));
      double im =
          fma(lo[a].x, lo[c].y, fma(-lo[a].y, lo[c].x, fma(hi[a].x, hi[c].y, -hi[a].y * hi[c].x)));
#pragma unroll
      for (int o = 16; o > 0; o /= 2) {
        re += __shfl_xor_sync(0xffffffffu, re, o);
        im += __shfl_xor_sync(0xffffffffu, im, o);
      }
      gram[a][c] = make_cuDoubleComplex(re, im);
    }
  Z T[kBlock][kBlock];
#pragma unroll
  for (int i = 0; i < kBlock; ++i) {
#pragma unroll
    for (int l = 0; l < kBlock; ++l) T[l][i] = zero;
    T[i][i] = ta[i];
    const Z mt = make_cuDoubleComplex(-ta[i].x, -ta[i].y);
#pragma unroll
    for (int l = 0; l < i; ++l) {
      Z s = zero;
#pragma unroll
      for (int k = l; k < i; ++k) s = cuCfma(T[l][k], gram[k][i], s);
      T[l][i] = cuCmul(mt, s);
    }
  }
  // Every lane holds T; lane 0 puts -T in shared memory for the fragment gather.
  __shared__ double tw[8][2][kBlock * kBlock];
  double(&tw_)[2][kBlock * kBlock] = tw[threadIdx.x / 32];
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < kBlock; ++r)
#pragma unroll
      for (int c = 0; c < kBlock; ++c) {
        tw_[0][r * kBlock + c] = -T[r][c].x;
        tw_[1][r * kBlock + c] = -T[r][c].y;
      }
  __syncwarp();
  const int g = lane / 4, q2 = 2 * (lane % 4);
  double2* out = reinterpret_cast<double2*>(tf + (off[K] + t) * kFrag);
#pragma unroll
  for (int p = 0; p < 2; ++p)
    out[p * 32 + lane] = make_double2(tw_[p][q2 * kBlock + g], tw_[p][(q2 + 1) * kBlock + g]);
}

// Shared memory of the main kernel, in doubles: V's fragments for X V and for X += W V^H, -T's
// fragments, the next step's raw vectors (32 complex per reflector) and -T fragments; then G + G /
// 8 longs (sweep and block offsets).
template <int G>
__host__ __device__ constexpr size_t shared_doubles() {
  return static_cast<size_t>(G / kBlock) * (2 * kSpan * kVFrag + 2 * kFrag) + G * 2 * kBmax;
}
template <int G>
constexpr size_t shared_bytes() {
  return sizeof(double) * shared_doubles<G>() + sizeof(long) * (G + G / kBlock);
}

// Rows of X in blocks of 8 MT NW (warp w holds rows 8 (w MT + mt) + lane / 4 of the block), sweeps
// in groups of G, steps of a group bottom to top, as gpu/bc_back_tensor.cu's kernel (with its
// group lanes, gpu/group_lanes.cuh, without its X prefetch): the window of b + G - 1 columns of
// step t starts at s0 + 1 + t b and with b = 32 slides by 4 tiles a step. Window tile j of a row is
// in xr / xi[mt][j] (real and imaginary parts) in the DMMA's C layout: columns 8 j + 2 q + {0, 1};
// reflector block kq covers window tiles kq .. kq + 4. The C layout serves as A fragments
// (contraction index q + 4 e is column 2 q + e); a complex product is one m16n8k16 per output part,
// its halves the real and the imaginary contraction: Re(X V) = [Xr Xi] [Vr; -Vi], Im(X V) = [Xr Xi]
// [Vi; Vr], likewise for W = D (-T), and X += W V^H as Re: [Wr Wi] [Vr^T; Vi^T], Im: [Wi Wr] [Vr^T;
// -Vi^T].
template <int G, int MT, int NW>
__global__ void __launch_bounds__(NW * 32)
    bc_back_complex_rows_tensor(ReflectorLayout L, const Z* __restrict__ v,
                                const double* __restrict__ tf, const long* __restrict__ off, long m,
                                Z* __restrict__ x, long ldx, GroupLanes lanes) {
  constexpr int NB = G / kBlock;  // reflector blocks per group
  constexpr int WT = NB + 4;      // window tiles: b + G - 1 <= 8 WT
  constexpr int SH = 4;           // tiles the window slides by (b = 32)
  constexpr int NT = NW * 32;
  constexpr int RB = 8 * MT * NW;  // rows per block
  static_assert(G % kBlock == 0, "groups of whole reflector blocks");
  static_assert(MT % 2 == 0, "8-row tiles in pairs: the 16 x 8 products");
  extern __shared__ __align__(16) double smem[];
  double* vd = smem;                      // NB x 5 tiles x (re, im) x 32 pairs: B of D = X V
  double* vq = vd + NB * kSpan * kVFrag;  // the same order for X += W V^H
  double* ts = vq + NB * kSpan * kVFrag;  // NB x (re, im) x 32 pairs: -T
  double* raw_v = ts + NB * kFrag;        // G x 32 complex: the next step's vectors (j < b)
  double* raw_t = raw_v + G * 2 * kBmax;  // NB x kFrag: the next step's -T fragments
  long* so = reinterpret_cast<long*>(smem + shared_doubles<G>());  // sweep offsets
  long* bo = so + G;                                               // T offsets
  const double2* vd2 = reinterpret_cast<const double2*>(vd);
  const double2* vq2 = reinterpret_cast<const double2*>(vq);
  const double2* ts2 = reinterpret_cast<const double2*>(ts);
  const double2* x2c = reinterpret_cast<const double2*>(x);
  double2* x2 = reinterpret_cast<double2*>(x);

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
  for (size_t k = tid; k < shared_doubles<G>(); k += NT) smem[k] = 0.0;
  double xr[MT][WT][2], xi[MT][WT][2];

  for (long s0 = item.lane * G; s0 < sweeps; s0 += static_cast<long>(K) * G) {
    const long s1 = s0 + G < sweeps ? s0 + G : sweeps;
    const long g = s0 / G;
    // This lane's progress counter and the previous lane's, worked out where thread 0 needs them
    // (registers are what the window lives in).
    auto counter = [&](int lane_k) { return lanes.progress + item.row_block * K + lane_k; };
    auto last_sweep = [&](long t) { return static_cast<int>(L.last_sweep_with_step(t, s1) - s0); };
    // Step t's vectors and -T fragments to raw_v / raw_t, asynchronously.
    auto prefetch = [&](long t) {
      const int gl = last_sweep(t);
#pragma unroll 1
      for (int k = tid; k < (gl + 1) * bi; k += NT) {
        const int g = k / bi, j = k - g * bi;
        __pipeline_memcpy_async(raw_v + 2 * (g * kBmax + j), v + (so[g] + t) * b + j, sizeof(Z));
      }
      for (int k = tid; k < (gl / kBlock + 1) * (kFrag / 2); k += NT)
        __pipeline_memcpy_async(raw_t + 2 * k, tf + (bo[k / 64] + t) * kFrag + 2 * (k % 64),
                                2 * sizeof(double));
      __pipeline_commit();
    };
    __syncthreads();  // the previous group's offsets are no longer read
    for (int g = tid; g < G; g += NT) so[g] = s0 + g < s1 ? L.sweep_offset(s0 + g) : 0;
    for (int k = tid; k < NB; k += NT) bo[k] = s0 / kBlock + k < nk ? off[s0 / kBlock + k] : 0;
    const long tmax = L.steps(s0) - 1;
    __syncthreads();
    prefetch(tmax);
    for (long t = tmax; t >= 0; --t) {
      const int glast = last_sweep(t);
      // Step t reads columns the previous group writes up to its own step t (then they leave its
      // window for good); the barrier below hands thread 0's acquire to the block.
      if (K > 1 && g > 0 && tid == 0)
        wait_for_lane_progress(counter((item.lane + K - 1) % K),
                               lane_progress_value(g - 1, lanes.stride, L.steps(s0 - G) - 1, t),
                               seen);
      __pipeline_wait_prior(0);
      __syncthreads();  // raw_v / raw_t written; the previous step's fragments not read
      // Vector j of reflector 8 kq + i sits at block column c = i + j, tile c / 8: to the fragments
      // (kq, tile, part, lane, e) of D = X V (lane 4 i + c % 8 / 2, e = c % 2) and of
      // X += W V^H (lane 4 (c % 8) + i / 2, e = i % 2). Other entries stay zero. Reflectors past
      // glast keep an earlier step's (finite) vectors: their rows and columns of T are zero.
#pragma unroll 1
      for (int k = tid; k < G * kBmax; k += NT) {
        const int g = k / kBmax, j = k % kBmax, i = g % kBlock, kq = g / kBlock;
        const int c = i + j, tile = kq * kSpan + c / 8, cc = c % 8;
        const double re = raw_v[2 * k], im = raw_v[2 * k + 1];
        const int dk = (tile * 64 + 4 * i + cc / 2) * 2 + cc % 2;
        const int qk = (tile * 64 + 4 * cc + i / 2) * 2 + i % 2;
        vd[dk] = re, vd[dk + 64] = im;
        vq[qk] = re, vq[qk + 64] = im;
      }
#pragma unroll 1
      for (int k = tid; k < NB * kFrag; k += NT) ts[k] = raw_t[k];
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
              const double2 z = in ? __ldcg(x2c + col * ldx + row[mt]) : make_double2(0.0, 0.0);
              xr[mt][j][e] = z.x, xi[mt][j][e] = z.y;
            }
      } else {  // the incoming tiles; their columns lie left of the last step's base (< n)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = 0; j < SH; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int c = 8 * j + cq + e;
              const double2 z =
                  active[mt] ? __ldcg(x2c + (base + c) * ldx + row[mt]) : make_double2(0.0, 0.0);
              xr[mt][j][e] = z.x, xi[mt][j][e] = z.y;
            }
      }
      __syncthreads();  // fragments staged; raw_v and raw_t free
      if (t > 0) prefetch(t - 1);

#pragma unroll
      for (int kq = 0; kq < NB; ++kq) {
        if (kBlock * kq > glast) break;  // uniform over the block
        // D = X V: the real and imaginary parts are two independent chains.
        double dr[MT / 2][4], di[MT / 2][4];
#pragma unroll
        for (int p = 0; p < MT / 2; ++p)
#pragma unroll
          for (int k = 0; k < 4; ++k) dr[p][k] = di[p][k] = 0.0;
#pragma unroll
        for (int u = 0; u < kSpan; ++u) {
          const int tile = kq * kSpan + u;
          const double2 fr = vd2[tile * 64 + lane], fi = vd2[tile * 64 + 32 + lane];
          const double br[4] = {fr.x, fr.y, -fi.x, -fi.y};
          const double bm[4] = {fi.x, fi.y, fr.x, fr.y};
#pragma unroll
          for (int p = 0; p < MT / 2; ++p) {
            const double(&r0)[2] = xr[2 * p][kq + u];
            const double(&r1)[2] = xr[2 * p + 1][kq + u];
            const double(&i0)[2] = xi[2 * p][kq + u];
            const double(&i1)[2] = xi[2 * p + 1][kq + u];
            const double a[8] = {r0[0], r1[0], r0[1], r1[1], i0[0], i1[0], i0[1], i1[1]};
            dmma16x2(dr[p], a, br);
            dmma16x2(di[p], a, bm);
          }
        }
        // W = D (-T): D's C layout as A, its column 2 q + e the contraction index q + 4 e.
        const double2 tr = ts2[kq * 64 + lane], ti = ts2[kq * 64 + 32 + lane];
        const double br[4] = {tr.x, tr.y, -ti.x, -ti.y};
        const double bm[4] = {ti.x, ti.y, tr.x, tr.y};
        double wr[MT / 2][4], wi[MT / 2][4];
#pragma unroll
        for (int p = 0; p < MT / 2; ++p) {
#pragma unroll
          for (int k = 0; k < 4; ++k) wr[p][k] = wi[p][k] = 0.0;
          const double a[8] = {dr[p][0], dr[p][2], dr[p][1], dr[p][3],
                               di[p][0], di[p][2], di[p][1], di[p][3]};
          dmma16x2(wr[p], a, br);
          dmma16x2(wi[p], a, bm);
        }
        // X += W V^H.
#pragma unroll
        for (int u = 0; u < kSpan; ++u) {
          const int tile = kq * kSpan + u;
          const double2 fr = vq2[tile * 64 + lane], fi = vq2[tile * 64 + 32 + lane];
          const double bre[4] = {fr.x, fr.y, fi.x, fi.y};
          const double bim[4] = {fr.x, fr.y, -fi.x, -fi.y};
#pragma unroll
          for (int p = 0; p < MT / 2; ++p) {
            const double ar[8] = {wr[p][0], wr[p][2], wr[p][1], wr[p][3],
                                  wi[p][0], wi[p][2], wi[p][1], wi[p][3]};
            const double ai[8] = {wi[p][0], wi[p][2], wi[p][1], wi[p][3],
                                  wr[p][0], wr[p][2], wr[p][1], wr[p][3]};
            double(&r0)[2] = xr[2 * p][kq + u];
            double(&r1)[2] = xr[2 * p + 1][kq + u];
            double(&i0)[2] = xi[2 * p][kq + u];
            double(&i1)[2] = xi[2 * p + 1][kq + u];
            double c[4] = {r0[0], r0[1], r1[0], r1[1]};
            dmma16x2(c, ar, bre);
            r0[0] = c[0], r0[1] = c[1], r1[0] = c[2], r1[1] = c[3];
            double d[4] = {i0[0], i0[1], i1[0], i1[1]};
            dmma16x2(d, ai, bim);
            i0[0] = d[0], i0[1] = d[1], i1[0] = d[2], i1[1] = d[3];
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
            if (col < n && (slide || c < wlen) && active[mt])
              x2[col * ldx + row[mt]] = make_double2(xr[mt][j][e], xi[mt][j][e]);
          }
        }
      if (!last) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
          for (int j = WT - 1; j >= SH; --j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              xr[mt][j][e] = xr[mt][j - SH][e];
              xi[mt][j][e] = xi[mt][j - SH][e];
            }
      }
      if (K > 1) {  // every thread's stores of step t before the release
        __syncthreads();
        if (tid == 0)
          publish_lane_progress(counter(item.lane), lane_progress_value(g, lanes.stride, tmax, t));
      }
    }
    if (K > 1 && tid == 0)  // the whole group, also where it has no step
      publish_lane_progress(counter(item.lane), lane_progress_value(g, lanes.stride, tmax, 0));
  }
}

template <int G, int MT, int NW>
auto prepared_kernel() {
  constexpr size_t smem = shared_bytes<G>();
  auto kernel = bc_back_complex_rows_tensor<G, MT, NW>;
  if (smem > 48 * 1024)
    PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smem)));
  return kernel;
}

template <int G, int MT, int NW>
void launch(const ReflectorLayout& L, const Z* v, const double* tf, const long* off, long m, Z* x,
            long ldx, GroupLanes lanes, cudaStream_t stream) {
  constexpr long rb = 8L * MT * NW;
  const long blocks = (m + rb - 1) / rb * lanes.count;
  if (blocks > 0x7fffffffL)
    throw std::invalid_argument("gpu::bc_back_complex_tensor: too many rows");
  auto kernel = prepared_kernel<G, MT, NW>();
  kernel<<<static_cast<int>(blocks), NW * 32, shared_bytes<G>(), stream>>>(L, v, tf, off, m, x, ldx,
                                                                           lanes);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

// The blocks of shape <G, MT, NW> resident on `device` at once.
template <int G, int MT, int NW>
long shape_resident_blocks(int device) {
  return resident_blocks(prepared_kernel<G, MT, NW>(), NW * 32, shared_bytes<G>(), device);
}

struct Shape {
  ComplexBcBackTensorShape s;
  void (*fn)(const ReflectorLayout&, const Z*, const double*, const long*, long, Z*, long,
             GroupLanes, cudaStream_t);
  long (*resident)(int);
};
template <int G, int MT, int NW>
constexpr Shape shape() {
  return {{G, MT, NW}, launch<G, MT, NW>, shape_resident_blocks<G, MT, NW>};
}
// Groups of 32 (a window of 8 tiles: 64 doubles of X per thread) in two block sizes, and of 16
// (X streamed twice as often, a window of 6 tiles: fewer registers). Larger groups hold more of
// the window than the registers take: they spill. The first is the default (the fastest in
// bench/bc_back_complex_bench --tensor).
const Shape kShapes[] = {shape<32, 2, 8>(), shape<32, 2, 4>(), shape<16, 2, 8>()};

const Shape* find_shape(const ComplexBcBackTensorShape& s) {
  for (const Shape& k : kShapes)
    if (k.s.group == s.group && k.s.mtiles == s.mtiles && k.s.warps == s.warps) return &k;
  return nullptr;
}

long row_blocks_of(const ComplexBcBackTensorShape& s, long m) {
  const long rb = 8L * s.mtiles * s.warps;
  return (m + rb - 1) / rb;
}
long groups_of(const ReflectorLayout& L, const ComplexBcBackTensorShape& s) {
  return (L.sweeps() + s.group - 1) / s.group;
}
long group_lanes(const Shape& k, int requested, const ReflectorLayout& L, long m, int device) {
  return choose_group_lanes(true, requested, row_blocks_of(k.s, m), k.resident(device),
                            groups_of(L, k.s));
}

// Workspace: the offsets, then the -T fragments at a 16-byte boundary, then the group lanes'
// ticket and progress counters.
size_t lanes_offset(const ReflectorLayout& L) {
  return reflector_block_offsets_bytes(L) +
         sizeof(double) * kFrag * static_cast<size_t>(reflector_block_count(L));
}

}  // namespace

bool bc_back_complex_tensor_runs(int device) {
  int major = 0, optin = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  PIPEVD_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return major >= 8 && shared_bytes<32>() <= static_cast<size_t>(optin);
}

std::vector<ComplexBcBackTensorShape> bc_back_complex_tensor_shapes() {
  std::vector<ComplexBcBackTensorShape> out;
  for (const Shape& k : kShapes) out.push_back(k.s);
  return out;
}

bool bc_back_complex_tensor_compiled(const ComplexBcBackTensorShape& s) {
  return find_shape(s) != nullptr;
}

size_t bc_back_complex_tensor_workspace_bytes(const ReflectorLayout& L) {
  return lanes_offset(L) + kGroupLanesBytes;
}

void bc_back_complex_tensor(const ReflectorLayout& L, const Z* d_v, const Z* d_tau, long m, Z* d_x,
                            long ldx, const ComplexBcBackTensorShape& s, void* work,
                            cudaStream_t stream) {
  if (m < 0 || (m > 0 && ldx < m) || L.n < 0)
    throw std::invalid_argument("gpu::bc_back_complex_tensor: m = " + std::to_string(m) +
                                ", ldx = " + std::to_string(ldx) + ", n = " + std::to_string(L.n));
  const Shape* k = find_shape(s);
  if (!k)
    throw std::invalid_argument(
        "gpu::bc_back_complex_tensor: no compiled shape group = " + std::to_string(s.group) +
        ", mtiles = " + std::to_string(s.mtiles) + ", warps = " + std::to_string(s.warps));
  if (L.b > kBmax)
    throw std::invalid_argument("gpu::bc_back_complex_tensor: b = " + std::to_string(L.b));
  if (m == 0 || L.count() == 0) return;
  const long nk = blocks_of_sweeps(L);
  long* off = static_cast<long*>(work);
  double* tf =
      reinterpret_cast<double*>(static_cast<char*>(work) + reflector_block_offsets_bytes(L));
  const long tblocks = (L.steps(0) + 7) / 8;
  if (tblocks > 0x7fffffffL || nk > 65535)
    throw std::invalid_argument("gpu::bc_back_complex_tensor: n = " + std::to_string(L.n) +
                                " too large for the T-factor grid");
  reflector_block_offsets(L, off, stream);
  complex_block_t<<<dim3(static_cast<unsigned>(tblocks), static_cast<unsigned>(nk)), 256, 0,
                    stream>>>(L, d_v, d_tau, off, tf);
  PIPEVD_CUDA_CHECK_LAUNCH();
  int device = 0;
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  const int count = static_cast<int>(group_lanes(*k, s.group_lanes, L, m, device));
  const GroupLanes lanes = group_lanes_at(static_cast<char*>(work) + lanes_offset(L), count,
                                          row_blocks_of(s, m), L.steps(0) + 2, stream);
  k->fn(L, d_v, tf, off, m, d_x, ldx, lanes, stream);
}

int bc_back_complex_tensor_group_lanes(const ReflectorLayout& L, long m,
                                       const ComplexBcBackTensorShape& s, int device) {
  const Shape* k = find_shape(s);
  return k ? static_cast<int>(group_lanes(*k, s.group_lanes, L, m, device)) : 0;
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* bc_back_complex_tensor_kernel_anchor() {
  return reinterpret_cast<const void*>(&complex_block_t);
}

}  // namespace pipevd::gpu
