#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/kernel_preload.hpp"
#include "gpu/syr2k.hpp"

namespace pipevd::gpu {
namespace {

constexpr int kTile = kSyr2kTile;  // syr2k_workspace's diagonal blocks are whole tiles
constexpr int kRowsPerPass = 8;

// C_jj(lower) := alpha (W_j + W_j^T) + beta C_jj for every diagonal block j, where W_j = A_j B_j^T
// (so W_j + W_j^T = A_j B_j^T + B_j A_j^T: half the flops of two GEMMs). W_j is nb x nb (ld nb) at
// W + j nb^2; the last block may be smaller. Grid: (tiles, tiles, blocks); only lower tiles work.
__global__ void add_symmetrized_diagonal_blocks(std::int64_t n, std::int64_t nb, double alpha,
                                                const double* __restrict__ W, double beta,
                                                double* __restrict__ C, std::int64_t ldc) {
  const int ti = blockIdx.x, tj = blockIdx.y;
  if (ti < tj) return;
  const std::int64_t j = blockIdx.z;
  const std::int64_t size = min(nb, n - j * nb);
  const std::int64_t r0 = std::int64_t{ti} * kTile, c0 = std::int64_t{tj} * kTile;
  if (r0 >= size) return;
  const double* Wj = W + j * nb * nb;
  double* Cj = C + j * nb * (1 + ldc);
  __shared__ double t[kTile][kTile + 1];
  const int tx = threadIdx.x;
  // t[y][x] = W(c0 + x, r0 + y): the transposed tile, read coalesced.
  for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {
    if (c0 + tx < size && r0 + y < size) t[y][tx] = Wj[(c0 + tx) + (r0 + y) * nb];
  }
  __syncthreads();
  const std::int64_t r = r0 + tx;
  if (r >= size) return;
  for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {
    const std::int64_t c = c0 + y;
    if (c > r) break;
    const double s = Wj[r + c * nb] + t[tx][y];  // W(r, c) + W(c, r)
    double* cij = Cj + r + c * ldc;
    *cij = beta == 0.0 ? alpha * s : alpha * s + beta * *cij;
  }
}

// C(lower) := beta C(lower), for k = 0 or alpha = 0 (BLAS semantics: beta = 0 writes zeros).
__global__ void scale_lower(std::int64_t n, double beta, double* C, std::int64_t ldc) {
  const std::int64_t r = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t c = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  if (r >= n || c > r) return;
  double* cij = C + r + c * ldc;
  *cij = beta == 0.0 ? 0.0 : beta * *cij;
}

// The tile pair (ti, tj), ti >= tj: with kFromLower the lower tile's entries strictly below the
// diagonal are transposed into the upper tile (tj, ti), else the upper tile's strictly above the
// diagonal into the lower one. Read and written coalesced through shared memory; on a diagonal
// tile the entries read and written are disjoint, so it is mirrored in place.
template <bool kFromLower>
__global__ void mirror_tiles(std::int64_t n, double* __restrict__ C, std::int64_t ldc) {
  const int ti = blockIdx.x, tj = blockIdx.y;
  if (ti < tj) return;
  __shared__ double t[kTile][kTile + 1];
  const int tx = threadIdx.x;
  const std::int64_t r0 = std::int64_t{ti} * kTile, c0 = std::int64_t{tj} * kTile;
  // Source rows start at si, columns at sj; the destination is the transposed position.
  const std::int64_t si = kFromLower ? r0 : c0, sj = kFromLower ? c0 : r0;
  for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {
    const std::int64_t i = si + tx, j = sj + y;
    if (i < n && j < n && (kFromLower ? i > j : i < j)) t[y][tx] = C[i + j * ldc];
  }
  __syncthreads();
  // C(sj + tx, si + y) = C(si + y, sj + tx) = t[tx][y].
  for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {
    const std::int64_t i = sj + tx, j = si + y;
    if (i < n && j < n && (kFromLower ? i < j : i > j)) C[i + j * ldc] = t[tx][y];
  }
}

void check_args(std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb,
                std::int64_t ldc, const Syr2kParams& p) {
  auto bad = [](const std::string& what) {
    throw std::invalid_argument("pipevd::gpu::syr2k_lower: " + what);
  };
  if (n < 0) bad("n < 0");
  if (k < 0) bad("k < 0");
  const std::int64_t minld = std::max<std::int64_t>(1, n);
  if (lda < minld) bad("lda < max(1, n)");
  if (ldb < minld) bad("ldb < max(1, n)");
  if (ldc < minld) bad("ldc < max(1, n)");
  if (p.diag_block < 1) bad("diag_block < 1");
  if (p.lanes < 1) bad("lanes < 1");
}

// `count` off-diagonal blocks of C, m x h, the first at (row0, col0), the next ones `stride` rows
// and columns further along the diagonal: one strided-batched GEMM.
struct OffDiagonalGemm {
  std::int64_t m, h, count;
  std::int64_t row0, col0, stride;
};

// One call's workspace. On a throw it goes back to the pool only after the lanes' work queued so
// far (which may still read or write it), without throwing again.
struct CallWorkspace {
  GpuContext& ctx;
  cudaStream_t stream;
  int nlanes;
  double* p = nullptr;
  CallWorkspace(GpuContext& c, cudaStream_t s, int lanes) : ctx(c), stream(s), nlanes(lanes) {}
  CallWorkspace(const CallWorkspace&) = delete;
  CallWorkspace& operator=(const CallWorkspace&) = delete;
  ~CallWorkspace() {
    if (!p) return;
    for (int i = 0; i < nlanes; ++i) {
      cudaEventRecord(ctx.lane(i).done, ctx.lane(i).stream);
      cudaStreamWaitEvent(stream, ctx.lane(i).done, 0);
    }
    cudaFreeAsync(p, stream);
  }
};

}  // namespace

void syr2k_lower(GpuContext& ctx, cudaStream_t stream, std::int64_t n, std::int64_t k, double alpha,
                 const double* A, std::int64_t lda, const double* B, std::int64_t ldb, double beta,
                 double* C, std::int64_t ldc, const Syr2kParams& params) {
  check_args(n, k, lda, ldb, ldc, params);
  if (n == 0 || ((k == 0 || alpha == 0.0) && beta == 1.0)) return;
  ScopedDevice guard(ctx.device());
  if (k == 0 || alpha == 0.0) {
    const dim3 threads(kTile, kRowsPerPass);
    const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                    static_cast<unsigned>((n + kRowsPerPass - 1) / kRowsPerPass));
    scale_lower<<<grid, threads, 0, stream>>>(n, beta, C, ldc);
    PIPEVD_CUDA_CHECK_LAUNCH();
    return;
  }
  // The diagonal blocks are the z dimension of one launch (at most 65535).
  const Syr2kWorkspace ws = syr2k_workspace(n, k, params.diag_block, params.pack_max_k);
  const std::int64_t nb = ws.diagonal_block;
  const int nlanes = std::min(params.lanes, ctx.lane_count());
  const bool packed = ws.packed > 0;

  // Stream-ordered from pipevd's pool for this call only (the pool keeps it for the next call and
  // is trimmed when the GPU backend goes; core/memory_plan counts it in DBBR).
  CallWorkspace work(ctx, stream, nlanes);
  PIPEVD_CUDA_CHECK(pool_malloc(reinterpret_cast<void**>(&work.p),
                                sizeof(double) * static_cast<std::size_t>(ws.total()), stream));
  double* W = work.p;
  const std::int64_t nblocks = (n + nb - 1) / nb;
  // Packed operands P = [A B] and Q = [B A] (n x 2k, ld n): P_r Q_c^T = A_r B_c^T + B_r A_c^T.
  double* P = nullptr;
  double* Q = nullptr;
  if (packed) {
    P = W + ws.diagonal;
    Q = P + 2 * n * k;
    const std::size_t row_bytes = static_cast<std::size_t>(n) * sizeof(double);
    const auto copy = [&](double* dst, const double* src, std::int64_t ld) {
      PIPEVD_CUDA_CHECK(cudaMemcpy2DAsync(
          dst, row_bytes, src, static_cast<std::size_t>(ld) * sizeof(double), row_bytes,
          static_cast<std::size_t>(k), cudaMemcpyDeviceToDevice, stream));
    };
    copy(P, A, lda);
    copy(P + n * k, B, ldb);
    copy(Q, B, ldb);
    copy(Q + n * k, A, lda);
  }
  ctx.fork(stream, nlanes);

  // The off-diagonal levels, largest first: at half-width h, the blocks C(2jh+h : 2jh+2h, 2jh :
  // 2jh+h) for every j whose rows start inside C, the last one possibly cut by n.
  std::vector<OffDiagonalGemm> gemms;
  std::int64_t top = nb;
  while (top * 2 < n) top *= 2;
  for (std::int64_t h = top; h >= nb; h /= 2) {
    if (h >= n) continue;
    const std::int64_t full = n / (2 * h);
    if (full > 0) gemms.push_back({h, h, full, h, 0, 2 * h});
    const std::int64_t rest_row = full * 2 * h + h;
    if (rest_row < n) gemms.push_back({n - rest_row, h, 1, rest_row, full * 2 * h, 2 * h});
  }

  int next_lane = 0;
  const auto take_lane = [&]() -> Lane& {
    Lane& l = ctx.lane(next_lane);
    next_lane = (next_lane + 1) % nlanes;
    return l;
  };
  const double one = 1.0;
  for (const OffDiagonalGemm& g : gemms) {
    Lane& l = take_lane();
    double* c = C + g.row0 + g.col0 * ldc;
    const long long strideC = static_cast<long long>(g.stride * (1 + ldc));
    if (packed) {
      PIPEVD_CUBLAS_CHECK(cublasDgemmStridedBatched_64(
          l.blas, CUBLAS_OP_N, CUBLAS_OP_T, g.m, g.h, 2 * k, &alpha, P + g.row0, n, g.stride,
          Q + g.col0, n, g.stride, &beta, c, ldc, strideC, g.count));
    } else {
      PIPEVD_CUBLAS_CHECK(cublasDgemmStridedBatched_64(
          l.blas, CUBLAS_OP_N, CUBLAS_OP_T, g.m, g.h, k, &alpha, A + g.row0, lda, g.stride,
          B + g.col0, ldb, g.stride, &beta, c, ldc, strideC, g.count));
      PIPEVD_CUBLAS_CHECK(cublasDgemmStridedBatched_64(
          l.blas, CUBLAS_OP_N, CUBLAS_OP_T, g.m, g.h, k, &alpha, B + g.row0, ldb, g.stride,
          A + g.col0, lda, g.stride, &one, c, ldc, strideC, g.count));
    }
  }

  // Diagonal blocks: W_j = A_j B_j^T (batched), then the symmetrized add into the lower triangle.
  {
    Lane& l = take_lane();
    const double zero = 0.0;
    const std::int64_t full = n / nb;
    if (full > 0)
      PIPEVD_CUBLAS_CHECK(cublasDgemmStridedBatched_64(l.blas, CUBLAS_OP_N, CUBLAS_OP_T, nb, nb, k,
                                                       &one, A, lda, nb, B, ldb, nb, &zero, W, nb,
                                                       nb * nb, full));
    const std::int64_t rest = n - full * nb;
    if (rest > 0)
      PIPEVD_CUBLAS_CHECK(cublasDgemm_64(l.blas, CUBLAS_OP_N, CUBLAS_OP_T, rest, rest, k, &one,
                                         A + full * nb, lda, B + full * nb, ldb, &zero,
                                         W + full * nb * nb, nb));
    const unsigned tiles = static_cast<unsigned>(nb / kTile);
    add_symmetrized_diagonal_blocks<<<dim3(tiles, tiles, static_cast<unsigned>(nblocks)),
                                      dim3(kTile, kRowsPerPass), 0, l.stream>>>(n, nb, alpha, W,
                                                                                beta, C, ldc);
    PIPEVD_CUDA_CHECK_LAUNCH();
  }

  ctx.join(stream, nlanes);
  work.p = nullptr;
  PIPEVD_CUDA_CHECK(cudaFreeAsync(W, stream));  // after every lane's work (the join)
}

void mirror_triangle(cudaStream_t stream, char uplo, std::int64_t n, double* C, std::int64_t ldc) {
  if (n <= 1) return;
  if (ldc < n) throw std::invalid_argument("pipevd::gpu::mirror_triangle: ldc < n");
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  if (tiles > 65535) throw std::invalid_argument("pipevd::gpu::mirror_triangle: n too large");
  const unsigned t = static_cast<unsigned>(tiles);
  const dim3 grid(t, t), block(kTile, kRowsPerPass);
  if (uplo == 'L' || uplo == 'l')
    mirror_tiles<true><<<grid, block, 0, stream>>>(n, C, ldc);
  else
    mirror_tiles<false><<<grid, block, 0, stream>>>(n, C, ldc);
  PIPEVD_CUDA_CHECK_LAUNCH();
}

void mirror_lower(cudaStream_t stream, std::int64_t n, double* C, std::int64_t ldc) {
  mirror_triangle(stream, 'L', n, C, ldc);
}

// This module's kernels, found through one of them (gpu/kernel_preload.hpp).
const void* syr2k_kernel_anchor() { return reinterpret_cast<const void*>(&scale_lower); }

}  // namespace pipevd::gpu
