// Whether the bench's GPU helpers (bench/gpu_accuracy, bench/gpu_spectrum_matrix) have a device to
// run on: one answer for the accuracy check and the matrix formation alike.
#pragma once

namespace pipevd::bench {

// Whether a CUDA device is visible to this process.
bool gpu_device_visible();

}  // namespace pipevd::bench
