#include "redistribute/exchange.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace pipevd {

namespace {

std::vector<long> offsets_of(const std::vector<long>& counts) {
  std::vector<long> off(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), off.begin() + 1);
  return off;
}

// `count` elements at element offset `offset` of a buffer, as a datatype relative to the buffer.
MPI_Datatype piece_type(long offset, long count, ElementType element) {
  MPI_Datatype t;
  const int len = static_cast<int>(count);
  const MPI_Aint disp = static_cast<MPI_Aint>(offset) * static_cast<MPI_Aint>(element.bytes);
  MPI_Type_create_hindexed(1, &len, &disp, element.mpi, &t);
  MPI_Type_commit(&t);
  return t;
}

void exchange_in_rounds(const void* send, const std::vector<long>& send_counts,
                        const std::vector<long>& soff, void* recv,
                        const std::vector<long>& recv_counts, const std::vector<long>& roff,
                        MPI_Comm comm, long max_message, ElementType element) {
  const int size = static_cast<int>(send_counts.size());
  long longest = 0;
  for (int r = 0; r < size; ++r) longest = std::max({longest, send_counts[r], recv_counts[r]});
  MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_LONG, MPI_MAX, comm);
  const long rounds = (longest + max_message - 1) / max_message;
  std::vector<int> scount(size), rcount(size), zero(size, 0);
  std::vector<MPI_Datatype> stype(size), rtype(size);
  for (long k = 0; k < rounds; ++k) {
    const long first = k * max_message;
    for (int r = 0; r < size; ++r) {
      const long s = std::clamp(send_counts[r] - first, 0L, max_message);
      const long q = std::clamp(recv_counts[r] - first, 0L, max_message);
      scount[r] = s > 0 ? 1 : 0;
      rcount[r] = q > 0 ? 1 : 0;
      stype[r] = s > 0 ? piece_type(soff[r] + first, s, element) : MPI_DOUBLE;
      rtype[r] = q > 0 ? piece_type(roff[r] + first, q, element) : MPI_DOUBLE;
    }
    MPI_Alltoallw(send, scount.data(), zero.data(), stype.data(), recv, rcount.data(), zero.data(),
                  rtype.data(), comm);
    for (int r = 0; r < size; ++r) {
      if (scount[r]) MPI_Type_free(&stype[r]);
      if (rcount[r]) MPI_Type_free(&rtype[r]);
    }
  }
}

}  // namespace

void exchange(const void* send, const std::vector<long>& send_counts, void* recv,
              const std::vector<long>& recv_counts, MPI_Comm comm, const ExchangeOptions& options,
              ElementType element) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  if (static_cast<int>(send_counts.size()) != size || static_cast<int>(recv_counts.size()) != size)
    throw std::invalid_argument("exchange: one count per rank");
  if (options.max_message < 1 || options.max_message > 2147483647L)
    throw std::invalid_argument("exchange: max_message out of range");
  const std::vector<long> soff = offsets_of(send_counts), roff = offsets_of(recv_counts);
  // Every rank must take the same path: agree on the largest total.
  long largest = std::max(soff[size], roff[size]);
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_LONG, MPI_MAX, comm);
  // The limits are sized in doubles: an element of several doubles counts as that many.
  const long doubles = std::max(1L, element.bytes / static_cast<long>(sizeof(double)));
  if (largest * doubles > options.int_limit) {
    exchange_in_rounds(send, send_counts, soff, recv, recv_counts, roff, comm,
                       std::max(1L, options.max_message / doubles), element);
    return;
  }
  std::vector<int> sc(size), sd(size), rc(size), rd(size);
  for (int r = 0; r < size; ++r) {
    sc[r] = static_cast<int>(send_counts[r]);
    sd[r] = static_cast<int>(soff[r]);
    rc[r] = static_cast<int>(recv_counts[r]);
    rd[r] = static_cast<int>(roff[r]);
  }
  MPI_Alltoallv(send, sc.data(), sd.data(), element.mpi, recv, rc.data(), rd.data(), element.mpi,
                comm);
}

void exchange_typed(std::vector<MPI_Datatype>& send, std::vector<MPI_Datatype>& recv,
                    MPI_Comm comm) {
  const int size = static_cast<int>(send.size());
  std::vector<int> scount(size), rcount(size), zero(size, 0);
  std::vector<MPI_Datatype> stype(size), rtype(size);
  for (int r = 0; r < size; ++r) {
    scount[r] = send[r] != MPI_DATATYPE_NULL ? 1 : 0;
    rcount[r] = recv[r] != MPI_DATATYPE_NULL ? 1 : 0;
    stype[r] = scount[r] ? send[r] : MPI_DOUBLE;
    rtype[r] = rcount[r] ? recv[r] : MPI_DOUBLE;
  }
  MPI_Alltoallw(MPI_BOTTOM, scount.data(), zero.data(), stype.data(), MPI_BOTTOM, rcount.data(),
                zero.data(), rtype.data(), comm);
  for (int r = 0; r < size; ++r) {
    if (send[r] != MPI_DATATYPE_NULL) MPI_Type_free(&send[r]);
    if (recv[r] != MPI_DATATYPE_NULL) MPI_Type_free(&recv[r]);
  }
}

}  // namespace pipevd
