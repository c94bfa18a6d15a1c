// The backend interface's complex defaults: a backend without complex kernels (the GPU's) inherits
// the throwing ones; the merge of reflector blocks is two GEMMs on any backend that has them.
#include "core/backend.hpp"

#include <string>

namespace pipevd {
namespace {

[[noreturn]] void unsupported(const EngineBackend& be, const char* op) {
  throw UnsupportedScalar(std::string("pipevd: the ") + be.name() + " backend has no complex " +
                          op);
}

}  // namespace

void EngineBackend::fill_matrix(long, long, Complex, Complex, Complex*, long) {
  unsupported(*this, "fill_matrix");
}

void EngineBackend::mirror_triangle(char, long, Complex*, long) {
  unsupported(*this, "mirror_triangle");
}

void EngineBackend::gemm(char, char, long, long, long, Complex, const Complex*, long,
                         const Complex*, long, Complex, Complex*, long) {
  unsupported(*this, "gemm");
}

void EngineBackend::panel_qr(long, long, Complex*, long, Complex*, long, Complex*, long) {
  unsupported(*this, "panel_qr");
}

void EngineBackend::bulge_chase(long, long, const Complex*, long, double*, double*,
                                ComplexReflectorStore&, bool, bool) {
  unsupported(*this, "bulge_chase");
}

void EngineBackend::bc_back(const ComplexReflectorStore&, long, Complex*, long) {
  unsupported(*this, "bc_back");
}

void EngineBackend::merge_reflector_blocks(long m, long k1, long k2, Complex* w, long ldw,
                                           const Complex* y, long ldy) {
  if (m <= 0 || k1 <= 0 || k2 <= 0) return;
  BasicDeviceBuffer<Complex> s(*this, k1 * k2, UnfilledBuffer{});
  gemm('C', 'N', k1, k2, m, 1.0, y, ldy, w + k1 * ldw, ldw, 0.0, s.get(), k1);
  gemm('N', 'N', m, k2, k1, -1.0, w, ldw, s.get(), k1, 1.0, w + k1 * ldw, ldw);
}

}  // namespace pipevd
