// A message described in place: the segments it consists of, in message order, as one MPI
// datatype over absolute addresses (used with MPI_BOTTOM), so MPI copies straight between the
// user's arrays and its transport and no pack or unpack pass is needed.
#pragma once
#include <mpi.h>

#include <vector>

#include "redistribute/element.hpp"

namespace pipevd {

class SegmentType {
 public:
  // Segments of elements of `element` (element.hpp): doubles unless told.
  explicit SegmentType(ElementType element = {}) : element_(element) {}
  // Appends len elements at p; merges with the previous segment where they touch.
  void add(const void* p, long len);
  // The committed datatype (the caller frees it), MPI_DATATYPE_NULL when nothing was added.
  MPI_Datatype commit();

 private:
  ElementType element_;
  std::vector<int> lengths_;
  std::vector<MPI_Aint> displacements_;
  const char* end_ = nullptr;  // one past the last segment
};

// `count` contiguous elements at p as a datatype over absolute addresses.
MPI_Datatype contiguous_at(const void* p, long count, ElementType element = {});

}  // namespace pipevd
