// BLACS' grid creation as a relinked (or LD_PRELOADed) code reaches it: Cblacs_gridinit,
// Cblacs_gridmap and their Fortran names, each forwarded to the real routine, after which the
// outermost grid creation of the thread is prepared for (interface/grid_preparation.hpp). BLACS'
// gridinit makes its grid through gridmap, which may or may not come here (through the PLT with a
// shared ScaLAPACK; bound inside the library with -Bsymbolic, LTO or a static one): the depth
// counts it either way. ScaLAPACK routines (PDGEMR2D) make grids of their own, inside a pipevd
// call as well: only the outermost creation outside a call counts. Prototypes exactly as ScaLAPACK
// 2.2's BLACS/SRC declares them (32-bit Int; the Fortran ORDER is F_CHAR, a plain char*, with no
// hidden length read).
#include "interface/call_scope.hpp"
#include "interface/grid_preparation.hpp"
#include "interface/real_symbol.hpp"

namespace {

using c_gridinit_fn = void (*)(int*, char*, int, int);
using c_gridmap_fn = void (*)(int*, int*, int, int, int);
using f_gridinit_fn = void (*)(int*, char*, int*, int*);
using f_gridmap_fn = void (*)(int*, int*, int*, int*, int*);

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

__attribute__((visibility("default"))) void Cblacs_gridinit(int* ictxt, char* order, int nprow,
                                                            int npcol) {
  static const auto fn = real<c_gridinit_fn>("Cblacs_gridinit");
  create_grid(ictxt, [&] { fn(ictxt, order, nprow, npcol); });
}

__attribute__((visibility("default"))) void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap,
                                                           int nprow, int npcol) {
  static const auto fn = real<c_gridmap_fn>("Cblacs_gridmap");
  create_grid(ictxt, [&] { fn(ictxt, usermap, ldumap, nprow, npcol); });
}

// A Fortran caller passes ORDER's length after NPCOL: BLACS never reads it, nor does this.
__attribute__((visibility("default"))) void blacs_gridinit_(int* ictxt, char* order, int* nprow,
                                                            int* npcol) {
  static const auto fn = real<f_gridinit_fn>("blacs_gridinit_");
  create_grid(ictxt, [&] { fn(ictxt, order, nprow, npcol); });
}

__attribute__((visibility("default"))) void blacs_gridmap_(int* ictxt, int* usermap, int* ldumap,
                                                           int* nprow, int* npcol) {
  static const auto fn = real<f_gridmap_fn>("blacs_gridmap_");
  create_grid(ictxt, [&] { fn(ictxt, usermap, ldumap, nprow, npcol); });
}
}
