// The kept host buffers' pinning on the GPU (redistribute/kept_buffer.hpp's KeptMemoryPinning):
// cudaHostRegister of a slot, portable so that every context of the process sees it pinned, made
// with the engine rank's device current so that a pinning thread makes no context on device 0.
#pragma once

namespace pipevd::gpu {

// Installs the pinning for memory the engine on `device` copies to and from (the latest device).
void install_kept_memory_pinning(int device);

}  // namespace pipevd::gpu
