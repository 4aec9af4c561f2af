// MessageSource: a producer of messages that the Network calls at two fixed points of every
// cycle, beside (or instead of) its synthetic traffic generator. The workload layer
// (sim/workload/workload.h) is the one implementation: trace replay (netrace, OTF2) and the
// runtime's sim module feed the network through it.
//
// The Network's contract (engine/network.h, Step and SkipIdle):
//   1. CreateMessages(now, net) runs once per stepped cycle, right after the synthetic
//      creations of that cycle and before any router or PE is evaluated; the source creates
//      the messages due at `now` with Network::CreateMessage(src, dst, flits, {}, tag)
//      (a tag >= 0 names the message in its Delivery);
//   2. Delivered(deliveries, lost, now) runs once per stepped cycle, after the commit, with
//      that cycle's deliveries (destination order, the same list as Network::deliveries())
//      and the tags of messages that became undeliverable during the cycle (faults);
//   3. SkipIdle() never jumps the clock past NextCycle(now): when no node is active the
//      clock goes straight to the earlier of the synthetic traffic's next creation and
//      NextCycle(now).
// With no source set, the Network behaves exactly as without this interface.
//
// Ownership: the Network does not own its source (Network::SetMessageSource), which must
// outlive every Step(). Thread safety: called from the thread that steps the Network.
#ifndef UKAI_SIM_ENGINE_MESSAGE_SOURCE_H_
#define UKAI_SIM_ENGINE_MESSAGE_SOURCE_H_

#include <cstdint>
#include <limits>
#include <span>

namespace ukai::sim {

class Network;
struct Delivery;

class MessageSource {
 public:
  // NextCycle()'s answer when only a delivery can make the source create anything.
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  virtual ~MessageSource() = default;

  // Creates (net->CreateMessage) every message due at cycle `now`.
  virtual void CreateMessages(int64_t now, Network* net) = 0;
  // The cycle's deliveries and the tags of the messages that became undeliverable.
  virtual void Delivered(std::span<const Delivery> deliveries, std::span<const int64_t> lost,
                         int64_t now) = 0;
  // The earliest cycle >= now at which CreateMessages() has something to create without a
  // delivery happening first; kNever when there is none.
  virtual int64_t NextCycle(int64_t now) const = 0;
};

}  // namespace ukai::sim

#endif  // UKAI_SIM_ENGINE_MESSAGE_SOURCE_H_
