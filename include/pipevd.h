/* pipevd: GPU engine behind ScaLAPACK's PDSYEVD and PZHEEVD.
 *
 * pipevd_pdsyevd takes exactly PDSYEVD's arguments with PDSYEVD's semantics (1-based IA/JA/IZ/JZ,
 * BLACS descriptors of 9 integers, LWORK = -1 / LIWORK = -1 workspace queries, INFO conventions).
 * The library also exports the Fortran symbols pdsyevd_ and pipevd_pdsyevd_, so a code relinked
 * with -lpipevd ahead of ScaLAPACK reaches pipevd with no source change.
 *
 * Extension (documented, not in ScaLAPACK): JOBZ = 'N' computes eigenvalues only, where the engine
 * takes the call; ScaLAPACK's PDSYEVD itself accepts only JOBZ = 'V'.
 *
 * Environment, read once per process:
 *   PIPEVD_BACKEND = auto | gpu | host | scalapack   (default auto)
 *   PIPEVD_MIN_N   = non-negative integer: below it calls go to ScaLAPACK
 *   PIPEVD_ENGINE_PATH = auto | two_stage | one_stage   (default auto: a crossover table by n)
 *   PIPEVD_VERBOSE = 0 | 1 | 2: one line per call on rank 0 (1), plus per-rank timelines (2)
 *   PIPEVD_KEEP_MEMORY = 0 | 1: keep the large host buffers between calls (1, default) or not
 * (README has them all). Calls from several threads of a process are serialised.
 */
#ifndef PIPEVD_H
#define PIPEVD_H

#ifdef __cplusplus
extern "C" {
#endif

void pipevd_pdsyevd(const char* jobz, const char* uplo, const int* n, double* a, const int* ia,
                    const int* ja, const int* desca, double* w, double* z, const int* iz,
                    const int* jz, const int* descz, double* work, const int* lwork, int* iwork,
                    const int* liwork, int* info);

/* PZHEEVD (complex Hermitian, ScaLAPACK's arguments and semantics; COMPLEX*16 A, Z and WORK as
 * two doubles per element, e.g. double _Complex or std::complex<double>). Exported also as the
 * Fortran symbols pzheevd_ and pipevd_pzheevd_. Both engine paths take it (PIPEVD_ENGINE_PATH);
 * on GPUs the two-stage engine only where PIPEVD_ENGINE_PATH=two_stage forces it, for now. JOBZ =
 * 'N' is the same extension as for pipevd_pdsyevd. */
void pipevd_pzheevd(const char* jobz, const char* uplo, const int* n, void* a, const int* ia,
                    const int* ja, const int* desca, double* w, void* z, const int* iz,
                    const int* jz, const int* descz, void* work, const int* lwork, double* rwork,
                    const int* lrwork, int* iwork, const int* liwork, int* info);

/* Version string of the library, e.g. "0.1.0". */
const char* pipevd_version(void);

/* What this process's last pipevd_pdsyevd / PDSYEVD (or PZHEEVD) call computed with: "two_stage"
 * (the pipelined two-stage engine), "one_stage" (one dense solver call on one GPU, cuSOLVER's
 * cusolverDnXsyevd; LAPACK dsyevd on the host engine), "scalapack" (forwarded), or "" where it
 * computed nothing (an error, a workspace query, N = 0) or before any call. PIPEVD_VERBOSE=1
 * prints the same, with the reason, in its per-call line. */
const char* pipevd_last_path(void);

/* Frees what pipevd keeps between calls: the engine's host copies of A and Z and message buffers,
 * the node's shared-memory window (/dev/shm), the NCCL communicators and pipevd's device memory
 * pools; the next call makes them again. Collective, like MPI_Finalize: every process that made
 * pipevd calls calls it, between calls (the window and NCCL are freed together with the other
 * processes that share them). */
void pipevd_release(void);

#ifdef __cplusplus
}
#endif

#endif /* PIPEVD_H */
