// BLACS' grid creation as a relinked (or LD_PRELOADed) code reaches it: Cblacs_gridinit,
// Cblacs_gridmap and their Fortran names, each forwarded to the real routine, after which the
// outermost grid creation of the thread is prepared for (interface/grid_preparation.hpp). BLACS'
// gridinit makes its grid through gridmap (through the PLT, so here too), and ScaLAPACK routines
// (PDGEMR2D) make grids of their own, inside a pipevd call as well: only the outermost creation
// outside a call counts. Prototypes as ScaLAPACK 2.2's BLACS/SRC (32-bit integers).
#include <cstddef>

#include "interface/call_scope.hpp"
#include "interface/grid_preparation.hpp"
#include "interface/real_symbol.hpp"

namespace {

using c_gridinit_fn = void (*)(int*, const char*, int, int);
using c_gridmap_fn = void (*)(int*, int*, int, int, int);
using f_gridinit_fn = void (*)(int*, const char*, const int*, const int*, std::size_t);
using f_gridmap_fn = void (*)(int*, int*, const int*, const int*, const int*);

template <class Fn>
Fn real(const char* symbol) {
  return reinterpret_cast<Fn>(pipevd::require_real_symbol(symbol));
}

// Grid creations in progress in this thread (gridinit's own gridmap makes two).
thread_local int grid_depth = 0;

// `create` runs the real routine, which writes the new context to *ictxt. Nothing after it may
// throw into the C or Fortran caller.
template <class Create>
void create_grid(int* ictxt, Create create) {
  ++grid_depth;
  create();
  --grid_depth;
  try {
    if (grid_depth == 0 && !pipevd::inside_call()) pipevd::prepare_at_grid_creation(*ictxt);
  } catch (...) {
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void Cblacs_gridinit(int* ictxt, const char* order,
                                                            int nprow, int npcol) {
  static const auto fn = real<c_gridinit_fn>("Cblacs_gridinit");
  create_grid(ictxt, [&] { fn(ictxt, order, nprow, npcol); });
}

__attribute__((visibility("default"))) void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap,
                                                           int nprow, int npcol) {
  static const auto fn = real<c_gridmap_fn>("Cblacs_gridmap");
  create_grid(ictxt, [&] { fn(ictxt, usermap, ldumap, nprow, npcol); });
}

// gfortran passes ORDER's length after the last argument; C callers may omit it, and BLACS reads
// only ORDER's first character.
__attribute__((visibility("default"))) void blacs_gridinit_(int* ictxt, const char* order,
                                                            const int* nprow, const int* npcol,
                                                            std::size_t order_len) {
  static const auto fn = real<f_gridinit_fn>("blacs_gridinit_");
  create_grid(ictxt, [&] { fn(ictxt, order, nprow, npcol, order_len); });
}

__attribute__((visibility("default"))) void blacs_gridmap_(int* ictxt, int* usermap,
                                                           const int* ldumap, const int* nprow,
                                                           const int* npcol) {
  static const auto fn = real<f_gridmap_fn>("blacs_gridmap_");
  create_grid(ictxt, [&] { fn(ictxt, usermap, ldumap, nprow, npcol); });
}
}
