// engine.hpp — what the three variants of step07 share and the student does
// not write: the per-stream buffers (device tiles and panels, pinned staging),
// copies of host blocks that work for pinned and pageable memory alike,
// traced copies and products, and the host threads that run the streams.
//
// The student's part (sync.cpp, streams.cpp, multigpu.cpp) is the order of
// copies and products, the events between the streams, and the work split.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lab/cuda.hpp"
#include "plan.hpp"
#include "streams.hpp"

// The CUDA emulation (tests/emulated/) names the streams, buffers, copies and
// products in its race messages; on a GPU these calls are not compiled.
#ifdef LAB_CUDA_EMULATED
#define LAB_EMULATION(call) lab_emulated::call
#else
#define LAB_EMULATION(call) ((void)0)
#endif

namespace lab::step07::detail {

using Clock = std::chrono::steady_clock;

/// A device buffer like cuda::DeviceBuffer, but from engine.cpp's pool of
/// freed buffers, kept per device (one plan's, under a quarter of its memory)
/// and handed to the next call of the same plan: making and freeing them on
/// every call (cudaFree waits for the whole device) left a 4-GPU call at
/// n = 32768 about 60 ms longer than its copies and products (NOTES.md).
class PooledBuffer {
 public:
  PooledBuffer() = default;
  /// `count` doubles on the current device (throws on failure).
  explicit PooledBuffer(size_t count);
  ~PooledBuffer();
  PooledBuffer(PooledBuffer&& o) noexcept;
  PooledBuffer& operator=(PooledBuffer&& o) noexcept;
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  double* data() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  double* ptr_ = nullptr;
  size_t count_ = 0;
  int device_ = 0;
};

/// One call of a variant, as every stream of it sees it.
struct Call {
  double alpha = 1, beta = 0;
  ConstMatView A{}, B{};
  MatView C{};
  Plan plan;
  size_t cap = 0;              ///< device bytes the streams of one device share (the plan's cap)
  int streams_per_device = 1;  ///< streams on the busiest device
  Options opts;
  Clock::time_point t0;             ///< the trace's time zero
  std::atomic<bool> failed{false};  ///< set when any stream failed: the others stop early
  std::atomic<int> running{1};      ///< workers not yet finished: they share the host's cores
  std::mutex trace_mu;
};

/// The device bytes the streams may use when no cap is given: what the
/// emptiest of these devices has free (device id -> streams on it; the pool's
/// kept buffers count as free), less room for cuBLAS's workspaces and the runtime.
size_t usable_device_memory(const std::map<int, int>& streams_per_device);

/// The start of every variant: checks the arguments and the options
/// (std::invalid_argument before any work, GPU ids included), does BLAS's
/// early exits on the host (alpha == 0 or k == 0: C <- beta C, A and B not
/// read) and makes the tile plan for these streams. Returns nullptr when
/// nothing is left to do.
std::unique_ptr<Call> prepare(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                              const Options& opts, const std::vector<StreamSlot>& slots);

/// What one stream of one GPU owns for a call: three CUDA streams (copies in,
/// products, copies out: the copy engines of each direction and the SMs each
/// get a queue of their own), a cuBLAS handle on the product stream, the C
/// tile and two buffers each of A and B panels on the device, pinned staging
/// buffers for pageable host memory, and the events the orchestration needs.
class Worker {
  // First, so that every stream, event and buffer below is made on this device.
  Call& call_;
  StreamSlot slot_;
  int device_;
  cuda::Event c_stored_sets_[2][lab::step07::kCBlocks];  ///< one set per C buffer (c_stored below)

 public:
  /// Makes the current device slot.device and allocates (throws on failure).
  Worker(Call& call, StreamSlot slot);
  /// Waits for this worker's streams (errors ignored) so that nothing is in
  /// flight when the buffers go.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  Call& call() const { return call_; }
  const StreamSlot& slot() const { return slot_; }
  /// True once any stream of the call failed: stop taking work.
  bool stopped() const { return call_.failed.load(std::memory_order_relaxed); }

  cudaStream_t h2d() const { return h2d_.get(); }
  cudaStream_t compute() const { return compute_.get(); }
  cudaStream_t d2h() const { return d2h_.get(); }

  /// Device views (ld = the buffer's full height) of the C tile (the current
  /// C buffer) and of panel buffer b (0 or 1).
  MatView c_tile(int64_t rows, int64_t cols) const {
    return {dC_[c_buffer_].data(), rows, cols, plan().shape.tm};
  }
  MatView a_panel(int b, int64_t rows, int64_t cols) const {
    return {dA_[b].data(), rows, cols, plan().shape.tm};
  }
  MatView b_panel(int b, int64_t rows, int64_t cols) const {
    return {dB_[b].data(), rows, cols, plan().shape.tk};
  }
  /// The buffer a block of C (at most c_block_width columns) comes in through.
  MatView c_in(int64_t rows, int64_t cols) const { return {dCin_.data(), rows, cols, plan().shape.tm}; }

  /// Events the orchestration records and waits for (see streams.cpp).
  cuda::Event panel_ready[2], panel_free[2];
  cuda::Event c_loaded, c_done, c_in_ready, c_in_free;
  /// c_stored[j] is recorded when block j of the C buffer (plan.hpp's
  /// kCBlocks, c_block_width) has gone back. With two C buffers
  /// (Plan::c_buffers) each has its own events, and c_stored points to those
  /// of the buffer the current tile uses: its first products wait for that
  /// buffer's copy back, two tiles earlier.
  static constexpr int kCBlocks = lab::step07::kCBlocks;
  cuda::Event* c_stored = c_stored_sets_[0];
  /// A new tile takes the next C buffer (with two, they alternate; Tile's constructor calls it).
  void next_c_buffer() {
    if (plan().c_buffers < 2) return;
    c_buffer_ = int(c_tiles_++ % 2);
    c_stored = c_stored_sets_[c_buffer_];
  }
  /// The panel buffer to use next (alternates 0, 1, 0, ... across tiles).
  int next_panel_buffer() { return (panel_count_++) % 2; }

  /// Copies a host block into device memory on stream s (traced as H2D).
  /// Pinned host memory: one asynchronous 2D copy. Pageable: waits for a free
  /// staging buffer, copies the block there with host threads, then queues an
  /// asynchronous copy from it; so this returns once the host's part is done.
  void load(MatView dev, ConstMatView host, cudaStream_t s);
  /// Copies a device block back into a host block on stream s (traced as
  /// D2H). Pageable host memory goes through staging, and the host's part of
  /// that copy is done when the staging buffer is needed again or in finish().
  void store(MatView host, ConstMatView dev, cudaStream_t s);
  /// Copies a block of this worker's device memory into another GPU entry's
  /// (`dst`, same shape) on stream s (traced as P2P): over NVLink between two
  /// GPUs, a device-to-device copy where both entries are one GPU.
  void send(MatView dst, ConstMatView src, cudaStream_t s);
  /// Says that panel buffer b holds panel p (for the CUDA emulation's
  /// messages, where the panel's slices come from several entries).
  void name_panel(int b, int64_t p);
  /// dC <- alpha dA dB + beta dC with cublasDgemm on the product stream (traced as compute).
  void gemm(double alpha, ConstMatView dA, ConstMatView dB, double beta, MatView dC);
  /// dC <- dC + beta dX with cublasDgeam on the product stream (traced as compute).
  void add(double beta, ConstMatView dX, MatView dC);
  /// Waits for everything this worker queued, finishes staged stores, adds its trace to the call's.
  void finish();

 private:
  struct Staging;
  struct Op;
  const Plan& plan() const { return call_.plan; }
  bool pinned(const void* p) const;
  Staging& take(std::vector<Staging>& ring, size_t& next, size_t count);
  void settle(Staging& s);
  void host_copy(MatView dst, ConstMatView src);
  /// Traces a host thread's part (kind "host": a staging copy; "wait": waiting
  /// for a staging buffer's copy) from `start_s` (seconds since the call began) to now.
  void host_event(const char* kind, double start_s, int64_t bytes);
  /// What a host block is ("panel 3", "block 2 of the C tile") and what a
  /// block of the device's C tile is, for the CUDA emulation's race messages.
  std::string host_block_name(const double* p) const;
  std::string tile_block_name(const double* p, int64_t cols) const;
  /// One trace row of this worker's GPU entry and stream.
  TraceEvent event(const std::string& kind, int64_t bytes, double start_s, double end_s) const;
  int begin_op(cudaStream_t s);
  void end_op(int op, cudaStream_t s, const char* kind, int64_t bytes);

  cuda::Stream h2d_, compute_, d2h_;
  cublasHandle_t blas_ = nullptr;
  PooledBuffer dC_[2], dCin_, dA_[2], dB_[2];
  int c_buffer_ = 0;    ///< the C buffer of the current tile
  int64_t c_tiles_ = 0;  ///< tiles begun (with two C buffers)
  std::vector<Staging> in_ring_, out_ring_;
  size_t in_next_ = 0, out_next_ = 0, out_ring_size_ = 2;
  int64_t staging_elems_ = 0;
  int cores_ = 1;
  int panel_count_ = 0;
  std::string slot_panel_[2];  ///< what panel buffer b holds ("panel 3"), for the emulation's messages
  std::vector<Op> ops_;
  std::vector<TraceEvent> host_events_;
  cuda::Event ref_;
  double ref_s_ = 0;
};

/// One C tile as variant 2's run_tile and its stages see it (streams.cpp):
/// where it lies in the host's C and on the device, its column blocks, and
/// when the host's C comes in.
struct Tile {
  Tile(Worker& w, int64_t index);
  const Call& call;
  TileRange r;
  MatView hC;  ///< the tile in the host's C
  MatView dC;  ///< the C buffer on the device, which keeps the tile across the whole k loop
  int64_t panels = 0;  ///< k panels (plan.panels)
  int64_t bw = 0;      ///< width of a column block of C (plan.hpp's c_block_width): the same in every tile
  int64_t blocks = 0;  ///< column blocks in this tile (the last one may be narrower)
  /// True when C comes in late (beta != 0 and two panels or more): the first
  /// panel's product overwrites the buffer (beta = 0), and each block of the
  /// host's C is added later, through w.c_in. With one panel C must come first.
  bool late_c = false;

  /// Columns of block j (bw, or fewer for the last block).
  int64_t block_cols(int64_t j) const { return std::min(bw, r.cols - j * bw); }
  /// Block j of the tile in the host's C and in the device buffer.
  MatView host_block(int64_t j) const { return hC.block(0, j * bw, r.rows, block_cols(j)); }
  MatView device_block(int64_t j) const { return dC.block(0, j * bw, r.rows, block_cols(j)); }
  /// When C comes late, the panel p at which block j of the host's C joins
  /// the tile: after all of panel p's products, for every panel but the last
  /// (one block after each, spread over them when there are enough), or, for
  /// the blocks left over, the last panel, just before block j's own product.
  /// Each load into the one c_in buffer waits for the add before it: with a
  /// panel's products between two adds, the load runs beside them and no add
  /// waits for the copy engine. -1 when C does not come late.
  int64_t c_panel(int64_t j) const;
};

/// Panel p of A and B on the device, in panel buffer b (0 or 1).
struct Panels {
  int b = 0;
  int64_t p = 0;
  MatView A{}, B{};  ///< tile rows x depth, depth x tile columns
};

/// Runs body(worker) for every slot that can get a tile (the first
/// plan.tiles() of them), each on a host thread of its own with a Worker
/// made there, then finish(). When a worker throws, call.failed tells
/// the others to stop; all are joined and the first exception is rethrown.
void run_streams(Call& call, const std::vector<StreamSlot>& slots, const std::function<void(Worker&)>& body);

/// The stages of variant 2 that handle a tile's C (streams.cpp), for the
/// panel-sharing path, which loads the panels its own way.
struct TileStages {
  void (*multiply_block)(Worker&, const Tile&, const Panels&, int64_t);
  void (*add_c)(Worker&, const Tile&, int64_t);
};

/// dgemm_multigpu with the panels shared between the GPU entries (share.cpp,
/// plan.hpp's SharePlan): returns false, having done nothing, where the call
/// does not share (opts.share, host memory, one entry, devices that cannot
/// reach each other, bad arguments: the caller's plan runs and reports
/// them); otherwise runs the whole call and returns true.
bool share_panels(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, const Options& opts,
                  const TileStages& stages);

}  // namespace lab::step07::detail

namespace lab::step07 {
inline namespace LAB_IMPL_NS {
/// Variant 2's orchestration of one C tile (streams.cpp); variant 3 runs it too.
void run_tile(detail::Worker& w, int64_t index);
/// Its stages, written in this order (streams.cpp):
/// 1. panel p of A and B into the next panel buffer on w.h2d(), between the
///    events panel_free[b] and panel_ready[b]; w.compute() waits for it.
detail::Panels load_panels(detail::Worker& w, const detail::Tile& t, int64_t p);
/// 2. the first or the last panel's product into column block j of the C
///    tile: the first waits for the previous tile's block j to have gone back
///    (and brings C first when it cannot come late), the last copies block j back.
void multiply_block(detail::Worker& w, const detail::Tile& t, const detail::Panels& s, int64_t j);
/// 3. block j of the host's C, brought in through w.c_in and added, times beta, to the C tile.
void add_c(detail::Worker& w, const detail::Tile& t, int64_t j);
}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
