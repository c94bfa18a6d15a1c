// pipevd's own kernels loaded on a device before the engine needs them. Under CUDA's lazy module
// loading (the default) a kernel loads at its first launch, and a load may synchronise the
// context: a side thread's first launch (the D&C's next to BC-back, SBR-back's next to the chase)
// then waits for the long kernels running beside it, and a first call's stages run slower than a
// repeated call's (bench/RESULTS.md, first calls under lazy and eager module loading). Loading
// every kernel of pipevd's modules in the preparing thread, beside NCCL's set-up, takes that wait
// out of a first call; the process's other modules (cuBLAS, NCCL) stay lazy: loading all of them
// (CUDA_MODULE_LOADING=EAGER) costs the context seconds.
#pragma once

namespace pipevd::gpu {

struct KernelPreload {
  int modules = 0;        // pipevd's modules found
  int functions = 0;      // their kernels
  int were_loaded = 0;    // of them, loaded before this call
  bool complete = false;  // every kernel of every module is loaded now
};

// Loads every kernel of pipevd's modules in the current device's context. Without the driver's
// entry points (before CUDA 12.4) or where a step fails, `complete` is false and the rest load at
// their first launch, as without this; nothing is thrown.
KernelPreload preload_kernels();

// One kernel of each translation unit that has kernels: without separate compilation each is its
// own module, found through it.
const void* bc_back_kernel_anchor();
const void* bc_back_blas3_kernel_anchor();
const void* bc_back_complex_kernel_anchor();
const void* bc_back_complex_tensor_kernel_anchor();
const void* bc_back_tensor_kernel_anchor();
const void* bulge_chasing_kernel_anchor();
const void* bulge_chasing_complex_kernel_anchor();
const void* complex_matrix_kernel_anchor();
const void* complex_panel_qr_kernel_anchor();
const void* gpu_backend_kernel_anchor();
const void* panel_qr_kernel_anchor();
const void* reflector_blocks_kernel_anchor();
const void* row_runs_kernel_anchor();
const void* secular_merge_kernel_anchor();
const void* sturm_bisection_kernel_anchor();
const void* symmetric_product_kernel_anchor();
const void* syr2k_kernel_anchor();

}  // namespace pipevd::gpu
