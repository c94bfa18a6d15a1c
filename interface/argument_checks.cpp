// The order of the checks and the INFO encoding follow ScaLAPACK 2.2's PDSYEVD, CHK1MAT and
// PCHK1MAT: positions are encoded times 100 (DESCMULT) so that a descriptor entry j of argument i
// reads -(100*i + j) and the smallest position wins.
#include "interface/argument_checks.hpp"

#include <algorithm>
#include <cctype>

namespace pipevd {
namespace {

using namespace scalapack;

constexpr int kDescMult = 100;
constexpr int kBig = kDescMult * kDescMult;
// Positions of PDSYEVD's arguments.
constexpr int kPosDescA = 7, kPosDescZ = 12, kPosLwork = 14, kPosUplo = 2;

bool same_letter(char c, char letter) {
  return std::toupper(static_cast<unsigned char>(c)) == letter;
}

// INFO (0 or negative) into CHK1MAT's "smallest position" scale, and back.
int to_scale(int info) {
  if (info >= 0) return kBig;
  if (info < -kDescMult) return -info;
  return -info * kDescMult;
}
int from_scale(int v) {
  if (v == kBig) return 0;
  if (v % kDescMult == 0) return -v / kDescMult;
  return -v;
}

int numroc(int n, int nb, int iproc, int isrc, int nprocs) {
  return numroc_(&n, &nb, &iproc, &isrc, &nprocs);
}

// CHK1MAT(M, MPOS, N, NPOS, IA, JA, DESC, DESCPOS, INFO): local checks of one matrix operand.
int chk1mat(int ma, int mapos0, int na, int napos0, int ia, int ja, const int* d, int descpos0,
            int info) {
  int v = to_scale(info);
  const int mapos = mapos0 * kDescMult, napos = napos0 * kDescMult;
  const int iapos = (descpos0 - 2) * kDescMult, japos = (descpos0 - 1) * kDescMult;
  const int dpos = descpos0 * kDescMult;
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&d[CTXT_], &nprow, &npcol, &myrow, &mycol);
  // Descriptor entries are 1-based in the encoding (DTYPE_ = 1 ... LLD_ = 9).
  auto at = [&](Desc e) { return dpos + static_cast<int>(e) + 1; };
  if (d[DTYPE_] != 1)
    v = std::min(v, at(DTYPE_));
  else if (ma < 0)
    v = std::min(v, mapos);
  else if (na < 0)
    v = std::min(v, napos);
  else if (ia < 1)
    v = std::min(v, iapos);
  else if (ja < 1)
    v = std::min(v, japos);
  else if (d[MB_] < 1)
    v = std::min(v, at(MB_));
  else if (d[NB_] < 1)
    v = std::min(v, at(NB_));
  else if (d[RSRC_] < 0 || d[RSRC_] >= nprow)
    v = std::min(v, at(RSRC_));
  else if (d[CSRC_] < 0 || d[CSRC_] >= npcol)
    v = std::min(v, at(CSRC_));
  else if (d[LLD_] < 1)
    v = std::min(v, at(LLD_));
  else if (d[LLD_] < numroc(d[M_], d[MB_], myrow, d[RSRC_], nprow)) {
    if (numroc(d[N_], d[NB_], mycol, d[CSRC_], npcol) > 0) v = std::min(v, at(LLD_));
  }
  if (ma == 0 || na == 0) {
    if (d[M_] < 0) v = std::min(v, at(M_));
    if (d[N_] < 0) v = std::min(v, at(N_));
  } else if (d[M_] < 1) {
    v = std::min(v, at(M_));
  } else if (d[N_] < 1) {
    v = std::min(v, at(N_));
  } else if (ia > d[M_]) {
    v = std::min(v, iapos);
  } else if (ja > d[N_]) {
    v = std::min(v, japos);
  } else {
    if (ia + ma - 1 > d[M_]) v = std::min(v, mapos);
    if (ja + na - 1 > d[N_]) v = std::min(v, napos);
  }
  return from_scale(v);
}

// PCHK1MAT: the values that must agree on every process of the grid, compared with process
// (0,0)'s; the smallest mismatching position anywhere wins (GLOBCHK).
int pchk1mat(int ma, int mapos0, int na, int napos0, int ia, int ja, const int* d, int descpos0,
             const int* ex, const int* expos, int nextra, int info) {
  int v = to_scale(info);
  const int dpos = descpos0 * kDescMult;
  auto at = [&](Desc e) { return dpos + static_cast<int>(e) + 1; };
  int x[16][2] = {{ma, mapos0 * kDescMult},
                  {na, napos0 * kDescMult},
                  {ia, (descpos0 - 2) * kDescMult},
                  {ja, (descpos0 - 1) * kDescMult},
                  {d[DTYPE_], at(DTYPE_)},
                  {d[M_], at(M_)},
                  {d[N_], at(N_)},
                  {d[MB_], at(MB_)},
                  {d[NB_], at(NB_)},
                  {d[RSRC_], at(RSRC_)},
                  {d[CSRC_], at(CSRC_)}};
  int k = 11;
  for (int e = 0; e < nextra; ++e, ++k) {
    x[k][0] = ex[e];
    x[k][1] = expos[e];
  }
  const int ictxt = d[CTXT_];
  int nprow, npcol, myrow, mycol;
  blacs_gridinfo_(&ictxt, &nprow, &npcol, &myrow, &mycol);
  int values[16];
  for (int i = 0; i < k; ++i) values[i] = x[i][0];
  if (myrow == 0 && mycol == 0) {
    Cigebs2d(ictxt, "All", " ", k, 1, values, k);
  } else {
    int root[16];
    Cigebr2d(ictxt, "All", " ", k, 1, root, k, 0, 0);
    for (int i = 0; i < k; ++i)
      if (values[i] != root[i]) v = std::min(v, x[i][1]);
  }
  int ra = 0, ca = 0;
  Cigamn2d(ictxt, "All", " ", 1, 1, &v, 1, &ra, &ca, -1, -1, 0);
  return from_scale(v);
}

}  // namespace

PdsyevdCheck check_pdsyevd_arguments(const PdsyevdCall& c, bool allow_jobz_n) {
  PdsyevdCheck r;
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
  info = pchk1mat(n, 3, n, 3, ia, ja, da, kPosDescA, ex, expos, 2, info);
  r.info = info;
  return r;
}

}  // namespace pipevd
