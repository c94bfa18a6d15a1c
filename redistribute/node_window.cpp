#include "redistribute/node_window.hpp"

#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/page_populate.hpp"
#include "redistribute/node_split.hpp"
#include "redistribute/parallel_pieces.hpp"

namespace pipevd {

namespace {

// What is kept on a communicator.
struct NodeState {
  int ranks_on_node = 0;
  MPI_Comm node = MPI_COMM_NULL;  // comm's processes on this node
  NodeWindow window;
  bool unavailable = false;  // the MPI refused a shared window once: not asked again
};

void free_window(NodeWindow& w) {
  if (w.win != MPI_WIN_NULL) MPI_Win_free(&w.win);
  w = NodeWindow{};
}

// Whether the shared memory file system (Open MPI's default for shared windows) has room for
// `bytes` more: a window larger than it would be allocated but end in SIGBUS when touched.
bool room_in_dev_shm(long bytes) {
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) return true;  // elsewhere: the MPI's business
  const double free = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  return static_cast<double>(bytes) + (64 << 20) <= free;
}

// The states in the order their communicators first asked for a window: the same order on every
// process of a communicator, so freeing them in it (each free collective) cannot cross.
std::vector<std::pair<MPI_Comm, NodeState*>>& states() {
  static std::vector<std::pair<MPI_Comm, NodeState*>> all;
  return all;
}

int delete_state(MPI_Comm, int, void* value, void*) {
  auto* s = static_cast<NodeState*>(value);
  free_window(s->window);
  if (s->node != MPI_COMM_NULL) MPI_Comm_free(&s->node);
  auto& all = states();
  all.erase(std::remove_if(all.begin(), all.end(), [s](const auto& e) { return e.second == s; }),
            all.end());
  delete s;
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  if (key == MPI_KEYVAL_INVALID)
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &key, nullptr);
  return key;
}

NodeState& state_of(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, keyval(), &value, &found);
  if (found) return *static_cast<NodeState*>(value);
  auto* s = new NodeState;
  s->node = split_by_node(comm, 0);
  MPI_Comm_size(s->node, &s->ranks_on_node);
  MPI_Comm_set_attr(comm, keyval(), s);
  states().emplace_back(comm, s);
  return *s;
}

}  // namespace

int ranks_on_this_node(MPI_Comm comm) { return state_of(comm).ranks_on_node; }

bool several_on_one_node(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size > 1 && ranks_on_this_node(comm) == size;
}

MPI_Comm node_comm_of(MPI_Comm comm) { return state_of(comm).node; }

long node_window_segment(MPI_Comm comm) {
  const NodeState& s = state_of(comm);
  if (s.window.win == MPI_WIN_NULL) return 0;
  int me = 0;
  MPI_Comm_rank(comm, &me);
  return s.window.elements[me];
}

const NodeWindow* node_window(MPI_Comm comm, long elements, int threads, long limit) {
  NodeState& s = state_of(comm);
  int size = 0, me = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  if (s.ranks_on_node != size) throw std::logic_error("node_window: comm spans several nodes");
  if (s.unavailable) return nullptr;
  // Every rank takes part in a new window when any one needs more (the allocation is
  // collective); this also orders the previous call's reads before this call's writes.
  int grow = s.window.win == MPI_WIN_NULL || s.window.elements[me] < elements;
  MPI_Allreduce(MPI_IN_PLACE, &grow, 1, MPI_INT, MPI_MAX, comm);
  if (!grow) return &s.window;
  const long keep = s.window.win == MPI_WIN_NULL ? 0 : s.window.elements[me];
  free_window(s.window);
  // Each segment on its own pages (noncontig), a multiple of 2 MiB past 4 MiB so the kernel may
  // back it with huge pages.
  long bytes = std::max(elements, keep) * static_cast<long>(sizeof(double));
  const long huge = 2L << 20, rounded = (bytes + huge - 1) / huge * huge;
  if (bytes >= 2 * huge && (limit <= 0 || rounded <= limit * static_cast<long>(sizeof(double))))
    bytes = rounded;
  long everyone = bytes;
  MPI_Allreduce(MPI_IN_PLACE, &everyone, 1, MPI_LONG, MPI_SUM, comm);
  int room = room_in_dev_shm(everyone);
  MPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_INT, MPI_MIN, comm);
  if (!room) return nullptr;  // messages this time; a smaller call may fit
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  double* mine = nullptr;
  // An MPI without shared windows (or out of /dev/shm) answers with an error, not an abort: the
  // caller then moves messages instead. Every rank learns whether all got theirs.
  MPI_Errhandler was;
  MPI_Comm_get_errhandler(comm, &was);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int failed = MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), sizeof(double), info, comm,
                                       &mine, &s.window.win) != MPI_SUCCESS;
  MPI_Comm_set_errhandler(comm, was);
  MPI_Errhandler_free(&was);
  MPI_Info_free(&info);
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed) {
    if (s.window.win != MPI_WIN_NULL) MPI_Win_free(&s.window.win);
    s.window = NodeWindow{};
    s.unavailable = true;
    return nullptr;
  }
  s.window.base.assign(size, nullptr);
  s.window.elements.assign(size, 0);
  for (int r = 0; r < size; ++r) {
    MPI_Aint got = 0;
    int unit = 0;
    MPI_Win_shared_query(s.window.win, r, &got, &unit, &s.window.base[r]);
    s.window.elements[r] = static_cast<long>(got / static_cast<MPI_Aint>(sizeof(double)));
  }
  // Fresh shared pages faulted in one by one by the first call's scattered writes cost up to 1 s
  // per 270 MB segment on the 2-core VM; populated here in bulk: each process backs its own
  // segment (spreading the zeroing), then maps everyone's.
  const long own = s.window.elements[me] * static_cast<long>(sizeof(double));
  int backed = populate_pages(s.window.base[me], own, threads);
  MPI_Allreduce(MPI_IN_PLACE, &backed, 1, MPI_INT, MPI_MIN, comm);
  for (int r = 0; r < size && backed; ++r)
    if (r != me)
      backed = populate_pages(s.window.base[r],
                              s.window.elements[r] * static_cast<long>(sizeof(double)), threads);
  MPI_Allreduce(MPI_IN_PLACE, &backed, 1, MPI_INT, MPI_MIN, comm);
  if (!backed) {  // the memory ran out under us: messages this time
    free_window(s.window);
    return nullptr;
  }
  return &s.window;
}

void release_node_window(MPI_Comm comm) {
  for (auto& [c, s] : states())
    if (c == comm) free_window(s->window);
}

void release_node_windows() {
  for (auto& [c, s] : states()) free_window(s->window);
}

long node_windows_held() {
  long held = 0;
  for (const auto& [c, s] : states())
    if (s->window.win != MPI_WIN_NULL) ++held;
  return held;
}

void node_window_barrier(const NodeWindow& window, MPI_Comm comm) {
  MPI_Win_sync(window.win);
  MPI_Barrier(comm);
  MPI_Win_sync(window.win);
}

}  // namespace pipevd
