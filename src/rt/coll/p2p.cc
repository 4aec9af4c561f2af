// Point-to-point Send/Recv in a group, direct or split over the direct path and K relays
// (the full-mesh patent's embodiments 1-2, 6): the message is cut into K + 1 parts (whole
// elements), assigned to the receiver and the relays in rank order ([0108]); the receiver's
// part goes straight to it, each relay's goes to the relay (kRelay), whose progress engine
// forwards it (kP2p) without any call of the relay's program. Messages are matched by
// (sender, tag, n-th message between them with that tag), so sends and receives pair up in
// order; parts are placed by offset, in whatever order they arrive. A message that comes
// before its Recv waits (a copy) until the Recv is posted.
#include <algorithm>
#include <cstring>

#include "rt/coll/algorithms.h"
#include "rt/coll/group_state.h"
#include "rt/core/runtime_impl.h"

namespace ukai::rt::internal {

using coll::Header;
using coll::MsgKind;

namespace {

constexpr size_t kPoolBodyBytes = size_t{16} << 10;

Buffer PackMessage(Runtime& rt, const Header& h, std::span<const uint8_t> body) {
  if (body.size() < kPoolBodyBytes) return coll::MakeMessage(h, body);
  const size_t size = coll::kCollHeaderBytes + body.size();
  Buffer b = rt.NewBuffer(size);
  ByteBlock& blk = b.block();
  const size_t at = blk.size();
  blk.Resize(at + size);
  coll::EncodeHeader(h, blk.data() + at);
  std::memcpy(blk.data() + at + coll::kCollHeaderBytes, body.data(), body.size());
  return b;
}

}  // namespace

CollRequest GroupState::PostSend(const PostArgs& p, int dest, int tag, const CollOptions& o) {
  Outbox out;
  std::shared_ptr<CollOp> op;
  {
    std::lock_guard<std::mutex> lock(mu_);
    op = MakeOp(p, 0, nullptr);
    Status problem = closed_ ? closed_why_ : p.error;
    if (problem.ok() && (members_[dest].failed || members_[dest].left)) {
      problem = members_[dest].why;
    }
    Algorithm alg = o.algorithm;
    if (alg == Algorithm::kAuto) {
      alg = coll::SelectAlgorithm(overrides_, Collective::kSendRecv, module_, size(), p.send_bytes,
                                  true);
    }
    std::vector<int> holders{dest};
    if (problem.ok() && alg == Algorithm::kRelay && size() >= 3) {
      const int k = o.relays == 0 ? size() - 2 : o.relays;
      if (k < 1 || k > size() - 2) {
        problem = Status::InvalidArgument("Group::Send: relays K = " + std::to_string(k) +
                                          " is out of range (1.." + std::to_string(size() - 2) +
                                          " for a group of " + std::to_string(size()) + ")");
      }
      for (int r = 0; r < size() && static_cast<int>(holders.size()) <= k; ++r) {
        if (r != rank_ && r != dest && !members_[r].failed && !members_[r].left) {
          holders.push_back(r);
        }
      }
      std::sort(holders.begin(), holders.end());
    } else if (alg != Algorithm::kRelay) {
      alg = Algorithm::kDirect;
    }
    if (!problem.ok()) {
      op->End(problem, &out);
    } else {
      Header h;
      h.coll = static_cast<uint8_t>(Collective::kSendRecv);
      h.algorithm = static_cast<uint8_t>(alg);
      h.dtype = static_cast<uint8_t>(p.sig.type);
      h.group = id_;
      h.seq = send_seq_[{dest, tag}]++;
      h.src = static_cast<uint32_t>(rank_);
      h.tag = static_cast<uint32_t>(tag);
      h.root = static_cast<uint32_t>(dest);
      h.count = static_cast<uint64_t>(rank_);
      h.total = p.send_bytes;
      const auto* data = static_cast<const uint8_t*>(p.send);
      const uint64_t element = DataTypeSize(p.sig.type);
      const uint64_t parts = holders.size();
      if (parts == 1 && options_.rendezvous_bytes != 0 &&
          p.send_bytes >= options_.rendezvous_bytes) {  // large, direct: announce it
        h.kind = MsgKind::kP2p;
        sends_[Key{dest, tag, h.seq}] = P2pSend{op, data, h};
        p2p_ops_.push_back(op);
        coll::Header rts = h;
        rts.offset = options_.single_copy ? reinterpret_cast<uint64_t>(data) : 0;
        EmitP2p(MsgKind::kRts, dest, rts, &out, op);
        goto announced;
      }
      for (uint64_t i = 0; i < parts; ++i) {
        const uint64_t b = coll::PartBegin(p.sig.count, parts, i) * element;
        const uint64_t e = coll::PartBegin(p.sig.count, parts, i + 1) * element;
        h.kind = holders[i] == dest ? MsgKind::kP2p : MsgKind::kRelay;
        if (e == b && (holders[i] != dest || p.send_bytes != 0)) continue;
        uint64_t off = b;
        do {
          const uint64_t len = std::min(Segment(), e - off);
          h.offset = off;
          op->Queue(holders[i], PackMessage(runtime(), h, {data + off, len}), &out);
          off += len;
        } while (off < e);
      }
      op->End(Status::Ok(), &out);
    }
  announced:;
  }
  Flush(&out);
  return CollRequest(op);
}

CollRequest GroupState::PostRecv(const PostArgs& p, int source, int tag) {
  Outbox out;
  std::shared_ptr<CollOp> op;
  {
    std::lock_guard<std::mutex> lock(mu_);
    op = MakeOp(p, 0, nullptr);
    Status problem = closed_ ? closed_why_ : p.error;
    if (problem.ok() && (members_[source].failed || members_[source].left)) {
      problem = members_[source].why;
    }
    if (!problem.ok()) {
      op->End(problem, &out);
    } else {
      const Key key{source, tag, recv_seq_[{source, tag}]++};
      P2pRecv& r = recvs_[key];
      r.op = op;
      r.data = static_cast<uint8_t*>(p.recv);
      r.bytes = p.sig.count * DataTypeSize(p.sig.type);
      p2p_ops_.push_back(op);
      if (auto a = announced_.find(key); a != announced_.end()) {
        const coll::Header rts = a->second;
        announced_.erase(a);
        AnswerAnnouncement(key, r, rts, &out);
      }
      auto it = p2p_stash_.find(key);
      if (it != p2p_stash_.end()) {
        std::vector<Stashed> early = std::move(it->second);
        p2p_stash_.erase(it);
        for (const Stashed& m : early) {
          auto rit = recvs_.find(key);
          if (rit == recvs_.end()) break;
          DeliverP2p(rit->second, m.h, m.body, &out);
        }
      }
    }
  }
  Flush(&out);
  return CollRequest(op);
}

void GroupState::OnP2p(const Header& h, std::span<const uint8_t> body, Outbox* out) {
  if (h.root != static_cast<uint32_t>(rank_)) {
    hub_->Reject(Status::InvalidArgument("collectives: a point-to-point part for rank " +
                                         std::to_string(h.root) + " reached rank " +
                                         std::to_string(rank_)));
    return;
  }
  const Key key{static_cast<int>(h.src), static_cast<int>(h.tag), h.seq};
  auto it = recvs_.find(key);
  if (it == recvs_.end()) {
    p2p_stash_[key].push_back(Stashed{h, {body.begin(), body.end()}});
    return;
  }
  DeliverP2p(it->second, h, body, out);
}

void GroupState::DeliverP2p(P2pRecv& r, const Header& h, std::span<const uint8_t> body,
                            Outbox* out) {
  const Key key{static_cast<int>(h.src), static_cast<int>(h.tag), h.seq};
  const auto type = static_cast<DataType>(h.dtype);
  Status bad;
  if (h.total != r.bytes) {
    bad = Status::InvalidArgument("Group::Recv from rank " + std::to_string(h.src) + " tag " +
                                  std::to_string(h.tag) + ": the message has " +
                                  std::to_string(h.total) + " bytes, the buffer " +
                                  std::to_string(r.bytes));
  } else if (type != r.op->type()) {
    bad = Status::InvalidArgument("Group::Recv from rank " + std::to_string(h.src) + " tag " +
                                  std::to_string(h.tag) + ": the message holds " +
                                  std::string(DataTypeName(type)) + ", the buffer " +
                                  std::string(DataTypeName(r.op->type())));
  }
  if (bad.ok()) {
    if (!body.empty()) std::memcpy(r.data + h.offset, body.data(), body.size());
    r.got += body.size();
    r.any = true;
    if (r.got != r.bytes) return;
  }
  std::shared_ptr<CollOp> op = r.op;
  op->End(bad, out);
  recvs_.erase(key);
  std::erase(p2p_ops_, op);
}

void GroupState::EmitP2p(MsgKind kind, int dst, const Header& like, Outbox* out,
                         const std::shared_ptr<CollOp>& op) {
  Header h = like;
  h.kind = kind;
  h.src = static_cast<uint32_t>(rank_);
  h.root = static_cast<uint32_t>(dst);
  h.count = static_cast<uint64_t>(rank_);
  if (kind != MsgKind::kRts) h.offset = 0;
  if (op != nullptr) {
    op->Queue(dst, coll::MakeMessage(h, {}), out);
  } else {
    out->messages.push_back(OutMsg{dst, coll::MakeMessage(h, {}), nullptr});
  }
}

void GroupState::OnP2pControl(const Header& h, Outbox* out) {
  const int peer = static_cast<int>(h.src);
  const Key key{peer, static_cast<int>(h.tag), h.seq};
  if (h.kind == MsgKind::kRts) {  // we receive: answer when the Recv is there
    if (h.root != static_cast<uint32_t>(rank_))
      return hub_->Reject(Status::InvalidArgument(
          "collectives: a point-to-point announcement for rank " + std::to_string(h.root)));
    auto it = recvs_.find(key);
    if (it == recvs_.end()) {
      announced_[key] = h;
    } else {
      AnswerAnnouncement(key, it->second, h, out);
    }
    return;
  }
  auto it = sends_.find(key);  // we send: the receiver asks for the data, or took them
  if (it == sends_.end()) {
    return hub_->Reject(Status::InvalidArgument("collectives: a point-to-point " +
                                                coll::MsgKindName(h.kind) +
                                                " for a message not announced"));
  }
  P2pSend send = std::move(it->second);
  sends_.erase(it);
  if (h.kind == MsgKind::kCts) {
    const uint64_t total = send.h.total;
    Header d = send.h;
    uint64_t off = 0;
    do {
      const uint64_t len = std::min(Segment(), total - off);
      d.offset = off;
      send.op->Queue(peer, PackMessage(runtime(), d, {send.data + off, len}), out);
      off += len;
    } while (off < total);
  }
  send.op->End(Status::Ok(), out);
  std::erase(p2p_ops_, send.op);
}

void GroupState::AnswerAnnouncement(const Key& key, P2pRecv& r, const Header& h, Outbox* out) {
  const int peer = static_cast<int>(h.src);
  std::shared_ptr<CollOp> op = r.op;
  if (h.total != r.bytes || static_cast<DataType>(h.dtype) != op->type()) {
    // The sender is done either way; the receiver reports the mismatch.
    EmitP2p(MsgKind::kFin, peer, h, out);
    Header as_data = h;
    DeliverP2p(r, as_data, {}, out);
    return;
  }
  const coll::MemberProof* from = proofs_ ? &proofs_->at(peer) : nullptr;
  if (h.offset != 0 && from != nullptr && from->pid != 0) {
    const Status read = coll::ReadMember(*from, h.offset, {r.data, r.bytes});
    if (read.ok()) {
      EmitP2p(MsgKind::kFin, peer, h, out);
      op->End(Status::Ok(), out);
      recvs_.erase(key);
      std::erase(p2p_ops_, op);
      return;
    }
    if (read.code() == StatusCode::kUnavailable) {
      op->End(Status::Unavailable("Group::Recv from rank " + std::to_string(peer) + ": " +
                                  read.message()),
              out);
      recvs_.erase(key);
      std::erase(p2p_ops_, op);
      return;
    }
  }
  EmitP2p(MsgKind::kCts, peer, h, out);  // the data come as kP2p parts
}

void GroupState::OnRelay(const Header& h, std::span<const uint8_t> body, Outbox* out) {
  const int dest = static_cast<int>(h.root);
  if (dest >= size() || dest == rank_ || static_cast<int>(h.src) == rank_) {
    hub_->Reject(Status::InvalidArgument("collectives: a relay part for rank " +
                                         std::to_string(h.root) + " reached rank " +
                                         std::to_string(rank_)));
    return;
  }
  Header f = h;
  f.kind = MsgKind::kP2p;
  f.count = static_cast<uint64_t>(rank_);  // forwarded by this rank
  out->messages.push_back(OutMsg{dest, PackMessage(runtime(), f, body), nullptr});
}

}  // namespace ukai::rt::internal
