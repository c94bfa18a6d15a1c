// A fault-injection hook for tests: a typed failure thrown on one engine rank at a named step of
// the route, so that tests can show every caller rank returning the same INFO (or forwarding)
// without a real device fault. Compiled only with PIPEVD_FAULT_INJECTION (CMake's option, on where
// the tests are built); inert even then unless a test (linked with pipevd_internal) sets it: it is
// not part of the C API and its symbols are hidden in libpipevd. Without it inject_fault is an
// inline no-op and set_fault_injection does not exist.
#pragma once
#include <string>

namespace pipevd {

#ifdef PIPEVD_FAULT_INJECTION

constexpr int kEveryEngineRank = -2;

struct FaultInjection {
  // "setup" (after the backend is made), "engine" (before run_engine), or the end of an engine
  // stage: "dbbr", "bulge_chasing", "eigenvalues" (JOBZ = 'N'), "sbr_back", "bc_back",
  // "pre_gemm" (the folded D&C's X Q_pre), "gemm" (core/failure_agreement's finish_stage). Inside
  // the stages, where a rank allocates what it needs before the next message, agreed on before
  // that message, as if the allocation failed: "upload" (A's device copy), "dbbr_outer_block" (an
  // outer block's buffers, `index` the block's place in core/dbbr's outer_blocks), "gather_band"
  // (the band's), "x_allocation" (the back transformation's row block), "sbr_back_start" (SBR-back
  // beside DBBR: the companion ordered after DBBR), "qd_allocation" (Q_d's copy for its
  // broadcast); and in a rank's own work between DBBR's messages, as if panel QR or A W failed:
  // "dbbr_panel" (`index` the panel's first column / b), or between the messages that move the
  // uploaded columns into DBBR's cyclic outer blocks: "column_exchange". In a thread of the
  // engine's (core/threaded_step), agreed on after its join: "sbr_back_queue" (what is left of
  // SBR-back's merges and GEMMs after DBBR, queued on its companion).
  std::string step;
  int engine_rank = -1;  // -1: none; kEveryEngineRank: all of them
  enum Kind { OutOfMemory, Device, Communication } kind = Device;
  long index = -1;  // the step's occurrence where it has several; -1: any (the first)
};

void set_fault_injection(const FaultInjection& fault);
// Throws the injected failure where `step`, `engine_rank` and `index` match it.
void inject_fault(const char* step, int engine_rank, long index = -1);
#else
inline void inject_fault(const char*, int, long = -1) {}
#endif

}  // namespace pipevd
