// pipevd's typed errors, the vocabulary every layer throws and the route tells apart (never by
// matching message text): out of memory (the call may still go to ScaLAPACK), a device or a
// communication failure, a bad configuration. Default visibility: they may be caught outside the
// library that threw them.
#pragma once
#include <stdexcept>

namespace pipevd {

class __attribute__((visibility("default"))) Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An allocation failed or would not fit (host, device, a library's workspace or handle).
class __attribute__((visibility("default"))) OutOfMemory : public Error {
 public:
  using Error::Error;
};

// A CUDA, cuBLAS or cuSOLVER call failed (other than for memory).
class __attribute__((visibility("default"))) DeviceError : public Error {
 public:
  using Error::Error;
};

// NCCL or MPI between engine ranks failed.
class __attribute__((visibility("default"))) CommunicationError : public Error {
 public:
  using Error::Error;
};

// A setting or the build cannot serve the call (a bad PIPEVD_* value, an engine that is absent).
class __attribute__((visibility("default"))) ConfigurationError : public Error {
 public:
  using Error::Error;
};

}  // namespace pipevd
