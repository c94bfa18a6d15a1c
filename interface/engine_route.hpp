// Route::Host and Route::Gpu: one PDSYEVD or PZHEEVD call on the engine (core/ on the host backend,
// or on the GPU backend with one engine rank per visible GPU of each node): block-cyclic A ->
// engine layout
// -> run_engine -> Z back in DESCZ, W on every caller rank; ScaLAPACK's scaling of A.
#pragma once
#include "core/engine_path.hpp"
#include "core/one_stage.hpp"
#include "interface/eigen_call.hpp"
#include "interface/policy.hpp"

namespace pipevd {

// Whether a call's entry scan (interface/non_finite_check) is left to the engine's upload: where
// the grid is one rank (grid_ranks) and the engine (on_gpu: the GPU's, else the host's) takes the
// call on its direct one-stage path (the caller's whole arrays, LLD = N, its path by
// core/engine_path.hpp for one GPU, or the host engine, and rank 0's PIPEVD_ENGINE_PATH), whose
// upload reads only A's referenced triangle and scans it as it copies it
// (EngineBackend::upload_triangle), so that A is read once. From values known before the route;
// the route takes that path by the same tests, so the two never differ.
bool entry_scan_at_upload(const PdsyevdCall& call, const Policy& policy, bool on_gpu,
                          int grid_ranks);
bool entry_scan_at_upload(const PzheevdCall& call, const Policy& policy, bool on_gpu,
                          int grid_ranks);

// Collective over the grid of DESCA. Arguments have passed check_arguments (N > 0, not a
// query). Sets *call.info (0, or the D&C failure code > 0 as PDSYEVD reports it) and returns it.
// on_gpu: the GPU backend (engine rank r of a node on device r; built with CUDA only), with
// gpu_devices the devices per rank agreed over the grid (interface/agreement.hpp). A failure that
// stops the engine (the memory plan, the set-up, the engine itself) is thrown as its base/errors
// type on every caller rank alike, with the caller's A untouched (see agree_on_failure).
// path (optional): set to the engine path taken (core/engine_path.hpp: the crossover table or
// PIPEVD_ENGINE_PATH) as soon as it is chosen, the same on every caller rank. max_abs: A's
// max-norm as agreed over the grid (interface/non_finite_check.hpp's scan), which PDSYEVD's
// scaling takes without a pass of its own over A. call_begin: MPI_Wtime() at the call's entry,
// where a verbose-2 timeline's "entry" interval starts (what a first call spends before the route).
// upload_scan: where the entry scan is left to the upload (entry_scan_at_upload; max_abs is not
// read then), what it found (UploadScan::scanned, found); where A is non-finite or needs PDSYEVD's
// scaling the route stops before the solve (UploadScan::stopped) and returns with nothing written
// (INFO, W, Z, A as they were), for the caller to refuse the call or take the route again with
// the norm found.
int run_engine_route(const PdsyevdCall& call, const Policy& policy, bool on_gpu, int gpu_devices,
                     double max_abs, double call_begin, EnginePathChoice* path = nullptr,
                     UploadScan* upload_scan = nullptr);
// PZHEEVD: the same route over complex matrices, on the path core/engine_path.hpp's
// choose_hermitian_engine_path gives (on GPUs the one-stage path unless PIPEVD_ENGINE_PATH forces
// the two-stage engine), the Hermitian A rebuilt from its triangle with the other one conjugated;
// an OutOfMemory where its memory does not fit, as for PDSYEVD.
int run_engine_route(const PzheevdCall& call, const Policy& policy, bool on_gpu, int gpu_devices,
                     double max_abs, double call_begin, EnginePathChoice* path = nullptr,
                     UploadScan* upload_scan = nullptr);

}  // namespace pipevd
