// The matrix's columns moved between two distributions of them over the engine ranks
// (core/dbbr_columns.hpp), on the device: the engine layout's contiguous columns, as the
// redistribution delivers them, into DBBR's cyclic outer blocks.
#pragma once
#include "core/backend.hpp"
#include "core/dbbr.hpp"
#include "core/dbbr_columns.hpp"

namespace pipevd {

// src (device) holds this rank's columns of `from`, dst (device) receives its columns of `to`
// (both concatenated in global order, leading dimension n; disjoint buffers). Collective over the
// backend's communicator, whose ranks are the distributions' ranks. Every rank walks the runs of
// column_moves(from, to) in global column order and sends or receives the ones it takes part in
// (point-to-point messages in one order on every rank, so none waits for a message posted after
// one it waits for itself); runs that stay are copied. A failure of this rank's copies is held
// and thrown on every rank alike at the end. Timed as DbbrPart::Copies where `profiler` is given.
void exchange_columns(EngineBackend& be, const DbbrColumns& from, const DbbrColumns& to, int rank,
                      const double* src, double* dst, DbbrProfiler* profiler = nullptr);
void exchange_columns(EngineBackend& be, const DbbrColumns& from, const DbbrColumns& to, int rank,
                      const Complex* src, Complex* dst, DbbrProfiler* profiler = nullptr);

}  // namespace pipevd
