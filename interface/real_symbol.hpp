// The real definition of a symbol pipevd interposes (ScaLAPACK's pdsyevd_ and pzheevd_, BLACS'
// grid creation): the next one after libpipevd in symbol search order, or the first one that is not
// libpipevd's where the program linked ScaLAPACK ahead of it.
#pragma once

namespace pipevd {

// The real `symbol`, or nullptr where the process holds none but pipevd's.
void* find_real_symbol(const char* symbol);

// The real `symbol`; where there is none, one line on stderr naming it and abort(): the
// interposer has nothing to forward to.
void* require_real_symbol(const char* symbol);

}  // namespace pipevd
