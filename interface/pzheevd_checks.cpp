// PZHEEVD's checks in ScaLAPACK 2.2's order (SRC/pzheevd.f), on the tools of
// interface/descriptor_checks.hpp. They differ from PDSYEVD's: N = 0 returns INFO = 0, the grid
// is DESCA's, a query is any
// of LWORK, LRWORK or LIWORK = -1, LIWORK is never checked, only IA's alignment is (INFO = -4),
// and the global check (PCHK2MAT) takes both operands, DESCZ at position 11.
#include <algorithm>

#include "interface/argument_checks.hpp"
#include "interface/descriptor_checks.hpp"

namespace pipevd {
namespace {

using namespace scalapack;
using namespace checks;

// Positions of PZHEEVD's arguments (kPosDescZGlobal: DESCZ as PZHEEVD passes it to PCHK2MAT).
constexpr int kPosDescA = 7, kPosDescZ = 12, kPosDescZGlobal = 11, kPosLwork = 14, kPosUplo = 2;

// The workspace PZHEEVD asks for, written where it writes it.
void workspace(const PzheevdCall& c, int nprow, int npcol, int myrow, int mycol, ArgumentCheck& r) {
  const int n = *c.n, ia = *c.ia, ja = *c.ja;
  const int* da = c.desca;
  const int nb = da[NB_], mb = da[MB_];
  const int iarow = (da[RSRC_] + (ia - 1) / nb) % nprow;  // INDXG2P, as PZHEEVD calls it
  const int iacol = (da[CSRC_] + (ja - 1) / mb) % npcol;
  const long np0 = numroc(n, nb, myrow, iarow, nprow);
  const long nq0 = numroc(n, nb, mycol, iacol, npcol);
  const long nq = numroc(std::max({n, nb, 2}), nb, 0, 0, npcol);
  r.lwmin = static_cast<int>(n + (np0 + nq + nb) * nb);
  r.lrwmin = static_cast<int>(1 + 9L * n + 3 * np0 * nq0);
  r.liwmin = 7 * n + 8 * npcol + 2;
  r.query = *c.lwork == -1 || *c.liwork == -1 || *c.lrwork == -1;
  write_workspace_answers(c, r);
}

// The local checks after CHK1MAT has passed, in PZHEEVD's order.
int local_checks(const PzheevdCall& c, bool allow_jobz_n, int nprow, const ArgumentCheck& r) {
  const int* da = c.desca;
  const int* dz = c.descz;
  const int iroffa = (*c.ia - 1) % da[MB_], iroffz = (*c.iz - 1) % da[MB_];
  const int iarow = (da[RSRC_] + (*c.ia - 1) / da[NB_]) % nprow;
  const int izrow = (dz[RSRC_] + (*c.iz - 1) / dz[MB_]) % nprow;  // INFOG2L
  const bool jobz_ok = same_letter(c.jobz, 'V') || (allow_jobz_n && same_letter(c.jobz, 'N'));
  if (!jobz_ok) return -1;
  if (!same_letter(c.uplo, 'L') && !same_letter(c.uplo, 'U')) return -2;
  if (*c.lwork < r.lwmin && *c.lwork != -1) return -kPosLwork;
  if (*c.lrwork < r.lrwmin && *c.lrwork != -1) return -16;
  if (iroffa != 0) return -4;
  if (da[MB_] != da[NB_]) return -(700 + NB_ + 1);
  if (iroffa != iroffz || iarow != izrow) return -10;
  for (Desc e : {M_, N_, MB_, NB_, RSRC_, CTXT_})
    if (da[e] != dz[e]) return -(1200 + e + 1);
  return 0;
}

}  // namespace

ArgumentCheck check_arguments(const PzheevdCall& c, bool allow_jobz_n) {
  ArgumentCheck r;
  const int n = *c.n;
  if (n == 0) {  // unlike PDSYEVD, PZHEEVD sets INFO = 0 before this quick return
    *c.info = 0;
    r.quick_return = true;
    return r;
  }
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&c.desca[CTXT_], &nprow, &npcol, &myrow, &mycol);
  if (nprow == -1) {
    r.info = -(700 + CTXT_ + 1);
    return r;
  }
  const int ia = *c.ia, ja = *c.ja, iz = *c.iz, jz = *c.jz;
  int info = chk1mat(n, 3, n, 3, ia, ja, c.desca, kPosDescA, 0);
  info = chk1mat(n, 3, n, 3, iz, jz, c.descz, kPosDescZ, info);
  if (info == 0) {
    workspace(c, nprow, npcol, myrow, mycol, r);
    info = local_checks(c, allow_jobz_n, nprow, r);
  }
  // As in PDSYEVD, LOWER is set only once CHK1MAT has passed, and sent to PCHK2MAT regardless:
  // pipevd sends the UPLO given (interface/argument_checks.cpp says more).
  const int ex[2] = {same_letter(c.uplo, 'L') ? 'L' : 'U', *c.lwork == -1 ? -1 : 1};
  const int expos[2] = {kPosUplo, kPosLwork};
  r.info = pchk2mat(Operand{n, 3, n, 3, ia, ja, c.desca, kPosDescA},
                    Operand{n, 3, n, 3, iz, jz, c.descz, kPosDescZGlobal}, ex, expos, 2, info);
  return r;
}

void write_workspace_answers(const PzheevdCall& c, const ArgumentCheck& chk) {
  c.work[0] = chk.lwmin;
  c.rwork[0] = chk.lrwmin;
  c.iwork[0] = chk.liwmin;
}

}  // namespace pipevd
