// Z = S W for a symmetric m x m S of which only the lower triangle is read (DBBR's A W, the product
// of the trailing matrix with a panel's W; core/dbbr.cpp), on the FP64 tensor cores. cuBLAS's gemm
// reads all of S; this reads half of it, plus a workspace of about m^2 / 16 doubles written once
// and read once (at b = 32), so 0.625 of gemm's bytes.
//
// Method. Row strips of H = 256 rows: the block of strip P walks the strip's columns 0 .. P H + 255
// left to right in stages of 256 x 16 (cp.async into a pipeline of shared-memory buffers; the upper
// triangle of the diagonal block is zero-filled, never read, and the diagonal halved). Each stored
// S(r, c), r >= c, contributes to two products:
//   direct      Z(r, :) += S(r, c) W(c, :)   kept in registers for the whole strip (256 rows x
//               32 columns of W over the warps), flushed once per piece of strip a block walks;
//   transposed  Z(c, :) += S(r, c) W(r, :)   a 16 x 32 block per stage, the sum over the strip's
//               256 rows: each warp's rows (W's rows in registers), then the warps' partials
//               summed in shared memory in a fixed order and written to the stage's workspace slot.
// Without warp roles each of the 8 warps takes both products for 32 rows; with roles (the
// default) 4 warps take the direct product and 4 the transposed one, 64 rows each.
// A second kernel sums, for each 16-row block of Z, its transposed slots (one per strip at or below
// it) and the direct pieces of its own strip, in a fixed order. Stages are dealt out as equal
// contiguous chunks of the list of all strips' stages (a block's chunk can cross strips; a strip
// cut by a chunk boundary gives one more direct piece). No atomics: the same plan on the same
// inputs gives bitwise the same Z.
//
// Columns of W in chunks of 32: b <= 32 is one pass over S (the b = 32 case is the one tuned), b up
// to 64 two, and so on (the workspace is reused).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipevd::gpu {

// A compiled variant of the products kernel: `stages` shared-memory buffers of one 256 x 16 tile of
// S (and 16 x 32 of W) each, i.e. stages - 1 tiles in flight while one is multiplied; k16: pairs of
// k = 8 DMMA steps as one m16n8k16 (sm_90; the same instructions as k8 on sm_80).
struct SymmetricProductShape {
  // 4 stages of m16n8k8 steps with warp roles: three tiles in flight hide the loads of S behind the
  // products (3 stages nearly do; symmetric_product_available asks for at least 3).
  int stages = 4;
  bool k16 = false;
  // Warp roles: 4 warps take the direct product of 64 rows each, 4 the transposed one (4
  // transposed partials summed per stage instead of 8).
  bool roles = true;
  bool operator==(const SymmetricProductShape& o) const {
    return stages == o.stages && k16 == o.k16 && roles == o.roles;
  }
};
std::vector<SymmetricProductShape> symmetric_product_shapes();
bool symmetric_product_compiled(const SymmetricProductShape& s);
// Dynamic shared memory of a block of shape s: 223,232 bytes for 4 stages, 183,808 for 3 (both
// sm_90 only: A100s allow 166,912 bytes a block), 144,384 for 2; 32,768 less with warp roles.
std::size_t symmetric_product_shared_bytes(const SymmetricProductShape& s);

struct SymmetricProductParams {
  SymmetricProductShape shape{};
  // Cap on the workspace, in doubles; 0: none (one pass). With a cap the row strips are split into
  // passes (the last strips first; each pass's products then its sums, the later passes adding
  // into Z), each within the cap where one strip alone fits. Results depend on the passes.
  std::int64_t max_workspace = 0;
  // Blocks of the products kernel per pass; 0: as many as the device runs at once (one per SM).
  // Results depend on it (where chunks cut strips).
  int blocks = 0;
  // 16-byte copies of S where both column segments allow them (16-byte aligned, even ld), else
  // 8-byte ones; the diagonal blocks (their upper triangle is not read) and stages whose columns
  // cross `split` always take 8-byte copies.
  bool vector_loads = true;
  // S's tiles copied with the L2 evict-first policy (they are read once), to keep W in L2. Off by
  // default: W stays in L2 anyway, and the policy slows S's loads.
  bool evict_first = false;
  // Benchmarks only: 1 = products kernel only, 2 = sums only (Z then is not S W), 3 = both.
  int phases = 3;
};

// One pass: row strips [first_strip, end_strip), their stages (16-column blocks, 512 doubles of
// workspace each), dealt out `chunk` at a time to `blocks` blocks, giving `pieces` direct pieces
// (8192 doubles each).
struct SymmetricProductPass {
  int first_strip = 0, end_strip = 0;
  std::int64_t stages = 0, chunk = 0;
  int blocks = 0;
  std::int64_t pieces = 0;
  std::int64_t workspace = 0;  // doubles: 512 stages + 8192 pieces
};

struct SymmetricProductPlan {
  std::int64_t m = 0, b = 0;
  int strips = 0;  // ceil(m / 256)
  SymmetricProductParams params;
  std::vector<SymmetricProductPass> passes;  // in launch order; the first writes Z, later ones add
  // Doubles of device workspace symmetric_product needs: the largest pass's. Independent of b:
  // about m^2 / 16 + 8192 (strips + blocks) for one pass (m^2 / 16 = 512 x 8 m^2 / 256^2 stages).
  std::int64_t workspace = 0;
};

// A plan for Z = S W (m x m S, m x b W) on `device` (m, b >= 0; nothing to do where either is 0).
// Where the device's shared memory per block does not hold the shape's stages, fewer stages
// (plan.params.shape says which). std::invalid_argument for a shape not compiled.
SymmetricProductPlan plan_symmetric_product(int device, std::int64_t m, std::int64_t b,
                                            const SymmetricProductParams& params = {});
// Doubles of workspace of the plan for (device, m, b, params).
std::int64_t symmetric_product_workspace(int device, std::int64_t m, std::int64_t b,
                                         const SymmetricProductParams& params = {});

// Z(0:m, 0:b) := S W, queued on `stream` (device pointers, column-major). S is given by columns:
// for c < split, S(r, c) = s1[r + c ld1], for c >= split, S(r, c) = s2[r + (c - split) ld2], read
// only for r >= c (0 <= split <= m; s1 unused where split = 0, s2 where split = m). W: m x b (ldw
// >= m), Z: m x b (ldz >= m; rows >= m and columns >= b not written). `workspace`: plan.workspace
// doubles, 16-byte aligned (cudaMalloc's are). std::invalid_argument for bad arguments.
void symmetric_product(const SymmetricProductPlan& plan, cudaStream_t stream, const double* s1,
                       std::int64_t ld1, const double* s2, std::int64_t ld2, std::int64_t split,
                       const double* w, std::int64_t ldw, double* z, std::int64_t ldz,
                       double* workspace);

}  // namespace pipevd::gpu
