/* The main example: a generated symmetric matrix, block-cyclic on a 2x2 BLACS grid, solved through
 * a plain pdsyevd_ call (workspace query first), as an application would after relinking with
 * -lpipevd. Prints the residual ||A Z - Z W||_F / (||A||_F n eps), the orthogonality
 * ||Z^T Z - I||_F / (n eps) and the time.  Usage: mpiexec -n 4 pdsyevd_example [n] [nb]        */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ictxt);
int numroc_(const int*, const int*, const int*, const int*, const int*);
void descinit_(int*, const int*, const int*, const int*, const int*, const int*, const int*,
               const int*, const int*, int*);
void pdsyevd_(const char*, const char*, const int*, double*, const int*, const int*, const int*,
              double*, double*, const int*, const int*, const int*, double*, const int*, int*,
              const int*, int*);
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
             const double*, const int*, const int*, const int*, const double*, const int*,
             const int*, const int*, const double*, double*, const int*, const int*, const int*);
double pdlange_(const char*, const int*, const int*, const double*, const int*, const int*,
                const int*, double*);
void pdlaset_(const char*, const int*, const int*, const double*, const double*, double*,
              const int*, const int*, const int*);

/* A deterministic symmetric entry in [-1, 1), the same on every rank. */
static double entry(long i, long j) {
  uint64_t x = (uint64_t)(i < j ? i : j) * 0x9E3779B97F4A7C15ULL ^
               (uint64_t)(i < j ? j : i) * 0xC2B2AE3D27D4EB4FULL;
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  return (double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static long global_index(int l, int nb, int p, int nprocs) {
  return (long)(l / nb) * nprocs * nb + (long)p * nb + l % nb;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 1000, nb = argc > 2 ? atoi(argv[2]) : 64;
  const int nprow = 2, npcol = 2, zero = 0, one = 1;
  if (size < nprow * npcol) {
    if (rank == 0) fprintf(stderr, "run with at least 4 ranks (2x2 grid)\n");
    MPI_Finalize();
    return 2;
  }
  int ictxt, myrow, mycol, pr, pc;
  Cblacs_get(0, 0, &ictxt);
  Cblacs_gridinit(&ictxt, "R", nprow, npcol);
  if (rank >= nprow * npcol) { /* not in the grid */
    MPI_Finalize();
    return 0;
  }
  Cblacs_gridinfo(ictxt, &pr, &pc, &myrow, &mycol);
  const int mloc = numroc_(&n, &nb, &myrow, &zero, &pr),
            nloc = numroc_(&n, &nb, &mycol, &zero, &pc);
  const int lld = mloc > 1 ? mloc : 1;
  int desc[9], info;
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ictxt, &lld, &info);
  const size_t local = (size_t)lld * (nloc > 1 ? nloc : 1);
  double* a = malloc(local * sizeof(double));
  double* a0 = malloc(local * sizeof(double));
  double* z = malloc(local * sizeof(double));
  double* r = malloc(local * sizeof(double));
  double* w = malloc((size_t)n * sizeof(double));
  for (int jl = 0; jl < nloc; ++jl)
    for (int il = 0; il < mloc; ++il)
      a[il + (size_t)jl * lld] = a0[il + (size_t)jl * lld] =
          entry(global_index(il, nb, myrow, pr), global_index(jl, nb, mycol, pc));

  /* Workspace query, then the solve: exactly what a ScaLAPACK code does. */
  double wq;
  int iwq, lwork = -1, liwork = 1;
  pdsyevd_("V", "L", &n, a, &one, &one, desc, w, z, &one, &one, desc, &wq, &lwork, &iwq, &liwork,
           &info);
  lwork = (int)wq;
  liwork = iwq;
  double* work = malloc((size_t)lwork * sizeof(double));
  int* iwork = malloc((size_t)liwork * sizeof(int));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  pdsyevd_("V", "L", &n, a, &one, &one, desc, w, z, &one, &one, desc, work, &lwork, iwork, &liwork,
           &info);
  const double seconds = MPI_Wtime() - t0;

  /* R = A0 Z - Z diag(W) */
  for (int jl = 0; jl < nloc; ++jl) {
    const double lambda = w[global_index(jl, nb, mycol, pc)];
    for (int il = 0; il < mloc; ++il) r[il + (size_t)jl * lld] = z[il + (size_t)jl * lld] * lambda;
  }
  const double d_one = 1.0, d_minus_one = -1.0, d_zero = 0.0;
  pdgemm_("N", "N", &n, &n, &n, &d_one, a0, &one, &one, desc, z, &one, &one, desc, &d_minus_one, r,
          &one, &one, desc);
  double* lwork_norm = malloc((size_t)(nloc > 1 ? nloc : 1) * sizeof(double));
  const double rnorm = pdlange_("F", &n, &n, r, &one, &one, desc, lwork_norm);
  const double anorm = pdlange_("F", &n, &n, a0, &one, &one, desc, lwork_norm);
  /* R = Z^T Z - I */
  pdlaset_("A", &n, &n, &d_zero, &d_minus_one, r, &one, &one, desc);
  pdgemm_("T", "N", &n, &n, &n, &d_one, z, &one, &one, desc, z, &one, &one, desc, &d_one, r, &one,
          &one, desc);
  const double onorm = pdlange_("F", &n, &n, r, &one, &one, desc, lwork_norm);
  const double res = rnorm / (anorm * n * DBL_EPSILON), orth = onorm / (n * DBL_EPSILON);
  if (rank == 0)
    printf("pdsyevd n=%d nb=%d grid=2x2 info=%d residual=%.3g orthogonality=%.3g time=%.3f s\n", n,
           nb, info, res, orth, seconds);
  const int ok = info == 0 && res < 100.0 && orth < 100.0;
  Cblacs_gridexit(ictxt);
  MPI_Finalize();
  return ok ? 0 : 1;
}
