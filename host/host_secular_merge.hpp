// The host backend's SecularMerge (core/secular_merge.hpp): the GPU merge's per-root solver and
// column formulas run serially in host memory, so the host tests check the device path's logic.
#pragma once
#include <memory>

#include "core/secular_merge.hpp"

namespace pipevd {

std::unique_ptr<SecularMerge> make_host_secular_merge();

}  // namespace pipevd
