// Which path of the engine takes a call: the pipelined two-stage engine (DBBR, bulge chasing,
// D&C, back transformations; core/engine.hpp) or the one-stage path (the whole matrix on one
// engine rank, one dense symmetric eigensolver call there; core/one_stage.hpp). Below some n the
// two-stage engine's fixed costs (band gather, bulge-chasing latency, the final GEMM) outweigh
// its gain, so a one-stage solver on one GPU finishes first; the crossover tables below say
// where, per scalar type, JOBZ and GPU count. A pure function of values agreed over the grid, so
// every rank takes the same path.
#pragma once
#include <string>

namespace pipevd {

enum class EnginePath { TwoStage, OneStage };
const char* to_string(EnginePath p);

// PIPEVD_ENGINE_PATH: auto (the table), two_stage or one_stage (forced).
enum class EnginePathSetting { Auto, TwoStage, OneStage };
// "auto", "two_stage" or "one_stage"; anything else throws std::invalid_argument (the policy has
// checked the value already).
EnginePathSetting engine_path_setting(const std::string& name);

// One row of the crossover table: with `gpus` GPUs (the two-stage engine's engine ranks), the
// one-stage path on one GPU wins for n below these values.
struct OneStageCrossover {
  int gpus;
  long below_with_vectors;  // JOBZ = 'V'
  long below_values_only;   // JOBZ = 'N'
};

// THE CROSSOVER TABLES, the one place these numbers live. Rows by ascending gpus; a GPU count
// between rows takes the row below it, one beyond the last row the last row.
//
// Real symmetric (PDSYEVD). One GPU, JOBZ = 'V': from whole calls through pdsyevd_ on a 1x1 grid,
// one H200, `PATHS="one_stage two_stage" JOBZ=V SIZES="1000 2000 4000 8000 12000 16000" REPEAT=4
// bash bench/device/sizes.sh` (the numbers: bench/HISTORY.md, the dated section of 2026-11-26 that
// measured the one-stage path), and again on one H100 (bench/RESULTS.md, sixteenth session: the
// one-stage path faster at 4000, the two-stage engine at 8000). One GPU, JOBZ = 'N': the same
// command with JOBZ=N on one H100 (sixteenth session): the one-stage path faster up to 4000; the
// one-stage path at 8000 was not measured, so 5000, as for 'V', is provisional. Four GPUs, JOBZ =
// 'V': 2x2 callers on 4 H100s, `ENGINE_PATHS="one_stage two_stage" SIZES="4000 6000" GPU_COUNTS=4
// bash bench/device/scaling.sh` (bench/RESULTS.md, twenty-second session: the one-stage path
// faster at 4000, the two-stage engine at 6000; 5600 where the two measured lines cross): the
// two-stage engine on more GPUs is no faster than on one below that, its panels' messages costing
// what the GPUs save. Four GPUs, JOBZ = 'N': 2x2 callers on 4 H200s, `PARTS=sweep_n SWEEP_GPUS="1 4"
// bash bench/device/four_gpus.sh` (bench/RESULTS.md, twenty-third session): the two-stage engine
// on 4 GPUs slower than one GPU's one-stage path at 2000 and 4000 and no faster than one GPU's
// two-stage engine at 8000, so the one-stage path (one GPU of the four) up to one GPU's row. Two
// and eight GPUs are not measured: one GPU's 5000 for 'V', the older guesses for 'N'.
inline constexpr OneStageCrossover kOneStageCrossover[] = {
    {1, 5000, 5000},
    {2, 5000, 2500},
    {4, 5600, 5000},
    {8, 5000, 1500},
};

// Complex Hermitian (PZHEEVD), provisional. One GPU, JOBZ = 'V': whole calls through pzheevd_ on a
// 1x1 grid, one H100 (bench/RESULTS.md, sixteenth session): `BENCH_SCALAR=complex
// PATHS="one_stage two_stage" JOBZ=V SIZES="4000 8000 12000" bash bench/device/sizes.sh`, the
// one-stage path faster at 4000 and 8000 (the two-stage engine then with the BLAS2 BC-back, which
// the tensor-core kernel has since halved); at 16384 the two-stage engine faster with the
// tensor-core BC-back (against cuSOLVER's syevd of another call); 10000 between them, 12000 not
// measured to the end. JOBZ = 'N' and several GPUs are not measured: the
// same n, which the two-stage engine's speed-up with more GPUs and without back transformations
// only lowers.
inline constexpr OneStageCrossover kHermitianOneStageCrossover[] = {
    {1, 10000, 10000},
};

// The table's n below which the one-stage path wins with `gpus` GPUs (>= 1).
long one_stage_below(bool want_vectors, int gpus);
long hermitian_one_stage_below(bool want_vectors, int gpus);

struct EnginePathChoice {
  EnginePath path = EnginePath::TwoStage;
  std::string reason;  // for PIPEVD_VERBOSE, e.g. "n=4000 < 9000, 1 GPU, table"
};

// The path for an n x n problem. gpus: the engine ranks the two-stage engine would have on the
// GPU route, 0 on the host engine (whose auto is always two-stage: the tables are the GPU's).
EnginePathChoice choose_engine_path(long n, bool want_vectors, int gpus, EnginePathSetting setting);

// The same for a complex Hermitian problem (PZHEEVD), from the complex table.
EnginePathChoice choose_hermitian_engine_path(long n, bool want_vectors, int gpus,
                                              EnginePathSetting setting);

}  // namespace pipevd
