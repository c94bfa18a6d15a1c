#include "gpu/gpu_context.hpp"

#include <cudaTypedefs.h>

#include <map>
#include <memory>
#include <mutex>

namespace pipevd::gpu {
void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line) {
  const std::string what = "pipevd: cuBLAS error " + std::string(cublasGetStatusName(s)) + " (" +
                           cublasGetStatusString(s) + ") in " + gpu_call_site(expr, file, line);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(what);
  throw DeviceError(what);
}

const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR:
      return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_LICENSE:
      return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
      return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default:
      return "unknown cusolverStatus_t";
  }
}

void throw_cusolver_error(cusolverStatus_t s, const char* expr, const char* file, int line) {
  const std::string what = "pipevd: cuSOLVER error " + std::string(cusolver_status_name(s)) + " (" +
                           std::to_string(static_cast<int>(s)) + ") in " +
                           gpu_call_site(expr, file, line);
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfMemory(what);
  throw DeviceError(what);
}

bool thread_has_context() {
  static const PFN_cuCtxGetCurrent_v4000 get_current = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 4000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(fn);
  }();
  CUcontext current = nullptr;
  return !get_current || get_current(&current) != CUDA_SUCCESS || current != nullptr;
}

ScopedDevice::ScopedDevice(int device) {
  PIPEVD_CUDA_CHECK(cudaGetDevice(&previous_));
  const bool had_context = thread_has_context();
  if (previous_ != device) {
    PIPEVD_CUDA_CHECK(cudaSetDevice(device));
    changed_ = had_context;
  }
}

ScopedDevice::ScopedDevice(int device, const std::nothrow_t&) noexcept {
  if (device < 0 || cudaGetDevice(&previous_) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  const bool had_context = thread_has_context();
  if (previous_ != device) {
    if (cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    changed_ = had_context;
  }
}

ScopedDevice::~ScopedDevice() {
  if (changed_) cudaSetDevice(previous_);  // a destructor must not throw; the set cannot fail here
}

namespace {
std::mutex& contexts_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<int, GpuContext*>& contexts() {
  static auto* all = new std::map<int, GpuContext*>();  // leaked on purpose: see the class comment
  return *all;
}
}  // namespace

GpuContext& GpuContext::for_device(int device) {
  std::lock_guard<std::mutex> lock(contexts_mutex());
  auto* contexts = &pipevd::gpu::contexts();
  auto it = contexts->find(device);
  if (it != contexts->end()) return *it->second;
  auto* ctx = new GpuContext(device, kDefaultLanes);
  contexts->emplace(device, ctx);
  return *ctx;
}

GpuContext::GpuContext(int device, int nlanes) : device_(device) {
  int count = 0;
  PIPEVD_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    throw GpuError("pipevd: GPU device " + std::to_string(device) + " does not exist (" +
                   std::to_string(count) + " visible)");
  ScopedDevice guard(device);
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&props_, device));
  lanes_.resize(static_cast<std::size_t>(nlanes));
  for (Lane& l : lanes_) {
    PIPEVD_CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    PIPEVD_CUBLAS_CHECK(cublasCreate(&l.blas));
    PIPEVD_CUBLAS_CHECK(cublasSetStream(l.blas, l.stream));
    PIPEVD_CUDA_CHECK(cudaEventCreateWithFlags(&l.done, cudaEventDisableTiming));
  }
  PIPEVD_CUDA_CHECK(cudaEventCreateWithFlags(&fork_event_, cudaEventDisableTiming));
  PIPEVD_CUSOLVER_CHECK(cusolverDnCreate(&solver_));
  cudaMemPoolProps pp{};
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = device;
  PIPEVD_CUDA_CHECK(cudaMemPoolCreate(&pool_, &pp));
  // Kept between the engine's many allocations of one call (no device-wide synchronisation per
  // free); trim_device_pools() hands it back.
  std::uint64_t keep = UINT64_MAX;
  PIPEVD_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
}

cudaError_t pool_malloc(void** p, std::size_t bytes, cudaStream_t stream) {
  // The stream's device, as cudaMallocAsync takes it: a thread's current device may be another
  // (a new thread's is 0), and memory of another device's pool faults in this stream's kernels.
  int device = 0;
  const cudaError_t e = stream ? cudaStreamGetDevice(stream, &device) : cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  return cudaMallocFromPoolAsync(p, bytes, GpuContext::for_device(device).pool(), stream);
}

void trim_device_pools() {
  std::lock_guard<std::mutex> lock(contexts_mutex());
  for (auto& [device, ctx] : contexts()) cudaMemPoolTrimTo(ctx->pool(), 0);
}

void trim_pool_after_call(cudaMemPool_t pool) { cudaMemPoolTrimTo(pool, kPoolKeptBetweenCalls); }

namespace {
// The pool of `device`'s context, nullptr where pipevd has none there (no context is made).
cudaMemPool_t existing_pool(int device) {
  std::lock_guard<std::mutex> lock(contexts_mutex());
  const auto it = contexts().find(device);
  return it == contexts().end() ? nullptr : it->second->pool();
}
}  // namespace

long pool_free_bytes(int device) {
  const cudaMemPool_t pool = existing_pool(device);
  if (!pool) return 0;
  std::uint64_t reserved = 0, used = 0;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return reserved > used ? static_cast<long>(reserved - used) : 0;
}

long pool_reserved_bytes(int device) {
  const cudaMemPool_t pool = existing_pool(device);
  std::uint64_t reserved = 0;
  if (!pool) return 0;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<long>(reserved);
}

cusolverDnHandle_t GpuContext::solver(cudaStream_t stream) {
  PIPEVD_CUSOLVER_CHECK(cusolverDnSetStream(solver_, stream));
  return solver_;
}

void GpuContext::fork(cudaStream_t from, int nlanes) {
  PIPEVD_CUDA_CHECK(cudaEventRecord(fork_event_, from));
  for (int i = 0; i < nlanes; ++i)
    PIPEVD_CUDA_CHECK(cudaStreamWaitEvent(lane(i).stream, fork_event_, 0));
}

void GpuContext::join(cudaStream_t into, int nlanes) {
  for (int i = 0; i < nlanes; ++i) {
    PIPEVD_CUDA_CHECK(cudaEventRecord(lane(i).done, lane(i).stream));
    PIPEVD_CUDA_CHECK(cudaStreamWaitEvent(into, lane(i).done, 0));
  }
}

}  // namespace pipevd::gpu
