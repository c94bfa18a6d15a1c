#include "interface/call_scope.hpp"

namespace pipevd {
namespace {

thread_local bool in_call = false;

}  // namespace

std::mutex& one_call_at_a_time() {
  static std::mutex m;
  return m;
}

bool inside_call() { return in_call; }

CallScope::CallScope() : outer_(!in_call) { in_call = true; }

CallScope::~CallScope() {
  if (outer_) in_call = false;
}

}  // namespace pipevd
