// ScaLAPACK 2.2's argument-checking tools (TOOLS/chk1mat.f, TOOLS/pchkxmat.f), reproduced for the
// routines pipevd takes (interface/argument_checks.cpp): INFO is 0, -(argument) or
// -(100 * argument + descriptor entry), and where several are wrong the smallest position wins.
#pragma once

namespace pipevd::checks {

// LSAME on one character.
bool same_letter(char c, char letter);
int numroc(int n, int nb, int iproc, int isrc, int nprocs);

// CHK1MAT(MA, MAPOS0, NA, NAPOS0, IA, JA, DESC, DESCPOS0, INFO): this process's checks of one
// matrix operand, merged into `info`.
int chk1mat(int ma, int mapos0, int na, int napos0, int ia, int ja, const int* desc, int descpos0,
            int info);

// One operand's values that must agree over the grid (PCHK1MAT/PCHK2MAT compare them with
// process (0, 0)'s): its sizes, IA, JA and descriptor entries, with their positions.
struct Operand {
  int m, mpos0, n, npos0, i, j;
  const int* desc;
  int descpos0;
};

// PCHK1MAT (one operand) and PCHK2MAT (two): collective over the grid of the first operand's
// context; the values above and the `nextra` extras (ex, at positions expos) compared with
// process (0, 0)'s, the smallest mismatching position on any process merged into `info`, which
// every process then returns.
int pchk1mat(const Operand& a, const int* ex, const int* expos, int nextra, int info);
int pchk2mat(const Operand& a, const Operand& b, const int* ex, const int* expos, int nextra,
             int info);

}  // namespace pipevd::checks
