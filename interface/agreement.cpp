#include "interface/agreement.hpp"

#include <string>

#include "core/backend_factory.hpp"

namespace pipevd {

PolicyOrError agreed_policy(MPI_Comm grid) {
  int rank = 0;
  MPI_Comm_rank(grid, &rank);
  std::string snapshot = rank == 0 ? environment_snapshot() : std::string();
  int size = static_cast<int>(snapshot.size());
  MPI_Bcast(&size, 1, MPI_INT, 0, grid);
  snapshot.resize(static_cast<std::size_t>(size));
  MPI_Bcast(snapshot.data(), size, MPI_CHAR, 0, grid);
  return parse_policy_snapshot(snapshot);
}

EngineAvailability agreed_availability(MPI_Comm grid) {
  EngineAvailability a = engine_availability();
  int devices = gpu_visible_devices();
  MPI_Allreduce(MPI_IN_PLACE, &devices, 1, MPI_INT, MPI_MIN, grid);
  a.gpu_devices = devices;
  a.gpu = a.gpu && devices > 0;
  return a;
}

}  // namespace pipevd
