// What the engine's device pool costs at a call's ends on a node of several GPUs: each MPI rank
// (one GPU each, device = node-local rank) grows a stream-ordered pool by one allocation of
// --gib GiB (as gpu_grow_pool does beside the redistribution in), then trims it to nothing (as the
// engine's release does), every rank at once after a barrier, --reps times. Printed per rank and
// repetition: the growth's and the trim's seconds. Run with 1 rank and with 4 on the same machine:
// equal times mean the ranks' pool operations run side by side; four times one rank's mean the
// driver takes them one after another.
//   mpirun -n 4 build-gpu/bench/pool_bench --gib 24 --reps 3
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "pool_bench: %s: %s\n", what, cudaGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  double gib = 24;
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--gib")) gib = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  int rank = 0, ranks = 1, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  if (devices == 0) {
    if (rank == 0) std::printf("pool_bench: no GPU\n");
    MPI_Finalize();
    return 0;
  }
  const int device = local % devices;
  check(cudaSetDevice(device), "set device");
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool;
  check(cudaMemPoolCreate(&pool, &props), "pool");
  unsigned long long keep = ~0ULL;  // the pool keeps what is freed, as the engine's does
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "threshold");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "stream");
  const std::size_t bytes = static_cast<std::size_t>(gib * (1ULL << 30));
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    void* p = nullptr;
    check(cudaMallocFromPoolAsync(&p, bytes, pool, stream), "grow");
    check(cudaFreeAsync(p, stream), "free");
    check(cudaStreamSynchronize(stream), "sync");
    const double grow = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    check(cudaMemPoolTrimTo(pool, 0), "trim");
    const double trim = MPI_Wtime() - t;
    std::printf("pool_bench ranks=%d rank=%d device=%d gib=%.1f rep=%d grow_s=%.4f trim_s=%.4f\n",
                ranks, rank, device, gib, r, grow, trim);
    std::fflush(stdout);
  }
  cudaStreamDestroy(stream);
  cudaMemPoolDestroy(pool);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
