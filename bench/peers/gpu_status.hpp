// The GPU peers' checks: CUDA calls through base/cuda_check.hpp's PIPEVD_CUDA_CHECK (the library's
// own), cuSOLVER (Dn, Mg, Mp) and NCCL statuses here; both throw base/errors.hpp's typed errors,
// which a peer turns into an Outcome error naming the call.
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>

#include <string>

#include "base/cuda_check.hpp"

namespace pipevd::solvers {

// cuSOLVER (Dn, Mg, Mp) and NCCL status: 0 is success in all of them.
inline void status_check(int s, const char* what) {
  if (s != 0) throw DeviceError(std::string(what) + " returned status " + std::to_string(s));
}

// GPU model of device `dev`, or why there is none.
inline std::string gpu_name(int dev = 0) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "no CUDA device";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "unknown GPU";
  return prop.name;
}
inline int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

// This rank's place on its node and the GPU a one-GPU-per-rank peer takes there: the node-local
// rank modulo the GPUs it sees (-1 where it sees none). Collective over MPI_COMM_WORLD.
struct NodeGpu {
  int local_rank = 0, local_size = 1, gpus = 0, device = -1;
};
inline NodeGpu node_gpu() {
  NodeGpu g;
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g.local_rank);
  MPI_Comm_size(node, &g.local_size);
  MPI_Comm_free(&node);
  g.gpus = device_count();
  g.device = g.gpus ? g.local_rank % g.gpus : -1;
  return g;
}

}  // namespace pipevd::solvers
