// Symmetric rank-2k update of the lower triangle, the trailing-matrix update of band reduction:
//   C := alpha (A B^T + B A^T) + beta C   (lower triangle of the n x n C; A, B are n x k),
// computed as in `evd-emerging-accelerators-dbr.txt` §5.2 (Algorithm 3): the nb x nb diagonal
// blocks as one batched GEMM, then the off-diagonal blocks of the recursive halving, level by level
// from the largest GEMM down, each level one strided-batched GEMM; all levels are independent and
// run concurrently on the context's lanes. The strict upper triangle of C is never written.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/memory_plan.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {

struct Syr2kParams {
  // nb: order of the diagonal blocks, the base case of the recursion (rounded to a multiple of 32).
  std::int64_t diag_block = kSyr2kDiagonalBlock;
  // For k up to this, [A B] and [B A] are packed into a workspace so that each off-diagonal block
  // is one GEMM of depth 2k instead of two of depth k (deeper GEMMs run faster at small k); above
  // it, two GEMMs per block and no packing workspace.
  std::int64_t pack_max_k = kSyr2kPackMaxK;
  // Streams the levels are spread over (at most the context's lane count).
  int lanes = GpuContext::kDefaultLanes;
};

// Column-major device arrays; work is queued after what is already on `stream`, and later work on
// `stream` sees the result. Throws std::invalid_argument for bad sizes, GpuError for GPU failures.
void syr2k_lower(GpuContext& ctx, cudaStream_t stream, std::int64_t n, std::int64_t k, double alpha,
                 const double* A, std::int64_t lda, const double* B, std::int64_t ldb, double beta,
                 double* C, std::int64_t ldc, const Syr2kParams& params = {});

// C(i, j) := C(j, i) for i < j: the strict upper triangle of the n x n C from its lower triangle
// (a symmetric matrix kept full after syr2k_lower updated one triangle). Queued on `stream`.
void mirror_lower(cudaStream_t stream, std::int64_t n, double* C, std::int64_t ldc);
// The same from the triangle uplo ('L' or 'U') into the other one.
void mirror_triangle(cudaStream_t stream, char uplo, std::int64_t n, double* C, std::int64_t ldc);

}  // namespace pipevd::gpu
