// The GPU instance of a test written once over the backends, where no CUDA device is visible:
// skipped, or failed with PIPEVD_REQUIRE_GPU=1 (a run on a GPU machine, where a skip would hide a
// problem). Called from the fixture's SetUp, after which gtest runs no test body that was skipped
// or failed; the skip's message is what ctest's SKIP_REGULAR_EXPRESSION of those tests matches.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "core/backend_factory.hpp"

namespace pipevd::test {

inline void skip_gpu_instance_without_device() {
  if (gpu_visible_devices() > 0) return;
  const char* require = std::getenv("PIPEVD_REQUIRE_GPU");
  if (require && std::strcmp(require, "1") == 0)
    FAIL() << "no CUDA device, and PIPEVD_REQUIRE_GPU=1";
  GTEST_SKIP() << "no CUDA device: skipped";
}

}  // namespace pipevd::test
