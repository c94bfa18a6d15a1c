/* Consumer of an installed pipevd (C): pipevd_pdsyevd on a 1x1 grid for the second-difference
 * matrix tridiag(-1, 2, -1), whose eigenvalues are 2 - 2 cos(k pi / (n + 1)). Exits 0 when INFO = 0
 * and they match. */
#include <math.h>
#include <mpi.h>
#include <pipevd.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridexit(int ictxt);
void descinit_(int*, const int*, const int*, const int*, const int*, const int*, const int*,
               const int*, const int*, int*);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  enum { n = 12 };
  const int nn = n, nb = 4, zero = 0, one = 1, query = -1;
  int ictxt, desc[9], info;
  Cblacs_get(0, 0, &ictxt);
  Cblacs_gridinit(&ictxt, "R", 1, 1);
  descinit_(desc, &nn, &nn, &nb, &nb, &zero, &zero, &ictxt, &nn, &info);
  double a[n * n] = {0}, z[n * n], w[n], wq;
  for (int i = 0; i < n; ++i) {
    a[i + i * n] = 2.0;
    if (i + 1 < n) a[i + 1 + i * n] = a[i + (i + 1) * n] = -1.0;
  }
  int iwq;
  pipevd_pdsyevd("V", "U", &nn, a, &one, &one, desc, w, z, &one, &one, desc, &wq, &query, &iwq,
                 &query, &info);
  int lwork = (int)wq, liwork = iwq;
  double* work = malloc(sizeof(double) * (size_t)lwork);
  int* iwork = malloc(sizeof(int) * (size_t)liwork);
  pipevd_pdsyevd("V", "U", &nn, a, &one, &one, desc, w, z, &one, &one, desc, work, &lwork, iwork,
                 &liwork, &info);
  double worst = 0;
  for (int k = 0; k < n; ++k)
    worst = fmax(worst, fabs(w[k] - (2.0 - 2.0 * cos((k + 1) * M_PI / (n + 1)))));
  printf("consumer_c: pipevd %s info=%d max eigenvalue error=%.2g\n", pipevd_version(), info,
         worst);
  free(work), free(iwork);
  Cblacs_gridexit(ictxt);
  MPI_Finalize();
  return info == 0 && worst < 1e-13 ? 0 : 1;
}
