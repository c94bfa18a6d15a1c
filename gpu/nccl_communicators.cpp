#include "gpu/nccl_communicators.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/cuda_check.hpp"
#include "gpu/gpu_context.hpp"

namespace pipevd::gpu {

#ifdef PIPEVD_GPU_NCCL
namespace {

// Cached as an attribute of the MPI communicator, so a freed communicator whose handle MPI hands
// out again never finds a stale NCCL communicator; the NCCL communicator itself is kept
// (destroying it inside MPI_Finalize's attribute callbacks could wait on a torn-down runtime). An
// entry is a future: begun in one thread, it may be made in another.
struct NcclCache {
  std::map<int, std::shared_future<ncclComm_t>> by_device;
};

std::mutex& nccl_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The caches in the order they were made (the same on every process of a communicator), for
// release_nccl_communicators.
std::vector<NcclCache*>& nccl_caches() {
  static std::vector<NcclCache*> all;
  return all;
}

int nccl_keyval() {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(
        MPI_COMM_NULL_COPY_FN,
        [](MPI_Comm, int, void* value, void*) -> int {
          auto* cache = static_cast<NcclCache*>(value);
          auto& all = nccl_caches();
          all.erase(std::remove(all.begin(), all.end(), cache), all.end());
          delete cache;
          return MPI_SUCCESS;
        },
        &k, nullptr);
    return k;
  }();
  return keyval;
}

NcclCache& cache_of(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, nccl_keyval(), &value, &found);
  if (found) return *static_cast<NcclCache*>(value);
  auto* cache = new NcclCache();
  MPI_Comm_set_attr(comm, nccl_keyval(), cache);
  nccl_caches().push_back(cache);
  return *cache;
}

struct Boot {
  ncclUniqueId id;
  int size = 1, rank = 0;
};

// Rank 0's unique id over MPI, with its result, so that a failure there stops every rank, not
// only 0.
Boot boot_of(MPI_Comm comm) {
  struct {
    ncclUniqueId id;
    int result;
  } b;
  std::memset(&b, 0, sizeof b);
  Boot boot;
  MPI_Comm_rank(comm, &boot.rank);
  MPI_Comm_size(comm, &boot.size);
  if (boot.rank == 0) b.result = static_cast<int>(ncclGetUniqueId(&b.id));
  MPI_Bcast(&b, static_cast<int>(sizeof(b)), MPI_BYTE, 0, comm);
  const auto ncclGetUniqueId_on_rank_0 = static_cast<ncclResult_t>(b.result);
  PIPEVD_NCCL_CHECK(ncclGetUniqueId_on_rank_0);
  boot.id = b.id;
  return boot;
}

std::atomic<long> communicators_made{0};

ncclComm_t make_communicator(const Boot& boot, int channels) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (channels > 0) config.maxCTAs = channels;
  ncclComm_t c = nullptr;
  PIPEVD_NCCL_CHECK(ncclCommInitRankConfig(&c, boot.size, boot.id, boot.rank, &config));
  ++communicators_made;
  return c;
}

// Device memory and a stream for the messages that open a communicator's connections.
class ConnectionScratch {
 public:
  static constexpr std::size_t kSmall = 64, kLarge = std::size_t(1) << 17;  // doubles
  ConnectionScratch() {
    PIPEVD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (cudaMalloc(&buf_, sizeof(double) * kLarge) != cudaSuccess) {
      cudaGetLastError();
      cudaStreamDestroy(stream_);
      throw OutOfMemory("pipevd: no device memory for NCCL's first messages");
    }
  }
  ~ConnectionScratch() {
    cudaFree(buf_);
    cudaStreamDestroy(stream_);
  }
  ConnectionScratch(const ConnectionScratch&) = delete;
  ConnectionScratch& operator=(const ConnectionScratch&) = delete;
  double* send() const { return buf_; }
  cudaStream_t stream() const { return stream_; }

 private:
  double* buf_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

// NCCL connects a ring or a tree on its first message there (runtime connection): without this
// the first call's first panels pay for it between the engine ranks' messages. A broadcast and an
// all-reduce, at a size of each protocol class, open what the engine's messages use (DBBR's
// broadcasts, its row gather and its W^H A W sums, the final product's broadcasts) here instead, in
// the thread beside the redistribution; point-to-point connections (DBBR's owner scheme only) are
// left to their first message. The scratch is allocated before the communicator is made, so that
// no rank fails between collectives the others are in.
void open_connections(ncclComm_t c, const ConnectionScratch& scratch) {
  for (const std::size_t count : {ConnectionScratch::kSmall, ConnectionScratch::kLarge}) {
    PIPEVD_NCCL_CHECK(
        ncclBroadcast(scratch.send(), scratch.send(), count, ncclDouble, 0, c, scratch.stream()));
    PIPEVD_NCCL_CHECK(ncclAllReduce(scratch.send(), scratch.send(), count, ncclDouble, ncclSum, c,
                                    scratch.stream()));
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(scratch.stream()));
}

// agree_on_nccl_communicator with nccl_mutex held. Every entry is settled here: a begun one's
// thread has been joined (the route joins it before the engine; the next call's begin comes after).
void agree_on_cached(NcclCache& cache, MPI_Comm comm, int device) {
  int have = 0;
  if (auto it = cache.by_device.find(device); it != cache.by_device.end()) {
    try {
      it->second.get();
      have = 1;
    } catch (...) {  // its making failed on this rank
      cache.by_device.erase(it);
    }
  }
  int all = have;
  MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all == 1 || have == 0) return;
  auto it = cache.by_device.find(device);
  ScopedDevice guard(device);
  ncclCommAbort(it->second.get());  // local; its peers may be gone: nothing to wait for
  cache.by_device.erase(it);
}

}  // namespace

void agree_on_nccl_communicator(MPI_Comm comm, int device) {
  std::lock_guard<std::mutex> lock(nccl_mutex());
  agree_on_cached(cache_of(comm), comm, device);
}

ncclComm_t nccl_for(MPI_Comm comm, int device, int channels) {
  std::lock_guard<std::mutex> lock(nccl_mutex());
  NcclCache& cache = cache_of(comm);
  auto it = cache.by_device.find(device);
  if (it == cache.by_device.end()) {  // made here; a failure leaves no entry behind
    const ncclComm_t c = make_communicator(boot_of(comm), channels);
    std::promise<ncclComm_t> made;
    made.set_value(c);
    cache.by_device.emplace(device, made.get_future().share());
    return c;
  }
  const std::shared_future<ncclComm_t> comm_made = it->second;
  try {
    return comm_made.get();  // a begun one: its thread has been joined before the engine starts
  } catch (...) {
    cache.by_device.erase(device);  // the next call tries again, on every rank alike
    throw;
  }
}

std::function<void()> begin_nccl_communicator(MPI_Comm comm, int device, int channels) {
  std::lock_guard<std::mutex> lock(nccl_mutex());
  NcclCache& cache = cache_of(comm);
  agree_on_cached(cache, comm, device);
  if (cache.by_device.count(device)) return {};
  // Everything that may throw comes before the unique id goes round: after it, every rank must
  // make the communicator or its peers wait in ncclCommInitRank.
  auto boot = std::make_shared<Boot>();
  auto made = std::make_shared<std::promise<ncclComm_t>>();
  std::function<void()> make = [made, boot, device, channels] {
    try {
      if (cudaSetDevice(device) != cudaSuccess) cudaGetLastError();  // NCCL reports it below
      const ConnectionScratch scratch;
      const ncclComm_t c = make_communicator(*boot, channels);
      try {
        open_connections(c, scratch);
      } catch (...) {
        ncclCommAbort(c);
        throw;
      }
      made->set_value(c);
    } catch (...) {
      made->set_exception(std::current_exception());
    }
  };
  cache.by_device.emplace(device, made->get_future().share());
  try {
    *boot = boot_of(comm);  // throws on every rank alike
  } catch (...) {
    cache.by_device.erase(device);
    throw;
  }
  return make;
}

bool nccl_communicator_held(MPI_Comm comm, int device) {
  std::lock_guard<std::mutex> lock(nccl_mutex());
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, nccl_keyval(), &value, &found);
  return found && static_cast<NcclCache*>(value)->by_device.count(device) > 0;
}

long nccl_communicators_made() { return communicators_made; }

void release_nccl_communicators() {
  std::lock_guard<std::mutex> lock(nccl_mutex());
  for (NcclCache* cache : nccl_caches()) {
    for (auto& [device, comm_made] : cache->by_device) {
      try {
        const ncclComm_t c = comm_made.get();
        ScopedDevice guard(device);
        ncclCommDestroy(c);              // nothing to report: the communicator is gone either way
      } catch (const std::exception&) {  // never made: nothing to destroy
      }
    }
    cache->by_device.clear();
  }
}

#else

std::function<void()> begin_nccl_communicator(MPI_Comm, int, int) { return {}; }
bool nccl_communicator_held(MPI_Comm, int) { return false; }
long nccl_communicators_made() { return 0; }
void release_nccl_communicators() {}

#endif

}  // namespace pipevd::gpu
