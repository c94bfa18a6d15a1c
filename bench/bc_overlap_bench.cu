// Interference of BC-back and bulge chasing on one GPU: gpu::bc_back (X := X Q_b) and
// gpu::bulge_chase run side by side on two streams, each one's time next to its time alone.
//
//   bc_overlap_bench [--n 32768] [--b 32] [--m 8448] [--reps 2] [--chase-priority]
//
// The engine runs the chase and then BC-back. BC-back takes the reflectors group of sweeps by
// group of sweeps in increasing sweep order (core/reflector_store.hpp for_each_in_bc_back_order),
// so it could trail the chase instead of waiting for all of it; whether that pays depends on how
// much each slows the other when they share the GPU, which this measures before anything is built.
//
// For each n and m (--n and --m lists; m = 0 is m = n): a random symmetric band (bc_bench's, lower
// band storage), two reflector sets U1 and U2 of ReflectorLayout{n, min(b, n - 1)}, X (m x n,
// random) and BC-back's workspace for its default tunables. Warm-up: the chase with the default
// tunables into U2 (the reference for the checks below), the chase with the beside tunables into
// U1, one BC-back. Then --reps repetitions of each case:
//   chase_default    the chase alone, default_bulge_chasing_tunables, into U1;
//   chase_beside     the chase alone, bulge_chasing_beside_other_work (half the SMs, each block
//                    holding its SM's shared memory: the tunables the chase has beside SBR-back);
//   back             bc_back alone on X with U2, default tunables;
//   overlap_default  the chase (default tunables, into U1) launched on stream A, then at once
//                    bc_back on X with U2 on stream B (non-blocking streams);
//   overlap_beside   the same with the beside tunables.
// BC-back reads U2 while the chase writes U1: no data dependency, interference only. BC-back is
// never launched first: the chase is a cooperative launch, and its grid waits for SMs that
// BC-back's blocks may hold for the whole run.
//
// Times: device events on each stream around each call, all measured from one origin event that
// both streams wait for. chase_s and back_s are each call's own time, wall_s first start to last
// end, back_start_s BC-back's start after the chase's (how far it got ahead of it). The summary
// gives medians, serial_s = chase alone + back alone (same tunables) and wall / serial. Environment
// settings the engine reads (PIPEVD_GPU_BC_*: overrides of the chase's tunables, BC-back's kernel
// and group lanes) apply here as there.
//
// Check: U1 (v, tau) and d, e after every chase compared bitwise with the reference (the chase is
// deterministic and its schedule never changes the bits); U1 is poisoned before each chase, so a
// chase that did not run shows as u_equal=0. --chase-priority: stream A at the device's greatest
// priority (the block scheduler then dispatches its pending blocks first).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "bench/bc_bench_common.hpp"
#include "bench/bench_util.hpp"
#include "core/reflector_store.hpp"
#include "gpu/backend_settings.hpp"
#include "gpu/bc_back.cuh"
#include "gpu/bc_back_tensor.cuh"
#include "gpu/bulge_chasing.cuh"
#include "gpu/cooperative_launch.hpp"
#include "gpu/gpu_context.hpp"
#include "interface/gpu_options.hpp"

namespace {

using pipevd::ReflectorLayout;
using pipevd::gpu::BcBackTunables;
using pipevd::gpu::BulgeChasingTunables;

__global__ void fill_x(double* x, long count, unsigned long long seed) {
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    x[k] = pipevd::bench::splitmix_uniform((seed << 40) + k);
}

// Adds to *out the number of 64-bit words where a and b differ.
__global__ void count_differences(const unsigned long long* a, const unsigned long long* b,
                                  long count, unsigned long long* out) {
  unsigned long long c = 0;
  for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<long>(gridDim.x) * blockDim.x)
    c += a[k] != b[k];
  for (int o = 16; o > 0; o /= 2) c += __shfl_down_sync(0xffffffffu, c, o);
  if (threadIdx.x % 32 == 0 && c) atomicAdd(out, c);
}

template <class T>
T* device_alloc(long count) {
  T* p = nullptr;
  PIPEVD_CUDA_CHECK(cudaMalloc(&p, sizeof(T) * static_cast<size_t>(std::max(1L, count))));
  return p;
}

// Everything one (n, m) needs on the device.
struct Problem {
  long n, b, m;
  ReflectorLayout L;
  BcBackTunables back_tun;
  double *ab = nullptr, *d = nullptr, *e = nullptr, *d_ref = nullptr, *e_ref = nullptr;
  double *v1 = nullptr, *tau1 = nullptr, *v2 = nullptr, *tau2 = nullptr, *x = nullptr;
  void *chase_work = nullptr, *back_work = nullptr;
  unsigned long long* diff = nullptr;

  Problem(long n_, long b_, long m_, const BcBackTunables& tun)
      : n(n_), b(b_), m(m_), L{n_, std::min(b_, n_ - 1)}, back_tun(tun) {
    const auto band = pipevd::bench::random_band(n, b, pipevd::bench::band_seed(n, b));
    ab = device_alloc<double>(static_cast<long>(band.size()));
    PIPEVD_CUDA_CHECK(
        cudaMemcpy(ab, band.data(), sizeof(double) * band.size(), cudaMemcpyHostToDevice));
    for (double** p : {&d, &e, &d_ref, &e_ref}) *p = device_alloc<double>(n);
    v1 = device_alloc<double>(L.vector_array_size());
    v2 = device_alloc<double>(L.vector_array_size());
    tau1 = device_alloc<double>(L.count());
    tau2 = device_alloc<double>(L.count());
    x = device_alloc<double>(m * n);
    chase_work =
        device_alloc<char>(static_cast<long>(pipevd::gpu::bulge_chase_workspace_bytes(n, b)));
    back_work = device_alloc<char>(static_cast<long>(pipevd::gpu::bc_back_workspace_bytes(L, tun)));
    diff = device_alloc<unsigned long long>(1);
    fill_x<<<4096, 256>>>(x, m * n, 12345);
    PIPEVD_CUDA_CHECK_LAUNCH();
    PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Problem() {
    for (void* p : {static_cast<void*>(ab), static_cast<void*>(d), static_cast<void*>(e),
                    static_cast<void*>(d_ref), static_cast<void*>(e_ref), static_cast<void*>(v1),
                    static_cast<void*>(tau1), static_cast<void*>(v2), static_cast<void*>(tau2),
                    static_cast<void*>(x), chase_work, back_work, static_cast<void*>(diff)})
      cudaFree(p);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void chase(double* v, double* tau, const BulgeChasingTunables& tun, cudaStream_t s) {
    pipevd::gpu::bulge_chase(n, b, ab, b + 1, d, e, v, tau, chase_work, tun, s);
  }
  void back(cudaStream_t s) { pipevd::gpu::bc_back(L, v2, tau2, m, x, m, back_tun, back_work, s); }
  // Words of a and b (device, count doubles) that differ; the device idle.
  unsigned long long differences(const double* a, const double* b_, long count) {
    PIPEVD_CUDA_CHECK(cudaMemset(diff, 0, sizeof(unsigned long long)));
    count_differences<<<1024, 256>>>(reinterpret_cast<const unsigned long long*>(a),
                                     reinterpret_cast<const unsigned long long*>(b_), count, diff);
    PIPEVD_CUDA_CHECK_LAUNCH();
    unsigned long long h = 0;
    PIPEVD_CUDA_CHECK(cudaMemcpy(&h, diff, sizeof h, cudaMemcpyDeviceToHost));
    return h;
  }
  // U1, d and e against the reference chase's (U2, d_ref, e_ref).
  bool u1_equal() {
    return differences(v1, v2, L.vector_array_size()) == 0 &&
           differences(tau1, tau2, L.count()) == 0;
  }
  bool de_equal() { return differences(d, d_ref, n) == 0 && differences(e, e_ref, n - 1) == 0; }
};

struct Sample {
  double chase_s = -1, back_s = -1, wall_s = 0, back_start_s = 0;
  int chase_blocks = 0;  // the chase's cooperative grid (0: not recorded in this build)
  bool u_equal = true, de_equal = true;
  std::string error;
};

struct Streams {
  cudaStream_t a = nullptr, b = nullptr;  // the chase's, BC-back's
  cudaEvent_t origin, chase0, chase1, back0, back1;
};

double since_origin(const Streams& st, cudaEvent_t ev) {
  float ms = 0.f;
  PIPEVD_CUDA_CHECK(cudaEventElapsedTime(&ms, st.origin, ev));
  return 1e-3 * ms;
}

// One repetition from an idle device: the chase with *chase_tun on stream a (none where null),
// then BC-back on stream b where `back`.
Sample run_once(Problem& p, Streams& st, const BulgeChasingTunables* chase_tun, bool back) {
  Sample out;
  if (chase_tun) {  // poison U1 and d, e: a chase that does not run cannot match the reference
    PIPEVD_CUDA_CHECK(cudaMemset(p.v1, 0xff, sizeof(double) * p.L.vector_array_size()));
    PIPEVD_CUDA_CHECK(cudaMemset(p.tau1, 0xff, sizeof(double) * p.L.count()));
    PIPEVD_CUDA_CHECK(cudaMemset(p.d, 0xff, sizeof(double) * p.n));
    PIPEVD_CUDA_CHECK(cudaMemset(p.e, 0xff, sizeof(double) * p.n));
  }
  PIPEVD_CUDA_CHECK(cudaDeviceSynchronize());
#ifdef PIPEVD_FAULT_INJECTION
  // A cap no grid reaches: only its record of the grid the chase got.
  pipevd::gpu::set_cooperative_grid_cap({"bulge_chasing", INT_MAX});
#endif
  // One origin for both streams, so that their events can be compared.
  PIPEVD_CUDA_CHECK(cudaEventRecord(st.origin, st.a));
  PIPEVD_CUDA_CHECK(cudaStreamWaitEvent(st.b, st.origin, 0));
  if (chase_tun) {
    PIPEVD_CUDA_CHECK(cudaEventRecord(st.chase0, st.a));
    try {
      p.chase(p.v1, p.tau1, *chase_tun, st.a);
    } catch (const std::exception& ex) {
      out.error += std::string("chase: ") + ex.what() + "; ";
      cudaGetLastError();
    }
    PIPEVD_CUDA_CHECK(cudaEventRecord(st.chase1, st.a));
  }
  if (back) {
    PIPEVD_CUDA_CHECK(cudaEventRecord(st.back0, st.b));
    try {
      p.back(st.b);
    } catch (const std::exception& ex) {
      out.error += std::string("bc_back: ") + ex.what() + "; ";
      cudaGetLastError();
    }
    PIPEVD_CUDA_CHECK(cudaEventRecord(st.back1, st.b));
  }
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(st.a));
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(st.b));
  double first = 1e30, last = 0;
  if (chase_tun) {
    const double t0 = since_origin(st, st.chase0), t1 = since_origin(st, st.chase1);
    out.chase_s = t1 - t0;
    first = std::min(first, t0), last = std::max(last, t1);
  }
  if (back) {
    const double t0 = since_origin(st, st.back0), t1 = since_origin(st, st.back1);
    out.back_s = t1 - t0;
    if (chase_tun) out.back_start_s = t0 - since_origin(st, st.chase0);
    first = std::min(first, t0), last = std::max(last, t1);
  }
  out.wall_s = last - first;
#ifdef PIPEVD_FAULT_INJECTION
  out.chase_blocks = pipevd::gpu::cooperative_launch_record().launched_blocks;
  pipevd::gpu::set_cooperative_grid_cap({});
#endif
  if (chase_tun) out.u_equal = p.u1_equal(), out.de_equal = p.de_equal();
  return out;
}

// line += one printf-formatted field.
template <class... Args>
void append(std::string& line, const char* format, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  line += buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string chase_name(const BulgeChasingTunables& t) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "tps=%d per_block=%d per_sm=%d max_blocks=%d exclusive=%d",
                t.threads_per_sweep, t.sweeps_per_block, t.blocks_per_sm, t.max_blocks,
                t.exclusive_sms ? 1 : 0);
  return buf;
}

std::string back_name(const BcBackTunables& t, const ReflectorLayout& L, long m, int device) {
  char buf[128];
  if (t.tensor) {  // the group lanes the kernel will run with for these rows
    const pipevd::gpu::BcBackTensorShape s{t.group, t.rows, t.threads / 32, t.prefetch,
                                           t.group_lanes};
    std::snprintf(buf, sizeof buf, "tensor group=%d tiles=%d threads=%d lanes=%d", t.group, t.rows,
                  t.threads, pipevd::gpu::bc_back_tensor_group_lanes(L, m, s, device));
  } else {
    std::snprintf(buf, sizeof buf, "blas2 lanes=%d rows=%d group=%d threads=%d", t.lanes, t.rows,
                  t.group, t.threads);
  }
  return buf;
}

// The five cases at one (n, m); false where a repetition failed or a chase did not match the
// reference.
bool bench_size(long n, long m0, long b, int reps, Streams& st) {
  int device = 0;
  cudaDeviceProp prop{};
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const pipevd::Policy& policy = pipevd::process_policy().policy;
  const pipevd::gpu::GpuTuning tuning = pipevd::gpu_tuning(policy);
  bool ok = true;
  const long m = m0 == 0 ? n : m0;
  const long bw = std::min(b, n - 1);
  // The engine's choices (gpu_backend.cu): the chase's overrides after the beside tunables,
  // BC-back's kernel and group lanes from the policy.
  const BulgeChasingTunables base = pipevd::gpu::default_bulge_chasing_tunables(device, n, bw);
  const BulgeChasingTunables chase_default =
      pipevd::gpu::with_overrides(base, tuning.bulge_chasing);
  const BulgeChasingTunables chase_beside = pipevd::gpu::with_overrides(
      pipevd::gpu::bulge_chasing_beside_other_work(base, device, bw), tuning.bulge_chasing);
  BcBackTunables back_tun = pipevd::gpu::default_bc_back_tunables(
      m, bw, pipevd::gpu::bc_back_kernel_named(policy.bc_back_kernel));
  back_tun.group_lanes = tuning.sharing              ? 1
                         : tuning.bc_back_lanes != 0 ? tuning.bc_back_lanes
                                                     : back_tun.group_lanes;
  char head[160];
  std::snprintf(head, sizeof head, "n=%ld m=%ld b=%ld", n, m, b);
  Problem p(n, b, m, back_tun);
  std::printf("bc_overlap %s chase_default: %s\n", head, chase_name(chase_default).c_str());
  std::printf("bc_overlap %s chase_beside: %s\n", head, chase_name(chase_beside).c_str());
  std::printf("bc_overlap %s back: %s\n", head, back_name(back_tun, p.L, m, device).c_str());
  std::fflush(stdout);

  // Warm-up (module loading, first-touch): the reference chase into U2, the beside
  // configuration into U1, one BC-back.
  p.chase(p.v2, p.tau2, chase_default, st.a);
  PIPEVD_CUDA_CHECK(cudaStreamSynchronize(st.a));
  PIPEVD_CUDA_CHECK(cudaMemcpy(p.d_ref, p.d, sizeof(double) * n, cudaMemcpyDeviceToDevice));
  PIPEVD_CUDA_CHECK(cudaMemcpy(p.e_ref, p.e, sizeof(double) * n, cudaMemcpyDeviceToDevice));
  const Sample warm = run_once(p, st, &chase_beside, false);
  const Sample warm_back = run_once(p, st, nullptr, true);
  std::printf("bc_overlap %s warm-up chase_beside_s=%.4f back_s=%.4f u_equal=%d de_equal=%d%s%s\n",
              head, warm.chase_s, warm_back.back_s, warm.u_equal ? 1 : 0, warm.de_equal ? 1 : 0,
              (warm.error + warm_back.error).empty() ? "" : " error: ",
              (warm.error + warm_back.error).c_str());

  struct Case {
    const char* name;
    const BulgeChasingTunables* chase;
    bool back;
    const BulgeChasingTunables* alone;  // the chase alone with the same tunables (serial_s)
  };
  const Case cases[] = {{"chase_default", &chase_default, false, nullptr},
                        {"chase_beside", &chase_beside, false, nullptr},
                        {"back", nullptr, true, nullptr},
                        {"overlap_default", &chase_default, true, &chase_default},
                        {"overlap_beside", &chase_beside, true, &chase_beside}};
  struct Medians {
    double chase_s = 0, back_s = 0;
  };
  Medians alone_default, alone_beside, alone_back;
  for (const Case& c : cases) {
    std::vector<double> chase_t, back_t, wall_t;
    bool u_equal = true, de_equal = true;
    int failed = 0;
    for (int r = 0; r < reps; ++r) {
      const Sample s = run_once(p, st, c.chase, c.back);
      std::string line =
          "bc_overlap " + std::string(head) + " case=" + c.name + " rep=" + std::to_string(r);
      if (c.chase) {
        append(line, " chase_s=%.4f", s.chase_s);
      }
      if (c.back) {
        append(line, " back_s=%.4f", s.back_s);
      }
      append(line, " wall_s=%.4f", s.wall_s);
      if (c.chase && c.back) {
        append(line, " back_start_s=%.4f", s.back_start_s);
      }
      if (c.chase) {
        append(line, " chase_blocks=%d u_equal=%d de_equal=%d", s.chase_blocks, s.u_equal ? 1 : 0,
               s.de_equal ? 1 : 0);
      }
      if (!s.error.empty()) line += " error: " + s.error;
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      if (!s.error.empty()) {
        ++failed;
        continue;
      }
      u_equal = u_equal && s.u_equal, de_equal = de_equal && s.de_equal;
      if (c.chase) chase_t.push_back(s.chase_s);
      if (c.back) back_t.push_back(s.back_s);
      wall_t.push_back(s.wall_s);
    }
    const Medians med{median(chase_t), median(back_t)};
    if (c.chase == &chase_default && !c.back) alone_default = med;
    if (c.chase == &chase_beside && !c.back) alone_beside = med;
    if (!c.chase) alone_back = med;
    std::string line = "bc_overlap_summary device=\"" + std::string(prop.name) + "\" " + head +
                       " case=" + c.name + " reps=" + std::to_string(reps - failed);
    if (c.chase) {
      append(line, " chase_s=%.4f", med.chase_s);
    }
    if (c.back) {
      append(line, " back_s=%.4f", med.back_s);
    }
    append(line, " wall_s=%.4f", median(wall_t));
    if (c.alone) {
      const Medians& ch = c.alone == &chase_default ? alone_default : alone_beside;
      const double serial = ch.chase_s + alone_back.back_s;
      append(line, " serial_s=%.4f wall_over_serial=%.3f chase_slowdown=%.3f back_slowdown=%.3f",
             serial, serial > 0 ? median(wall_t) / serial : 0.0,
             ch.chase_s > 0 ? med.chase_s / ch.chase_s : 0.0,
             alone_back.back_s > 0 ? med.back_s / alone_back.back_s : 0.0);
    }
    if (c.chase)
      line +=
          std::string(" u_equal=") + (u_equal ? "1" : "0") + " de_equal=" + (de_equal ? "1" : "0");
    line += " failed=" + std::to_string(failed);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (failed || !u_equal || !de_equal) ok = false;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> ns{32768}, ms{8448};
  long b = 32;
  int reps = 2;
  bool chase_priority = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--n" && more)
      ns = pipevd::bench::parse_list(std::string(argv[++i]));
    else if (a == "--m" && more)
      ms = pipevd::bench::parse_list(std::string(argv[++i]));
    else if (a == "--b" && more)
      b = std::atol(argv[++i]);
    else if (a == "--reps" && more)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--chase-priority")
      chase_priority = true;
    else {
      std::fprintf(stderr, "bc_overlap_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  int device = 0;
  cudaDeviceProp prop{};
  PIPEVD_CUDA_CHECK(cudaGetDevice(&device));
  PIPEVD_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("device %s, %d SMs, %.0f GB; chase stream priority %s\n", prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem / 1e9,
              chase_priority ? "greatest" : "default");

  Streams st;
  int least = 0, greatest = 0;
  PIPEVD_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  PIPEVD_CUDA_CHECK(cudaStreamCreateWithPriority(&st.a, cudaStreamNonBlocking,
                                                 chase_priority ? greatest : least));
  PIPEVD_CUDA_CHECK(cudaStreamCreateWithFlags(&st.b, cudaStreamNonBlocking));
  for (cudaEvent_t* ev : {&st.origin, &st.chase0, &st.chase1, &st.back0, &st.back1})
    PIPEVD_CUDA_CHECK(cudaEventCreate(ev));

  int rc = 0;
  for (long n : ns)
    for (long m : ms) {
      try {
        if (!bench_size(n, m, b, reps, st)) rc = 1;
      } catch (const std::exception& ex) {  // e.g. out of memory at this size: on to the next
        std::printf("bc_overlap n=%ld m=%ld b=%ld error: %s\n", n, m, b, ex.what());
        std::fflush(stdout);
        rc = 1;
      }
    }
  for (cudaEvent_t ev : {st.origin, st.chase0, st.chase1, st.back0, st.back1}) cudaEventDestroy(ev);
  cudaStreamDestroy(st.a), cudaStreamDestroy(st.b);
  return rc;
}
