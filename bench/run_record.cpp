#include "bench/run_record.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace pipevd::bench {
namespace {

std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

bool accuracy_passed(const Accuracy& acc, int n, double threshold) {
  // A NaN fails every comparison below, so it never passes.
  if (acc.has_vectors && !(acc.residual <= threshold && acc.orthogonality <= threshold))
    return false;
  if (acc.has_reference) {
    const double units = acc.eigenvalue_diff / (std::max(n, 1) * DBL_EPSILON);
    if (!(units <= threshold)) return false;
  }
  return acc.has_vectors || acc.has_reference;  // nothing measured: nothing to vouch for
}

std::string status(const RunRecord& r, double threshold) {
  if (r.unsupported) return "unsupported";
  if (r.info != 0) return "solver-failed";
  return accuracy_passed(r.accuracy, r.n, threshold) ? "ok" : "accuracy-failed";
}

std::string to_json(const RunRecord& r, double threshold) {
  const std::string st = status(r, threshold);
  const Accuracy& a = r.accuracy;
  std::ostringstream o;
  o << "{\"solver\":" << quoted(r.solver) << ",\"device\":" << quoted(r.device)
    << ",\"ranks\":" << r.ranks << ",\"gpus\":" << r.gpus << ",\"grid\":" << quoted(r.grid)
    << ",\"n\":" << r.n << ",\"nb\":" << r.nb << ",\"jobz\":\"" << r.jobz << "\""
    << ",\"scalar\":" << quoted(r.scalar) << ",\"spectrum\":" << quoted(r.spectrum);
  if (!r.generated.empty()) o << ",\"generated\":" << quoted(r.generated);
  o << ",\"seed\":" << r.seed << ",\"repeat\":" << r.repeat << ",\"status\":\"" << st << "\""
    << ",\"time_s\":" << (st == "ok" ? number(r.seconds) : "null") << ",\"stages\":{";
  if (st == "ok")
    for (size_t i = 0; i < r.stages.size(); ++i)
      o << (i ? "," : "") << quoted(r.stages[i].name) << ":" << number(r.stages[i].seconds);
  o << "},\"residual\":" << (a.has_vectors ? number(a.residual) : "null")
    << ",\"orthogonality\":" << (a.has_vectors ? number(a.orthogonality) : "null")
    << ",\"eigenvalue_diff\":" << (a.has_reference ? number(a.eigenvalue_diff) : "null")
    << ",\"reference\":" << quoted(a.has_reference ? r.reference : "none")
    << ",\"threshold\":" << number(threshold) << ",\"info\":" << r.info
    << ",\"path\":" << (r.path.empty() ? "null" : quoted(r.path));
  if (r.lead_s > 0) o << ",\"lead_s\":" << number(r.lead_s);
  if (!r.error.empty()) o << ",\"error\":" << quoted(r.error);
  o << "}";
  return o.str();
}

}  // namespace pipevd::bench
