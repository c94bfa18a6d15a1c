// A per-rank stage timeline (PIPEVD_VERBOSE=2): stage intervals in seconds from an origin common
// to all ranks (taken right after a barrier), gathered to one rank and written as JSON, from which
// bench/timeline_plot.py draws the paper's Figure 8 (one row per rank, a bar per stage).
#pragma once
#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

namespace pipevd {

struct TimelineInterval {
  std::string stage;
  std::string thread;  // "main", "dc" for the D&C thread, "release" for the engine's release
  double start = 0, end = 0;
};

class Timeline {
 public:
  // Collective over `comm`: barrier, then the origin (MPI_Wtime and the steady clock together).
  void start(MPI_Comm comm);
  // An interval [t0, t1] in MPI_Wtime() seconds.
  void add(const char* stage, double t0, double t1, const char* thread = "main");
  // An interval in steady-clock time points (threads that must not call MPI).
  void add(const char* stage, std::chrono::steady_clock::time_point t0,
           std::chrono::steady_clock::time_point t1, const char* thread);
  const std::vector<TimelineInterval>& intervals() const { return intervals_; }

  // Collective over `comm` (rank r's row is rank r): gathers every rank's intervals to rank 0,
  // which writes the JSON file at `path`. `device` is the rank's GPU (-1: host); `backend`
  // and `n` go into the file's header.
  void write(MPI_Comm comm, const std::string& path, int device, const std::string& backend,
             long n) const;

  // The file name: `asked` (the policy's PIPEVD_TIMELINE), or pipevd-timeline-<pid>.json in the
  // working directory where it is empty; each "%c" in it becomes `call` (the process's timed
  // calls counted from 1), so that a first call's timeline is not overwritten by the next one's.
  static std::string default_path(const std::string& asked, long call = 1);

 private:
  double origin_ = 0;
  std::chrono::steady_clock::time_point steady_origin_{};
  std::vector<TimelineInterval> intervals_;
};

// Records into `t` when it is not null (the engine passes its options' pointer).
inline void timeline_add(Timeline* t, const char* stage, double t0, double t1) {
  if (t) t->add(stage, t0, t1);
}

}  // namespace pipevd
