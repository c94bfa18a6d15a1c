// FP64 tensor-core (DMMA) products for the kernels that use them (gpu/bc_back_tensor.cu,
// gpu/symmetric_product.cu): mma.sync m16n8k8 and m16n8k16 .f64 on sm_90, and their fallback
// through m8n8k4 .f64 on sm_80 (compute capability 8.0 and newer only: older devices have no DMMA).
// Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k8 / m16n8k16 / m8n8k4" with .f64),
// with g = lane / 4 and q = lane % 4 of the warp:
//   m16n8k8:  A(g + 8 h, q + 4 e) in a[h + 2 e], B(q + 4 e, g) in b[e], C(g + 8 h, 2 q + j) in
//             c[2 h + j] (h, e, j in {0, 1}).
//   m16n8k16: two m16n8k8 contractions in one instruction (dmma16x2).
// The contraction index of a product can be permuted freely (the same way in A and B), and the
// rows of A and C (or the columns of B and C) together: kernels use this to load fragments from
// shared memory as double2 without bank conflicts.
#pragma once
#include <cuda_runtime.h>

namespace pipevd::gpu {

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 900  // dmma16's fallback before Hopper
// C += A B for one 8 x 8 x 4 tile (double): a thread holds A(g, q), B(q, g) and C(g, 2q + {0, 1}),
// g = lane / 4, q = lane % 4 (PTX ISA, mma.m8n8k4 .f64).
__device__ __forceinline__ void dmma(double& c0, double& c1, double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
      : "+d"(c0), "+d"(c1)
      : "d"(a), "d"(b));
}
#endif

// C += A B for one 16 x 8 x 8 tile (double): A(g + 8 h, q + 4 e) in a[h + 2 e], B(q + 4 e, g) in
// b[e], C(g + 8 h, 2 q + {0, 1}) in c[2 h + {0, 1}]. Hopper has it as one instruction (PTX ISA:
// mma.m16n8k8 .f64, sm_90); older devices take it as four m8n8k4.
__device__ __forceinline__ void dmma16(double (&c)[4], double a0, double a1, double a2, double a3,
                                       double b0, double b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
#else
  dmma(c[0], c[1], a0, b0);
  dmma(c[0], c[1], a2, b1);
  dmma(c[2], c[3], a1, b0);
  dmma(c[2], c[3], a3, b1);
#endif
}

// C += A B for one 16 x 8 x 16 tile (double), the contraction in two halves as dmma16's: a[h + 2 e]
// and b[e] are the first half's, a[4 + h + 2 e] and b[2 + e] the second's (PTX ISA: mma.m16n8k16
// .f64, A(g + 8 h, 4 c + q) in a[2 c + h], B(4 c + q, g) in b[c], sm_90).
__device__ __forceinline__ void dmma16x2(double (&c)[4], const double (&a)[8],
                                         const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
  dmma16(c, a[0], a[1], a[2], a[3], b[0], b[1]);
  dmma16(c, a[4], a[5], a[6], a[7], b[2], b[3]);
#endif
}

}  // namespace pipevd::gpu
