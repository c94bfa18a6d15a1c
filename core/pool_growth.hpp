// How the device's preparation grows pipevd's stream-ordered pool before a call's engine
// (interface/device_preparation): in one step to the plan's peak, which the engine waits for, or
// staged, first to what DBBR's stage holds (the engine starts once that is mapped) and then, beside
// DBBR, to the peak. The driver maps several processes' pool growth one after another, so on a
// node of several engine ranks the whole peak's growth outlasts the redistribution it hides behind;
// DBBR's stage needs only its share of it at once. Pure, for tests.
#pragma once

namespace pipevd {

struct PoolGrowth {
  long first_bytes = 0;  // the first step, which the engine waits for (the peak where not staged)
  long peak_bytes = 0;   // the plan's peak, the pool's size once the second step is done
  bool staged = false;   // a second step grows the pool to peak_bytes beside DBBR
  // Where staged was asked but the growth is whole: why ("" otherwise).
  const char* whole_because = "";
};

// The growth of a call whose plan peaks at `peak_bytes`, its DBBR stage (the buffers allocated
// before DBBR and those DBBR holds, with the plan's margin for the libraries) at `dbbr_bytes` (0:
// no such stage, the one-stage path), and whose later stages allocate no single buffer larger than
// `largest_later_bytes`. `usable_bytes`: the engine's usable device memory (core/memory_check.hpp's
// usable_engine_bytes; < 0 unknown). Staged only where asked and where the device keeps room for
// one more later buffer beside the peak, with the route's margin: a pool allocation is one
// contiguous range, so a later buffer that neither of the two steps' ranges can hold whole is
// mapped anew.
PoolGrowth plan_pool_growth(bool staged_asked, long peak_bytes, long dbbr_bytes,
                            long largest_later_bytes, long usable_bytes);

// What a pool of `reserved_bytes` lacks of `peak_bytes` (0 where it holds that much). Not the peak
// itself: the pool's free ranges serve what they can, so an allocation of the peak while DBBR
// holds memory would map the peak once more.
long pool_rest_bytes(long peak_bytes, long reserved_bytes);

// The second step's allocation where it is due, in a pool of `reserved_bytes` of which
// `free_bytes` are not in use: what it lacks of `peak_bytes`, asked for once that is more than
// the pool's free memory, so that no free range can serve it and it is mapped anew (DBBR's buffers
// draw on the first step's range as its stage goes), or once `needed` (DBBR's end: the later
// stages allocate now) whatever the free ranges hold. 0: nothing lacks; -1: not yet.
long pool_rest_due(long peak_bytes, long reserved_bytes, long free_bytes, bool needed);

}  // namespace pipevd
