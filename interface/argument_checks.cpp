// PDSYEVD's checks in ScaLAPACK 2.2's order (SRC/pdsyevd.f), on the tools of
// interface/descriptor_checks.hpp.
#include "interface/argument_checks.hpp"

#include <algorithm>

#include "interface/descriptor_checks.hpp"

namespace pipevd {
namespace {

using namespace scalapack;
using namespace checks;

// Positions of PDSYEVD's arguments.
constexpr int kPosDescA = 7, kPosDescZ = 12, kPosLwork = 14, kPosUplo = 2;

}  // namespace

ArgumentCheck check_arguments(const PdsyevdCall& c, bool allow_jobz_n) {
  ArgumentCheck r;
  const int n = *c.n;
  if (n == 0) {
    r.quick_return = true;
    return r;
  }
  const int ictxt = c.descz[CTXT_];
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  int info = 0;
  if (nprow == -1) {
    r.info = -(600 + CTXT_ + 1);
    return r;
  }
  const int ia = *c.ia, ja = *c.ja, iz = *c.iz, jz = *c.jz;
  const int* da = c.desca;
  const int* dz = c.descz;
  info = chk1mat(n, 3, n, 3, ia, ja, da, kPosDescA, info);
  info = chk1mat(n, 3, n, 3, iz, jz, dz, kPosDescZ, info);
  const bool upper = same_letter(c.uplo, 'U');
  r.query = (*c.lwork == -1);
  if (info == 0) {
    const int nb = da[NB_];
    const int iroffa = (ia - 1) % da[MB_], icoffa = (ja - 1) % da[NB_];
    const int iroffz = (iz - 1) % dz[MB_], icoffz = (jz - 1) % dz[NB_];
    const int iarow = (da[RSRC_] + (ia - 1) / nb) % nprow;  // INDXG2P
    const int iacol = (da[CSRC_] + (ja - 1) / nb) % npcol;
    const long np = numroc(n, nb, myrow, iarow, nprow);
    const long nq = numroc(n, nb, mycol, iacol, npcol);
    const long trilwmin = 3L * n + std::max<long>(nb * (np + 1), 3L * nb);
    r.lwmin = static_cast<int>(std::max<long>(1 + 6L * n + 2 * np * nq, trilwmin) + 2L * n);
    r.liwmin = 7 * n + 8 * npcol + 2;
    c.work[0] = r.lwmin;
    c.iwork[0] = r.liwmin;
    const bool jobz_ok = same_letter(c.jobz, 'V') || (allow_jobz_n && same_letter(c.jobz, 'N'));
    if (!jobz_ok)
      info = -1;
    else if (!upper && !same_letter(c.uplo, 'L'))
      info = -2;
    else if (iroffa != icoffa || icoffa != 0)
      info = -6;
    else if (iroffa != iroffz || icoffa != icoffz)
      info = -10;
    else if (da[M_] != dz[M_])
      info = -(1200 + M_ + 1);
    else if (da[MB_] != da[NB_])
      info = -(700 + NB_ + 1);
    else if (dz[MB_] != dz[NB_])
      info = -(1200 + NB_ + 1);
    else if (da[MB_] != dz[MB_])
      info = -(1200 + MB_ + 1);
    else if (da[CTXT_] != dz[CTXT_])
      info = -(1200 + CTXT_ + 1);
    else if (da[RSRC_] != dz[RSRC_])
      info = -(1200 + RSRC_ + 1);
    else if (da[CSRC_] != dz[CSRC_])
      info = -(1200 + CSRC_ + 1);
    else if (*c.lwork < r.lwmin && !r.query)
      info = -kPosLwork;
    else if (*c.liwork < r.liwmin && !r.query)
      info = -16;
  }
  // ScaLAPACK 2.2 sets UPPER only once CHK1MAT has passed on this process and sends it to
  // PCHK1MAT even where CHK1MAT failed, so there its UPLO is uninitialised memory (a stale 'U' on
  // one process turns a descriptor error into INFO = -2 everywhere). pipevd sends the UPLO given:
  // ScaLAPACK's answer whenever that memory happens to agree with it.
  const int ex[2] = {upper ? 'U' : 'L', *c.lwork == -1 ? -1 : 1};
  const int expos[2] = {kPosUplo, kPosLwork};
  info = pchk1mat(Operand{n, 3, n, 3, ia, ja, da, kPosDescA}, ex, expos, 2, info);
  r.info = info;
  return r;
}

void write_workspace_answers(const PdsyevdCall& c, const ArgumentCheck& chk) {
  c.work[0] = chk.lwmin;
  c.iwork[0] = chk.liwmin;
}

}  // namespace pipevd
