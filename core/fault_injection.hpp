// A fault-injection hook for tests: a typed failure thrown on one engine rank at a named step of
// the route, so that tests can show every caller rank returning the same INFO (or forwarding)
// without a real device fault. Inert unless a test (linked with pipevd_internal) sets it: it is
// not part of the C API and its symbols are hidden in libpipevd.
#pragma once
#include <string>

namespace pipevd {

constexpr int kEveryEngineRank = -2;

struct FaultInjection {
  // "setup" (after the backend is made), "engine" (before run_engine), or the end of an engine
  // stage: "dbbr", "bulge_chasing", "eigenvalues" (JOBZ = 'N'), "sbr_back", "bc_back",
  // "pre_gemm" (the folded D&C's X Q_pre), "gemm" (core/failure_agreement's finish_stage).
  std::string step;
  int engine_rank = -1;  // -1: none; kEveryEngineRank: all of them
  enum Kind { OutOfMemory, Device, Communication } kind = Device;
};

void set_fault_injection(const FaultInjection& fault);
// Throws the injected failure where `step` and `engine_rank` match it.
void inject_fault(const char* step, int engine_rank);

}  // namespace pipevd
