#include "rt/rma/rma_direct.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "rt/modules/shm/shm_segment.h"
#include "rt/rma/rma_atomics.h"

namespace ukai::rt::internal {
namespace {

constexpr uint64_t kControlMagic = 0x4c5443414d52554bull;  // "KURMACTL"
constexpr uint64_t kSegmentMagic = 0x4745534d414d524bull;  // "KRMAMSEG"
constexpr uint32_t kDirectVersion = 1;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
size_t RoundUp(size_t n, size_t page) { return (n + page - 1) / page * page; }

uint64_t Random64() {
  std::random_device rd;
  uint64_t r = 0;
  while (r == 0) r = (uint64_t{rd()} << 32) ^ rd();
  return r;
}

// memcpy, except that large copies use `rep movsb` on x86-64: on this machine's CPU (AMD,
// ERMS/FSRM) it copies 1 MiB into a shared mapping at ~72 GB/s where glibc's memcpy does
// ~60 (docs/performance.md); below 256 KiB they are equal.
void Copy(uint8_t* to, const uint8_t* from, size_t n) {
#if defined(__x86_64__)
  if (n >= (size_t{256} << 10)) {
    asm volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(n) : : "memory");
    return;
  }
#endif
  if (n != 0) std::memcpy(to, from, n);
}

bool ProcessGone(int32_t pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

// True when `self` may be on the target's block list (or the list is being rewritten, or
// too long to publish): the software path then decides.
bool MaybeBlocked(const DirectControl& c, const ProcessId& self) {
  const uint32_t seq = c.blocked_seq.load(std::memory_order_acquire);
  const uint32_t n = c.blocked_count.load(std::memory_order_relaxed);
  if ((seq & 1) != 0 || n > kDirectMaxBlocked) return true;
  bool found = false;
  for (uint32_t i = 0; i < n; ++i) {
    found |= c.blocked[i].runtime.load(std::memory_order_relaxed) == self.runtime &&
             c.blocked[i].context.load(std::memory_order_relaxed) == self.context;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return found || c.blocked_seq.load(std::memory_order_relaxed) != seq;
}

}  // namespace

uint64_t HostIdentity() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  if (id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    id = host;
  }
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : id) h = (h ^ ch) * 1099511628211ull;
  return h == 0 ? 1 : h;
}

SequenceLock::SequenceLock(std::atomic<int32_t>* word) : word_(word) {
  if (word_ == nullptr) return;
  const int32_t me = static_cast<int32_t>(getpid());
  for (uint32_t i = 0;; ++i) {
    int32_t owner = 0;
    if (word_->compare_exchange_weak(owner, me, std::memory_order_acquire)) return;
    if (i % 4096 == 4095) {
      // Held for long: take it over from a holder that died, else let it run.
      if (owner != me && ProcessGone(owner) &&
          word_->compare_exchange_strong(owner, me, std::memory_order_acquire)) {
        return;
      }
      sched_yield();
    }
  }
}

SequenceLock::~SequenceLock() {
  if (word_ != nullptr) word_->store(0, std::memory_order_release);
}

DirectSegment::DirectSegment(std::string name, void* base, size_t map_size, uint64_t nonce)
    : name_(std::move(name)), base_(base), map_size_(map_size), nonce_(nonce) {}

DirectSegment::~DirectSegment() {
  Retire();
  munmap(base_, map_size_);
}

void DirectSegment::Retire() {
  static_cast<DirectSegmentHeader*>(base_)->live.store(0, std::memory_order_release);
  if (named_) shm_unlink(name_.c_str());
  named_ = false;
}

uint8_t* DirectSegment::data() const { return static_cast<uint8_t*>(base_) + PageSize(); }

DirectTarget::DirectTarget(std::string name, DirectControl* control, uint64_t host)
    : name_(std::move(name)), control_(control), host_(host) {}

Result<std::unique_ptr<DirectTarget>> DirectTarget::Create(const ProcessId& self) {
  static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                std::atomic<uint64_t>::is_always_lock_free);
  std::string name = shm::FreshShmName();
  const size_t size = RoundUp(sizeof(DirectControl), PageSize());
  Result<void*> base = shm::CreateShmObject(name, size);
  if (!base.ok()) return base.status();
  auto* c = new (*base) DirectControl{};
  c->magic = kControlMagic;
  c->version = kDirectVersion;
  c->owner_pid = static_cast<int32_t>(getpid());
  c->nonce = Random64();
  c->runtime = self.runtime;
  c->context = self.context;
  c->open.store(1, std::memory_order_release);
  return std::unique_ptr<DirectTarget>(new DirectTarget(std::move(name), c, HostIdentity()));
}

DirectTarget::~DirectTarget() {
  Close();
  munmap(control_, RoundUp(sizeof(DirectControl), PageSize()));
}

Result<std::shared_ptr<DirectSegment>> DirectTarget::Allocate(uint32_t segment, uint64_t length) {
  const size_t page = PageSize();
  if (length > (uint64_t{1} << 46)) {
    return Status::InvalidArgument("rma: Allocate of " + std::to_string(length) + " bytes");
  }
  std::string name = shm::FreshShmName();
  const size_t size = page + RoundUp(length, page);
  Result<void*> base = shm::CreateShmObject(name, size);
  if (!base.ok()) return base.status();
  const uint64_t nonce = Random64();
  auto* h = new (*base) DirectSegmentHeader{};
  h->magic = kSegmentMagic;
  h->version = kDirectVersion;
  h->segment = segment;
  h->runtime = control_->runtime;
  h->context = control_->context;
  h->nonce = nonce;
  h->control_nonce = control_->nonce;
  h->length = length;
  h->live.store(1, std::memory_order_release);
  return std::make_shared<DirectSegment>(std::move(name), *base, size, nonce);
}

void DirectTarget::Publish(uint32_t access_id, bool scheduled, const std::set<ProcessId>& blocked) {
  DirectControl& c = *control_;
  // The block list first (seqlock: odd while rewritten), so that a newly blocked process is
  // listed before anything else changes.
  const uint32_t seq = c.blocked_seq.load(std::memory_order_relaxed);
  c.blocked_seq.store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  uint32_t n = 0;
  for (const ProcessId& p : blocked) {
    if (n == kDirectMaxBlocked) break;
    c.blocked[n].runtime.store(p.runtime, std::memory_order_relaxed);
    c.blocked[n].context.store(p.context, std::memory_order_relaxed);
    ++n;
  }
  c.blocked_count.store(blocked.size() > kDirectMaxBlocked ? kDirectMaxBlocked + 1 : n,
                        std::memory_order_relaxed);
  c.blocked_seq.store(seq + 2, std::memory_order_release);
  c.scheduled.store(scheduled ? 1 : 0, std::memory_order_release);
  c.access_id.store(access_id, std::memory_order_seq_cst);
}

void DirectTarget::Close() {
  control_->open.store(0, std::memory_order_seq_cst);
  if (named_) shm_unlink(name_.c_str());
  named_ = false;
}

void DirectTarget::FillKey(const DirectSegment& segment, RemoteKey* key) const {
  key->host = host_;
  key->nonce = segment.nonce();
  key->control_name = name_;
  key->memory_name = segment.name();
}

// ---- initiator ----

struct DirectInitiator::Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base != nullptr) munmap(base, size);
  }
};

struct DirectInitiator::Slot {
  enum State : uint8_t { kMapped, kUnmappable, kRetired };
  uint64_t nonce = 0;
  ProcessId process;
  uint32_t segment = 0;
  std::atomic<uint8_t> state{kUnmappable};
  const DirectControl* control = nullptr;
  const DirectSegmentHeader* header = nullptr;
  uint8_t* data = nullptr;
  uint64_t length = 0;
  Mapping memory;
};

DirectInitiator::DirectInitiator(Runtime& runtime, const ProcessId& self)
    : runtime_(&runtime), self_(self), host_(HostIdentity()) {}

DirectInitiator::~DirectInitiator() = default;

DirectInitiator::Slot* DirectInitiator::Lookup(const RemoteKey& key) {
  const size_t i = (key.nonce * 0x9E3779B97F4A7C15ull) >> 56;
  Slot* s = cache_[i].load(std::memory_order_acquire);
  if (s != nullptr && s->nonce == key.nonce && s->segment == key.segment &&
      s->process == key.process) {
    return s;
  }
  s = MapSlow(key);
  if (s != nullptr) cache_[i].store(s, std::memory_order_release);
  return s;
}

DirectInitiator::Slot* DirectInitiator::MapSlow(const RemoteKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(key.nonce);
  if (it == slots_.end()) it = slots_.emplace(key.nonce, Map(key)).first;
  Slot* s = it->second.get();
  // A second key with the same nonce but another segment is not the key we mapped.
  return s->segment == key.segment && s->process == key.process ? s : nullptr;
}

const DirectInitiator::Mapping* DirectInitiator::MapControl(const RemoteKey& key) {
  auto it = controls_.find(key.control_name);
  if (it != controls_.end()) return it->second.get();
  auto m = std::make_unique<Mapping>();
  Result<void*> base = shm::MapShmObject(key.control_name, &m->size);
  if (!base.ok()) return nullptr;
  m->base = *base;
  const auto* c = static_cast<const DirectControl*>(m->base);
  if (m->size < sizeof(DirectControl) || c->magic != kControlMagic ||
      c->version != kDirectVersion || c->runtime != key.process.runtime ||
      c->context != key.process.context) {
    return nullptr;  // not this key's owner: Mapping unmaps it
  }
  return controls_.emplace(key.control_name, std::move(m)).first->second.get();
}

// Maps the key's control page and segment and checks them against the key. A key that does
// not lead to a mappable segment of its owner gets an unmappable slot (the software path).
std::unique_ptr<DirectInitiator::Slot> DirectInitiator::Map(const RemoteKey& key) {
  auto s = std::make_unique<Slot>();
  s->nonce = key.nonce;
  s->process = key.process;
  s->segment = key.segment;
  if (key.host != host_) return s;
  // Peers reached over shm, or over mpi (ranks of one host); never tcp or inproc, whose
  // tests exercise the software path.
  Result<std::string> module = runtime_->SelectModule(key.route);
  if (!module.ok() || (*module != "shm" && *module != "mpi")) return s;
  const Mapping* control = MapControl(key);
  if (control == nullptr) return s;
  Result<void*> base = shm::MapShmObject(key.memory_name, &s->memory.size);
  if (!base.ok()) return s;
  s->memory.base = *base;
  const size_t page = PageSize();
  const auto* h = static_cast<const DirectSegmentHeader*>(s->memory.base);
  const auto* c = static_cast<const DirectControl*>(control->base);
  if (s->memory.size < page + key.length || h->magic != kSegmentMagic ||
      h->version != kDirectVersion || h->nonce != key.nonce || h->segment != key.segment ||
      h->runtime != key.process.runtime || h->context != key.process.context ||
      h->control_nonce != c->nonce || h->length != key.length) {
    return s;  // e.g. a nonce mismatch: the object is not the key's segment
  }
  s->control = c;
  s->header = h;
  s->data = static_cast<uint8_t*>(s->memory.base) + page;
  s->length = h->length;
  s->state.store(Slot::kMapped, std::memory_order_release);
  return s;
}

// The segment was deregistered: stop using it and give its pages back. Threads that passed
// the checks just before may still be copying: the range is replaced (not unmapped) by
// private anonymous memory, so they touch harmless pages instead of faulting; the range is
// released when this DirectInitiator goes.
void DirectInitiator::Retire(Slot* s) {
  std::lock_guard<std::mutex> lock(mu_);
  uint8_t mapped = Slot::kMapped;
  if (!s->state.compare_exchange_strong(mapped, Slot::kRetired)) return;
  mmap(s->memory.base, s->memory.size, PROT_READ | PROT_WRITE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
}

// The fast-path checks, against the target's published state.
DirectResult DirectInitiator::Admit(const RemoteKey& key, Slot** slot) {
  if (key.nonce == 0) return DirectResult::kNotHere;
  Slot* s = Lookup(key);
  if (s == nullptr) return DirectResult::kNotHere;
  const uint8_t state = s->state.load(std::memory_order_acquire);
  if (state != Slot::kMapped) {
    return state == Slot::kRetired ? DirectResult::kRefused : DirectResult::kNotHere;
  }
  const DirectControl& c = *s->control;
  if (c.access_id.load(std::memory_order_acquire) != key.access_id ||
      c.scheduled.load(std::memory_order_relaxed) == 0 ||
      c.open.load(std::memory_order_relaxed) == 0 ||
      (c.blocked_count.load(std::memory_order_relaxed) != 0 && MaybeBlocked(c, self_))) {
    return DirectResult::kRefused;
  }
  if (s->header->live.load(std::memory_order_acquire) == 0) {
    Retire(s);
    return DirectResult::kRefused;
  }
  *slot = s;
  return DirectResult::kDone;
}

DirectResult DirectInitiator::Put(const RemoteKey& key, uint64_t offset,
                                  std::span<const uint8_t> data) {
  Slot* s = nullptr;
  const DirectResult r = Admit(key, &s);
  if (r != DirectResult::kDone) return r;
  Copy(s->data + offset, data.data(), data.size());
  return r;
}

DirectResult DirectInitiator::Get(const RemoteKey& key, uint64_t offset, std::span<uint8_t> out) {
  Slot* s = nullptr;
  const DirectResult r = Admit(key, &s);
  if (r != DirectResult::kDone) return r;
  Copy(out.data(), s->data + offset, out.size());
  return r;
}

DirectResult DirectInitiator::Atomic(const RemoteKey& key, std::span<const AtomicOp> ops,
                                     std::span<uint64_t> fetched) {
  for (const AtomicOp& a : ops) {
    if ((a.width != 4 && a.width != 8) || a.code < AtomicOpcode::kAdd ||
        a.code > AtomicOpcode::kCas || a.offset > key.length || a.width > key.length - a.offset ||
        a.offset % a.width != 0) {
      return DirectResult::kNotHere;  // Start reports the error
    }
  }
  Slot* s = nullptr;
  const DirectResult r = Admit(key, &s);
  if (r != DirectResult::kDone) return r;
  // The control page is mapped read-write: the lock word is written by every party.
  SequenceLock lock(ops.size() > 1 ? const_cast<std::atomic<int32_t>*>(&s->control->sequence_owner)
                                   : nullptr);
  for (size_t i = 0; i < ops.size(); ++i) fetched[i] = ApplyAt(s->data, ops[i]);
  return r;
}

}  // namespace ukai::rt::internal
