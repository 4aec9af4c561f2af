// The runtime's seam to the OTF2 recorder (src/rt/trace/; docs/otf2-recording.md): opening
// it, the send path, frames that arrive unexpected, and the end of the job's archive. Every
// caller checks recorder_ first, so a runtime that does not record pays one branch.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "rt/core/runtime_impl.h"
#include "rt/core/thread_pool.h"
#include "rt/trace/archive.h"
#include "rt/trace/recorder.h"

namespace ukai::rt::internal {
namespace {

// The RMA layer's own RSRs are recorded as RMA events (rma.cc), not as messages.
bool RecordedHandler(uint32_t handler) {
  return handler != HandlerId::Of("ukai.rma.request").value &&
         handler != HandlerId::Of("ukai.rma.reply").value;
}

std::string Canonical(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(dir, ec);
  return ec ? dir : p.string();
}

thread_local trace::Location* tls_trace_location = nullptr;

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "localhost";
  return host;
}

}  // namespace

Status RuntimeImpl::StartTracing() {
  if (options_.otf2.empty()) return Status::Ok();
  trace::RecorderOptions o;
  o.dir = Canonical(options_.otf2);
  o.rank = bootstrap_->rank();
  o.size = bootstrap_->size();
  for (const DescriptorTable& t : world_) o.world.push_back(t.runtime);
  o.host = HostName();
  // `ukai launch --otf2 DIR` names the archive it merges after the job (launcher.cc).
  const char* launcher = std::getenv("UKAI_OTF2_LAUNCHER");
  launcher_merges_ =
      bootstrap_->name() == "launcher" && launcher != nullptr && Canonical(launcher) == o.dir;
  Result<std::unique_ptr<trace::Recorder>> r = trace::Recorder::Open(std::move(o));
  if (!r.ok()) return r.status().WithContext("--ukai-otf2");
  recorder_ = std::move(*r);
  Trace("recording OTF2 into " + recorder_->dir() +
        (launcher_merges_ ? " (ukai launch merges)" : " (rank 0 merges in Finalize)"));
  return Status::Ok();
}

Status RuntimeImpl::FinishTracing() {
  if (!recorder_) return Status::Ok();
  Status st = recorder_->Finish();
  const trace::RecorderStats s = recorder_->stats();
  Trace("OTF2 part of rank " + std::to_string(recorder_->rank()) + ": " +
        std::to_string(s.locations) + " locations, " + std::to_string(s.events) + " events" +
        (st.ok() ? "" : ": " + st.ToString()));
  if (launcher_merges_) return st;
  // Every rank's part is complete once all passed the barrier; rank 0 then merges.
  Status barrier = bootstrap_->Barrier();
  if (!barrier.ok()) return barrier.WithContext("OTF2: the barrier before the merge");
  if (recorder_->rank() != 0) return st;
  Result<trace::MergeReport> merged = trace::MergeArchive(recorder_->dir(), recorder_->size());
  if (!merged.ok()) return merged.status();
  Trace(trace::Describe(*merged));
  return st;
}

TraceScope::TraceScope(trace::Location* loc) : prev_(tls_trace_location) {
  if (loc != nullptr) tls_trace_location = loc;
}
TraceScope::~TraceScope() { tls_trace_location = prev_; }

trace::Location* RuntimeImpl::TraceLocation() const {
  ContextState* cs = CurrentHandlerContext();
  if (cs != nullptr && recorder_->Owns(cs->trace)) return cs->trace;
  if (recorder_->Owns(tls_trace_location)) return tls_trace_location;
  return recorder_->main();
}

trace::Location* RuntimeImpl::ProgressLocation() const { return recorder_->progress(); }

Status RuntimeImpl::SendRecorded(Peer& peer, FrameClass cls, ByteBlock&& frame, uint64_t answer) {
  Result<wire::FrameHeader> h = wire::DecodeHeader(frame.span());
  if (!h.ok() || !RecordedHandler(h->handler)) {
    return peer.log.Send(*peer.object, cls, std::move(frame));
  }
  // The user's bytes: without the request trailer or the reply trailer. An answer travels on
  // the answers' communicator, its tag the request's id (recorder.h: MPI matching).
  uint64_t payload = h->payload_len;
  uint32_t comm = trace::kWorldComm, tag = h->handler;
  if ((h->flags & wire::kFlagRequest) != 0) payload -= wire::kRequestTrailer;
  if ((h->flags & wire::kFlagReply) != 0 &&
      frame.size() >= wire::kHeaderSize + wire::kReplyTrailer) {
    payload -= wire::kReplyTrailer;
    comm = trace::kAnswerComm;
    tag = trace::AnswerTag(wire::GetLe64(frame.data() + frame.size() - wire::kReplyTrailer));
  }
  return recorder_->SendAndRecord(
      TraceLocation(), h->target, comm, tag, payload,
      [&] { return peer.log.Send(*peer.object, cls, std::move(frame)); }, answer);
}

void RuntimeImpl::TraceArrival(const wire::FrameHeader& h, uint64_t payload, uint64_t answer_to) {
  if (!RecordedHandler(h.handler)) return;
  if ((h.flags & wire::kFlagRequest) != 0 && payload >= wire::kRequestTrailer) {
    payload -= wire::kRequestTrailer;  // the user's bytes, as the sender recorded them
  }
  const bool answer = (h.flags & wire::kFlagReply) != 0;
  recorder_->Arrival(recorder_->progress(), h.source,
                     answer ? trace::kAnswerComm : trace::kWorldComm,
                     answer ? trace::AnswerTag(answer_to) : h.handler, payload);
}

void RuntimeImpl::TraceAnswered(PendingRequest& p, const wire::FrameHeader& h, uint64_t bytes) {
  recorder_->CompleteReceive(p.trace_location, p.trace_request, h.source, trace::kAnswerComm,
                             trace::AnswerTag(p.id), bytes);
}

void RuntimeImpl::InvokeTraced(const HandlerEntry* he, Rsr& rsr) {
  ContextState* cs = CurrentHandlerContext();
  trace::Location* loc =
      cs != nullptr && RecordedHandler(rsr.handler().value) ? cs->trace : nullptr;
  recorder_->HandlerStart(loc, rsr.source(), rsr.handler().value, rsr.payload().size());
  InvokeHandlerBody(he, rsr);
  recorder_->HandlerEnd(loc);
}

Status RuntimeImpl::Barrier() {
  WaitScope scope;  // a handler thread may wait here (thread_pool.h)
  trace::Location* loc = recorder_ ? TraceLocation() : nullptr;
  if (recorder_) recorder_->BarrierBegin(loc);
  // Under sim the barrier's frames cross the simulated network (SimBarrier).
  Status st = vt_ != nullptr ? SimBarrier() : bootstrap_->Barrier();
  if (recorder_) recorder_->BarrierEnd(loc);
  return st;
}

// A dissemination barrier over the world: in round k (distance d = 2^k) this rank sends to
// rank + d and waits, in the runtime, for rank - d; ceil(log2 n) rounds. No rank leaves
// before every rank entered, and each round takes the simulated network's time.
Status RuntimeImpl::SimBarrier() {
  vt_->ThreadCall("Barrier");
  const int n = static_cast<int>(world_.size());
  const int me = rank();
  if (n <= 1) return Status::Ok();
  const uint64_t seq = ++barrier_seq_;
  for (int round = 0, d = 1; d < n; ++round, d *= 2) {
    const RuntimeId to = world_[(me + d) % n].runtime;
    const RuntimeId from = world_[(me - d + n) % n].runtime;
    Status st = vt_->BarrierSend(to, seq, round);
    if (!st.ok()) return st.WithContext("Barrier (round " + std::to_string(round) + ")");
    for (;;) {
      Result<bool> got = vt_->BarrierArrived(from, seq, round);
      if (!got.ok()) {
        return got.status().WithContext("Barrier (round " + std::to_string(round) + ")");
      }
      if (*got) break;
      if (Progress() == 0) std::this_thread::yield();  // a wait in the runtime
    }
  }
  vt_->ThreadCall("Barrier");
  return Status::Ok();
}

void RuntimeImpl::TraceRequestEnded(PendingRequest& p) {
  if (recorder_) recorder_->CancelReceive(p.trace_location, p.trace_request);
}

}  // namespace ukai::rt::internal
