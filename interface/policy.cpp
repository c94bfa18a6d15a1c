#include "interface/policy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>

extern "C" char** environ;

namespace pipevd {

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Auto:
      return "auto";
    case Backend::Gpu:
      return "gpu";
    case Backend::Host:
      return "host";
    case Backend::Scalapack:
      return "scalapack";
  }
  return "?";
}

namespace {

// A whole decimal integer in [lo, hi], nothing else.
std::optional<long> parse_integer(const char* s, long lo, long hi) {
  if (!s || !*s) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return std::nullopt;
  return v;
}

// Whether v is one of `choices` (", "-separated).
bool is_one_of(const std::string& v, const std::string& choices) {
  for (std::size_t at = 0; at <= choices.size();) {
    const std::size_t end = std::min(choices.find(", ", at), choices.size());
    if (choices.compare(at, end - at, v) == 0) return true;
    at = end + 2;
  }
  return false;
}

}  // namespace

PolicyOrError parse_policy(const std::function<const char*(const char*)>& lookup) {
  // An empty value is unset (a launcher's `-x VAR=` or a script's `export VAR=`).
  const auto getenv_fn = [&](const char* name) -> const char* {
    const char* s = lookup(name);
    return s && *s ? s : nullptr;
  };
  PolicyOrError r;
  // A setting that names one of `choices`, kept as that name (false: r.error says why not).
  auto choice = [&](const char* name, const std::string& choices, std::string& field) {
    const char* s = getenv_fn(name);
    if (!s) return true;
    if (!is_one_of(s, choices)) {
      r.error = std::string(name) + "='" + s + "' is not one of " + choices;
      return false;
    }
    field = s;
    return true;
  };
  if (const char* s = getenv_fn("PIPEVD_BACKEND")) {
    const std::string v = s;
    if (v == "auto")
      r.policy.backend = Backend::Auto;
    else if (v == "gpu")
      r.policy.backend = Backend::Gpu;
    else if (v == "host")
      r.policy.backend = Backend::Host;
    else if (v == "scalapack")
      r.policy.backend = Backend::Scalapack;
    else {
      r.error = "PIPEVD_BACKEND='" + v + "' is not one of auto, gpu, host, scalapack";
      return r;
    }
  }
  if (const char* s = getenv_fn("PIPEVD_MIN_N")) {
    const auto v = parse_integer(s, 0, 2147483647L);
    if (!v) {
      r.error = std::string("PIPEVD_MIN_N='") + s + "' is not a non-negative integer";
      return r;
    }
    r.policy.min_n = *v;
  }
  if (const char* s = getenv_fn("PIPEVD_VERBOSE")) {
    const auto v = parse_integer(s, 0, 2);
    if (!v) {
      r.error = std::string("PIPEVD_VERBOSE='") + s + "' is not one of 0, 1, 2";
      return r;
    }
    r.policy.verbose = static_cast<int>(*v);
  }
  if (const char* s = getenv_fn("PIPEVD_ENGINE_RANKS")) {
    const auto v = parse_integer(s, 1, 1 << 20);
    if (!v) {
      r.error = std::string("PIPEVD_ENGINE_RANKS='") + s + "' is not a positive integer";
      return r;
    }
    r.policy.engine_ranks = static_cast<int>(*v);
  }
  // b = 1 is already tridiagonal (no bulge chasing); the upper limits keep the band's storage and
  // the bulge chasing's work sane.
  if (const char* s = getenv_fn("PIPEVD_BAND")) {
    const auto v = parse_integer(s, 1, 1024);
    if (!v) {
      r.error = std::string("PIPEVD_BAND='") + s + "' is not an integer in [1, 1024]";
      return r;
    }
    r.policy.band = *v;
  }
  if (const char* s = getenv_fn("PIPEVD_NODE_SEGMENT_MIB")) {
    const auto v = parse_integer(s, 1, 1 << 20);
    if (!v) {
      r.error =
          std::string("PIPEVD_NODE_SEGMENT_MIB='") + s + "' is not an integer in [1, 1048576]";
      return r;
    }
    r.policy.node_segment_mib = *v;
  }
  if (const char* s = getenv_fn("PIPEVD_BLOCK")) {
    const auto v = parse_integer(s, 1, 1 << 16);
    if (!v) {
      r.error = std::string("PIPEVD_BLOCK='") + s + "' is not an integer in [1, 65536]";
      return r;
    }
    r.policy.block = *v;
  }
  if (r.policy.band > 0 && r.policy.block > 0 && r.policy.block < r.policy.band) {
    r.error = "PIPEVD_BLOCK=" + std::to_string(r.policy.block) +
              " is smaller than PIPEVD_BAND=" + std::to_string(r.policy.band) +
              " (the outer block holds whole panels of b columns)";
    return r;
  }
  if (!choice("PIPEVD_TRIDIAGONAL", "auto, dstedc, dc", r.policy.tridiagonal)) return r;
  std::string dbbr_z = "every_rank";
  if (!choice("PIPEVD_DBBR_Z", "every_rank, owner", dbbr_z)) return r;
  r.policy.dbbr_z_on_every_rank = dbbr_z == "every_rank";
  std::string dbbr_columns = "auto";
  if (!choice("PIPEVD_DBBR_COLUMNS", "auto, cyclic, blockwise", dbbr_columns)) return r;
  r.policy.dbbr_columns = dbbr_columns == "cyclic"      ? DbbrColumnsSetting::Cyclic
                          : dbbr_columns == "blockwise" ? DbbrColumnsSetting::Blockwise
                                                        : DbbrColumnsSetting::Auto;
  std::string pool_growth = "whole";
  if (!choice("PIPEVD_POOL_GROWTH", "whole, staged", pool_growth)) return r;
  r.policy.pool_growth =
      pool_growth == "staged" ? PoolGrowthSetting::Staged : PoolGrowthSetting::Whole;
  if (!choice("PIPEVD_DC_FOLD", "auto, on, off", r.policy.dc_fold)) return r;
  if (!choice("PIPEVD_SBR_BACK_BESIDE", "auto, on, off, dbbr", r.policy.sbr_back_beside)) return r;
  if (!choice("PIPEVD_SBR_BACK_ORDER", "auto, right", r.policy.sbr_back_order)) return r;
  if (!choice("PIPEVD_DC_EARLY", "auto, on, off", r.policy.dc_early)) return r;
  if (!choice("PIPEVD_PRELOAD_KERNELS", "auto, on, off", r.policy.preload_kernels)) return r;
  if (!choice("PIPEVD_ENGINE_PATH", "auto, two_stage, one_stage", r.policy.engine_path)) return r;
  for (auto [name, field] : {std::pair{"PIPEVD_GPU_MEMORY_LIMIT", &r.policy.gpu_memory_limit},
                             std::pair{"PIPEVD_HOST_MEMORY_LIMIT", &r.policy.host_memory_limit}})
    if (const char* s = getenv_fn(name)) {
      const auto v = parse_integer(s, 1, 9223372036854775807L);
      if (!v) {
        r.error = std::string(name) + "='" + s + "' is not a positive byte count";
        return r;
      }
      *field = *v;
    }
  for (auto [name, field] : {std::pair{"PIPEVD_DC_THREADS", &r.policy.dc_threads},
                             std::pair{"PIPEVD_THREADS", &r.policy.threads}})
    if (const char* s = getenv_fn(name)) {
      const auto v = parse_integer(s, 1, 1 << 16);
      if (!v) {
        r.error = std::string(name) + "='" + s + "' is not an integer in [1, 65536]";
        return r;
      }
      *field = static_cast<int>(*v);
    }
  for (auto [name, field] : {std::pair{"PIPEVD_DC_DEVICE_MERGE", &r.policy.dc_device_merge},
                             std::pair{"PIPEVD_DC_PINNED", &r.policy.dc_pinned}})
    if (const char* s = getenv_fn(name)) {
      const std::string v = s;
      if (v != "0" && v != "1") {
        r.error = std::string(name) + "='" + v + "' is not 0 or 1";
        return r;
      }
      *field = v == "1";
    }
  if (!choice("PIPEVD_GPU_BC_BACK", "auto, blas2, tensor", r.policy.bc_back_kernel)) return r;
  // Two-way choices kept as flags: the value is checked like the others, then compared.
  const auto flag = [&](const char* name, const char* off, const char* on, bool& field) {
    std::string v = off;
    if (!choice(name, std::string(off) + ", " + on, v)) return false;
    field = v == on;
    return true;
  };
  if (!flag("PIPEVD_GPU_PANEL_QR", "auto", "cusolver", r.policy.panel_qr_cusolver)) return r;
  bool aw_gemm = false;
  if (!flag("PIPEVD_GPU_AW", "symm", "gemm", aw_gemm)) return r;
  r.policy.aw_symm = !aw_gemm;
  if (!flag("PIPEVD_GPU_SHARING", "0", "1", r.policy.gpu_sharing)) return r;
  bool release_after_call = false;
  if (!flag("PIPEVD_KEEP_MEMORY", "1", "0", release_after_call)) return r;
  r.policy.keep_memory = !release_after_call;
  if (!flag("PIPEVD_KEEP_DEVICE_MEMORY", "0", "1", r.policy.keep_device_memory)) return r;
  bool no_pinning = false;
  if (!flag("PIPEVD_PIN_MEMORY", "1", "0", no_pinning)) return r;
  r.policy.pin_memory = !no_pinning;
  bool no_prepare = false;
  if (!flag("PIPEVD_GPU_PREPARE", "1", "0", no_prepare)) return r;
  r.policy.gpu_prepare = !no_prepare;
  bool not_at_grid = false;
  if (!flag("PIPEVD_PREPARE_AT_GRID", "1", "0", not_at_grid)) return r;
  r.policy.prepare_at_grid = !not_at_grid;
  std::string lanes = "auto";
  if (!choice("PIPEVD_GPU_BC_LANES", "auto, 1, 2, 3, 4, 5, 6, 7, 8", lanes)) return r;
  r.policy.bc_back_lanes = lanes == "auto" || lanes.empty() ? 0 : std::stoi(lanes);
  std::string threads = "0";
  if (!choice("PIPEVD_GPU_PANEL_QR_THREADS", "256, 512, 1024", threads)) return r;
  r.policy.panel_qr_threads = std::stoi(threads);
  // Tuning counts: an integer in [lo, hi] (NCCL's channels: at most its MAXCHANNELS, 64).
  for (auto [name, lo, hi, field] :
       {std::tuple{"PIPEVD_GPU_PANEL_QR_BLOCKS", 1L, 1L << 20, &r.policy.panel_qr_blocks},
        std::tuple{"PIPEVD_GPU_BC_BLOCKS", 0L, 1L << 20, &r.policy.bc_blocks},
        std::tuple{"PIPEVD_GPU_BC_SWEEPS_PER_BLOCK", 1L, 1L << 20, &r.policy.bc_sweeps_per_block},
        std::tuple{"PIPEVD_GPU_BC_EXCLUSIVE", 0L, 1L << 20, &r.policy.bc_exclusive},
        std::tuple{"PIPEVD_NCCL_CHANNELS", 0L, 64L, &r.policy.nccl_channels}})
    if (const char* s = getenv_fn(name)) {
      const auto v = parse_integer(s, lo, hi);
      if (!v) {
        r.error = std::string(name) + "='" + s + "' is not an integer in [" + std::to_string(lo) +
                  ", " + std::to_string(hi) + "]";
        return r;
      }
      *field = static_cast<int>(*v);
    }
  if (const char* s = getenv_fn("PIPEVD_TIMELINE")) r.policy.timeline_path = s;
  if (const char* s = getenv_fn("PIPEVD_TEST_NODES")) r.policy.test_nodes = s;
  return r;
}

const PolicyOrError& process_policy() {
  static const PolicyOrError p = parse_policy([](const char* name) { return std::getenv(name); });
  return p;
}

const std::string& environment_snapshot() {
  static const std::string snapshot = [] {
    std::string s;
    for (char** e = environ; *e; ++e) {
      const char* eq = std::strchr(*e, '=');
      if (!eq || std::strncmp(*e, "PIPEVD_", 7) != 0) continue;
      s.append(*e, eq - *e).push_back('\0');
      s.append(eq + 1).push_back('\0');
    }
    return s;
  }();
  return snapshot;
}

PolicyOrError parse_policy_snapshot(const std::string& snapshot) {
  std::map<std::string, std::string> env;
  for (std::size_t at = 0; at < snapshot.size();) {
    const std::size_t name_end = snapshot.find('\0', at);
    const std::size_t value_end = snapshot.find('\0', name_end + 1);
    if (name_end == std::string::npos || value_end == std::string::npos) break;
    env[snapshot.substr(at, name_end - at)] =
        snapshot.substr(name_end + 1, value_end - name_end - 1);
    at = value_end + 1;
  }
  return parse_policy([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace pipevd
