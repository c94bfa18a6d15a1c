// PZHEEVD forwarded to ScaLAPACK (interface/forward.hpp).
#include <algorithm>
#include <complex>
#include <vector>

#include "interface/forward.hpp"

namespace pipevd::scalapack {
namespace {

using Complex = std::complex<double>;

// Where ScaLAPACK 2.2's PZHEEVD computes right as called: sub(A) and sub(Z) at (1, 1), both on
// process (0, 0) (its gather of the tridiagonal by PDLARED1D and its PDSTEDC on a copy of DESCZ
// assume it; PZHEEVD's checks compare neither CSRC nor JZ).
bool solvable_in_place(const PzheevdCall& c) {
  return *c.ia == 1 && *c.ja == 1 && *c.iz == 1 && *c.jz == 1 && c.desca[RSRC_] == 0 &&
         c.desca[CSRC_] == 0 && c.descz[RSRC_] == 0 && c.descz[CSRC_] == 0;
}

}  // namespace

void forward_call(const PzheevdCall& c) {
  const pzheevd_fn fn = real_routine(c).fn;  // the caller checked real_routine(c).error
  const char jobz[1] = {c.jobz}, uplo[1] = {c.uplo};
  const int n = *c.n, one = 1, ictxt = c.desca[CTXT_];
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  if (solvable_in_place(c)) {
    // PDSTEDC needs its LIWMIN, which PZHEEVD passes on without checking it.
    const int liwork = std::max(*c.liwork, 7 * n + 8 * npcol + 2);
    std::vector<int> own(liwork > *c.liwork ? static_cast<std::size_t>(liwork) : 0);
    fn(jobz, uplo, c.n, c.a, c.ia, c.ja, c.desca, c.w, c.z, c.iz, c.jz, c.descz, c.work, c.lwork,
       c.rwork, c.lrwork, own.empty() ? c.iwork : own.data(), &liwork, c.info, 1, 1);
    return;
  }
  // A copy at (1, 1) on process (0, 0) with the caller's blocking, solved there, Z copied back.
  FreshCopy copy = fresh_copy(n, c.desca);
  int* desc1 = copy.desc;
  std::vector<Complex> a1(copy.local), z1(copy.local);
  pzgemr2d_(&n, &n, c.a, c.ia, c.ja, c.desca, a1.data(), &one, &one, desc1, &ictxt);

  Complex wq = 0;
  double rwq = 0;
  int iwq = 0, qinfo = 0;
  const int query = -1;
  fn(jobz, uplo, &n, a1.data(), &one, &one, desc1, c.w, z1.data(), &one, &one, desc1, &wq, &query,
     &rwq, &query, &iwq, &query, &qinfo, 1, 1);
  int lwork1 = std::max(1, static_cast<int>(wq.real()));
  int lrwork1 = std::max(1, static_cast<int>(rwq)), liwork1 = std::max(1, iwq);
  std::vector<Complex> work1(static_cast<std::size_t>(lwork1));
  std::vector<double> rwork1(static_cast<std::size_t>(lrwork1));
  std::vector<int> iwork1(static_cast<std::size_t>(liwork1));
  fn(jobz, uplo, &n, a1.data(), &one, &one, desc1, c.w, z1.data(), &one, &one, desc1, work1.data(),
     &lwork1, rwork1.data(), &lrwork1, iwork1.data(), &liwork1, c.info, 1, 1);
  pzgemr2d_(&n, &n, z1.data(), &one, &one, desc1, c.z, c.iz, c.jz, c.descz, &ictxt);
}

}  // namespace pipevd::scalapack
