// lab/grade_wire.hpp — what the grader's checker and a step program say to
// each other over a pipe when a submission is graded (./lab grade).
//
// The checker (common/tools/grade_check.cpp, its own process and account) makes
// the inputs of one product from a seed the submission has not seen, starts
// `stepNN_x --serve VARIANT` as the grading account and writes one Request and
// the buffers of A, B and C (guard rows included) to its stdin. The step
// program calls the student's variant once and answers on its stdout with a
// Reply, a message of msg_len bytes and the whole buffer of C. The checker
// judges C itself: nothing the student's process prints or writes elsewhere
// counts.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "lab/refill.hpp"

namespace lab::wire {

constexpr uint64_t kRequestMagic = 0x344b43454843424cULL;  // "LBCHECK4"
constexpr uint64_t kReplyMagic = 0x3159524c5045524cULL;    // "LREPLY1"

/// A x B with A m x k (lda), B kb x n (ldb), C m x n (ldc); kb != k and bad
/// sizes or leading dimensions are sent on purpose to see them refused. Each
/// buffer holds max(ld, 1) * max(cols, 0) doubles.
///
/// repeat: the variant is called that many times on the same buffers (0 or 1:
/// once). Before every call but the first, B's whole buffer is refilled with
/// fresh numbers (lab/refill.hpp, keyed by refill_seed and the call's number),
/// and A's too where refill_a is 1 (a variant on host matrices, step07: no
/// upload of either can be kept from a call before). No answer of an earlier
/// call helps with the next, and C is that of the last call's A and B, which
/// the checker makes again to verify it. A speed case times 1 and 1 + K calls
/// from outside: the difference is K products without the start-up and the
/// transfers.
/// pinned_host: 1 = the step program page-locks A, B and C (cudaHostRegister)
/// before the calls of a variant on host matrices: a speed case of step07,
/// whose reference (cuBLASXt) copies at the pinned rate, sets it on both sides.
/// The rest are the variant's Params (lab/registry.hpp), 0 where not given:
/// its tiles, a device-memory cap, and the GPU ids it runs on (gpus of them).
struct Request {
  uint64_t magic;
  int64_t m, n, k, kb, lda, ldb, ldc;
  double alpha, beta;
  int64_t repeat = 0;
  int64_t tile[3] = {0, 0, 0};
  int64_t device_mem_limit = 0;
  int64_t gpus = 0;
  int64_t gpu_list[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t pinned_host = 0;
  uint64_t refill_seed = 0;
  int64_t refill_a = 0;
};
constexpr int64_t kMaxRepeat = 1000;

/// What became of the call. kNoDevice: a GPU variant on a machine (or build)
/// without a usable GPU, or one that threw lab::NotOnThisMachine; the message
/// says why, and the step is graded elsewhere.
enum Status : int64_t {
  kDone = 0,
  kInvalidArgument = 1,
  kNotImplemented = 2,
  kOtherError = 3,
  kNoVariant = 4,
  kNoDevice = 5
};

struct Reply {
  uint64_t magic;
  int64_t status;   ///< a Status
  int64_t msg_len;  ///< bytes of the exception's message that follow (at most 4096)
};

/// The allocator of Buffer: blocks 64-byte aligned, as lab::Matrix's.
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(size_t n) {
    if (n > (SIZE_MAX - 64) / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;  // aligned_alloc wants a multiple of 64
    void* p = std::aligned_alloc(64, bytes > 0 ? bytes : 64);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const Aligned64<U>&) const { return true; }
  template <class U>
  bool operator!=(const Aligned64<U>&) const { return false; }
};

/// A, B and C as the step program receives them: aligned as the reference's
/// lab::Matrix is, so that the student's product and the reference it is
/// timed against run on memory laid out alike (buffers 16 bytes past a cache
/// line, as std::vector's were, made step03's solution 20 % slower).
using Buffer = std::vector<double, Aligned64<double>>;

inline int64_t buffer_elements(int64_t ld, int64_t cols) {
  return (ld > 1 ? ld : 1) * (cols > 0 ? cols : 0);
}

/// Runs one call of the student's code; kDone, or the Status of the exception
/// it threw (a TODO, std::invalid_argument, another) with its message in *msg.
Status run_call(const std::function<void()>& call, std::string* msg);  // serve.cpp

/// The answer on fd: the Reply, the message (cut to 4096 bytes) and C's buffer.
bool send_reply(int fd, Status status, std::string msg, const Buffer& c);  // serve.cpp

/// x[0, count) <- the refill with that key (lab/refill.hpp), on every core. serve.cpp
void refill(double* x, size_t count, uint64_t key);

/// n bytes from fd (false: it ended or failed first).
inline bool read_all(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t got = ::read(fd, b, n);
    if (got <= 0) return false;
    b += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

/// n bytes to fd (false: it failed first).
inline bool write_all(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t put = ::write(fd, b, n);
    if (put <= 0) return false;
    b += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

/// One whole request from fd: the Request and the buffers of A, B and C it
/// announces (false: the stream ended or failed first, or it is no request).
/// allocated, when given, runs once the buffers are made and before their
/// bytes are read: what it does (pinning them) is over before the checker's
/// clock starts with the last byte.
inline bool read_request(int fd, Request* rq, Buffer* a, Buffer* b, Buffer* c,
                         const std::function<void()>& allocated = {}) {
  if (!read_all(fd, rq, sizeof *rq) || rq->magic != kRequestMagic) return false;
  a->resize(static_cast<size_t>(buffer_elements(rq->lda, rq->k)));
  b->resize(static_cast<size_t>(buffer_elements(rq->ldb, rq->n)));
  c->resize(static_cast<size_t>(buffer_elements(rq->ldc, rq->n)));
  if (allocated) allocated();
  return read_all(fd, a->data(), a->size() * sizeof(double)) && read_all(fd, b->data(), b->size() * sizeof(double)) &&
         read_all(fd, c->data(), c->size() * sizeof(double));
}

}  // namespace lab::wire
