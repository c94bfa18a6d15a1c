// The encoding follows CHK1MAT and PCHKxMAT: positions are multiplied by 100 (DESCMULT) so that a
// descriptor entry j of argument i reads -(100*i + j) and the smallest position wins.
#include "interface/descriptor_checks.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include "base/scalapack_api.hpp"

namespace pipevd::checks {
namespace {

using namespace scalapack;

constexpr int kDescMult = 100;
constexpr int kBig = kDescMult * kDescMult;

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

// An operand's values for the global check, each with its encoded position (descriptor entries
// 1-based: DTYPE_ = 1 ... CSRC_ = 8; LLD_ and CTXT_ are not compared).
void add_operand(const Operand& o, std::vector<int>& values, std::vector<int>& positions) {
  const int dpos = o.descpos0 * kDescMult;
  auto add = [&](int value, int position) {
    values.push_back(value);
    positions.push_back(position);
  };
  add(o.m, o.mpos0 * kDescMult);
  add(o.n, o.npos0 * kDescMult);
  add(o.i, (o.descpos0 - 2) * kDescMult);
  add(o.j, (o.descpos0 - 1) * kDescMult);
  for (Desc e : {DTYPE_, M_, N_, MB_, NB_, RSRC_, CSRC_})
    add(o.desc[e], dpos + static_cast<int>(e) + 1);
}

// GLOBCHK: the values compared with process (0, 0)'s; the smallest mismatching position over the
// grid merged into info.
int globchk(int ictxt, const std::vector<int>& x, const std::vector<int>& pos, int info) {
  int v = to_scale(info);
  int nprow, npcol, myrow, mycol;
  Cblacs_gridinfo(ictxt, &nprow, &npcol, &myrow, &mycol);
  std::vector<int> values = x;
  const int k = static_cast<int>(values.size());
  if (myrow == 0 && mycol == 0) {
    Cigebs2d(ictxt, "All", " ", k, 1, values.data(), k);
  } else {
    Cigebr2d(ictxt, "All", " ", k, 1, values.data(), k, 0, 0);
    for (int i = 0; i < k; ++i)
      if (x[i] != values[i]) v = std::min(v, pos[i]);
  }
  int ra = 0, ca = 0;
  Cigamn2d(ictxt, "All", " ", 1, 1, &v, 1, &ra, &ca, -1, -1, 0);
  return from_scale(v);
}

int pchk(const std::vector<const Operand*>& ops, const int* ex, const int* expos, int nextra,
         int info) {
  std::vector<int> values, positions;
  for (const Operand* o : ops) add_operand(*o, values, positions);
  for (int e = 0; e < nextra; ++e) {
    values.push_back(ex[e]);
    positions.push_back(expos[e]);
  }
  return globchk(ops.front()->desc[CTXT_], values, positions, info);
}

}  // namespace

bool same_letter(char c, char letter) {
  return std::toupper(static_cast<unsigned char>(c)) == letter;
}

int numroc(int n, int nb, int iproc, int isrc, int nprocs) {
  return numroc_(&n, &nb, &iproc, &isrc, &nprocs);
}

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

int pchk1mat(const Operand& a, const int* ex, const int* expos, int nextra, int info) {
  return pchk({&a}, ex, expos, nextra, info);
}

int pchk2mat(const Operand& a, const Operand& b, const int* ex, const int* expos, int nextra,
             int info) {
  return pchk({&a, &b}, ex, expos, nextra, info);
}

}  // namespace pipevd::checks
