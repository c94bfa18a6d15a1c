// Stage 1, DBBR: dense -> band with bandwidth b, on E engine ranks, each holding its columns of
// the full matrix in the blockwise layout or with the outer blocks dealt out cyclically
// (core/dbbr_columns.hpp, DbbrOptions::cyclic_blocks).
//
// Double blocking (DBBR paper Algorithm 1): panels of b columns are factored by Householder QR in
// WY form; inside an outer block of k columns only the next panels are updated (recursively, so
// the GEMMs have k = b, 2b, 4b ..., DBR paper §5.1) and the accumulated Z, Y update the trailing
// matrix once per outer block. Multi-rank (pipelined paper §4.1): every rank stores its columns of
// the FULL matrix, so it forms its own rows of A W from its own columns. Then either each rank
// forms its rows of Z too (one all-reduce of Yb^H W, Zb^H W and W^H A W, Z's rows gathered) or the
// owner forms all of Z from the rows of A W sent to it and broadcasts it
// (DbbrOptions::z_on_every_rank).
#pragma once
#include <array>
#include <functional>
#include <vector>

#include "base/engine_layout.hpp"
#include "core/dbbr_columns.hpp"
#include "core/reflector_panels.hpp"

namespace pipevd {

// The parts of DBBR a profiler can time (gpu/dbbr_event_clock puts device events around them).
enum class DbbrPart {
  PanelQr,         // panel_qr of each b-column panel
  AW,              // A W: the GEMMs over the rank's columns (owner scheme: and their send to it)
  FormZ,           // Z = A_cur W - 1/2 Y (W^T A_cur W): all of it, or the rank's rows
  PanelUpdate,     // the recursive updates of the block's own columns
  TrailingUpdate,  // A(e:n, own columns) -= Z Y^T + Y Z^T once per outer block
  Copies,          // workspace allocation (Yb, Zb zeroed), saved block columns, W/Y/Z into Yb/Zb
  Broadcast,       // W, Y, Z from the panel's owner, or W, Y, the sums and Z's rows gathered
  Count
};

// begin and end throw nothing: end runs in a destructor, while a failure of the part's work may
// be unwinding.
struct DbbrProfiler {
  virtual ~DbbrProfiler() = default;
  virtual void begin(DbbrPart part) noexcept = 0;  // parts never nest
  virtual void end(DbbrPart part) noexcept = 0;
  // Outer block `index` (outer_blocks' order) starts; index = their count: the last one ended.
  // Outside every part.
  virtual void block_boundary(long /*index*/) noexcept {}
};

// A part of the work timed by an optional profiler: begun on construction, ended on destruction.
class DbbrTimed {
 public:
  DbbrTimed(DbbrProfiler* p, DbbrPart part) : p_(p), part_(part) {
    if (p_) p_->begin(part_);
  }
  ~DbbrTimed() {
    if (p_) p_->end(part_);
  }
  DbbrTimed(const DbbrTimed&) = delete;
  DbbrTimed& operator=(const DbbrTimed&) = delete;

 private:
  DbbrProfiler* p_;
  DbbrPart part_;
};

constexpr int kDbbrParts = static_cast<int>(DbbrPart::Count);
using DbbrPartSeconds = std::array<double, kDbbrParts>;
// The part's short name in reports: panel_qr, aw, form_z, panel_upd, trailing, copies, bcast.
const char* to_string(DbbrPart part);

// A profiler that sums its parts: seconds per part since the last collect(), which waits for the
// work it timed and starts the sums afresh.
struct DbbrPartClock : DbbrProfiler {
  virtual DbbrPartSeconds collect() = 0;
  // Each outer block's seconds (boundary to boundary) as of the last collect(); empty where the
  // clock does not time them.
  virtual std::vector<double> collected_blocks() const { return {}; }
};

struct DbbrOptions {
  long b = 32;    // bandwidth (panel width)
  long k = 1024;  // outer block (trailing update) width, rounded up to a multiple of b
  bool keep_reflectors = true;  // false: drop W, Y (eigenvalues only)
  // The diagonal block of each recursive panel update through the backend's syr2k_full as well
  // (the trailing update always uses it); off: two GEMMs there.
  bool panel_syr2k = false;
  DbbrProfiler* profiler = nullptr;  // optional, not owned
  // Several ranks: each forms Z's rows where it formed A W's and they are gathered, so a panel
  // waits for one all-reduce and one gather instead of the owner's receives, its whole form_z and
  // Z's broadcast. false: the owner forms Z (for an A/B of the two). Where the owner holds every
  // row of the trailing matrix (one rank) it forms Z either way.
  bool z_on_every_rank = true;
  // The columns' distribution (core/dbbr_columns.hpp): outer block t on engine rank t mod E, so
  // that every rank keeps a share of the trailing matrix to the end, its rows (several runs)
  // packed once a panel so that each product over them is one GEMM; false: the engine layout's
  // contiguous columns (one run a rank, used in place).
  bool cyclic_blocks = false;
};

// The bandwidth actually used for an n x n matrix: b, but at most n - 1 (and at least 1).
long effective_bandwidth(long n, long b);

// The distribution of the columns that `opt` names over the layout's engine ranks: blockwise, the
// layout's own columns; cyclic, in outer blocks of k rounded as DBBR rounds it (a multiple of the
// effective bandwidth).
DbbrColumns dbbr_columns(const EngineLayout& layout, const DbbrOptions& opt);

// One outer block: columns [begin, end) of engine rank `owner`, at most k wide.
struct OuterBlock {
  int owner = 0;
  long begin = 0, end = 0;
};

// DBBR's outer blocks in the order every rank walks them (a pure function of the layout and the
// options, so the ranks' messages match): each segment of dbbr_columns(layout, opt) in blocks of k
// (rounded up to a multiple of the effective bandwidth), up to the last block with a panel to
// reduce.
std::vector<OuterBlock> outer_blocks(const EngineLayout& layout, const DbbrOptions& opt);

// Told, on the calling thread, that an outer block's panels are complete in `be`'s order (their
// work and messages issued, on a device maybe still queued) and kept: `panels` holds Q_s's panels
// so far, [first, last) the block's. Called before the block's trailing update, so that work
// ordered after the panels alone can run beside it. A throw is this rank's failure, agreed at the
// next outer block's start like any other of its own work.
template <class T>
using PanelsReady = std::function<void(BasicReflectorPanels<T>& panels, long first, long last)>;

// Reduces the matrix in place. `a` (device) holds this rank's columns of the full symmetric
// (complex: Hermitian) matrix in the distribution dbbr_columns(layout, opt), concatenated,
// leading dimension n. Every col_begin must be a multiple of effective_bandwidth(n, b) or equal n.
// Collective over the backend's communicator. On return the lower band of `a` (rows j..j+b of
// column j) holds the band matrix B = Q_s^H A Q_s; the result lists Q_s's panels on every rank. A
// failure on one rank (an allocation, a panel's work) is thrown on every rank alike
// (core/failure_agreement) at the next outer block's start or at the end, never leaving the others
// waiting in a panel's messages. `ready`, where set, hears of each outer block's panels.
ReflectorPanels reduce_to_band(EngineBackend& be, const EngineLayout& layout, int rank, double* a,
                               const DbbrOptions& opt, const PanelsReady<double>& ready = {});
ComplexReflectorPanels reduce_to_band(EngineBackend& be, const EngineLayout& layout, int rank,
                                      Complex* a, const DbbrOptions& opt,
                                      const PanelsReady<Complex>& ready = {});

// The band matrix in lower band storage (core/band_storage.hpp layout), ldab = b + 1 with b the
// effective bandwidth, on every rank (device buffer of n * ldab elements), assembled from each
// rank's columns as reduce_to_band left them (the same layout and options). Collective over the
// backend's communicator; a rank's failure to allocate it is thrown on every rank alike.
DeviceBuffer gather_band(EngineBackend& be, const EngineLayout& layout, int rank, const double* a,
                         const DbbrOptions& opt);
BasicDeviceBuffer<Complex> gather_band(EngineBackend& be, const EngineLayout& layout, int rank,
                                       const Complex* a, const DbbrOptions& opt);

}  // namespace pipevd
