#include "redistribute/segment_type.hpp"

#include <climits>
#include <stdexcept>

namespace pipevd {

void SegmentType::add(const void* p, long len) {
  if (len <= 0) return;
  const char* at = static_cast<const char*>(p);
  if (!lengths_.empty() && at == end_ && lengths_.back() <= INT_MAX - len) {
    lengths_.back() += static_cast<int>(len);
  } else {
    if (len > INT_MAX) throw std::length_error("SegmentType: segment longer than INT_MAX");
    MPI_Aint a;
    MPI_Get_address(p, &a);
    lengths_.push_back(static_cast<int>(len));
    displacements_.push_back(a);
  }
  end_ = at + len * element_.bytes;
}

MPI_Datatype SegmentType::commit() {
  if (lengths_.empty()) return MPI_DATATYPE_NULL;
  MPI_Datatype t;
  MPI_Type_create_hindexed(static_cast<int>(lengths_.size()), lengths_.data(),
                           displacements_.data(), element_.mpi, &t);
  MPI_Type_commit(&t);
  lengths_ = {};
  displacements_ = {};
  return t;
}

MPI_Datatype contiguous_at(const void* p, long count, ElementType element) {
  SegmentType s(element);
  s.add(p, count);
  return s.commit();
}

}  // namespace pipevd
