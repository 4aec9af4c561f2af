// Handler errors, refusals and the reply path: what the runtime does when a handler throws,
// when an RSR names a context, endpoint or handler the target does not have, and how a
// reply (or a refusal) travels back to the sender (docs/runtime.md, "Handler errors").
#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>

#include "rt/core/runtime_impl.h"
#include "rt/modules/inproc/inproc_module.h"
#include "rt/modules/sim/sim_fabric.h"
#include "rt/trace/recorder.h"

namespace ukai::rt::internal {

Status CheckHandlerName(std::string_view name) {
  const std::string quoted = "handler name '" + std::string(name) + "'";
  if (name.empty()) return Status::InvalidArgument("handler name is empty");
  if (name.size() > kMaxHandlerName) {
    return Status::InvalidArgument(quoted + " is longer than " + std::to_string(kMaxHandlerName) +
                                   " bytes");
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '/' || c == '-';
    if (!ok) {
      return Status::InvalidArgument(quoted + ": character " + std::to_string(i) +
                                     " is not one of A-Z a-z 0-9 _ . : / -");
    }
  }
  return Status::Ok();
}

std::string EndpointState::Names() {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [id, entry] : handlers) names.push_back(entry->name);
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

bool RuntimeImpl::CheckServiceFrame(const wire::FrameHeader& h, std::span<const uint8_t> payload) {
  const bool request = (h.flags & wire::kFlagRequest) != 0;
  const bool reply = (h.flags & wire::kFlagReply) != 0;
  const std::string from = "frame from runtime " + Hex(h.source);
  if (request && reply) {
    RejectFrame(Status::ParseError(from + ": both the request and the reply flag are set"));
    return false;
  }
  const size_t need = request ? wire::kRequestTrailer : wire::kReplyTrailer;
  if (payload.size() < need) {
    RejectFrame(Status::ParseError(from + ": " + (request ? "request" : "reply") + " payload of " +
                                   std::to_string(payload.size()) + " bytes has no " +
                                   std::to_string(need) + "-byte trailer"));
    return false;
  }
  if (request && wire::GetLe64(payload.data() + payload.size() - need) == 0) {
    RejectFrame(Status::ParseError(from + ": request id 0"));
    return false;
  }
  return true;
}

void RuntimeImpl::HandlerThrew(const HandlerEntry* he, Rsr& rsr, std::exception_ptr thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const BadResultAccess& e) {
    HandlerFailed(he, rsr,
                  e.status().WithContext("handler '" + he->name + "' used a failed Result"));
  } catch (const std::exception& e) {
    HandlerFailed(he, rsr, Status::Internal("handler '" + he->name + "' threw: " + e.what()));
  } catch (...) {
    HandlerFailed(he, rsr,
                  Status::Internal("handler '" + he->name + "' threw a non-standard exception"));
  }
}

void RuntimeImpl::HandlerFailed(const HandlerEntry* he, Rsr& rsr, const Status& failed) {
  handler_errors_.fetch_add(1, std::memory_order_relaxed);
  Trace("handler failed (RSR from " + Hex(rsr.source()) + "): " + failed.ToString());
  ReportError(ErrorEvent{ErrorEvent::Kind::kHandlerFailed, rsr.source(), rsr.context().id(),
                         rsr.endpoint().id(), rsr.handler(), he->name, failed});
  if (rsr.request_id() != 0) AnswerIfUnanswered(he, rsr, failed);
}

void RuntimeImpl::AnswerIfUnanswered(const HandlerEntry* he, Rsr& rsr, const Status& failed) {
  std::shared_ptr<Replier::State>& r = rsr.ReplierState();
  if (failed.ok() && r->taken.load()) return;  // answered later through the Replier
  if (r->answered.exchange(true)) return;
  const Status why =
      failed.ok()
          ? Status::FailedPrecondition("handler '" + he->name + "' returned without replying")
          : failed;
  Status st = SendAnswer(*r, ByteBlock(), why);
  if (!st.ok()) Trace("could not answer request of " + Hex(rsr.source()) + ": " + st.ToString());
}

Status RuntimeImpl::SendAnswer(const Replier::State& r, ByteBlock&& body, const Status& status) {
  wire::FrameHeader of;
  of.context = r.context;
  of.endpoint = r.endpoint;
  of.handler = r.handler;
  return SendReply(r.to, of, r.request, std::move(body), status);
}

void RuntimeImpl::ReportError(const ErrorEvent& e) {
  if (!options_.on_error) return;
  try {
    options_.on_error(e);
  } catch (...) {  // documented: ignored (the callback runs on runtime threads)
  }
}

std::string RuntimeImpl::MissingTarget(const wire::FrameHeader& h) const {
  std::shared_ptr<ContextState> cs;
  {
    std::shared_lock<std::shared_mutex> lock(contexts_mu_);
    auto it = contexts_.find(h.context);
    if (it != contexts_.end()) cs = it->second;
  }
  const std::string context = "context " + std::to_string(h.context);
  if (!cs || cs->phase.load() == ContextState::Phase::kClosing) return "has no " + context;
  EndpointState* es = cs->FindEndpoint(h.endpoint);
  if (es == nullptr) return "has no endpoint " + std::to_string(h.endpoint) + " in " + context;
  const std::string names = es->Names();
  return "has no handler " + std::to_string(h.handler) + " on endpoint " +
         std::to_string(h.endpoint) + " of " + context + " (its handlers: " + names + ")";
}

void RuntimeImpl::Refuse(const wire::FrameHeader& h, std::span<const uint8_t> payload) {
  if ((h.flags & wire::kFlagReply) != 0) return;
  if (recorder_) TraceArrival(h, payload.size());  // dropped here: received, never handled
  const Status why = Status::NotFound("runtime " + Hex(id_) + " " + MissingTarget(h));
  Trace("refused RSR from " + Hex(h.source) + ": " + why.ToString());
  const uint64_t request = SplitRequest(h, &payload);
  // The refusal is sent where the refused frame was received (OTF2: the progress location).
  std::optional<TraceScope> trace;
  if (recorder_) trace.emplace(ProgressLocation());
  Status st = SendReply(h.source, h, request, ByteBlock(), why);
  if (!st.ok()) Trace("could not tell " + Hex(h.source) + " of the refusal: " + st.ToString());
}

Status RuntimeImpl::SendReply(RuntimeId to, const wire::FrameHeader& of, uint64_t request,
                              ByteBlock&& body, const Status& status) {
  Result<Peer*> peer = PeerById(to);
  if (!peer.ok()) return peer.status();
  ByteBlock frame = std::move(body);
  if (frame.size() < wire::kHeaderSize) frame.Resize(wire::kHeaderSize);
  if (!status.ok()) {
    frame.Resize(wire::kHeaderSize);
    const std::string& m = status.message();
    if (!m.empty()) std::memcpy(frame.Extend(m.size()), m.data(), m.size());
  }
  uint8_t* t = frame.Extend(wire::kReplyTrailer);
  wire::PutLe64(t, request);
  wire::PutLe32(t + 8, static_cast<uint32_t>(status.code()));
  const size_t payload = frame.size() - wire::kHeaderSize;
  if (payload > (*peer)->max_payload) {
    return Status::OutOfRange("reply of " + std::to_string(payload) + " bytes exceeds the " +
                              std::string((*peer)->module->name()) + " limit of " +
                              std::to_string((*peer)->max_payload));
  }
  wire::FrameHeader h;
  h.kind = wire::FrameKind::kRsr;
  h.flags = wire::kFlagReply;
  h.payload_len = static_cast<uint32_t>(payload);
  h.source = id_;
  h.target = to;
  h.context = of.context;
  h.endpoint = of.endpoint;
  h.handler = of.handler;
  wire::EncodeHeader(h, {frame.data(), wire::kHeaderSize});
  return SendLogged(**peer, FrameClass::kAnswer, std::move(frame));
}

Result<Peer*> RuntimeImpl::RecordedPeer(RuntimeId rid) {
  std::lock_guard<std::mutex> lock(peers_mu_);
  auto it = peers_.find(rid);
  if (it == peers_.end() || !it->second.object) return nullptr;
  UKAI_RETURN_IF_ERROR(PeerRefuses(it->second, rid));
  return &it->second;
}

Result<Peer*> RuntimeImpl::PeerById(RuntimeId rid) {
  Result<Peer*> recorded = RecordedPeer(rid);
  if (!recorded.ok() || *recorded != nullptr) return recorded;
  {
    // Another thread's connect to `rid` may have made the channel live (the peer sends on
    // it, and we answer here) before it recorded the entry: wait for that connect.
    std::unique_lock<std::mutex> lock(connect_mu_);
    const std::thread::id self = std::this_thread::get_id();
    connect_cv_.wait(lock, [&] {
      auto it = connecting_.find(rid);
      return it == connecting_.end() || it->second == self;
    });
  }
  recorded = RecordedPeer(rid);
  if (!recorded.ok() || *recorded != nullptr) return recorded;
  std::shared_ptr<const DescriptorTable> table;
  if (rid == id_) table = table_;
  for (const DescriptorTable& t : world_) {
    if (!table && t.runtime == rid) table = std::make_shared<const DescriptorTable>(t);
  }
  const Descriptor* inproc = table_->Find("inproc");
  if (!table && inproc != nullptr && options_.inproc_fabric && options_.inproc_fabric->Has(rid)) {
    table = std::make_shared<const DescriptorTable>(DescriptorTable{rid, {*inproc}});
  }
  const Descriptor* sim = table_->Find("sim");
  if (!table && sim != nullptr && options_.sim_fabric && options_.sim_fabric->Has(rid)) {
    table = std::make_shared<const DescriptorTable>(DescriptorTable{rid, {*sim}});
  }
  if (!table) return Status::Unavailable("no way back to runtime " + Hex(rid));
  return PeerFor(Startpoint(std::move(table), 1, 1));
}

void RuntimeImpl::HandleReply(Delivered& d) {
  const wire::FrameHeader& h = d.header;
  const size_t n = d.payload.size() - wire::kReplyTrailer;
  const uint8_t* t = d.payload.data() + n;
  const uint64_t request = wire::GetLe64(t);
  const uint32_t code = wire::GetLe32(t + 8);
  Status status;
  if (code != 0) {
    const auto* m = reinterpret_cast<const char*>(d.payload.data());
    status = Status(
        code <= static_cast<uint32_t>(kLastStatusCode) ? StatusCode(code) : StatusCode::kInternal,
        std::string(m, n));
  }
  if (request == 0) {  // the refusal of a plain RSR
    if (recorder_) TraceArrival(h, n);
    rsr_refused_.fetch_add(1, std::memory_order_relaxed);
    if (status.ok()) status = Status::Internal("refusal without an error");
    ReportError(ErrorEvent{ErrorEvent::Kind::kRsrRefused, h.source, h.context, h.endpoint,
                           HandlerId{h.handler}, "", status});
    return;
  }
  ByteBlock storage = std::move(d.storage);
  std::span<const uint8_t> body = d.payload.first(n);
  if (!status.ok()) {
    body = {};
  } else if (storage.empty() && n != 0) {  // module memory: the Reply must own its bytes
    storage.Resize(n);
    std::memcpy(storage.data(), body.data(), n);
    body = storage.span();
  }
  std::shared_ptr<PendingRequest> p = requests_.Take(request, h.source);
  if (!p) {
    if (recorder_) TraceArrival(h, n, request);  // late: the request ended before
    Trace("dropped a reply from " + Hex(h.source) + " for request " + std::to_string(request) +
          " (completed already, or not ours)");
    return;
  }
  if (recorder_) TraceAnswered(*p, h, n);
  Finish(p, Reply(status, h.source, std::move(storage), body));
}

}  // namespace ukai::rt::internal
