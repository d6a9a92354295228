// lab/refill.hpp — the numbers a grader's speed case puts into A and B between
// repeated calls (lab/grade_wire.hpp), the same bits on the host, on a GPU and
// in the checker that verifies the last call.
//
// Element i of the refill with a key is the lab's counter-based random number
// (lab/random.hpp) of (key, i), moved to [-1, 1) exactly, as step08's generated
// blocks are. Each call multiplies fresh, unrelated numbers: an answer
// remembered from an earlier call, scaled or added to, is no help, and a
// product is a whole product's work.
#pragma once

#include <cstdint>

#include "lab/random.hpp"

namespace lab::wire {

/// The key of one refill: which = 0 for A, 1 for B; call counts from 1.
LAB_RANDOM_HD inline uint64_t refill_key(uint64_t seed, int64_t call, int which) {
  return mix64(seed ^ mix64((static_cast<uint64_t>(call) << 1 | static_cast<uint64_t>(which & 1)) +
                            0x9e3779b97f4a7c15ULL));
}

/// Element i of the refill with that key.
LAB_RANDOM_HD inline double refill_value(uint64_t key, uint64_t i) {
  return 2.0 * random_unit(key, static_cast<int64_t>(i), 0) - 1.0;  // [0, 2) - 1, exact
}

}  // namespace lab::wire
