// Z = S W reading S's lower triangle only (see symmetric_product.cuh).
//
// Fragment layouts (gpu/dmma.cuh; g = lane / 4, q = lane % 4; R0 = the warp's first row in the
// strip: 32 w for warp w of 8, or with warp roles 64 (w mod 4); m16n8k16 with the contraction index
// 4 c + q, c = 0 .. 3, or two m16n8k8 for c = 0, 1 and c = 2, 3). A stage is the
// tile S(p0 : p0 + 256, c0 : c0 + 16) of strip p0 = 256 P, column-major in shared memory with
// column stride kLds = 260 (= 4 mod 16), and W(c0 : c0 + 16, 0 : 32) with column stride kLdw = 24
// (= 8 mod 16), its rows permuted within each 8 (row 4 e + q at 2 q + e).
//   direct, Zd(rows, :) += S(rows, cols) W(cols, :), M = the warp's rows, N = W's columns:
//     A(g + 8 h, 4 c + q) = S(p0 + R0 + 16 mt + 2 g + h, c0 + 4 c + q): one double2 over h per c;
//     B(4 c + q, g) = W(c0 + 4 c + q, 8 nt + g): one double2 over c = 0, 1 and one over c = 2, 3
//     (the permuted rows). Quarter warps hit 4 q + 2 g and 8 g + 2 q modulo 16 doubles: no
//     conflicts. Zd stays in registers for the whole piece of strip.
//   transposed, computed transposed, Yt^T(:, cols) += W(rows, :)^T S(rows, cols), M = W's columns,
//     N = the stage's columns, K = the warp's rows in steps of 16: A(g + 8 h, 4 c + q) =
//     W(p0 + R0 + 16 ks + transposed_row(c, q), 16 mt + 8 h + g) in registers for the whole
//     piece; B(4 c + q, g) = S(same row, c0 + 8 nt + g): two double2 (rows R, R + 1 and R + 4,
//     R + 5), at 4 g + {0, 2, 8, 10} modulo 16 doubles: no conflicts.
// Both load straight into the DMMA's operand registers. A 16 x 32 block of Z-shaped results is
// kept in "fragment order", Yt^T's accumulator layout (fragment_index): each warp's transposed
// partial is one contiguous 4 KB in shared memory, the partials add elementwise, and each slot
// of the workspace is written and read as one contiguous 4 KB; the direct pieces are scattered
// into that order when flushed (once per piece).
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu/dmma.cuh"
#include "gpu/gpu_context.hpp"
#include "gpu/kernel_preload.hpp"
#include "gpu/symmetric_product.cuh"

namespace pipevd::gpu {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kStrip = 32 * kWarps;               // rows of a strip: 32 per warp
constexpr int kCols = 16;                         // columns of S per stage
constexpr int kNb = 32;                           // columns of W per pass over S
constexpr int kLds = kStrip + 4;                  // = 4 (mod 16)
constexpr int kLdw = kCols + 8;                   // = 8 (mod 16)
constexpr int kBlockDoubles = 16 * kNb;           // a 16 x 32 block: one stage's transposed slot
constexpr int kStripBlocks = kStrip / 16;         // 16-row blocks per strip
constexpr int kPieceDoubles = kStrip * kNb;       // a direct piece: 256 x 32
constexpr std::int64_t kMinChunk = kStripBlocks;  // stages per block at least (the Zd flush)
constexpr std::int64_t kMaxStrips = 16000;        // stage indices fit an int: 8 strips^2 < 2^31
static_assert(kLds % 16 == 4 && kLdw % 16 == 8, "conflict-free fragment loads");

// The rows of a 16-row contraction block that lane q's B(4 c + q, g) of the transposed product
// takes: rows R, R + 1, R + 4, R + 5 for c = 0 .. 3, R = 2 (q % 2) + 8 (q / 2): two double2 per
// column, conflict-free in quarter warps (columns g, g + 1 are 4 doubles apart modulo 16).
__host__ __device__ constexpr int transposed_row(int c, int q) {
  return 2 * (q & 1) + 8 * (q >> 1) + 4 * (c >> 1) + (c & 1);
}

// A 16 x 32 block (rows rho, columns n) in fragment order: the transposed product's accumulator
// layout, double2 (4 mt + 2 nt + h) * 32 + 4 g + q holding rows 8 nt + 2 q + {0, 1} of column
// 16 mt + 8 h + g.
__host__ __device__ constexpr int fragment_index(int rho, int n) {
  return 2 * ((4 * (n >> 4) + 2 * (rho >> 3) + ((n >> 3) & 1)) * 32 + 4 * (n & 7) +
              ((rho >> 1) & 3)) +
         (rho & 1);
}

// Warps whose transposed partials a stage sums: all 8, or with warp roles the 4 transposed warps.
template <bool ROLES>
__host__ __device__ constexpr int partials() {
  return ROLES ? kWarps / 2 : kWarps;
}

template <int NS, bool ROLES>
constexpr std::size_t shared_doubles() {
  return static_cast<std::size_t>(NS) * (kCols * kLds + kNb * kLdw) +
         2 * partials<ROLES>() * kBlockDoubles;
}

// A pass's strips and how its stages are dealt out. Stage (P, k) is column block k of strip P;
// strips are listed in order, each one's blocks left to right; stage indices are relative to the
// pass's first strip. Block x takes stages [x chunk, min((x + 1) chunk, stages)).
struct Geometry {
  std::int64_t m;
  int strips;  // of the whole matrix
  int pa, pb;  // the pass's strips
  int cum_a;   // cum(pa)
  int stages, chunk, blocks;
  std::int64_t d_doubles;  // transposed slots (512 per stage), then the direct pieces

  // Stages of strips [0, p): strip p has 16 (p + 1) column blocks, the last ceil(m / 16). Stage
  // counts fit an int (the plan checks the whole matrix's).
  __host__ __device__ int cum(int p) const {
    return p < strips ? 8 * p * (p + 1) : 8 * (p - 1) * p + static_cast<int>((m + 15) / 16);
  }
  __host__ __device__ int rel(int p) const { return cum(p) - cum_a; }
  // Blocks x >= 1 that start at or before stage s (s >= 0).
  __host__ __device__ int starts_upto(int s) const {
    const int k = s / chunk;
    return k < blocks - 1 ? k : blocks - 1;
  }
  // Direct pieces of strip p: one, plus one per block starting strictly inside it.
  __host__ __device__ int pieces(int p) const {
    return 1 + starts_upto(rel(p + 1) - 1) - starts_upto(rel(p));
  }
  // The first piece of strip p (pieces of strips pa .. p - 1 before it).
  int piece_offset_host(int p) const {
    int s = 0;
    for (int i = pa; i < p; ++i) s += pieces(i);
    return s;
  }
  // The same by a whole warp (every lane gets it; integer sums: order does not matter).
  __device__ int piece_offset(int p, int lane) const {
    int s = 0;
    for (int i = pa + lane; i < p; i += 32) s += pieces(i);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
  }
};

struct Operands {
  const double* s1;
  std::int64_t ld1;
  const double* s2;
  std::int64_t ld2;
  std::int64_t split;
  const double* w;  // the pass's first column of W
  std::int64_t ldw;
  int bc;  // columns of W and Z in this pass over S (1 .. 32)
  double* z;
  std::int64_t ldz;
  double* ws;
};

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// dst := src (8 or 16 bytes), zero-filled beyond `bytes` (0: src is not read).
__device__ __forceinline__ void copy8(double* dst, const double* src, bool valid,
                                      std::uint64_t policy) {
  const unsigned d = shared_address(dst);
  const int bytes = valid ? 8 : 0;
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 8, %2, %3;\n"
               :
               : "r"(d), "l"(src), "r"(bytes), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void copy16(double* dst, const double* src, int bytes,
                                       std::uint64_t policy) {
  const unsigned d = shared_address(dst);
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n"
               :
               : "r"(d), "l"(src), "r"(bytes), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait_prior() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ std::uint64_t l2_policy(bool evict_first) {
  std::uint64_t p;
  if (evict_first)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  else
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}

// The products (see the file comment). One block of 256 threads per chunk of stages. ROLES: warps
// 0-3 take the direct product of 64 rows each, warps 4-7 the transposed one of 64 rows each (one
// of each on every SM sub-partition), so a stage sums 4 transposed partials instead of 8 and the
// two products' instructions interleave on the DMMA pipe.
template <int NS, bool K16, bool ROLES>
__global__ void __launch_bounds__(kThreads, 1)
    symmetric_product_stages(Geometry geo, Operands op, bool vec16, bool evict_first) {
  static_assert(NS >= 2, "at least double buffering");
  constexpr int kParts = partials<ROLES>();
  extern __shared__ __align__(16) double smem[];
  double* const s_tiles = smem;                                                // NS x 16 x kLds
  double* const w_tiles = s_tiles + NS * kCols * kLds;                         // NS x 32 x kLdw
  double2* const red = reinterpret_cast<double2*>(w_tiles + NS * kNb * kLdw);  // 2 x parts x 256

  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, q = lane & 3;
  const std::int64_t m = geo.m;
  const int first = static_cast<int>(blockIdx.x) * geo.chunk;
  const int count = min(geo.chunk, geo.stages - first);
  const std::uint64_t policy = l2_policy(evict_first);

  // A stage's strip p and column block k; advanced one stage at a time.
  struct Cursor {
    int p, k;
  };
  Cursor ic{geo.pa, 0};
  while (geo.rel(ic.p + 1) <= first) ++ic.p;
  ic.k = first - geo.rel(ic.p);
  Cursor cc = ic;
  const auto advance = [&](Cursor& c) {
    if (geo.rel(c.p) + ++c.k == geo.rel(c.p + 1)) ++c.p, c.k = 0;
  };

  // Stage c's tiles into buffer `buf`, asynchronously (not committed).
  const auto issue = [&](const Cursor& c, int buf) {
    double* const st = s_tiles + buf * (kCols * kLds);
    double* const wt = w_tiles + buf * (kNb * kLdw);
    const std::int64_t p0 = std::int64_t{c.p} * kStrip, c0 = std::int64_t{c.k} * kCols;
    const double* col;
    std::int64_t ld;
    if (c0 < op.split)
      col = op.s1 + c0 * op.ld1, ld = op.ld1;
    else
      col = op.s2 + (c0 - op.split) * op.ld2, ld = op.ld2;
    // Left of the diagonal block every row p0 .. < m is read. Where the stage's columns are all in
    // one piece of S, the source address only steps by ld (the copy loop is most of the kernel's
    // instructions): rows past m copy nothing from a fixed address.
    const bool one_piece = c0 + kCols <= op.split || c0 >= op.split;
    if (c0 < p0 && one_piece && vec16) {  // 2 rows x 8 columns a thread, 16-byte copies
      const int pr = tid & (kThreads / 2 - 1), jj = tid / (kThreads / 2);
      const std::int64_t r = p0 + 2 * pr;
      const int bytes = r + 1 < m ? 16 : r < m ? 8 : 0;
      const double* src = bytes > 0 ? col + jj * ld + r : op.ws;  // ws: 16-byte aligned
      const std::int64_t step = bytes > 0 ? 2 * ld : 0;
      double* const dst = st + jj * kLds + 2 * pr;
#pragma unroll
      for (int t = 0; t < kCols / 2; ++t, src += step)
        copy16(dst + 2 * t * kLds, src, bytes, policy);
    } else if (c0 < p0 && one_piece) {  // 1 row x 16 columns a thread, 8-byte copies
      const std::int64_t r = p0 + tid;
      const bool valid = r < m;
      const double* src = valid ? col + r : op.ws;
      const std::int64_t step = valid ? ld : 0;
#pragma unroll
      for (int j = 0; j < kCols; ++j, src += step) copy8(st + j * kLds + tid, src, valid, policy);
    } else {  // the diagonal block (rows >= columns only), or S's pieces change inside the stage
      const std::int64_t r = p0 + tid;
#pragma unroll
      for (int j = 0; j < kCols; ++j) {
        if (c0 + j == op.split) col = op.s2, ld = op.ld2;
        const bool valid = r < m && r >= c0 + j;
        copy8(st + j * kLds + tid, valid ? col + r : op.ws, valid, policy);
        col += ld;
      }
    }
#pragma unroll
    for (int e = tid; e < kCols * kNb; e += kThreads) {
      const int n = e / kCols, kk = e % kCols;
      const std::int64_t rw = c0 + kk;
      const bool valid = rw < m && n < op.bc;
      const int pos = (kk & 8) | ((kk & 3) << 1) | ((kk >> 2) & 1);
      copy8(wt + n * kLdw + pos, valid ? op.w + rw + n * op.ldw : op.w, valid, policy);
    }
  };

  // Transposed slot of stage s: the warps' partials summed in order.
  const auto reduce = [&](const double2* part, int s) {
    double2 v = part[tid];
#pragma unroll
    for (int w = 1; w < kParts; ++w) {
      const double2 x = part[w * 256 + tid];
      v.x += x.x, v.y += x.y;
    }
    __stcs(reinterpret_cast<double2*>(op.ws + std::int64_t{s} * kBlockDoubles) + tid, v);
  };

  // Rows of the warp: kRowsW from row0 of the strip, for the direct product (kMtD 16-row tiles)
  // and/or the transposed one (kKsT 16-row contraction steps). Without roles every warp takes both
  // products of its 32 rows; with roles warp w takes one of them for rows 64 (w % 4) .. + 63.
  constexpr int kRowsW = ROLES ? 64 : 32, kMtD = kRowsW / 16, kKsT = kRowsW / 16;
  const bool does_direct = !ROLES || warp < kWarps / 2;
  const bool does_transposed = !ROLES || warp >= kWarps / 2;
  const int row0 = kRowsW * (ROLES ? warp % (kWarps / 2) : warp);
  // The registers kept for a whole piece of strip, 64 doubles: the direct accumulators
  // zd(mt, nt, k) (rows row0 + 16 mt + 2 g + h, columns 8 nt + 2 q + j, k = 2 h + j) and the
  // transposed product's A fragments wt(mt, ks, 2 c + h) = W(p0 + row0 + 16 ks + transposed_row(c,
  // q), 16 mt + 8 h + g) (M = W's columns, K = the warp's rows). With roles a warp keeps one kind
  // in all 64; without, 32 of each.
  double keep[64];
  constexpr int kWtOff = ROLES ? 0 : 32;
  static_assert(16 * kMtD <= 64 && kWtOff + 16 * kKsT <= 64, "kept registers");
#define PIPEVD_ZD(mt, nt, k) keep[((mt)*4 + (nt)) * 4 + (k)]
#define PIPEVD_WT(mt, ks) (*reinterpret_cast<double(*)[8]>(&keep[kWtOff + ((mt)*kKsT + (ks)) * 8]))
  int piece = 0;
  // The direct piece, from the accumulator layout (row 2 g + h, column 8 nt + 2 q + j of the
  // 16-row block row0 / 16 + mt) to the blocks' fragment order.
  const auto store_piece = [&]() {
    double* const base = op.ws + geo.d_doubles + std::int64_t{piece} * kPieceDoubles;
#pragma unroll
    for (int mt = 0; mt < kMtD; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int j = 0; j < 2; ++j)
            base[(row0 / 16 + mt) * kBlockDoubles + fragment_index(2 * g + h, 8 * nt + 2 * q + j)] =
                PIPEVD_ZD(mt, nt, 2 * h + j);
  };

#pragma unroll 1
  for (int s = 0; s < NS - 1; ++s) {
    if (s < count) {
      issue(ic, s);
      advance(ic);
    }
    commit();
  }

#pragma unroll 1
  for (int i = 0; i < count; ++i) {
    const int buf = i % NS;
    const std::int64_t p0 = std::int64_t{cc.p} * kStrip, c0 = std::int64_t{cc.k} * kCols;
    if (i == 0 || cc.k == 0) {  // a new piece of strip cc.p
      if (i > 0 && does_direct) store_piece();
      piece = geo.piece_offset(cc.p, lane) + geo.starts_upto(first + i) -
              geo.starts_upto(geo.rel(cc.p));
      if (does_transposed) {
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
          for (int ks = 0; ks < kKsT; ++ks)
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const std::int64_t r = p0 + row0 + 16 * ks + transposed_row(c, q);
                const int n = 16 * mt + 8 * h + g;
                PIPEVD_WT(mt, ks)
                [2 * c + h] = r < m && n < op.bc ? __ldg(op.w + r + n * op.ldw) : 0.0;
              }
      }
      if (does_direct) {
#pragma unroll
        for (int mt = 0; mt < kMtD; ++mt)
#pragma unroll
          for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int k = 0; k < 4; ++k) PIPEVD_ZD(mt, nt, k) = 0.0;
      }
    }
    wait_prior<NS - 2>();  // this thread's copies of stage i are done
    if (c0 >= p0) {        // the diagonal S(r, r) counts in both products: halve it (own copy)
      const std::int64_t d = p0 + tid - c0;
      if (d >= 0 && d < kCols) s_tiles[buf * (kCols * kLds) + d * kLds + tid] *= 0.5;
    }
    // Stage i visible to all; every thread is done with stage i - 1 (its buffer and red[i % 2]
    // are free) and has written its partials of stage i - 1.
    __syncthreads();
    if (i > 0) reduce(red + ((i - 1) & 1) * (kParts * 256), first + i - 1);

    const double* const st = s_tiles + buf * (kCols * kLds);
    const double* const wt = w_tiles + buf * (kNb * kLdw);
    if (does_direct) {  // zd += S(rows, c0 : c0 + 16) W(c0 : c0 + 16, :)
      double2 bw[2][4];
#pragma unroll
      for (int ks = 0; ks < 2; ++ks)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
          bw[ks][nt] = *reinterpret_cast<const double2*>(wt + (8 * nt + g) * kLdw + 8 * ks + 2 * q);
#pragma unroll
      for (int mt = 0; mt < kMtD; ++mt) {
        double2 x[2][2];
#pragma unroll
        for (int ks = 0; ks < 2; ++ks)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            x[ks][e] = *reinterpret_cast<const double2*>(st + (8 * ks + q + 4 * e) * kLds + row0 +
                                                         16 * mt + 2 * g);
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          double(&acc)[4] = *reinterpret_cast<double(*)[4]>(&PIPEVD_ZD(mt, nt, 0));
          if (K16) {
            const double a[8] = {x[0][0].x, x[0][0].y, x[0][1].x, x[0][1].y,
                                 x[1][0].x, x[1][0].y, x[1][1].x, x[1][1].y};
            const double b[4] = {bw[0][nt].x, bw[0][nt].y, bw[1][nt].x, bw[1][nt].y};
            dmma16x2(acc, a, b);
          } else {
#pragma unroll
            for (int ks = 0; ks < 2; ++ks)
              dmma16(acc, x[ks][0].x, x[ks][0].y, x[ks][1].x, x[ks][1].y, bw[ks][nt].x,
                     bw[ks][nt].y);
          }
        }
      }
    }
    if (does_transposed) {  // the warp's part of (S(rows, c0 : c0 + 16)^T W(rows, :))^T
      double yt[2][2][4];   // [mt][nt]: W's column 16 mt + 8 h + g, S's column 8 nt + 2 q + j
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int k = 0; k < 4; ++k) yt[mt][nt][k] = 0.0;
#pragma unroll
      for (int ks = 0; ks < kKsT; ++ks) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          // B(4 c + q, g) = S(row0 + 16 ks + transposed_row(c, q), 8 nt + g): two double2.
          const double* const col =
              st + (8 * nt + g) * kLds + row0 + 16 * ks + transposed_row(0, q);
          const double2 b01 = *reinterpret_cast<const double2*>(col);
          const double2 b23 = *reinterpret_cast<const double2*>(col + 4);
          const double b[4] = {b01.x, b01.y, b23.x, b23.y};
#pragma unroll
          for (int mt = 0; mt < 2; ++mt) {
            const double(&a)[8] = PIPEVD_WT(mt, ks);
            if (K16) {
              dmma16x2(yt[mt][nt], a, b);
            } else {
              dmma16(yt[mt][nt], a[0], a[1], a[2], a[3], b[0], b[1]);
              dmma16(yt[mt][nt], a[4], a[5], a[6], a[7], b[2], b[3]);
            }
          }
        }
      }
      double2* const part =
          red + (i & 1) * (kParts * 256) + (ROLES ? warp - kWarps / 2 : warp) * 256;
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            part[(4 * mt + 2 * nt + h) * 32 + lane] =
                make_double2(yt[mt][nt][2 * h], yt[mt][nt][2 * h + 1]);
    }
    // Stage i + NS - 1 into the buffer of stage i - 1 (free since the barrier above).
    if (i + NS - 1 < count) {
      issue(ic, (i + NS - 1) % NS);
      advance(ic);
    }
    commit();
    advance(cc);
  }
  __syncthreads();
  reduce(red + ((count - 1) & 1) * (kParts * 256), first + count - 1);
  if (does_direct) store_piece();
#undef PIPEVD_ZD
#undef PIPEVD_WT
}

// Z's 16-row block blockIdx.x: its transposed slots (strips at or below it in the pass, in order),
// then the direct pieces of its strip (in order); written (overwrite) or added to Z.
__global__ void __launch_bounds__(kThreads)
    symmetric_product_sums(Geometry geo, Operands op, bool overwrite) {
  __shared__ double tile[kNb][17];
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31;
  const std::int64_t kb = blockIdx.x;
  const int pr = static_cast<int>(kb / kStripBlocks);
  double2 v = make_double2(0.0, 0.0);
  const double2* const slots = reinterpret_cast<const double2*>(op.ws);
#pragma unroll 4
  for (int p = max(geo.pa, pr); p < geo.pb; ++p) {
    const double2 x = __ldcs(slots + (geo.rel(p) + kb) * (kBlockDoubles / 2) + tid);
    v.x += x.x, v.y += x.y;
  }
  if (pr >= geo.pa && pr < geo.pb) {
    const int first = geo.piece_offset(pr, lane), n = geo.pieces(pr);
    const double2* const pieces = reinterpret_cast<const double2*>(op.ws + geo.d_doubles) +
                                  (kb - std::int64_t{pr} * kStripBlocks) * (kBlockDoubles / 2);
    for (int j = 0; j < n; ++j) {
      const double2 x = __ldcs(pieces + std::int64_t{first + j} * (kPieceDoubles / 2) + tid);
      v.x += x.x, v.y += x.y;
    }
  }
  // Fragment order -> rows 8 nt + 2 q + {0, 1} of column 16 mt + 8 h + g; then coalesced stores.
  const int idx = tid >> 5, g = lane >> 2, q = lane & 3;
  const int mt = idx >> 2, nt = (idx >> 1) & 1, h = idx & 1;
  tile[16 * mt + 8 * h + g][8 * nt + 2 * q] = v.x;
  tile[16 * mt + 8 * h + g][8 * nt + 2 * q + 1] = v.y;
  __syncthreads();
  for (int e = tid; e < 16 * kNb; e += kThreads) {
    const int n = e >> 4, rr = e & 15;
    const std::int64_t r = 16 * kb + rr;
    if (r < geo.m && n < op.bc) {
      double* const zp = op.z + r + n * op.ldz;
      *zp = overwrite ? tile[n][rr] : *zp + tile[n][rr];
    }
  }
}

using StagesKernel = void (*)(Geometry, Operands, bool, bool);

template <int NS, bool ROLES>
constexpr std::size_t stage_bytes() {
  return sizeof(double) * shared_doubles<NS, ROLES>();
}

struct Variant {
  SymmetricProductShape shape;
  StagesKernel kernel;
  std::size_t shared;
};

template <int NS, bool K16, bool ROLES = false>
Variant variant() {
  return {SymmetricProductShape{NS, K16, ROLES}, symmetric_product_stages<NS, K16, ROLES>,
          stage_bytes<NS, ROLES>()};
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      variant<4, true>(),        variant<3, true>(),       variant<2, true>(),
      variant<4, false>(),       variant<3, false>(),      variant<2, false>(),
      variant<4, true, true>(),  variant<3, true, true>(), variant<4, false, true>(),
      variant<3, false, true>(), variant<2, true, true>(), variant<2, false, true>()};
  return v;
}

const Variant& find_variant(const SymmetricProductShape& s) {
  for (const Variant& v : variants())
    if (v.shape == s) return v;
  throw std::invalid_argument("pipevd::gpu::symmetric_product: shape (stages " +
                              std::to_string(s.stages) + ", k16 " + std::to_string(s.k16) +
                              ", roles " + std::to_string(s.roles) + ") not compiled");
}

// Blocks of variant v that run at once on an SM of the current device `device`, after raising the
// kernel's dynamic shared-memory limit to v.shared there: both once per device and variant (DBBR
// plans and launches the kernel for every panel).
int prepared_blocks_per_sm(int device, const Variant& v) {
  static std::mutex mutex;
  static std::map<std::pair<int, const Variant*>, int> prepared;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = prepared.find({device, &v});
  if (it != prepared.end()) return it->second;
  PIPEVD_CUDA_CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(v.shared)));
  int per_sm = 0;
  PIPEVD_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, kThreads, v.shared));
  prepared.emplace(std::make_pair(device, &v), per_sm);
  return per_sm;
}

// The kernels' view of a pass.
Geometry geometry(std::int64_t m, int strips, const SymmetricProductPass& p) {
  Geometry geo{m,
               strips,
               p.first_strip,
               p.end_strip,
               0,
               static_cast<int>(p.stages),
               static_cast<int>(p.chunk),
               p.blocks,
               0};
  geo.cum_a = geo.cum(p.first_strip);
  geo.d_doubles = p.stages * kBlockDoubles;
  return geo;
}

// The pass of strips [pa, pb) dealt out to at most `target` blocks.
SymmetricProductPass make_pass(std::int64_t m, int strips, int pa, int pb, std::int64_t target) {
  Geometry geo{m, strips, pa, pb, 0, 0, 1, 1, 0};
  SymmetricProductPass p;
  p.first_strip = pa;
  p.end_strip = pb;
  p.stages = geo.cum(pb) - geo.cum(pa);
  p.chunk = std::min(p.stages, std::max(kMinChunk, (p.stages + target - 1) / target));
  p.blocks = static_cast<int>((p.stages + p.chunk - 1) / p.chunk);
  p.pieces = geometry(m, strips, p).piece_offset_host(pb);
  p.workspace = p.stages * kBlockDoubles + p.pieces * kPieceDoubles;
  return p;
}

}  // namespace

std::vector<SymmetricProductShape> symmetric_product_shapes() {
  std::vector<SymmetricProductShape> s;
  for (const Variant& v : variants()) s.push_back(v.shape);
  return s;
}

bool symmetric_product_compiled(const SymmetricProductShape& s) {
  for (const Variant& v : variants())
    if (v.shape == s) return true;
  return false;
}

std::size_t symmetric_product_shared_bytes(const SymmetricProductShape& s) {
  return find_variant(s).shared;
}

SymmetricProductPlan plan_symmetric_product(int device, std::int64_t m, std::int64_t b,
                                            const SymmetricProductParams& params) {
  auto bad = [](const std::string& what) {
    throw std::invalid_argument("pipevd::gpu::plan_symmetric_product: " + what);
  };
  if (m < 0) bad("m < 0");
  if (b < 0) bad("b < 0");
  if (params.blocks < 0) bad("blocks < 0");
  if (params.max_workspace < 0) bad("max_workspace < 0");
  find_variant(params.shape);  // compiled?
  SymmetricProductPlan plan;
  plan.m = m;
  plan.b = b;
  plan.params = params;
  if (m == 0 || b == 0) return plan;
  if ((m + kStrip - 1) / kStrip > kMaxStrips) bad("m > " + std::to_string(kMaxStrips * kStrip));
  plan.strips = static_cast<int>((m + kStrip - 1) / kStrip);

  ScopedDevice guard(device);
  int sms = 0, optin = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  PIPEVD_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // Fewer stages where the device's shared memory per block does not hold the requested ones.
  while (find_variant(plan.params.shape).shared > static_cast<std::size_t>(optin)) {
    if (plan.params.shape.stages <= 2)
      bad("no compiled shape fits the device's " + std::to_string(optin) +
          " bytes of shared memory per block");
    --plan.params.shape.stages;
  }
  const Variant& v = find_variant(plan.params.shape);
  std::int64_t target = params.blocks;
  if (target == 0) target = std::int64_t{std::max(prepared_blocks_per_sm(device, v), 1)} * sms;

  if (params.max_workspace == 0) {
    plan.passes.push_back(make_pass(m, plan.strips, 0, plan.strips, target));
  } else {  // the last strips first (that pass writes every row), as many strips as fit the cap
    for (int pb = plan.strips; pb > 0;) {
      int pa = pb - 1;
      while (pa > 0 &&
             make_pass(m, plan.strips, pa - 1, pb, target).workspace <= params.max_workspace)
        --pa;
      plan.passes.push_back(make_pass(m, plan.strips, pa, pb, target));
      pb = pa;
    }
  }
  for (const SymmetricProductPass& p : plan.passes)
    plan.workspace = std::max(plan.workspace, p.workspace);
  return plan;
}

std::int64_t symmetric_product_workspace(int device, std::int64_t m, std::int64_t b,
                                         const SymmetricProductParams& params) {
  return plan_symmetric_product(device, m, b, params).workspace;
}

void symmetric_product(const SymmetricProductPlan& plan, cudaStream_t stream, const double* s1,
                       std::int64_t ld1, const double* s2, std::int64_t ld2, std::int64_t split,
                       const double* w, std::int64_t ldw, double* z, std::int64_t ldz,
                       double* workspace) {
  auto bad = [](const std::string& what) {
    throw std::invalid_argument("pipevd::gpu::symmetric_product: " + what);
  };
  const std::int64_t m = plan.m, b = plan.b;
  if (m == 0 || b == 0) return;
  if (plan.passes.empty()) bad("empty plan");
  if (split < 0 || split > m) bad("split outside [0, m]");
  if (split > 0 && (s1 == nullptr || ld1 < 1)) bad("s1 null or ld1 < 1 with split > 0");
  if (split < m && (s2 == nullptr || ld2 < 1)) bad("s2 null or ld2 < 1 with split < m");
  if (w == nullptr || ldw < m) bad("w null or ldw < m");
  if (z == nullptr || ldz < m) bad("z null or ldz < m");
  if (workspace == nullptr || reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0)
    bad("workspace null or not 16-byte aligned");
  const auto aligned = [](const double* p, std::int64_t ld) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 2 == 0;
  };
  const bool vec16 = plan.params.vector_loads && (split == 0 || aligned(s1, ld1)) &&
                     (split == m || aligned(s2, ld2));
  const Variant& v = find_variant(plan.params.shape);
  if (plan.params.phases < 1 || plan.params.phases > 3) bad("phases outside 1 .. 3");
  if (plan.params.phases & 1) {
    int device = 0;
    PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
    prepared_blocks_per_sm(device, v);  // the kernel's shared-memory limit raised on this device
  }

  for (std::int64_t n0 = 0; n0 < b; n0 += kNb) {
    const Operands op{
        s1,           ld1,          s2,       ld2,
        split,        w + n0 * ldw, ldw,      static_cast<int>(std::min<std::int64_t>(kNb, b - n0)),
        z + n0 * ldz, ldz,          workspace};
    for (std::size_t k = 0; k < plan.passes.size(); ++k) {
      const SymmetricProductPass& p = plan.passes[k];
      const Geometry geo = geometry(m, plan.strips, p);
      if (plan.params.phases & 1) {
        v.kernel<<<geo.blocks, kThreads, v.shared, stream>>>(geo, op, vec16,
                                                             plan.params.evict_first);
        PIPEVD_CUDA_CHECK_LAUNCH();
      }
      if (plan.params.phases & 2) {
        const std::int64_t rows = std::min(m, std::int64_t{p.end_strip} * kStrip);
        const std::int64_t row_blocks = (rows + 15) / 16;
        symmetric_product_sums<<<static_cast<unsigned>(row_blocks), kThreads, 0, stream>>>(geo, op,
                                                                                           k == 0);
        PIPEVD_CUDA_CHECK_LAUNCH();
      }
    }
  }
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* symmetric_product_kernel_anchor() {
  return reinterpret_cast<const void*>(&symmetric_product_sums);
}

}  // namespace pipevd::gpu
