// transport.hpp — how blocks travel between the ranks of a fibre.
//
// The 3D algorithm needs three things from the memory its blocks live in: a
// broadcast along a fibre, a reduction along a fibre, and scratch blocks for what
// a rank receives. HostTransport does them with MPI on host memory; the device
// transport (device.hpp) does them on GPU memory, with NCCL where the build has it
// and MPI through pinned host buffers otherwise. multiply_blocks is written once
// against this interface, so the same algorithm runs on both.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>

#include "comm.hpp"
#include "mpi3d.hpp"
#include "workspace.hpp"

namespace lab::step08 {

template <class T>
class Transport {
 public:
  virtual ~Transport() = default;
  /// Sends `blk` from rank `root` of `fibre` to every other rank of it (which
  /// receive into their `blk`, of the same shape). The root's block is only read.
  virtual void bcast(View<T> blk, int root, const Comm& fibre, Traffic& t) = 0;
  /// Combines the blocks of every rank of `fibre` with the reduction's operation
  /// into the root's `blk`, in place; the others' blocks are only read. Every
  /// block must be contiguous (ld == rows).
  virtual void reduce(View<T> blk, int root, const Comm& fibre, Traffic& t) = 0;
  /// A contiguous rows x cols scratch block (slot 0, 1, 2: A, B, C), kept between calls.
  virtual View<T> scratch(int slot, int64_t rows, int64_t cols) = 0;
  /// Copies a block to another of the same shape, in this transport's memory.
  virtual void copy(View<const T> from, View<T> to) = 0;
  /// Returns when the work queued so far has finished (device: the stream is idle).
  virtual void finish() {}
  /// The cudaStream_t the local product should run on (nullptr: host memory).
  virtual void* stream() const { return nullptr; }
  /// True when a rank's buffer may be packed for the transfer only at a cost: a
  /// strided device block needs packing for NCCL, a host one never does for MPI.
  virtual bool needs_contiguous_bcast() const { return false; }
};

/// Blocks in host memory, moved with MPI; scratch from a plan's HostWorkspace.
/// With `bcasts_at_once` a broadcast is only started (MPI_Ibcast) and finish()
/// waits for all of them: A's along y and B's along x then travel together
/// instead of B's waiting for A's to end.
template <class T>
class HostTransport final : public Transport<T> {
 public:
  HostTransport(HostWorkspace& ws, Reduction op, bool bcasts_at_once = true)
      : ws_(ws), op_(op), at_once_(bcasts_at_once) {}

  void bcast(View<T> blk, int root, const Comm& fibre, Traffic& t) override {
    if (fibre.size() == 1) return;
    if (at_once_) mpi::ibcast(blk, root, fibre, pending_, t);
    else mpi::bcast(blk, root, fibre, t);
  }
  void finish() override {
    if (pending_.empty()) return;
    note_step("waiting for its broadcasts to finish");
    pending_.wait_all();
  }
  void reduce(View<T> blk, int root, const Comm& fibre, Traffic& t) override {
    if (fibre.size() > 1) mpi::reduce(blk, op_.mpi, root, fibre, t);
  }
  View<T> scratch(int slot, int64_t rows, int64_t cols) override {
    const size_t bytes = size_t(std::max<int64_t>(1, rows * cols)) * sizeof(T);
    return {static_cast<T*>(ws_.get(slot, bytes)), rows, cols, std::max<int64_t>(1, rows)};
  }
  void copy(View<const T> from, View<T> to) override {
    if (from.rows == 0) return;
    for (int64_t j = 0; j < from.cols; ++j) std::copy(&from(0, j), &from(0, j) + from.rows, &to(0, j));
  }

 private:
  HostWorkspace& ws_;
  Reduction op_;
  bool at_once_;
  mpi::Requests pending_;  // the broadcasts started and not yet waited for
};

}  // namespace lab::step08
