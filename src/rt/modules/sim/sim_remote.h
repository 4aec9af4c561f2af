// The `sim` module's link to a simulated machine hosted by `ukai launch --sim` (the launcher's
// side: rt/launch/sim_host.h; the messages: sim_wire.h). Every SimLink call is forwarded, in
// order, over the inherited socket UKAI_SIM_FD; the launcher replays it on its SimFabric on
// behalf of the calling thread, so the time rules are the fabric's, once.
//
// Threads: each thread that calls gets a number in this process; its CPU time
// (CLOCK_THREAD_CPUTIME_ID) travels with its calls, minus the time it spent in waits the
// launcher already knows it waits in (repeated idle rounds are told once per dispatch epoch).
// A thread whose idle round the launcher knows, and that saw everything, sleeps (at most
// 5 ms) until something happens in this process that it may wait for (an arrival, a
// dispatch, a handler's end, a peer event, a taken count) instead of spinning.
// While frames delivered to this process are not yet reported dispatched (the launcher holds
// the machine at this runtime's clock meanwhile), its messages are corked and go in one
// write with the next dispatch report, now request or leave (Write in sim_remote.cc); a
// report made by a program thread is corked too, and so are the calls and posts of a
// program thread the launcher already has busy (it holds the machine at the runtime's clock
// meanwhile), until the next message of the process that is not corked (that thread's next
// round, as a rule) or a pass of another thread (FlushHeld).
// ThreadWaits: a thread waits in the runtime (the progress thread need not be woken for
// arrivals: that thread's wait takes them).
// The launcher's messages (arrivals, peer events, now replies, taken counts) are read by the
// first thread that sleeps waiting in the runtime (or for a now reply), polling the socket
// itself; a reader thread reads them while no thread waits. The CPU time is not read (0
// is sent) when the launcher's welcome says the machine charges none (sim.cpu_scale = 0). A broken
// channel (the launcher died, a bad message) stops the runtime: every peer is gone (kUnavailable)
// and the error names the channel.
//
// Thread safety: every method may be called from any thread.
#ifndef UKAI_RT_MODULES_SIM_SIM_REMOTE_H_
#define UKAI_RT_MODULES_SIM_SIM_REMOTE_H_

#include <memory>
#include <string>

#include "core/status.h"
#include "rt/modules/sim/sim_link.h"

namespace ukai::rt {

// The link over descriptor `fd` (decimal text) for rank `rank` (decimal text); kInvalidArgument
// when either is not a number or `fd` is not a socket.
Result<std::shared_ptr<SimLink>> NewRemoteSimLink(const std::string& fd, const std::string& rank);

}  // namespace ukai::rt

#endif  // UKAI_RT_MODULES_SIM_SIM_REMOTE_H_
