// An emulation of the CUDA runtime calls step07 makes, for a machine without
// a GPU. It runs the work in the worst order a GPU may legally choose:
//
// - Work queued on a stream runs only when something forces it: an event or
//   stream synchronize, a device synchronize (cudaFree is one), or a wait on
//   an event that another stream's forced work needs. What must run then runs
//   in an order drawn from a seed (LAB_EMULATION_SEED, printed once): which
//   stream goes first among those that may is decided afresh at every force.
// - A copy back into host memory leaves NaN in its destination until it is
//   forced: a host buffer read too early holds poison.
// - Every copy and product is checked, as it is queued, against the earlier
//   work on the same device memory: a read of memory that a copy or product
//   on another stream writes, with no chain of events and waits (or host
//   synchronizations) between them, is a race, and so is a write over memory
//   that work on another stream may still read or write. The call that
//   queues it fails (LAB_CUDA_CHECK throws) with the missing ordering named,
//   and the event of step07's streams.cpp that orders it (step07_event):
//     compute read panel 3 of buffer slot 1 before its copy completed: no wait on its event panel_ready[1] (or ...)
//     h2d copy of panel 5 into buffer slot 1 while the product that reads it is still queued on compute: ...
//   (names come from engine.cpp's describe calls; the race is found whatever
//   the seed, since the check follows the events, not the order the work ran in).
// - Copies between device allocations (cudaMemcpyDefault or DeviceToDevice,
//   panels shared between GPU entries) are checked like the others: a peer
//   copy into a buffer whose product is still queued on the receiver's
//   stream, with no wait on its event, is a race.
// - Two emulated devices (ids 0 and 1); streams, events, allocations and
//   cuBLAS handles belong to the device current when they were made. An
//   event recorded on another device's stream, a cuBLAS call made while
//   another device is current, or a copy between the two devices without
//   peer access enabled (CUDA would stage it through the host) aborts with a
//   message. cudaDeviceCanAccessPeer says yes, unless LAB_EMULATION_NO_PEER
//   is set (GPUs that cannot reach each other).
// - An asynchronous copy from memory that is not pinned, or a copy or product
//   outside a device allocation, aborts with a message.
// - log_queue() and unordered() tell whether copies and products may run at
//   once: pairs of them that no chain of events orders.
// What it cannot show: the speed, whether copies and products do overlap on a
// GPU, and any host-side reading of memory a copy has not finished with
// (other than the poison above); those need a GPU (see the handout).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#define LAB_CUDA_EMULATED 1

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101,
  cudaErrorNotReady = 600,
  cudaErrorPeerAccessAlreadyEnabled = 704,
  cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorLaunchFailure = 719
};
enum cudaMemcpyKind {
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2 };
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};
struct CUstream_st {
  int id = 0;
};
struct CUevent_st {
  int id = 0;
};
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;
#define cudaStreamNonBlocking 1u
#define cudaHostAllocPortable 1u
#define cudaHostRegisterPortable 1u

namespace lab_emulated {

/// Stream id -> how many operations of that stream are ordered before (a vector clock).
using Clock = std::map<int, uint64_t>;
inline void join(Clock& into, const Clock& from) {
  for (const auto& [s, n] : from) into[s] = std::max(into[s], n);
}
inline uint64_t at(const Clock& c, int s) {
  auto it = c.find(s);
  return it == c.end() ? 0 : it->second;
}
/// Whether operation `seq` of stream `stream` is ordered before the work whose
/// clock is `later` (by its own stream's order, or a chain of events, waits and
/// host synchronizations); if not, a GPU may run the two at once.
inline bool ordered_before(int stream, uint64_t seq, const Clock& later) { return at(later, stream) >= seq; }

/// Bytes [lo, hi) of a strided 2D region, and whether an operation writes it.
struct Access {
  const char* lo = nullptr;
  const char* hi = nullptr;
  bool write = false;
};
inline Access span(const void* p, size_t pitch, size_t width, size_t height, bool write) {
  const char* c = static_cast<const char*>(p);
  return {c, c + (height == 0 ? 0 : pitch * (height - 1) + width), write};
}
inline bool overlap(const Access& a, const Access& b) { return a.lo < b.hi && b.lo < a.hi; }

/// What an operation is, for the messages: kind "copy", "copy back", "product", "addition";
/// what it moves or writes ("panel 3", "block 2 of the C tile").
struct Label {
  std::string kind, what;
};

struct Op {
  uint64_t seq = 0;                  ///< its position on its stream (1, 2, ...)
  std::function<void()> run;         ///< its effect (none for a record or a wait)
  std::vector<Access> host_reads;    ///< host memory a copy in reads (no poison may land there)
  int wait_stream = -1;              ///< a wait: runs once that stream has run op wait_seq
  uint64_t wait_seq = 0;
  int record = 0;                    ///< a record: the event's id
};

struct Stream {
  int device = 0;
  std::string name = "a stream";
  std::deque<Op> queue;  ///< queued, not yet run
  uint64_t queued = 0, done = 0;
  Clock clock;             ///< what every operation queued next is ordered after
  int self_wait_on = -1;   ///< set when it waited on an event recorded on itself
};

struct Event {
  int device = 0;
  bool recorded = false;
  int stream = -1;
  uint64_t seq = 0;
  Clock clock;
  double t = 0;  ///< when its record ran (host clock)
};

/// An earlier access to device memory, kept until a later write that is
/// ordered after it covers it.
struct Record {
  Access a;
  int stream = 0;
  uint64_t seq = 0;
  Label label;
};
struct Allocation {
  int device = 0;
  const char* end = nullptr;
  std::string name = "a device buffer";
  std::vector<Record> records;
};

/// A queued copy or product with what it is ordered after (the log unordered() reads).
struct Logged {
  int stream = 0;
  uint64_t seq = 0;
  Clock clock;
  std::string kind;
};

struct State {
  std::mutex mu;
  bool logging = false;     ///< log_queue(true): every labelled operation queued goes to `log`
  std::vector<Logged> log;
  std::map<const char*, Allocation> device;
  std::map<const char*, const char*> pinned;
  std::map<int, Stream> streams;
  std::map<int, Event> events;
  std::vector<std::pair<int, int>> peers;  ///< (device, peer): peer access enabled by cudaDeviceEnablePeerAccess
  int next_id = 1;
  std::mt19937_64 rng;
  uint64_t seed = 0;
  State() {
    const char* env = std::getenv("LAB_EMULATION_SEED");
    seed = env && *env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    rng.seed(seed);
    std::fprintf(stderr,
                 "emulated CUDA: queued work runs when forced, streams in an order drawn from seed %llu "
                 "(LAB_EMULATION_SEED=%llu repeats it)\n",
                 static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  }
};
inline State& state() {
  static State s;
  return s;
}
/// What the host thread has waited for (work it queues next is ordered after it).
inline Clock& host_clock() {
  static thread_local Clock c;
  return c;
}
/// The host thread now waits for what `from` is ordered after (streams destroyed
/// since are left out: their work has run, and a thread that drives many
/// streams, call after call, would otherwise carry them all into each copy).
inline void join_host(const State& st, const Clock& from) {
  for (const auto& [sid, n] : from)
    if (st.streams.count(sid)) host_clock()[sid] = std::max(host_clock()[sid], n);
}
/// The label of the next copy or product this thread queues (engine.cpp's describe).
inline Label& next_label() {
  static thread_local Label l;
  return l;
}
/// The race the last failing call of this thread found (support.cpp puts it in the exception).
inline std::string& last_error() {
  static thread_local std::string e;
  return e;
}

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "emulated CUDA: %s\n", what);
  std::abort();
}
inline bool inside(const std::map<const char*, const char*>& m, const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  auto it = m.upper_bound(c);
  if (it == m.begin()) return false;
  --it;
  return c >= it->first && c + bytes <= it->second;
}
/// The device allocation holding [p, p + bytes), or nullptr.
inline Allocation* device_at(State& st, const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  auto it = st.device.upper_bound(c);
  if (it == st.device.begin()) return nullptr;
  --it;
  return c >= it->first && c + bytes <= it->second.end ? &it->second : nullptr;
}
inline Allocation& require_device(State& st, const void* p, size_t bytes) {
  Allocation* a = device_at(st, p, bytes);
  if (!a) fail("a copy or product reaches outside a device allocation");
  return *a;
}
inline void require_pinned(State& st, const void* p, size_t bytes) {
  if (!inside(st.pinned, p, bytes)) fail("an asynchronous copy from host memory that is not pinned");
}
inline int& current_device() {
  static thread_local int d = 0;
  return d;
}

// ---- running what is forced ------------------------------------------------

inline bool runnable(const State& st, const Op& op) {
  if (op.wait_stream < 0) return true;
  auto it = st.streams.find(op.wait_stream);
  return it == st.streams.end() || it->second.done >= op.wait_seq;
}

inline void run_head(State& st, Stream& s) {
  Op op = std::move(s.queue.front());
  s.queue.pop_front();
  if (op.run) op.run();
  if (op.record) {
    auto it = st.events.find(op.record);
    if (it != st.events.end())
      it->second.t = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  s.done = op.seq;
}

/// Runs what stream `sid` needs to have run its operation `upto`: its own
/// earlier work and, through its waits, the other streams' work up to the
/// events it waits for; nothing else. Among the streams that may go on, the
/// order is drawn from the seed.
inline void force(State& st, std::map<int, uint64_t> need) {
  // Each stream's queue is scanned once, from where the last scan of it
  // stopped, as far as it is needed; a wait that needs more of another
  // stream puts that stream back on the list.
  std::map<int, uint64_t> scanned;
  std::vector<int> todo;
  for (const auto& n : need) todo.push_back(n.first);
  while (!todo.empty()) {
    const int sid = todo.back();
    todo.pop_back();
    auto it = st.streams.find(sid);
    if (it == st.streams.end() || it->second.queue.empty()) continue;
    const std::deque<Op>& q = it->second.queue;
    const uint64_t first = q.front().seq, upto = need[sid];
    for (uint64_t seq = std::max(first, scanned[sid] + 1); seq <= upto && seq - first < q.size(); ++seq) {
      const Op& op = q[size_t(seq - first)];
      if (op.wait_stream >= 0 && need[op.wait_stream] < op.wait_seq) {
        need[op.wait_stream] = op.wait_seq;
        todo.push_back(op.wait_stream);
      }
    }
    scanned[sid] = std::max(scanned[sid], upto);
  }
  std::vector<int> order;
  for (const auto& n : need) order.push_back(n.first);
  std::shuffle(order.begin(), order.end(), st.rng);
  for (;;) {
    bool pending = false, ran = false;
    for (int sid : order) {
      auto it = st.streams.find(sid);
      if (it == st.streams.end()) continue;
      Stream& s = it->second;
      while (!s.queue.empty() && s.queue.front().seq <= need[sid] && runnable(st, s.queue.front())) {
        run_head(st, s);
        ran = true;
      }
      pending = pending || (!s.queue.empty() && s.queue.front().seq <= need[sid]);
    }
    if (!pending) return;
    if (!ran) fail("the streams wait for each other in a cycle");
    std::shuffle(order.begin(), order.end(), st.rng);
  }
}
inline void force_all(State& st) {
  std::map<int, uint64_t> need;
  for (const auto& [sid, s] : st.streams) need[sid] = s.queued;
  force(st, need);
}

// ---- the race check ------------------------------------------------------

inline std::string writer_phrase(const Stream& s, const Label& l, const Allocation& al) {
  if (l.kind == "copy" || l.kind == "peer copy")
    return s.name + " " + l.kind + (l.what.empty() ? "" : " of " + l.what) + " into " + al.name;
  return s.name + " " + (l.kind.empty() ? "work" : l.kind) + " into " + (l.what.empty() ? al.name : l.what);
}

/// The event of step07's streams.cpp that orders work queued on stream `mine` after work of
/// stream `other` on `memory` (the names engine.cpp gives: "h2d", "compute of entry 1",
/// "buffer slot 0", "the C tile", "the C-in buffer"; `block`: "block 3 of the C tile"), or ""
/// where that is not one of them (the peer copies of the given share.cpp).
inline std::string step07_event(const std::string& mine, const std::string& other, const std::string& memory,
                                const std::string& block) {
  auto first = [](const std::string& name) { return name.substr(0, name.find(' ')); };
  auto number_after = [](const std::string& text, const std::string& word) -> std::string {
    const size_t at = text.find(word);
    if (at == std::string::npos) return "";
    size_t end = at + word.size();
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    return text.substr(at + word.size(), end - at - word.size());
  };
  const std::string q = first(mine), o = first(other);
  const std::string slot = number_after(memory, "buffer slot "), j = number_after(block, "block ");
  if (!slot.empty()) {
    if (q == "compute" && o == "h2d") return "panel_ready[" + slot + "]";
    if (q == "h2d" && o == "compute") return "panel_free[" + slot + "]";
    return "";
  }
  if (memory.rfind("the C tile", 0) == 0) {
    if (q == "d2h" && o == "compute") return "c_done";
    // (a load of C into the tile on h2d waits for c_stored too: it comes after the products and the copy back)
    if ((q == "compute" && o == "d2h") || (q == "h2d" && (o == "d2h" || o == "compute")))
      return j.empty() ? "c_stored[j]" : "c_stored[" + j + "]";
    if (q == "compute" && o == "h2d") return "c_loaded";
    return "";
  }
  if (memory == "the C-in buffer") {
    if (q == "compute" && o == "h2d") return "c_in_ready";
    if (q == "h2d" && o == "compute") return "c_in_free";
  }
  return "";
}

inline std::string race_message(const State& st, const Stream& s, const Label& mine, const Access& a,
                                 const Record& r, const Allocation& al) {
  const std::string other = st.streams.count(r.stream) ? st.streams.at(r.stream).name : "another stream";
  const std::string rk = r.label.kind.empty() ? "work" : r.label.kind;
  // (which wait was meant cannot be told: a wait on an event recorded before the
  // work, or never recorded, orders nothing, as no wait at all)
  const std::string block = mine.what.find("block ") != std::string::npos ? mine.what : r.label.what;
  const std::string event = step07_event(s.name, other, al.name, block);
  std::string why = "no wait on its event" + (event.empty() ? "" : " " + event) +
                    " (or one recorded before it, or never: such a wait returns at once)";
  if (s.self_wait_on >= 0)
    why = "the event " + s.name + " waited for was recorded on " + s.name + " itself, not on " + other;
  if (r.a.write && !a.write) {
    if (rk == "copy" || rk == "peer copy")
      return s.name + " read " + (r.label.what.empty() ? "the data" : r.label.what) + " of " + al.name +
             " before its " + rk + " completed: " + why;
    const std::string what = !mine.what.empty() ? mine.what : !r.label.what.empty() ? r.label.what : al.name;
    return s.name + " read " + what + " before the " + rk + " writing it completed (on " + other + "): " + why;
  }
  if (!r.a.write)
    return writer_phrase(s, mine, al) + " while the " + rk + " that reads it is still queued on " + other + ": " +
           why;
  return writer_phrase(s, mine, al) + " while the " + rk + (r.label.what.empty() ? "" : " of " + r.label.what) +
         " on " + other + " may still be writing it: " + why;
}

/// Checks an operation about to be queued on `s` against the earlier work on
/// the device memory it touches; returns the race, or "" (and then records it).
inline std::string check_and_record(State& st, int sid, Stream& s, uint64_t seq, const std::vector<Access>& device,
                                    const Label& label) {
  for (const Access& a : device) {
    Allocation& al = require_device(st, a.lo, size_t(a.hi - a.lo));
    for (const Record& r : al.records)
      if (r.stream != sid && overlap(r.a, a) && (r.a.write || a.write) &&
          !ordered_before(r.stream, r.seq, s.clock))
        return race_message(st, s, label, a, r, al);
  }
  for (const Access& a : device) {
    Allocation& al = require_device(st, a.lo, size_t(a.hi - a.lo));
    // A later access ordered after an earlier one stands for it where it
    // covers it: a race with the earlier one there is a race with the later
    // one. What it leaves of the earlier one (a panel's products, read as a
    // whole, then refilled slice by slice from several streams) stays.
    std::vector<Record> kept;
    for (const Record& r : al.records) {
      if (!overlap(r.a, a) || !(a.write || !r.a.write) ||
          (r.stream != sid && !ordered_before(r.stream, r.seq, s.clock))) {
        kept.push_back(r);
        continue;
      }
      if (r.a.lo < a.lo) kept.push_back(Record{Access{r.a.lo, a.lo, r.a.write}, r.stream, r.seq, r.label});
      if (r.a.hi > a.hi) kept.push_back(Record{Access{a.hi, r.a.hi, r.a.write}, r.stream, r.seq, r.label});
    }
    kept.push_back(Record{a, sid, seq, label});
    al.records.swap(kept);
  }
  return "";
}

inline Stream& stream_of(State& st, cudaStream_t s) {
  auto it = st.streams.find(s ? s->id : 0);
  if (it == st.streams.end()) fail("work queued on the legacy default stream or on a destroyed stream");
  return it->second;
}

/// Queues `op` on stream s after checking its device accesses.
inline cudaError_t enqueue(State& st, cudaStream_t sp, Op op, const std::vector<Access>& device) {
  Label label = std::move(next_label());
  next_label() = Label{};
  Stream& s = stream_of(st, sp);
  join(s.clock, host_clock());
  const std::string race = check_and_record(st, sp->id, s, s.queued + 1, device, label);
  if (!race.empty()) {
    last_error() = race;
    return cudaErrorLaunchFailure;
  }
  op.seq = ++s.queued;
  s.clock[sp->id] = op.seq;
  if (st.logging && !label.kind.empty()) st.log.push_back(Logged{sp->id, op.seq, s.clock, label.kind});
  s.queue.push_back(std::move(op));
  return cudaSuccess;
}

// ---- names for the messages (engine.cpp) ---------------------------------

inline void name_stream(cudaStream_t s, const std::string& name) {
  std::lock_guard<std::mutex> lock(state().mu);
  stream_of(state(), s).name = name;
}
inline void name_memory(const void* p, const std::string& name) {
  std::lock_guard<std::mutex> lock(state().mu);
  if (Allocation* a = device_at(state(), p, 1)) a->name = name;
}
/// Device memory handed to its next user without cudaFree (engine.cpp keeps a
/// call's buffers for the next call, after waiting for its streams): what was
/// queued on it is done and orders nothing that comes after, as after cudaFree.
/// (The pool's hand-over, a mutex and a host thread's wait, is not an ordering
/// this emulation can see on its own.)
inline void reuse_memory(const void* p) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  force_all(st);
  if (Allocation* a = device_at(st, p, 1)) a->records.clear();
}
/// Names the next copy or product this thread queues.
inline void describe(const char* kind, std::string what) { next_label() = Label{kind, std::move(what)}; }
/// Starts (and empties) or stops the log of the copies and products queued, for unordered().
inline void log_queue(bool on) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().logging = on;
  state().log.clear();
}
/// Pairs of logged operations, one of kind `a` and one of kind `b` ("copy", "copy back",
/// "product": "product of panel 3" is a product), on two streams with no chain of events,
/// waits or host synchronizations between them: a GPU may run the two at once. The
/// overlap a GPU could give, told from the events alone.
inline int64_t unordered(const std::string& a, const std::string& b) {
  std::lock_guard<std::mutex> lock(state().mu);
  auto is = [](const std::string& kind, const std::string& what) {
    return kind == what || kind.rfind(what + " of ", 0) == 0;
  };
  const std::vector<Logged>& log = state().log;
  int64_t count = 0;
  for (const Logged& x : log)
    for (const Logged& y : log)
      if (x.stream != y.stream && is(x.kind, a) && is(y.kind, b) &&
          !ordered_before(x.stream, x.seq, y.clock) && !ordered_before(y.stream, y.seq, x.clock))
        ++count;
  return count;
}
/// Starts the order afresh from `seed` (a test that runs one program under many orders).
inline void reseed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().seed = seed;
  state().rng.seed(seed);
}

}  // namespace lab_emulated

inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  *p = std::malloc(std::max<size_t>(bytes, 1));
  st.device[static_cast<const char*>(*p)] =
      lab_emulated::Allocation{lab_emulated::current_device(), static_cast<const char*>(*p) + bytes, {}, {}};
  return cudaSuccess;
}
// cudaFree waits for the device (as on a GPU) before the memory goes.
inline cudaError_t cudaFree(void* p) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  lab_emulated::force_all(st);
  st.device.erase(static_cast<const char*>(p));
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  *p = std::malloc(std::max<size_t>(bytes, 1));
  st.pinned[static_cast<const char*>(*p)] = static_cast<const char*>(*p) + bytes;
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaHostAlloc(p, bytes, 0); }
inline cudaError_t cudaFreeHost(void* p) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  lab_emulated::force_all(st);
  st.pinned.erase(static_cast<const char*>(p));
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.pinned[static_cast<const char*>(p)] = static_cast<const char*>(p) + bytes;
  return cudaSuccess;
}
inline cudaError_t cudaHostUnregister(void* p) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  lab_emulated::force_all(st);
  st.pinned.erase(static_cast<const char*>(p));
  return cudaSuccess;
}
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  *a = cudaPointerAttributes{};
  a->type = lab_emulated::inside(st.pinned, p, 1) ? cudaMemoryTypeHost : cudaMemoryTypeUnregistered;
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  *s = new CUstream_st{st.next_id++};
  st.streams[(*s)->id].device = lab_emulated::current_device();
  return cudaSuccess;
}
// A destroyed stream's queued work still runs (as on a GPU): here, at once.
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  lab_emulated::force(st, {{s->id, st.streams[s->id].queued}});
  // Its work has run: the memory it touched forgets it, and so do the host
  // clocks (join_host leaves out streams that are gone).
  for (auto& [p, al] : st.device)
    al.records.erase(std::remove_if(al.records.begin(), al.records.end(),
                                    [&](const lab_emulated::Record& r) { return r.stream == s->id; }),
                     al.records.end());
  lab_emulated::host_clock().erase(s->id);
  st.streams.erase(s->id);
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  lab_emulated::Stream& x = lab_emulated::stream_of(st, s);
  lab_emulated::force(st, {{s->id, x.queued}});
  lab_emulated::join_host(st, x.clock);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  lab_emulated::force_all(st);
  for (const auto& [sid, s] : st.streams) lab_emulated::join_host(st, s.clock);
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  *e = new CUevent_st{st.next_id++};
  st.events[(*e)->id].device = lab_emulated::current_device();
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  st.events.erase(e->id);
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.events[e->id].device != lab_emulated::stream_of(st, s).device)
    lab_emulated::fail("cudaEventRecord: an event of one device recorded on a stream of another");
  lab_emulated::Op op;
  op.record = e->id;
  lab_emulated::next_label() = {};
  const cudaError_t r = lab_emulated::enqueue(st, s, std::move(op), {});
  const lab_emulated::Stream& x = st.streams.at(s->id);
  lab_emulated::Event& ev = st.events[e->id];
  ev.recorded = true;
  ev.stream = s->id;
  ev.seq = x.queued;
  ev.clock = x.clock;
  return r;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  const lab_emulated::Event ev = st.events[e->id];
  if (!ev.recorded) return cudaSuccess;  // never recorded: nothing to wait for (CUDA's rule)
  if (st.streams.count(ev.stream)) lab_emulated::force(st, {{ev.stream, ev.seq}});
  lab_emulated::join_host(st, ev.clock);
  return cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  const lab_emulated::Event &x = st.events[a->id], &y = st.events[b->id];
  for (const lab_emulated::Event* ev : {&x, &y}) {
    auto it = st.streams.find(ev->stream);
    if (!ev->recorded || (it != st.streams.end() && it->second.done < ev->seq)) return cudaErrorNotReady;
  }
  *ms = float(1e3 * (y.t - x.t));
  return cudaSuccess;
}
// Waiting on an event never recorded returns at once (CUDA's rule); otherwise
// the stream's next work is ordered after the event's, and runs after it.
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned = 0) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  const lab_emulated::Event ev = st.events[e->id];
  if (!ev.recorded) return cudaSuccess;
  lab_emulated::Stream& x = lab_emulated::stream_of(st, s);
  if (ev.stream == s->id) x.self_wait_on = e->id;
  lab_emulated::join(x.clock, ev.clock);
  lab_emulated::Op op;
  op.wait_stream = ev.stream;
  op.wait_seq = ev.seq;
  lab_emulated::next_label() = {};
  return lab_emulated::enqueue(st, s, std::move(op), {});
}
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t s) {
  if (dpitch < width || spitch < width) lab_emulated::fail("cudaMemcpy2DAsync: a pitch below the width");
  if (height == 0 || width == 0) return cudaSuccess;
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  const lab_emulated::Allocation* from = lab_emulated::device_at(st, src, 1);
  const lab_emulated::Allocation* to = lab_emulated::device_at(st, dst, 1);
  if (kind == cudaMemcpyDefault) {
    if (!from && !to) lab_emulated::fail("cudaMemcpy2DAsync: a copy from host memory to host memory");
    kind = !from ? cudaMemcpyHostToDevice : !to ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
  }
  if (kind == cudaMemcpyDeviceToDevice) {
    if (!from || !to) lab_emulated::fail("cudaMemcpy2DAsync: a device-to-device copy of host memory");
    if (from->device != to->device &&
        std::find(st.peers.begin(), st.peers.end(), std::make_pair(from->device, to->device)) == st.peers.end() &&
        std::find(st.peers.begin(), st.peers.end(), std::make_pair(to->device, from->device)) == st.peers.end())
      lab_emulated::fail("cudaMemcpy2DAsync: a copy between two devices without peer access enabled "
                         "(cudaDeviceEnablePeerAccess): CUDA would stage it through the host");
    lab_emulated::Op op;
    op.run = [=] {
      for (size_t r = 0; r < height; ++r)
        std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
    };
    return lab_emulated::enqueue(st, s, std::move(op),
                                 {lab_emulated::span(src, spitch, width, height, false),
                                  lab_emulated::span(dst, dpitch, width, height, true)});
  }
  const bool in = kind == cudaMemcpyHostToDevice;
  const lab_emulated::Access d = lab_emulated::span(dst, dpitch, width, height, true),
                             h = lab_emulated::span(src, spitch, width, height, false);
  lab_emulated::require_pinned(st, in ? h.lo : d.lo, size_t(in ? h.hi - h.lo : d.hi - d.lo));
  lab_emulated::Op op;
  op.run = [=] {
    for (size_t r = 0; r < height; ++r)
      std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  };
  if (in) {
    op.host_reads.push_back(h);
    return lab_emulated::enqueue(st, s, std::move(op), {d});
  }
  const lab_emulated::Access dev{h.lo, h.hi, false};
  const cudaError_t r = lab_emulated::enqueue(st, s, std::move(op), {dev});
  if (r != cudaSuccess) return r;
  // Until the copy back is forced, its destination holds poison (unless work
  // still queued reads that host memory: a copy in from it must see the old data).
  for (const auto& [sid, x] : st.streams)
    for (const lab_emulated::Op& q : x.queue)
      for (const lab_emulated::Access& a : q.host_reads)
        if (lab_emulated::overlap(a, d)) return cudaSuccess;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t row = 0; row < height; ++row) {
    char* p = static_cast<char*>(dst) + row * dpitch;
    for (size_t b = 0; b + sizeof(double) <= width; b += sizeof(double)) std::memcpy(p + b, &nan, sizeof(double));
  }
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int* count) {
  *count = 2;  // two emulated GPUs: ids 0 and 1 exist, 2 does not
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) {
  if (d < 0 || d >= 2) return cudaErrorInvalidDevice;
  lab_emulated::current_device() = d;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) {
  *d = lab_emulated::current_device();
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = *total_bytes = size_t(1) << 30;
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t e) {
  return e == cudaErrorLaunchFailure ? "a race between streams" : "emulated error";
}
inline const char* cudaGetErrorName(cudaError_t e) {
  return e == cudaErrorLaunchFailure ? "cudaErrorLaunchFailure" : "cudaErrorEmulated";
}
// Both emulated devices reach each other (NVLink), unless LAB_EMULATION_NO_PEER is set.
inline cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  if (device < 0 || device >= 2 || peer < 0 || peer >= 2) return cudaErrorInvalidDevice;
  const char* no = std::getenv("LAB_EMULATION_NO_PEER");
  *can = device != peer && !(no && *no);
  return cudaSuccess;
}
// As CUDA: from the current device to `peer`; a second time is cudaErrorPeerAccessAlreadyEnabled,
// and a device cannot be its own peer.
inline cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned) {
  auto& st = lab_emulated::state();
  std::lock_guard<std::mutex> lock(st.mu);
  const int d = lab_emulated::current_device();
  if (peer < 0 || peer >= 2 || peer == d) return cudaErrorInvalidDevice;
  const auto pair = std::make_pair(d, peer);
  if (std::find(st.peers.begin(), st.peers.end(), pair) != st.peers.end()) return cudaErrorPeerAccessAlreadyEnabled;
  st.peers.push_back(pair);
  return cudaSuccess;
}
