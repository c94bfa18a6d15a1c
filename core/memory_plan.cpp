#include "core/memory_plan.hpp"

#include <algorithm>

#include "core/dbbr.hpp"
#include "core/reflector_store.hpp"
#include "core/sbr_back.hpp"

namespace pipevd {

Syr2kWorkspace syr2k_workspace(long n, long k, long diag_block, long pack_max_k) {
  Syr2kWorkspace w;
  if (n <= 0 || k <= 0) return w;
  const long tile = kSyr2kTile;
  const auto round_up = [tile](long x) { return (x + tile - 1) / tile * tile; };
  w.diagonal_block =
      std::min(round_up(std::max({diag_block, (n + 65534) / 65535, tile})), round_up(n));
  w.diagonal = (n + w.diagonal_block - 1) / w.diagonal_block * w.diagonal_block * w.diagonal_block;
  w.packed = k <= pack_max_k ? 4 * n * k : 0;
  return w;
}

namespace {

// DBBR's panels (kept with vectors on every rank): W and Y, (n - j - b) x b, j = 0, b, 2b, ...;
// SBR-back's merged blocks of k / b panels each, and the widest of them.
struct PanelSizes {
  long panels = 0, blocks = 0, widest = 0;
};
PanelSizes panel_sizes(long n, long b, long k_in, bool want_vectors) {
  PanelSizes s;
  const long per_block = panels_per_merged_block(k_in, b);
  long count = 0, block_row0 = 0, block_width = 0;
  for (long j = 0; n - j - b >= 2; j += b) {
    s.panels += 2 * (n - j - b) * b;
    if (count % per_block == 0) {
      s.blocks += 2 * (n - block_row0) * block_width;
      block_row0 = j + b;
      block_width = 0;
    }
    block_width += b;
    s.widest = std::max(s.widest, block_width);
    ++count;
  }
  s.blocks += 2 * (n - block_row0) * block_width;
  if (!want_vectors) s.panels = 0;
  return s;
}

// With symmetric_product, the rank whose columns reach n runs A W through it on the trailing
// matrix (m <= the extent of its last segment of columns to n, less a panel), where b and m allow
// it.
// gpu/symmetric_product's workspace: 512 (8 s (s-1) + ceil(m/16)) + 8192 pieces, s = ceil(m/256),
// pieces < s + the blocks of one wave (at most 255 here), capped. Complex A W takes the backend's
// ZGEMMs wherever (the kernel is real only: gpu/gpu_backend.hpp).
long symmetric_product_doubles(const DbbrColumns& columns, int rank, long b, bool symmetric_product,
                               bool gpu_buffers, long words) {
  const long n = columns.n();
  const std::vector<ColumnSegment>& own = columns.segments(rank);
  if (!(symmetric_product && words == 1 && gpu_buffers && !own.empty() && own.back().end == n &&
        b <= kSymmetricProductMaxWidth && n - own.back().begin - b >= kSymmetricProductMinRows))
    return 0;
  const long m = n - own.back().begin, s = (m + 255) / 256;
  return std::min(kSymmetricProductWorkspace,
                  4096 * s * (s - 1) + 512 * ((m + 15) / 16) + 8192 * (s + 255));
}

}  // namespace

EngineMemoryPlan plan_engine_memory(const EngineLayout& L, int rank, long b_in, long k_in,
                                    bool want_vectors, bool gpu_buffers, bool overlap_sbr_back,
                                    bool dc_at_sbr_back, bool symmetric_product, bool dc_fold,
                                    long words, bool dbbr_cyclic, bool sbr_back_beside_dbbr) {
  EngineMemoryPlan p;
  const long n = L.n;
  if (n <= 0) return p;
  const long b = effective_bandwidth(n, b_in);
  const long kb = std::max(b, (std::max(k_in, b) + b - 1) / b * b);  // DBBR's outer block
  const long h = L.height(rank), ldx = std::max(1L, h);
  DbbrOptions dbbr;
  dbbr.b = b_in;
  dbbr.k = k_in;
  dbbr.cyclic_blocks = dbbr_cyclic;
  const DbbrColumns columns = dbbr_columns(L, dbbr);
  // DBBR's columns on this rank; where they are not the layout's, the uploaded ones stay beside
  // them until they have moved (core/column_exchange).
  const long width = columns.width(rank);
  const long uploaded = columns == DbbrColumns::blockwise(L) ? 0 : L.width(rank);
  long widest_segment = 0;
  for (const ColumnSegment& s : columns.segments(rank))
    widest_segment = std::max(widest_segment, s.width());
  // cuBLAS / cuSOLVER workspaces and the memory pool's rounding, which no formula here counts: a
  // fixed 8 MiB margin, above what tests/test_gpu_memory_plan.cpp sees the GPU backend use beyond
  // the counted buffers.
  const long libraries = p.libraries = gpu_buffers ? (8L << 20) / 8 : 0;
  const auto [panels, blocks, widest] = panel_sizes(n, b, k_in, want_vectors);
  const long band = n * (b + 1);
  // Outer block, allocated at its start (core/dbbr.cpp): Yb, Zb (n x kb), the saved block columns
  // (< n x kb), the Z, the part of A W, S and W^T A W every panel of the block reuses (< n b each
  // but S, kb x b) and, eigenvalues only, one W, Y pair (< n b each; with eigenvectors each panel's
  // W, Y, the block's among them, count in `panels`); GPU panel QR: tau, G, T (b x b) and geqrf's
  // workspace (< n b).
  // Cyclic on several ranks, with Z formed on every rank: Ybp, Zbp (the rank's rows x kb each) and
  // Wp (its rows x b), at most its columns' count of rows.
  const long packed_rows = dbbr_cyclic && L.engine_ranks() > 1 ? width * (2 * kb + b) : 0;
  const long block_work = 3 * n * kb + 4 * n * b + kb * b + b * b + packed_rows;
  const long qr_work = gpu_buffers ? n * b + 3 * b * b + b : 0;
  const long sym_work = p.symmetric_product_workspace =
      symmetric_product_doubles(columns, rank, b, symmetric_product, gpu_buffers, words);
  // The trailing update's syr2k on the diagonal block of each of the rank's segments (at most the
  // segment, and right of the first outer block, at least one panel), after the block's panels:
  // its workspace and A W's are never live together. The complex update runs by cublasZher2k,
  // whose workspace the libraries' margin covers.
  long& syr2k_work = p.syr2k_workspace;
  if (gpu_buffers && words == 1)
    syr2k_work = syr2k_workspace(std::min(widest_segment, n - b), kb).total();
  p.dbbr =
      words * std::max(n * (width + uploaded),
                       n * width + panels +
                           std::max(block_work + qr_work + std::max(sym_work, syr2k_work), band));
  // SBR-back's merge workspace (GPU) and, from the right, T: h x the widest block.
  const long merge_ws = gpu_buffers ? (widest / 2 + b) * (widest / 2 + b) : 0;
  const long sbr_work = merge_ws + h * widest;
  // Beside DBBR (several engine ranks, eigenvectors): X from DBBR's start, and by its end every
  // merged block but the last next to all panels, with SBR-back's workspaces.
  const bool beside_dbbr = sbr_back_beside_dbbr && want_vectors && L.engine_ranks() > 1;
  if (beside_dbbr) p.dbbr += words * (ldx * n + blocks + sbr_work);
  overlap_sbr_back = overlap_sbr_back || beside_dbbr;  // the rest then runs beside bulge chasing

  // Bulge chasing: the band, d and e on the device, the working band (2b wide) and sweep flags,
  // and the reflectors U (kept on the device by the GPU backend for BC-back).
  const ReflectorLayout u{n, b};
  const long u_dev = gpu_buffers && want_vectors ? u.vector_array_size() + u.count() : 0;
  const long bc_work = gpu_buffers ? n * std::max(2L, 2 * b) + n / 2 + 64 + 2 * n : 0;
  p.bulge_chasing = words * (band + panels + bc_work + u_dev);

  if (!want_vectors) {
    p.largest_later_buffer = words * bc_work;
    p.tridiagonal = gpu_buffers ? 3 * n : 0;  // d, e^2 and w of the bisection
    p.peak = std::max({p.dbbr, p.bulge_chasing, p.tridiagonal}) + libraries;
    return p;
  }
  // Back transformation: X, the merged blocks replacing the panels as they are copied (at most
  // all blocks plus the panels of the block being merged), the merge workspace, SBR-back's T:
  // h x widest from the right; from the left (where h == n) widest x (the largest block's m < n),
  // within the same count (sbr_work).
  // SBR-back: X, U, the merged blocks; then BC-back: X, U and, on rank 0 of a device backend, the
  // D&C (core/tridiagonal_dc: Q_d, its work copy and a panel of M, started after SBR-back).
  // Overlapped with bulge chasing (EngineOptions::overlap_sbr_back): the panels stay until the end,
  // next to the blocks, and bulge chasing's band and work arrays are there too.
  const long merged = blocks + 2 * n * widest;
  const long sbr_back =
      words * (ldx * n + u_dev + sbr_work +
               (overlap_sbr_back ? merged + panels + band + bc_work : std::max(merged, panels)));
  // Folded, the same buffers hold M and Q_pre (M's in-place permutation takes one column, less
  // than the panel); they are backend memory then on the host engine too.
  const bool dc_on_backend = rank == 0 && (gpu_buffers || dc_fold);
  const long dc_device = dc_on_backend ? 2 * n * n + n * std::min(n, 2048L) + 2 * n : 0;
  // BC-back's tensor-core kernel (gpu/bc_back_tensor.cuh): a T factor (64 doubles) per step of
  // every block of 8 sweeps, and their offsets.
  const long t_factors =
      gpu_buffers && u.count() > 0 ? 8 * u.count() + 64 * (u.steps(0) + 1) + n / 8 + 2 : 0;
  p.back_transformation = std::max(sbr_back + (dc_at_sbr_back ? dc_device : 0),
                                   words * (ldx * n + u_dev + t_factors) + dc_device);
  // Final GEMM: X, Q_d, Z (U's device copy released after BC-back). Folded: X, Q_pre's blocks
  // (packed, at most n^2) and Y, then Y, M and Z; rank 0 holds its D&C's two buffers through the
  // first.
  p.final_gemm = words * 2 * ldx * n + (dc_fold && rank == 0 ? 2 : 1) * n * n;
  // Q_d (or M) is real and n x n on every rank in the final product, where X and a merged block
  // (W and Y, at most n rows of the widest block each) count their scalar's words.
  p.largest_later_buffer =
      std::max({words * ldx * n, words * u_dev, words * bc_work, words * 2 * n * widest, n * n});
  p.peak = std::max({p.dbbr, p.bulge_chasing, p.back_transformation, p.final_gemm}) + libraries;
  return p;
}

long host_reflector_doubles(long n, long b, bool want_vectors, bool on_gpu, long words) {
  if (n <= 0 || !want_vectors) return 0;
  // Complex: D's diagonal and the chased subdiagonal D is made from (n each), on either engine.
  const long phase = words == 2 ? 2 * words * n : 0;
  if (on_gpu) return phase;  // v and tau stay on the device
  const ReflectorLayout u{n, effective_bandwidth(n, b)};
  return words * (u.vector_array_size() + u.count()) + phase;
}

}  // namespace pipevd
