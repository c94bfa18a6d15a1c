#include "gpu/kernel_preload.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

namespace pipevd::gpu {
namespace {

// The driver's functions through the runtime's entry-point query: no link to libcuda, and an older
// driver answers "not found" instead of failing to load the library.
template <class F>
F driver_entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

struct Driver {
  CUresult (*module_of)(CUmodule*,
                        CUfunction) = driver_entry<decltype(module_of)>("cuFuncGetModule");
  CUresult (*count)(unsigned int*,
                    CUmodule) = driver_entry<decltype(count)>("cuModuleGetFunctionCount");
  CUresult (*enumerate)(CUfunction*, unsigned int,
                        CUmodule) = driver_entry<decltype(enumerate)>("cuModuleEnumerateFunctions");
  CUresult (*is_loaded)(CUfunctionLoadingState*,
                        CUfunction) = driver_entry<decltype(is_loaded)>("cuFuncIsLoaded");
  CUresult (*load)(CUfunction) = driver_entry<decltype(load)>("cuFuncLoad");
  bool usable() const { return module_of && count && enumerate && is_loaded && load; }
};

const void* const kAnchors[] = {
    bc_back_kernel_anchor(),
    bc_back_blas3_kernel_anchor(),
    bc_back_complex_kernel_anchor(),
    bc_back_complex_tensor_kernel_anchor(),
    bc_back_tensor_kernel_anchor(),
    bulge_chasing_kernel_anchor(),
    bulge_chasing_complex_kernel_anchor(),
    complex_matrix_kernel_anchor(),
    complex_panel_qr_kernel_anchor(),
    gpu_backend_kernel_anchor(),
    panel_qr_kernel_anchor(),
    reflector_blocks_kernel_anchor(),
    row_runs_kernel_anchor(),
    secular_merge_kernel_anchor(),
    sturm_bisection_kernel_anchor(),
    symmetric_product_kernel_anchor(),
    syr2k_kernel_anchor(),
};

// Loads the kernels of `module` and counts them into `out`; false where a step failed.
bool load_module(const Driver& d, CUmodule module, KernelPreload& out) {
  unsigned int count = 0;
  if (d.count(&count, module) != CUDA_SUCCESS) return false;
  std::vector<CUfunction> functions(count);
  if (count > 0 && d.enumerate(functions.data(), count, module) != CUDA_SUCCESS) return false;
  bool ok = true;
  for (CUfunction f : functions) {
    CUfunctionLoadingState state{};
    if (d.is_loaded(&state, f) == CUDA_SUCCESS && state == CU_FUNCTION_LOADING_STATE_LOADED)
      ++out.were_loaded;
    else if (d.load(f) != CUDA_SUCCESS)
      ok = false;
    ++out.functions;
  }
  ++out.modules;
  return ok;
}

}  // namespace

KernelPreload preload_kernels() {
  static const Driver d;
  KernelPreload out;
  if (!d.usable()) return out;
  bool ok = true;
  std::vector<CUmodule> seen;
  for (const void* anchor : kAnchors) {
    cudaFunction_t f = nullptr;
    CUmodule module = nullptr;
    if (cudaGetFuncBySymbol(&f, anchor) != cudaSuccess ||
        d.module_of(&module, reinterpret_cast<CUfunction>(f)) != CUDA_SUCCESS) {
      cudaGetLastError();
      ok = false;
      continue;
    }
    bool again = false;
    for (CUmodule m : seen) again = again || m == module;
    if (again) continue;
    seen.push_back(module);
    ok = load_module(d, module, out) && ok;
  }
  out.complete = ok;
  return out;
}

}  // namespace pipevd::gpu
