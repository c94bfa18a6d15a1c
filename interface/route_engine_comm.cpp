#include "interface/route_engine_comm.hpp"

#include <climits>

#include "base/errors.hpp"
#include "core/backend_factory.hpp"
#include "redistribute/engine_comm.hpp"

namespace pipevd {

const EngineComm& route_engine_comm(int ictxt, const Policy& policy, bool on_gpu, int devices) {
  if (!on_gpu)
    return engine_comm_for(ictxt, policy.engine_ranks > 0 ? policy.engine_ranks : INT_MAX);
  if (devices <= 0) throw ConfigurationError("no GPU engine in this build or no visible device");
  return engine_comm_for_gpus(ictxt, gpu_visible_uuids(), policy.engine_ranks, policy.gpu_sharing);
}

bool engine_uses_nccl(const EngineComm& ec, const Policy& policy) {
  return ec.engine_ranks() > 1 && !policy.gpu_sharing;
}

}  // namespace pipevd
