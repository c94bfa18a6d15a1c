/* pipevd's C API: the same eigenproblem as a PDSYEVD call, made through pipevd_pdsyevd from
 * <pipevd.h> (no Fortran name, no hidden string lengths). The BLACS grid is the most nearly
 * square one the ranks make. Prints the residual ||A Z - Z W||_F / (||A||_F n eps) and the
 * orthogonality ||Z^T Z - I||_F / (n eps); exits non-zero when INFO /= 0 or either reaches 100.
 * Usage: mpiexec -n P pipevd_api_example [n] [nb]                                              */
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <pipevd.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ictxt);
int numroc_(const int*, const int*, const int*, const int*, const int*);
void descinit_(int*, const int*, const int*, const int*, const int*, const int*, const int*,
               const int*, const int*, int*);
void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
             const double*, const int*, const int*, const int*, const double*, const int*,
             const int*, const int*, const double*, double*, const int*, const int*, const int*);
double pdlange_(const char*, const int*, const int*, const double*, const int*, const int*,
                const int*, double*);
void pdlaset_(const char*, const int*, const int*, const double*, const double*, double*,
              const int*, const int*, const int*);

/* Global index (0-based) of local index l in a block-cyclic dimension starting on process 0. */
static long global_index(int l, int nb, int p, int nprocs) {
  return (long)(l / nb) * nprocs * nb + (long)p * nb + l % nb;
}

/* A symmetric test matrix with a spread diagonal. */
static double entry(long i, long j, int n) {
  double v = cos(0.61 * (double)(i + 1) * (double)(j + 1) + 0.3 * (double)(i + j + 2)) / sqrt(n);
  return i == j ? v + 2.0 * (double)(i + 1) / n : v;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 500, nb = argc > 2 ? atoi(argv[2]) : 32;
  int nprow = (int)sqrt((double)size);
  while (size % nprow != 0) --nprow;
  const int npcol = size / nprow, zero = 0, one = 1;

  int ictxt, pr, pc, myrow, mycol, info;
  Cblacs_get(0, 0, &ictxt);
  Cblacs_gridinit(&ictxt, "R", nprow, npcol);
  Cblacs_gridinfo(ictxt, &pr, &pc, &myrow, &mycol);
  const int mloc = numroc_(&n, &nb, &myrow, &zero, &pr),
            nloc = numroc_(&n, &nb, &mycol, &zero, &pc);
  const int lld = mloc > 1 ? mloc : 1;
  int desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ictxt, &lld, &info);
  const size_t local = (size_t)lld * (size_t)(nloc > 1 ? nloc : 1);
  double* a = malloc(local * sizeof(double));
  double* a0 = malloc(local * sizeof(double));
  double* z = malloc(local * sizeof(double));
  double* r = malloc(local * sizeof(double));
  double* w = malloc((size_t)n * sizeof(double));
  for (int jl = 0; jl < nloc; ++jl)
    for (int il = 0; il < mloc; ++il)
      a[il + (size_t)jl * lld] = a0[il + (size_t)jl * lld] =
          entry(global_index(il, nb, myrow, pr), global_index(jl, nb, mycol, pc), n);

  /* Workspace query (LWORK = LIWORK = -1), then the solve; JOBZ/UPLO are plain C strings. */
  double wq;
  int iwq, query = -1;
  pipevd_pdsyevd("V", "L", &n, a, &one, &one, desc, w, z, &one, &one, desc, &wq, &query, &iwq,
                 &query, &info);
  int lwork = (int)wq, liwork = iwq;
  double* work = malloc((size_t)lwork * sizeof(double));
  int* iwork = malloc((size_t)liwork * sizeof(int));
  const double t0 = MPI_Wtime();
  pipevd_pdsyevd("V", "L", &n, a, &one, &one, desc, w, z, &one, &one, desc, work, &lwork, iwork,
                 &liwork, &info);
  const double seconds = MPI_Wtime() - t0;

  /* R = A0 Z - Z diag(W), then R = Z^T Z - I */
  for (int jl = 0; jl < nloc; ++jl) {
    const double lambda = w[global_index(jl, nb, mycol, pc)];
    for (int il = 0; il < mloc; ++il) r[il + (size_t)jl * lld] = z[il + (size_t)jl * lld] * lambda;
  }
  const double d_one = 1.0, d_minus_one = -1.0, d_zero = 0.0;
  pdgemm_("N", "N", &n, &n, &n, &d_one, a0, &one, &one, desc, z, &one, &one, desc, &d_minus_one, r,
          &one, &one, desc);
  double* norm_work = malloc((size_t)(mloc + nloc + 1) * sizeof(double));
  const double rnorm = pdlange_("F", &n, &n, r, &one, &one, desc, norm_work);
  const double anorm = pdlange_("F", &n, &n, a0, &one, &one, desc, norm_work);
  pdlaset_("A", &n, &n, &d_zero, &d_minus_one, r, &one, &one, desc);
  pdgemm_("T", "N", &n, &n, &n, &d_one, z, &one, &one, desc, z, &one, &one, desc, &d_one, r, &one,
          &one, desc);
  const double onorm = pdlange_("F", &n, &n, r, &one, &one, desc, norm_work);
  const double res = rnorm / (anorm * n * DBL_EPSILON), orth = onorm / (n * DBL_EPSILON);
  int ok = info == 0 && res < 100.0 && orth < 100.0, all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "pipevd %s: pipevd_pdsyevd n=%d nb=%d grid=%dx%d info=%d residual=%.3g "
        "orthogonality=%.3g time=%.3f s solves=1\n",
        pipevd_version(), n, nb, pr, pc, info, res, orth, seconds);
  free(a), free(a0), free(z), free(r), free(w), free(work), free(iwork), free(norm_work);
  Cblacs_gridexit(ictxt);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
