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

#include <cstdint>

namespace lab::wire {

constexpr uint64_t kRequestMagic = 0x314b43454843424cULL;  // "LBCHECK1"
constexpr uint64_t kReplyMagic = 0x3159524c5045524cULL;    // "LREPLY1"

/// A x B with A m x k (lda), B kb x n (ldb), C m x n (ldc); kb != k and bad
/// sizes or leading dimensions are sent on purpose to see them refused. Each
/// buffer holds max(ld, 1) * max(cols, 0) doubles.
struct Request {
  uint64_t magic;
  int64_t m, n, k, kb, lda, ldb, ldc;
  double alpha, beta;
};

/// What became of the call. kNoDevice: a GPU variant on a machine (or build)
/// without a usable GPU; the message says why, and the step is graded elsewhere.
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

inline int64_t buffer_elements(int64_t ld, int64_t cols) {
  return (ld > 1 ? ld : 1) * (cols > 0 ? cols : 0);
}

}  // namespace lab::wire
