#include "core/column_exchange.hpp"

#include <stdexcept>

#include "core/failure_agreement.hpp"
#include "core/fault_injection.hpp"

namespace pipevd {
namespace {

template <class T>
void exchange(EngineBackend& be, const DbbrColumns& from, const DbbrColumns& to, int rank,
              const T* src, T* dst, DbbrProfiler* profiler) {
  if (from.n() != to.n() || from.ranks() != to.ranks())
    throw std::invalid_argument("exchange_columns: distributions of other n or ranks");
  const long n = from.n();
  DeferredFailure failure;
  failure.run([&] { inject_fault("column_exchange", rank); });
  {
    DbbrTimed time(profiler, DbbrPart::Copies);
    for (const ColumnMove& mv : column_moves(from, to)) {
      const T* out = src + mv.from_local * n;
      T* in = dst + mv.to_local * n;
      if (mv.from == rank && mv.to == rank)
        failure.run([&] { be.copy_matrix(n, mv.width(), out, n, in, n); });
      else if (mv.from == rank)
        be.send(out, n * mv.width(), mv.to, 0);
      else if (mv.to == rank)
        be.recv(in, n * mv.width(), mv.from, 0);
    }
  }
  failure.agree(be.communicator());
}

}  // namespace

void exchange_columns(EngineBackend& be, const DbbrColumns& from, const DbbrColumns& to, int rank,
                      const double* src, double* dst, DbbrProfiler* profiler) {
  exchange(be, from, to, rank, src, dst, profiler);
}

void exchange_columns(EngineBackend& be, const DbbrColumns& from, const DbbrColumns& to, int rank,
                      const Complex* src, Complex* dst, DbbrProfiler* profiler) {
  exchange(be, from, to, rank, src, dst, profiler);
}

}  // namespace pipevd
