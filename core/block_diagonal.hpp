// A block-diagonal matrix kept as its diagonal blocks alone, packed one after another in backend
// memory: block i (order m_i, from (s_i, s_i) on, s_i the orders before it) at the sum of the
// squares of the orders before it, with leading dimension m_i. The D&C's folded result
// (core/tridiagonal_dc.hpp's DcFold) keeps Q_pre so: about half of n^2 where a top merge splits a
// block in two, and the product with it is one GEMM per block.
#pragma once
#include <vector>

#include "core/backend.hpp"

namespace pipevd {

// Doubles the packed blocks of these orders take.
long packed_size(const std::vector<long>& orders);

// Adjacent blocks joined while their orders sum to at most `order` (the zeros between them then
// stored): fewer, larger GEMMs where a split T leaves many small blocks.
std::vector<long> join_small_blocks(const std::vector<long>& orders, long order);

// The diagonal blocks of a (backend memory, leading dimension lda >= the orders' sum), packed at
// its own start, in place. Every copy lands wholly before what it reads, so none overlaps itself.
void pack_diagonal_blocks(EngineBackend& be, double* a, long lda, const std::vector<long>& orders);

// Y = X B for the packed block-diagonal B (orders summing to n) and the h x n X, one GEMM per
// block; x and y in backend memory, leading dimensions ldx and ldy.
void multiply_block_diagonal(EngineBackend& be, long h, const double* x, long ldx,
                             const std::vector<long>& orders, const double* packed, double* y,
                             long ldy);

}  // namespace pipevd
