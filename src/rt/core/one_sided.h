// OneSided: remote memory access done by a module's transport itself (mpi: one dynamic MPI
// window per module, MPI_Put/MPI_Get + MPI_Win_flush). The RMA layer uses it for large
// put/get only after the target granted the access through its usual request path (the
// rendezvous of docs/rma.md, "The MPI one-sided path"): no protection check rests on it.
//
// Addresses are window addresses (MPI_Get_address of attached memory), units are bytes.
// Thread safety: every method may be called by any thread concurrently (the mpi module
// requires MPI_THREAD_MULTIPLE); the object lives as long as its module (until Close).
#ifndef UKAI_RT_CORE_ONE_SIDED_H_
#define UKAI_RT_CORE_ONE_SIDED_H_

#include <cstdint>
#include <span>

#include "core/status.h"

namespace ukai::rt {

class OneSided {
 public:
  virtual ~OneSided() = default;
  // Makes [base, base + length) of this process accessible to peers; returns its window
  // address. Memory overlapping an attached range is refused (kFailedPrecondition).
  virtual Result<uint64_t> Attach(uint8_t* base, uint64_t length) = 0;
  // Undoes Attach(base); unknown bases are ignored.
  virtual void Detach(uint8_t* base) = 0;
  // Blocking: writes / reads the bytes at window address `addr` of the peer whose module
  // descriptor is `peer` and returns once they are complete at both ends.
  virtual Status Put(std::span<const uint8_t> peer, uint64_t addr,
                     std::span<const uint8_t> data) = 0;
  virtual Status Get(std::span<const uint8_t> peer, uint64_t addr, std::span<uint8_t> out) = 0;
};

}  // namespace ukai::rt

#endif  // UKAI_RT_CORE_ONE_SIDED_H_
