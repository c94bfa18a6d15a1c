// A message described in place: the segments it consists of, in message order, as one MPI
// datatype over absolute addresses (used with MPI_BOTTOM), so MPI copies straight between the
// user's arrays and its transport and no pack or unpack pass is needed.
#pragma once
#include <mpi.h>

#include <vector>

namespace pipevd {

class SegmentType {
 public:
  // Appends len doubles at p; merges with the previous segment where they touch.
  void add(const double* p, long len);
  // The committed datatype (the caller frees it), MPI_DATATYPE_NULL when nothing was added.
  MPI_Datatype commit();

 private:
  std::vector<int> lengths_;
  std::vector<MPI_Aint> displacements_;
  const double* end_ = nullptr;  // one past the last segment
};

// `count` contiguous doubles at p as a datatype over absolute addresses.
MPI_Datatype contiguous_at(const double* p, long count);

}  // namespace pipevd
