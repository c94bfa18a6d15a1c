#include "core/timeline.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace pipevd {

void Timeline::start(MPI_Comm comm) {
  MPI_Barrier(comm);
  origin_ = MPI_Wtime();
  steady_origin_ = std::chrono::steady_clock::now();
  intervals_.clear();
}

void Timeline::add(const char* stage, double t0, double t1, const char* thread) {
  intervals_.push_back({stage, thread, t0 - origin_, t1 - origin_});
}

void Timeline::add(const char* stage, std::chrono::steady_clock::time_point t0,
                   std::chrono::steady_clock::time_point t1, const char* thread) {
  using sec = std::chrono::duration<double>;
  intervals_.push_back(
      {stage, thread, sec(t0 - steady_origin_).count(), sec(t1 - steady_origin_).count()});
}

std::string Timeline::default_path(const std::string& asked, long call) {
  if (asked.empty())
    return "pipevd-timeline-" + std::to_string(static_cast<long>(getpid())) + ".json";
  std::string path = asked;
  const std::string number = std::to_string(call);
  for (std::size_t at = path.find("%c"); at != std::string::npos;
       at = path.find("%c", at + number.size()))
    path.replace(at, 2, number);
  return path;
}

void Timeline::write(MPI_Comm comm, const std::string& path, int device, const std::string& backend,
                     long n) const {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // One JSON object per interval, this rank's, comma-separated.
  std::ostringstream os;
  os.precision(9);
  for (std::size_t i = 0; i < intervals_.size(); ++i) {
    const TimelineInterval& v = intervals_[i];
    os << (i ? ",\n" : "") << "    {\"rank\": " << rank << ", \"gpu\": " << device
       << ", \"stage\": \"" << v.stage << "\", \"thread\": \"" << v.thread
       << "\", \"start\": " << std::fixed << v.start << ", \"end\": " << v.end << "}";
  }
  const std::string mine = os.str();
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += lens[r];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, rank == 0 ? &all[0] : nullptr, lens.data(), displs.data(),
              MPI_CHAR, 0, comm);
  if (rank != 0) return;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "pipevd: cannot write the timeline to %s\n", path.c_str());
    return;
  }
  std::fprintf(f,
               "{\n  \"format\": \"pipevd-timeline-1\",\n  \"backend\": \"%s\",\n  \"n\": %ld,\n",
               backend.c_str(), n);
  std::fprintf(f, "  \"ranks\": %d,\n  \"origin\": \"MPI_Wtime after a barrier\",\n", size);
  std::fprintf(f, "  \"intervals\": [\n");
  bool first = true;
  for (int r = 0; r < size; ++r) {
    if (lens[r] == 0) continue;
    std::fprintf(f, "%s%.*s", first ? "" : ",\n", lens[r], all.data() + displs[r]);
    first = false;
  }
  std::fprintf(f, "\n  ]\n}\n");
  std::fclose(f);
  std::fprintf(stderr, "pipevd: timeline of %d ranks written to %s\n", size, path.c_str());
}

}  // namespace pipevd
