// lab/refill.hpp — the numbers a grader's speed case puts into A and B between
// repeated calls (lab/grade_wire.hpp), the same bits on the host, on a GPU and
// in the checker that verifies the last call.
//
// Element i of refill (seed, call, which) is splitmix64 of a key made from the
// three, plus i, as an integer k in [-2^52, 2^52) scaled by 2^-52: a number in
// [-1, 1) that every step is exact for (no rounding, no FMA to contract), so a
// compiler for either side cannot change a bit of it. Each call multiplies
// fresh, unrelated numbers: an answer remembered from an earlier call, scaled
// or added to, is no help, and a product is a whole product's work.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define LAB_HOST_DEVICE __host__ __device__
#else
#define LAB_HOST_DEVICE
#endif

namespace lab::wire {

LAB_HOST_DEVICE inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The key of one refill: which = 0 for A, 1 for B; call counts from 1.
LAB_HOST_DEVICE inline uint64_t refill_key(uint64_t seed, int64_t call, int which) {
  return splitmix64(seed ^ splitmix64((static_cast<uint64_t>(call) << 1) | static_cast<uint64_t>(which & 1)));
}

/// Element i of the refill with that key.
LAB_HOST_DEVICE inline double refill_value(uint64_t key, uint64_t i) {
  const int64_t k = static_cast<int64_t>(splitmix64(key + i) >> 11) - (int64_t(1) << 52);
  return static_cast<double>(k) * 0x1p-52;
}

}  // namespace lab::wire
