#include "gpu/pinned_staging.hpp"

#include <cuda_runtime.h>

#include <map>
#include <mutex>

namespace pipevd::gpu {
namespace {

struct Kept {
  std::mutex mutex;
  std::multimap<long, double*> blocks;  // by size in doubles
};
Kept& kept() {
  static auto* k = new Kept();  // leaked on purpose: freeing at exit could meet a torn-down runtime
  return *k;
}

void free_all(Kept& k) {
  for (auto& [count, p] : k.blocks) cudaFreeHost(p);
  k.blocks.clear();
}

}  // namespace

double* take_pinned_staging(long count, long* got) {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  auto it = k.blocks.lower_bound(count);
  if (it != k.blocks.end() && it->first <= 2 * count) {
    double* p = it->second;
    *got = it->first;
    k.blocks.erase(it);
    return p;
  }
  const std::size_t bytes = sizeof(double) * static_cast<std::size_t>(count);
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
    cudaGetLastError();
    free_all(k);  // pinned memory can be limited: the kept blocks make room
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
  }
  *got = count;
  return static_cast<double*>(p);
}

void keep_pinned_staging(double* p, long count) {
  if (!p) return;
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  k.blocks.emplace(count, p);
}

void release_pinned_staging() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  free_all(k);
}

std::size_t pinned_staging_bytes() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  std::size_t bytes = 0;
  for (const auto& [count, p] : k.blocks) bytes += sizeof(double) * static_cast<std::size_t>(count);
  return bytes;
}

}  // namespace pipevd::gpu
