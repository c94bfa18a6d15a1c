// One decision per call over the caller's grid: the values that shape the computation come from
// one rank, and what each rank sees alone (its GPUs) is reduced, before any path splits. Ranks
// launched with different environments (MPMD, mpirun passing no variable to remote nodes) or that
// see different devices then still take one route with one layout.
#pragma once
#include <mpi.h>

#include "interface/decision.hpp"
#include "interface/policy.hpp"

namespace pipevd {

// Collective over `grid`: the policy parsed from grid rank 0's PIPEVD_* variables on every rank
// (a bad value there is the same error everywhere; the other ranks' variables are not read).
PolicyOrError agreed_policy(MPI_Comm grid);

// Collective over `grid`: what this build offers, with the GPU engine available only where every
// rank sees a device, and gpu_devices the fewest devices any rank sees (engine ranks per node).
EngineAvailability agreed_availability(MPI_Comm grid);

}  // namespace pipevd
