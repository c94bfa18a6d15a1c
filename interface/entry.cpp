// The exported symbols: the C API and the Fortran names a relinked code reaches.
#include <complex>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>

#include "core/backend_factory.hpp"
#include "include/pipevd.h"
#include "interface/call_scope.hpp"
#include "interface/dispatch.hpp"
#include "interface/grid_preparation.hpp"
#include "interface/info_codes.hpp"
#include "redistribute/kept_buffer.hpp"
#include "redistribute/node_window.hpp"

namespace {

// No exception leaves the library: the route agrees its failures over the grid and answers with
// INFO itself (interface/dispatch.cpp); one that still arrives here was met by this process alone
// (the other ranks may then wait in a collective), and is told through INFO and stderr rather than
// by ending the caller's job.
template <class Call>
void guarded(const Call& call, void (*run)(const Call&)) {
  std::string what = "unknown exception";
  try {
    const pipevd::CallScope scope;
    const std::lock_guard<std::mutex> lock(pipevd::one_call_at_a_time());
    run(call);
    return;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "pipevd: error: %s (%s returns INFO = %d)\n", what.c_str(),
               pipevd::routine_tag(call), pipevd::kInfoEngineFailure);
  std::fflush(stderr);
  *call.info = pipevd::kInfoEngineFailure;
}

// Like LSAME, only the first character of JOBZ and UPLO counts; the hidden Fortran lengths are not
// needed.
void entry(const char* jobz, const char* uplo, const int* n, double* a, const int* ia,
           const int* ja, const int* desca, double* w, double* z, const int* iz, const int* jz,
           const int* descz, double* work, const int* lwork, int* iwork, const int* liwork,
           int* info) {
  guarded(pipevd::PdsyevdCall{*jobz, *uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork,
                              iwork, liwork, info},
          &pipevd::run_pdsyevd);
}

void entry(const char* jobz, const char* uplo, const int* n, void* a, const int* ia, const int* ja,
           const int* desca, double* w, void* z, const int* iz, const int* jz, const int* descz,
           void* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
           const int* liwork, int* info) {
  using C = std::complex<double>;
  guarded(pipevd::PzheevdCall{*jobz, *uplo, n, static_cast<C*>(a), ia, ja, desca, w,
                              static_cast<C*>(z), iz, jz, descz, static_cast<C*>(work), lwork,
                              iwork, liwork, info, rwork, lrwork},
          &pipevd::run_pzheevd);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void pipevd_pdsyevd(
    const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
    const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz,
    double* work, const int* lwork, int* iwork, const int* liwork, int* info) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, liwork, info);
}

// Fortran: gfortran passes the lengths of JOBZ and UPLO after the last argument. C callers of
// pdsyevd_ often omit them; they are never read.
__attribute__((visibility("default"))) void pdsyevd_(
    const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
    const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz,
    double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
    std::size_t) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, liwork, info);
}

__attribute__((visibility("default"))) void pipevd_pdsyevd_(
    const char* jobz, const char* uplo, const int* n, double* a, const int* ia, const int* ja,
    const int* desca, double* w, double* z, const int* iz, const int* jz, const int* descz,
    double* work, const int* lwork, int* iwork, const int* liwork, int* info, std::size_t,
    std::size_t) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, iwork, liwork, info);
}

__attribute__((visibility("default"))) void pipevd_pzheevd(
    const char* jobz, const char* uplo, const int* n, void* a, const int* ia, const int* ja,
    const int* desca, double* w, void* z, const int* iz, const int* jz, const int* descz,
    void* work, const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork,
    int* info) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, rwork, lrwork, iwork,
        liwork, info);
}

// PZHEEVD's Fortran name, as pdsyevd_ above.
__attribute__((visibility("default"))) void pzheevd_(
    const char* jobz, const char* uplo, const int* n, void* a, const int* ia, const int* ja,
    const int* desca, double* w, void* z, const int* iz, const int* jz, const int* descz,
    void* work, const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork,
    int* info, std::size_t, std::size_t) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, rwork, lrwork, iwork,
        liwork, info);
}

__attribute__((visibility("default"))) void pipevd_pzheevd_(
    const char* jobz, const char* uplo, const int* n, void* a, const int* ia, const int* ja,
    const int* desca, double* w, void* z, const int* iz, const int* jz, const int* descz,
    void* work, const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork,
    int* info, std::size_t, std::size_t) {
  entry(jobz, uplo, n, a, ia, ja, desca, w, z, iz, jz, descz, work, lwork, rwork, lrwork, iwork,
        liwork, info);
}

__attribute__((visibility("default"))) const char* pipevd_version(void) { return PIPEVD_VERSION; }

__attribute__((visibility("default"))) const char* pipevd_last_path(void) {
  try {
    const std::lock_guard<std::mutex> lock(pipevd::one_call_at_a_time());
    return pipevd::last_call_path();
  } catch (...) {  // the lock itself failed: no path to tell
    return "";
  }
}

// Nothing here is expected to throw; should it, the caller's job goes on with the memory kept.
__attribute__((visibility("default"))) void pipevd_release(void) {
  try {
    const pipevd::CallScope scope;
    const std::lock_guard<std::mutex> lock(pipevd::one_call_at_a_time());
    // The grids' NCCL communicators finished before they are destroyed with the others.
    pipevd::finish_grid_preparations();
    pipevd::release_kept_buffers();
    pipevd::release_node_windows();
    pipevd::gpu_release_memory();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipevd: error: %s (pipevd_release kept what it could not free)\n",
                 e.what());
    std::fflush(stderr);
  } catch (...) {
    std::fprintf(stderr,
                 "pipevd: error: unknown exception (pipevd_release kept what it could not free)\n");
    std::fflush(stderr);
  }
}
}
