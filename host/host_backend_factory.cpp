// core/backend_factory.hpp's host half.
#include "core/backend_factory.hpp"
#include "host/host_backend.hpp"

namespace pipevd {

std::unique_ptr<EngineBackend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace pipevd
