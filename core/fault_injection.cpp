#include "core/fault_injection.hpp"

#include "base/errors.hpp"

namespace pipevd {
namespace {
FaultInjection injected;
}  // namespace

void set_fault_injection(const FaultInjection& fault) { injected = fault; }

void inject_fault(const char* step, int engine_rank, long index) {
  const bool here = injected.engine_rank == kEveryEngineRank || engine_rank == injected.engine_rank;
  const bool now = injected.index < 0 || index == injected.index;
  if (injected.engine_rank == -1 || !here || !now || injected.step != step) return;
  std::string what =
      std::string("injected fault at ") + step + " on engine rank " + std::to_string(engine_rank);
  if (index >= 0) what += " (" + std::to_string(index) + ")";
  switch (injected.kind) {
    case FaultInjection::OutOfMemory:
      throw pipevd::OutOfMemory(what);
    case FaultInjection::Communication:
      throw CommunicationError(what);
    case FaultInjection::Device:
      break;
  }
  throw DeviceError(what);
}

}  // namespace pipevd
