// The engine's NCCL communicators' channel cap by default (PIPEVD_NCCL_CHANNELS,
// ncclConfig_t::maxCTAs): each channel is a set of connections a first call opens, while the
// engine's messages are latency-bound and gain nothing from more channels.
#pragma once

namespace pipevd {

inline constexpr int kDefaultNcclChannels = 8;

}  // namespace pipevd
