// device_root.cpp — the rank-0 entry on GPUs: rank 0's host matrices to every
// rank's device blocks, and C back (device.hpp: root_scatter, root_gather).
//
// Every byte of A, B (and C when beta != 0) leaves rank 0's host memory, and all
// of C comes back to it, so rank 0's host link sets the pace. The blocks travel
// in pieces (a group of whole columns of one rank's block, at most kChunkBytes):
//
//   scatter, rank 0: host threads copy a piece out of the strided host matrix
//     into a pinned buffer (a ring of kRing), cudaMemcpyAsync takes it to the GPU
//     (the copy stream), and ncclSend sends it from a device buffer (two of them,
//     so that the next piece's copy to the GPU runs while this one is sent) to
//     the rank that owns the block, which receives it with ncclRecv straight into
//     its block. Rank 0's own pieces go from the pinned buffer into its block.
//   gather: the mirror; ncclRecv into a device buffer on rank 0, a copy to a
//     pinned buffer, host threads copy it into its place in C while the next
//     pieces arrive.
//
// While the host threads fill or empty one pinned buffer, the copies and the
// sends of the pieces before it run on the GPU side: host copy, link and NVLink
// overlap. Without NCCL (ranks sharing a GPU, --transfer mpi) the pinned pieces
// travel with MPI instead (MPI_Isend / MPI_Irecv of the pinned buffers) and each
// rank copies its own pieces to or from its GPU: never pageable host buffers.
//
// Device memory on rank 0 beyond its own blocks: two pieces (2 x 64 MiB, or two
// columns of the tallest block where a column is larger), whatever the matrices'
// size; host memory: kRing pinned pieces on every rank that stages.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm.hpp"
#include "device.hpp"
#include "device_detail.hpp"

namespace lab::step08 {
namespace detail {

struct RootStaging {
  static constexpr size_t kChunkBytes = size_t(64) << 20;
  static constexpr int kRing = 4;  // pinned pieces: one being filled or emptied by the host, three on the GPU side

  struct HostSlot {
    PinnedBuffer buf;
    lab::cuda::Event copied;  // the last copy into or out of buf on the GPU side
    bool copy_pending = false;
    MPI_Request req = MPI_REQUEST_NULL;  // the last message from or into buf (MPI path)
    MatView out{nullptr, 0, 0, 1};        // gather: where buf goes in C once it has arrived
  };
  struct DeviceSlot {
    DeviceBuffer<double> buf;
    lab::cuda::Event done;  // the last send out of it (scatter) or copy out of it (gather)
    bool pending = false;
  };

  size_t chunk_elems = 0;
  lab::cuda::Stream copy;  // copies between pinned and device memory, beside the NCCL stream
  HostSlot host[kRing];
  DeviceSlot dev[2];
  lab::cuda::Event arrived[2];  // gather: a piece received into dev[i]
  DeviceBuffer<double> blocks[3];  // this rank's A, B, C blocks, kept between calls

  // Buffers for pieces of `elems` elements (at least one column of the tallest block).
  void reserve(size_t elems, bool host_ring, bool device_ring) {
    elems = std::max(elems, kChunkBytes / sizeof(double));
    if (elems > chunk_elems) {
      for (HostSlot& h : host) h.buf = PinnedBuffer();
      for (DeviceSlot& d : dev) d.buf = DeviceBuffer<double>();
      chunk_elems = elems;
    }
    if (host_ring)
      for (HostSlot& h : host)
        if (!h.buf.get()) h.buf = PinnedBuffer(chunk_elems * sizeof(double));
    if (device_ring)
      for (DeviceSlot& d : dev)
        if (d.buf.size() < chunk_elems) d.buf = DeviceBuffer<double>(chunk_elems);
  }
};

void RootStagingFree::operator()(RootStaging* r) const { delete r; }

}  // namespace detail

using namespace detail;

namespace {

// One piece: columns [col, col + cols) of rank `rank`'s block (rows x cols, at
// row0/col0 of the whole matrix).
struct Piece {
  int rank;
  Block block;
  int64_t col, cols;
  size_t count() const { return size_t(block.rows) * size_t(cols); }
};

std::vector<Piece> pieces_of(const std::vector<Block>& blocks, size_t chunk_elems) {
  std::vector<Piece> out;
  for (int r = 0; r < int(blocks.size()); ++r) {
    const Block& b = blocks[size_t(r)];
    if (!b.held || b.rows == 0 || b.cols == 0) continue;
    const int64_t step = std::max<int64_t>(1, int64_t(chunk_elems) / b.rows);
    for (int64_t j = 0; j < b.cols; j += step) out.push_back({r, b, j, std::min(step, b.cols - j)});
  }
  return out;
}

size_t tallest(const std::vector<Block>& blocks) {
  int64_t rows = 1;
  for (const Block& b : blocks)
    if (b.held) rows = std::max(rows, b.rows);
  return size_t(rows);
}

// dst <- src (same shape, any ld) with `threads` host threads, split by columns
// and, for tall columns, by rows: one thread copies about 10 GB/s out of pageable
// memory, the link takes 50 or more.
void host_copy(MatView dst, ConstMatView src, int threads) {
  constexpr int64_t kRowsPerTask = int64_t(1) << 17;  // 1 MiB of doubles
  const int64_t parts = (src.rows + kRowsPerTask - 1) / kRowsPerTask, tasks = parts * src.cols;
#pragma omp parallel for num_threads(threads) schedule(static) if (tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t j = t / parts, i0 = (t % parts) * kRowsPerTask, rows = std::min(kRowsPerTask, src.rows - i0);
    std::memcpy(dst.data + j * dst.ld + i0, src.data + j * src.ld + i0, sizeof(double) * size_t(rows));
  }
}

// The piece's part of the whole host matrix M, and of this rank's device block (ld == rows).
template <class V>
V host_part(V M, const Piece& p) {
  return M.block(p.block.row0, p.block.col0 + p.col, p.block.rows, p.cols);
}
double* device_part(MatView mine, const Piece& p) { return mine.data + p.col * mine.ld; }

// Waits for `e`, polling, so that a peer that never sends or receives (it failed)
// ends in an error after the NCCL deadline instead of a wait without end.
void wait_event(const lab::cuda::Event& e, const char* what, [[maybe_unused]] const NcclCommPtr* nc) {
  const auto start = std::chrono::steady_clock::now();
  auto last_look = start;
  for (;;) {
    const cudaError_t q = cudaEventQuery(e.get());
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) LAB_CUDA_CHECK(q);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_look > std::chrono::milliseconds(1)) {
      last_look = now;
#if LAB_STEP08_HAVE_NCCL
      if (nc && *nc) {
        ncclResult_t r = ncclSuccess;
        if (ncclCommGetAsyncError((*nc)->get(), &r) != ncclSuccess || (r != ncclSuccess && r != ncclInProgress))
          throw std::runtime_error("NCCL: rank " + std::to_string(world_rank()) + ": " + what + " failed: " +
                                   ncclGetErrorString(r));
      }
#endif
      if (std::chrono::duration<double>(now - start).count() > nccl_limit_s())
        throw std::runtime_error("rank " + std::to_string(world_rank()) + " waited " + seconds_text(nccl_limit_s()) +
                                 " s for " + what +
                                 " without an answer (a rank that failed? LAB_NCCL_START_S sets the limit)");
    }
    std::this_thread::yield();
  }
}

int host_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

void mpi_wait(MPI_Request& r) {
  if (r != MPI_REQUEST_NULL) LAB_MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

// What a scatter or a gather starts from on this rank: the staging (grown to
// the pieces of these blocks), the pieces in order, and the bytes it will move
// booked in `t` (rank 0 to or from every other rank that holds a block).
struct Move {
  DeviceContext::State& s;
  RootStaging& st;
  const Comm& comm;
  int rank;
  bool nccl;
  const NcclCommPtr* all = nullptr;
  int threads;
  std::vector<Piece> pieces;
  cudaStream_t copy, nccl_stream;  // pinned <-> device copies; NCCL (the context's stream)

  void scatter(ConstMatView M, MatView mine);
  void gather(ConstMatView mine, MatView M);

  Move(DeviceContext& dev, const std::vector<Block>& blocks, int host, bool to_root, Traffic& t)
      : s(dev.state()), st(*s.root), comm(s.cube->cart), rank(comm.rank()), nccl(s.nccl && comm.size() > 1),
        threads(host_threads(host)), copy(st.copy.get()), nccl_stream(s.stream.get()) {
#if LAB_STEP08_HAVE_NCCL
    all = &s.all;
#endif
    st.reserve(tallest(blocks), rank == 0 || !nccl, rank == 0 && nccl);
    pieces = pieces_of(blocks, st.chunk_elems);
    for (int r = 1; r < int(blocks.size()); ++r) {
      const Block& b = blocks[size_t(r)];
      if (!b.held || (rank != 0 && rank != r)) continue;
      ((rank == 0) != to_root ? t.sent : t.recv) += b.rows * b.cols * int64_t(sizeof(double));
    }
  }
};

}  // namespace

void root_prepare(DeviceContext& dev) {
  DeviceContext::State& s = dev.state();
  if (!s.root) s.root.reset(new RootStaging);
#if LAB_STEP08_HAVE_NCCL
  // Every rank of the cube makes it at the same call: the first rank-0 entry.
  if (s.nccl && s.cube->cart.size() > 1 && !s.all) s.all = std::make_unique<NcclComm>(s.cube->cart, "all ranks");
#endif
}

void root_abandon(DeviceContext& dev) {
  DeviceContext::State& s = dev.state();
#if LAB_STEP08_HAVE_NCCL
  if (s.all) s.all->abort();
  s.all.reset();
#endif
  // What was queued may still use the staging buffers: let the streams drain first.
  cudaStreamSynchronize(s.stream.get());
  if (s.root) cudaStreamSynchronize(s.root->copy.get());
  cudaGetLastError();
  s.root.reset();
}

MatView root_block(DeviceContext& dev, int slot, const Block& b) {
  DeviceContext::State& s = dev.state();
  if (!b.held) return {nullptr, 0, 0, 1};
  DeviceBuffer<double>& buf = s.root->blocks[slot];
  const size_t count = size_t(std::max<int64_t>(1, b.rows * b.cols));
  if (buf.size() < count) {
    buf = DeviceBuffer<double>();  // free first: the old and the new block need not fit together
    buf = DeviceBuffer<double>(count);
  }
  return {buf.data(), b.rows, b.cols, std::max<int64_t>(1, b.rows)};
}

void Move::scatter(ConstMatView M, MatView mine) {
  size_t h = 0;
  [[maybe_unused]] size_t d = 0;  // the next pinned and device slots
  for (const Piece& p : pieces) {
    if (rank != 0 && rank != p.rank) continue;
    const size_t bytes = p.count() * sizeof(double);
    if (rank == 0) {
      RootStaging::HostSlot& hs = st.host[h++ % RootStaging::kRing];
      if (hs.copy_pending) wait_event(hs.copied, "a copy to the GPU", all);
      hs.copy_pending = false;
      mpi_wait(hs.req);
      host_copy({static_cast<double*>(hs.buf.get()), p.block.rows, p.cols, p.block.rows}, host_part(M, p), threads);
      if (p.rank == 0) {
        LAB_CUDA_CHECK(cudaMemcpyAsync(device_part(mine, p), hs.buf.get(), bytes, cudaMemcpyHostToDevice, copy));
      } else if (!nccl) {
        LAB_MPI_CHECK(MPI_Isend(hs.buf.get(), mpi::count_of(int64_t(p.count()), "piece"), MPI_DOUBLE, p.rank, 0,
                                comm.get(), &hs.req));
        continue;
      } else {
#if LAB_STEP08_HAVE_NCCL
        RootStaging::DeviceSlot& ds = st.dev[d++ % 2];
        if (ds.pending) LAB_CUDA_CHECK(cudaStreamWaitEvent(copy, ds.done.get(), 0));  // its last send has left
        LAB_CUDA_CHECK(cudaMemcpyAsync(ds.buf.data(), hs.buf.get(), bytes, cudaMemcpyHostToDevice, copy));
        hs.copied.record(copy);
        hs.copy_pending = true;
        LAB_CUDA_CHECK(cudaStreamWaitEvent(nccl_stream, hs.copied.get(), 0));
        s.all->finish(ncclSend(ds.buf.data(), p.count(), ncclFloat64, p.rank, s.all->get(), nccl_stream), "ncclSend");
        ds.done.record(nccl_stream);
        ds.pending = true;
        continue;
#endif
      }
      hs.copied.record(copy);
      hs.copy_pending = true;
    } else if (nccl) {  // a piece of this rank's own block, straight into place
#if LAB_STEP08_HAVE_NCCL
      s.all->finish(ncclRecv(device_part(mine, p), p.count(), ncclFloat64, 0, s.all->get(), nccl_stream), "ncclRecv");
#endif
    } else {
      RootStaging::HostSlot& hs = st.host[h++ % RootStaging::kRing];
      if (hs.copy_pending) wait_event(hs.copied, "a copy to the GPU", nullptr);
      hs.copy_pending = false;
      LAB_MPI_CHECK(MPI_Recv(hs.buf.get(), mpi::count_of(int64_t(p.count()), "piece"), MPI_DOUBLE, 0, 0, comm.get(),
                             MPI_STATUS_IGNORE));
      LAB_CUDA_CHECK(cudaMemcpyAsync(device_part(mine, p), hs.buf.get(), bytes, cudaMemcpyHostToDevice, copy));
      hs.copied.record(copy);
      hs.copy_pending = true;
    }
  }
  // Done when every copy and every message of this rank has ended.
  for (RootStaging::HostSlot& hs : st.host) {
    mpi_wait(hs.req);
    if (hs.copy_pending) wait_event(hs.copied, "a copy to the GPU", all);
    hs.copy_pending = false;
  }
  lab::cuda::Event end;
  end.record(nccl_stream);
  wait_event(end, rank == 0 ? "the blocks sent to the other ranks" : "its blocks from rank 0", all);
  for (RootStaging::DeviceSlot& ds : st.dev) ds.pending = false;
}

void Move::gather(ConstMatView mine, MatView M) {
  // The product ran on the context's stream: the copy stream starts after it.
  lab::cuda::Event product_done;
  product_done.record(s.stream.get());
  LAB_CUDA_CHECK(cudaStreamWaitEvent(copy, product_done.get(), 0));

  // Empties a pinned slot: waits for what was coming into it, then copies it into place in M.
  auto settle = [&](RootStaging::HostSlot& hs) {
    if (hs.copy_pending) wait_event(hs.copied, "a copy from the GPU", all);
    hs.copy_pending = false;
    mpi_wait(hs.req);
    if (hs.out.data) host_copy(hs.out, {static_cast<const double*>(hs.buf.get()), hs.out.rows, hs.out.cols,
                                        hs.out.rows}, threads);
    hs.out = {nullptr, 0, 0, 1};
  };
  size_t h = 0;
  [[maybe_unused]] size_t d = 0;
  for (const Piece& p : pieces) {
    if (rank != 0 && rank != p.rank) continue;
    const size_t bytes = p.count() * sizeof(double);
    RootStaging::HostSlot& hs = st.host[h++ % RootStaging::kRing];
    settle(hs);
    if (rank == 0) {
      hs.out = host_part(M, p);
      if (p.rank == 0) {
        LAB_CUDA_CHECK(cudaMemcpyAsync(hs.buf.get(), mine.data + p.col * mine.ld, bytes, cudaMemcpyDeviceToHost, copy));
      } else if (!nccl) {
        LAB_MPI_CHECK(MPI_Irecv(hs.buf.get(), mpi::count_of(int64_t(p.count()), "piece"), MPI_DOUBLE, p.rank, 0,
                                comm.get(), &hs.req));
        continue;
      } else {
#if LAB_STEP08_HAVE_NCCL
        const size_t i = d++ % 2;
        RootStaging::DeviceSlot& ds = st.dev[i];
        if (ds.pending) LAB_CUDA_CHECK(cudaStreamWaitEvent(nccl_stream, ds.done.get(), 0));  // copied out already
        s.all->finish(ncclRecv(ds.buf.data(), p.count(), ncclFloat64, p.rank, s.all->get(), nccl_stream), "ncclRecv");
        st.arrived[i].record(nccl_stream);
        LAB_CUDA_CHECK(cudaStreamWaitEvent(copy, st.arrived[i].get(), 0));
        LAB_CUDA_CHECK(cudaMemcpyAsync(hs.buf.get(), ds.buf.data(), bytes, cudaMemcpyDeviceToHost, copy));
        ds.done.record(copy);
        ds.pending = true;
#endif
      }
      hs.copied.record(copy);
      hs.copy_pending = true;
    } else if (nccl) {
#if LAB_STEP08_HAVE_NCCL
      s.all->finish(ncclSend(mine.data + p.col * mine.ld, p.count(), ncclFloat64, 0, s.all->get(), nccl_stream), "ncclSend");
#endif
    } else {
      LAB_CUDA_CHECK(cudaMemcpyAsync(hs.buf.get(), mine.data + p.col * mine.ld, bytes, cudaMemcpyDeviceToHost, copy));
      hs.copied.record(copy);
      wait_event(hs.copied, "a copy from the GPU", nullptr);
      LAB_MPI_CHECK(MPI_Isend(hs.buf.get(), mpi::count_of(int64_t(p.count()), "piece"), MPI_DOUBLE, 0, 0, comm.get(),
                              &hs.req));
    }
  }
  for (RootStaging::HostSlot& hs : st.host) settle(hs);
  lab::cuda::Event end;
  end.record(nccl_stream);
  wait_event(end, rank == 0 ? "the C blocks of the other ranks" : "its C block sent to rank 0", all);
  for (RootStaging::DeviceSlot& ds : st.dev) ds.pending = false;
}

void root_scatter(DeviceContext& dev, const std::vector<Block>& blocks, ConstMatView M, MatView mine, int threads,
                  Traffic& t) {
  Move(dev, blocks, threads, /*to_root=*/false, t).scatter(M, mine);
}

void root_gather(DeviceContext& dev, const std::vector<Block>& blocks, ConstMatView mine, MatView M, int threads,
                 Traffic& t) {
  Move(dev, blocks, threads, /*to_root=*/true, t).gather(mine, M);
}

}  // namespace lab::step08
