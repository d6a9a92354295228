// step06 — given: how the SIMT kernel's threads share a warp tile of C
// (simt.cu uses it; so does step06_ceiling, which times the same k step alone).
//
// A warp computes a 64 x 32 tile of C: its 32 threads form an 8 x 4 grid, each
// thread an 8 x 8 block. Thread (tr, tc) owns the rows
//   2 tr + 16 q + {0, 1},  q = 0..3   (four pairs, 16 rows apart)
// and the columns 2 tc + 8 q + {0, 1}. A pair is one 16-byte double2 load from
// shared memory, and for each q the 8 values of tr read 8 neighbouring pairs:
// 128 contiguous bytes, no bank conflict. Which lane is which (ThreadInWarp):
// tr from lane bits 1-3, tc from bits 0 and 4, so that lanes 2i and 2i + 1
// load the same A pair and lanes i and i ^ 2 the same B pair. Shared memory
// returns 128 bytes a cycle to the warp; when neighbouring lanes ask for the
// same address it can pack their results, and a double2 load then takes two
// cycles instead of four (with tr = lane % 8 only the B loads had such pairs;
// this order measured a few per cent faster on an H100).
#pragma once

namespace lab::step06::detail {

constexpr int kWarpM = 64, kWarpN = 32, kThreadM = 8, kThreadN = 8;

struct ThreadInWarp {
  int tr, tc;
  __device__ explicit ThreadInWarp(int lane) : tr((lane >> 1) & 7), tc((lane & 1) | ((lane >> 4) << 1)) {}
};

}  // namespace lab::step06::detail
