// random.hpp — the lab's counter-based random numbers: element (i, j) of a
// random matrix is a function of the seed and of (i, j) only. So a matrix can
// be filled by any number of threads, in any layout, on the host or the GPU,
// block by block on the ranks that own the blocks, and is always the same.
// (Matrix::fill_random, step08's generated blocks and step09's use it.)
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define LAB_RANDOM_HD __host__ __device__
#else
#define LAB_RANDOM_HD
#endif

namespace lab {

/// splitmix64's finalizer: a bijection of 64-bit words that mixes every bit.
LAB_RANDOM_HD inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Element (i, j) of the random matrix with this seed: uniform in [0, 1), 53 random bits.
LAB_RANDOM_HD inline double random_unit(uint64_t seed, int64_t i, int64_t j) {
  const uint64_t h = mix64(mix64(seed + 0x9e3779b97f4a7c15ULL * uint64_t(j)) ^ uint64_t(i));
  return double(h >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}

}  // namespace lab
