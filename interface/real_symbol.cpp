#include "interface/real_symbol.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace pipevd {
namespace {

// True when fn lives in the same object as this file (libpipevd itself, or the program that
// linked pipevd statically).
bool is_ours(void* fn) {
  Dl_info mine{}, theirs{};
  if (!dladdr(reinterpret_cast<void*>(&is_ours), &mine) || !dladdr(fn, &theirs)) return false;
  return mine.dli_fbase == theirs.dli_fbase;
}

}  // namespace

void* find_real_symbol(const char* symbol) {
  void* fn = dlsym(RTLD_NEXT, symbol);
  // A program that linked ScaLAPACK ahead of libpipevd has it before us in search order.
  if (!fn || is_ours(fn)) {
    void* first = dlsym(RTLD_DEFAULT, symbol);
    fn = (first && !is_ours(first)) ? first : nullptr;
  }
  return fn;
}

void* require_real_symbol(const char* symbol) {
  void* fn = find_real_symbol(symbol);
  if (fn) return fn;
  std::fprintf(stderr,
               "pipevd: fatal: the real %s was not found in the process (dlsym RTLD_NEXT/"
               "RTLD_DEFAULT); link ScaLAPACK after -lpipevd (e.g. -lpipevd -lscalapack-openmpi)\n",
               symbol);
  std::fflush(stderr);
  std::abort();
}

}  // namespace pipevd
