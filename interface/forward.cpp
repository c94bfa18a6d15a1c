#include "interface/forward.hpp"

#include <algorithm>
#include <climits>
#include <vector>

#include "interface/real_symbol.hpp"

namespace pipevd::scalapack {
namespace {

template <class Fn>
RealRoutine<Fn> resolve(const char* symbol, const char* error) {
  RealRoutine<Fn> r;
  void* fn = find_real_symbol(symbol);
  if (!fn) {
    r.error = error;
    return r;
  }
  r.fn = reinterpret_cast<Fn>(fn);
  return r;
}

// WORK large enough for what ScaLAPACK 2.2's PDSYEVD does with it, on a grid whose first process
// row and column hold Z's (1,1) at (rsrc, csrc): LWORK - 2 N goes to its PDORMTR, whose own
// minimum (SIDE = 'L': max(NB (NB - 1) / 2, (NQ + NP) NB) + NB^2, NP x NQ this process's part of Z)
// its LWMIN does not cover where NB is large against the local part (n = 64, NB = 32 on a 2 x 2
// grid: PDORMTR refuses its LWORK and Z comes back wrong). At least `lwork`.
int forward_lwork(int n, const int* descz, int rsrc, int csrc, int lwork) {
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&descz[CTXT_], &nprow, &npcol, &myrow, &mycol);
  const int nb = descz[NB_];
  const long np = numroc_(&n, &descz[MB_], &myrow, &rsrc, &nprow);
  const long nq = numroc_(&n, &nb, &mycol, &csrc, &npcol);
  const long ormtr = std::max<long>(static_cast<long>(nb) * (nb - 1) / 2, (nq + np) * nb) +
                     static_cast<long>(nb) * nb;
  return static_cast<int>(std::min<long>(INT_MAX, std::max<long>(lwork, 2L * n + ormtr)));
}

}  // namespace

const RealPdsyevd& real_routine(const PdsyevdCall&) {
  static const RealPdsyevd r = resolve<pdsyevd_fn>(
      "pdsyevd_",
      "pipevd: ScaLAPACK's pdsyevd_ was not found in the process (dlsym RTLD_NEXT/RTLD_DEFAULT); "
      "link ScaLAPACK after -lpipevd (e.g. -lpipevd -lscalapack-openmpi)");
  return r;
}

const RealPzheevd& real_routine(const PzheevdCall&) {
  static const RealPzheevd r = resolve<pzheevd_fn>(
      "pzheevd_",
      "pipevd: ScaLAPACK's pzheevd_ was not found in the process (dlsym RTLD_NEXT/RTLD_DEFAULT); "
      "link ScaLAPACK after -lpipevd (e.g. -lpipevd -lscalapack-openmpi)");
  return r;
}

FreshCopy fresh_copy(int n, const int* desca) {
  const int zero = 0, ictxt = desca[CTXT_];
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  FreshCopy f;
  const int lld = std::max(1, numroc_(&n, &desca[MB_], &myrow, &zero, &nprow));
  int dinfo = 0;
  descinit_(f.desc, &n, &n, &desca[MB_], &desca[NB_], &zero, &zero, &ictxt, &lld, &dinfo);
  const int local_cols = numroc_(&n, &desca[NB_], &mycol, &zero, &npcol);
  f.local = static_cast<std::size_t>(lld) * std::max(1, local_cols);
  return f;
}

void forward_call(const PdsyevdCall& c) {
  const pdsyevd_fn fn = real_routine(c).fn;  // the caller checked real_routine(c).error
  const char jobz[1] = {c.jobz}, uplo[1] = {c.uplo};
  // ScaLAPACK 2.2's PDSYEVD returns wrong eigenpairs when CSRC != 0 (RSRC != 0 is fine), so
  // such calls take the copy path below, whose copy starts on process (0, 0).
  if (*c.ia == 1 && *c.ja == 1 && *c.iz == 1 && *c.jz == 1 && c.desca[CSRC_] == 0) {
    const int lwork = forward_lwork(*c.n, c.descz, c.descz[RSRC_], 0, *c.lwork);
    std::vector<double> own(lwork > *c.lwork ? static_cast<std::size_t>(lwork) : 0);
    fn(jobz, uplo, c.n, c.a, c.ia, c.ja, c.desca, c.w, c.z, c.iz, c.jz, c.descz,
       own.empty() ? c.work : own.data(), &lwork, c.iwork, c.liwork, c.info, 1, 1);
    return;
  }
  // Submatrix: solve a copy at (1,1) on the same grid and blocking, then copy Z back.
  const int n = *c.n, one = 1, ictxt = c.desca[CTXT_];
  FreshCopy copy = fresh_copy(n, c.desca);
  int* desc1 = copy.desc;
  std::vector<double> a1(copy.local), z1(copy.local);
  pdgemr2d_(&n, &n, c.a, c.ia, c.ja, c.desca, a1.data(), &one, &one, desc1, &ictxt);

  double wq = 0;
  int iwq = 0, qinfo = 0;
  const int query = -1;
  fn(jobz, uplo, &n, a1.data(), &one, &one, desc1, c.w, z1.data(), &one, &one, desc1, &wq, &query,
     &iwq, &query, &qinfo, 1, 1);
  int lwork1 = forward_lwork(n, desc1, 0, 0, static_cast<int>(wq)), liwork1 = iwq;
  std::vector<double> work1(std::max(1, lwork1));
  std::vector<int> iwork1(std::max(1, liwork1));
  fn(jobz, uplo, &n, a1.data(), &one, &one, desc1, c.w, z1.data(), &one, &one, desc1, work1.data(),
     &lwork1, iwork1.data(), &liwork1, c.info, 1, 1);
  pdgemr2d_(&n, &n, z1.data(), &one, &one, desc1, c.z, c.iz, c.jz, c.descz, &ictxt);
}

}  // namespace pipevd::scalapack
