// workspace.hpp — host memory a Plan keeps between multiplies.
//
// A rank that does not hold a block receives it into a scratch buffer; a rank
// off the z = 0 face computes its partial C there. Allocating those on every call
// would put page faults (first touch of fresh memory) into every timed multiply,
// so a Plan keeps its buffers, grows them when a call needs more, and touches new
// memory once when it is allocated.
//
// That touch writes poison, not zeros: all bytes 0xFF (a NaN in every double,
// -1 in every integer). A scratch block is only ever written before it is read
// (a broadcast into it, or a product with beta = 0: "C is written, not read"),
// so a correct multiply never sees the poison. A layer z > 0 that reads its
// partial C block anyway (beta C added on every layer instead of once) gets
// NaN on its very first call, instead of the zeros of fresh memory, which would
// hide the mistake until a Plan is reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace lab::step08 {

class HostWorkspace {
 public:
  static constexpr int kSlots = 3;  ///< A, B and C blocks
  static constexpr int kPoisonByte = 0xFF;  ///< what new scratch memory holds until it is written

  /// At least `bytes` bytes of slot `slot`, 64-byte aligned, kept until the next larger request.
  void* get(int slot, size_t bytes) {
    Slot& s = slots_[slot];
    if (bytes > s.bytes) {
      const size_t rounded = (bytes + 63) / 64 * 64;
      s.data.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
      if (!s.data) {
        s.bytes = 0;
        throw std::bad_alloc();
      }
      std::memset(s.data.get(), kPoisonByte, rounded);  // never zeros: see the top of this file
      s.bytes = rounded;
    }
    return s.data.get();
  }
  /// Bytes held in all slots (0 until a multiply needed scratch: p = 1 never does).
  size_t bytes() const {
    size_t total = 0;
    for (const Slot& s : slots_) total += s.bytes;
    return total;
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  struct Slot {
    std::unique_ptr<std::byte[], Free> data;
    size_t bytes = 0;
  };
  Slot slots_[kSlots];
};

}  // namespace lab::step08
