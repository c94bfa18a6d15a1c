// Stage times inside an adapter's call (Outcome::stages), on MPI's clock.
#pragma once
#include <mpi.h>

#include "bench/peers/solver.hpp"

namespace pipevd::solvers {

// Closes the stage `name` that began at t and starts the next one now.
inline void lap(Outcome& out, const char* name, double& t) {
  const double now = MPI_Wtime();
  out.stages.push_back({name, now - t});
  t = now;
}

}  // namespace pipevd::solvers
