// device_root.cpp — the rank-0 entry on GPUs: rank 0's host matrices to every
// rank's device blocks, and C back (device.hpp: root_scatter, root_gather).
//
// Every byte of A, B (and C when beta != 0) leaves rank 0's host memory, and all
// of C comes back to it. The blocks travel in pieces (a group of whole columns
// of one rank's block, at most kChunkBytes), along one of two paths (RootCopy):
//
// direct (every rank on rank 0's node, every GPU reachable from rank 0's
// process): each rank hands rank 0 its device block (a CUDA IPC handle), and
// rank 0 copies each piece into it on a stream of that GPU, so every GPU loads
// through its own host link and all links run at once, as step07's GPUs do.
// From pinned matrices the copies go straight from M (cudaMemcpy2DAsync); from
// pageable ones host threads copy each piece into a ring of kRing pinned
// buffers first. A 3D grid gives some ranks no block of A or of B, so where
// rank 0's GPUs reach each other a piece takes the link with the fewest bytes
// so far and goes on over NVLink from a stage on that GPU. The gather is the
// mirror (C is spread over the z = 0 layer). The other ranks only hand over
// their blocks (after their product has ended, for the gather).
//
// relay (ranks on other nodes, or asked for):
//   scatter, rank 0: host threads copy a piece out of the strided host matrix
//     into a pinned buffer (a ring of kRing), cudaMemcpyAsync takes it to the GPU
//     (the copy stream), and ncclSend sends it from a device buffer (two of them,
//     so that the next piece's copy to the GPU runs while this one is sent) to
//     the rank that owns the block, which receives it with ncclRecv straight into
//     its block. Rank 0's own pieces go from the pinned buffer into its block.
//   gather: the mirror; ncclRecv into a device buffer on rank 0, a copy to a
//     pinned buffer, host threads copy it into its place in C while the next
//     pieces arrive.
// Rank 0's host link sets the pace there. While the host threads fill or empty
// one pinned buffer, the copies and the sends of the pieces before it run on
// the GPU side: host copy, link and NVLink overlap. Without NCCL (ranks sharing
// a GPU, --transfer mpi) the pinned pieces travel with MPI instead (MPI_Isend /
// MPI_Irecv of the pinned buffers) and each rank copies its own pieces to or
// from its GPU: never pageable host buffers.
//
// Device memory on rank 0 beyond its own blocks: a piece per GPU (its stage) on
// the direct path; two pieces on the relay path (2 x 64 MiB, or two columns of
// the tallest block where a column is larger), whatever the matrices' size;
// host memory: kRing pinned pieces on every rank that stages.
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

  // The direct path: rank 0's stream on one GPU, and an event per pinned slot
  // (an event belongs to the GPU of the stream it is recorded on).
  struct Link {
    int device;
    lab::cuda::Stream stream;
    lab::cuda::Event slot_done[kRing];
    DeviceBuffer<double> stage;  // a piece for another GPU, on its way over NVLink
    int64_t queued = 0;          // bytes given to this link in the current scatter
    explicit Link(int d) : device(d) {}
  };
  // Another rank's block, opened in this process (CUDA IPC), kept while its handle stays the same.
  struct Mapped {
    int rank, slot;
    cudaIpcMemHandle_t handle;
    void* ptr;
    int device;
  };

  bool decided = false;             // the path below was chosen for `decided_for`
  RootCopy decided_for = RootCopy::automatic;
  bool direct = false;              // agreed on every rank
  bool peers = false;               // rank 0, direct: its GPUs reach each other (pieces may go by another link)
  std::string route;                // the path in words
  std::vector<int> device_of;       // rank 0, direct: rank r's GPU as this process numbers it
  std::vector<std::unique_ptr<Link>> links;
  std::vector<Mapped> mapped;

  size_t chunk_elems = 0;
  lab::cuda::Stream copy;  // copies between pinned and device memory, beside the NCCL stream
  HostSlot host[kRing];
  cudaEvent_t host_pending[kRing] = {};  // direct path: the last copy into or out of host[i] (a Link's event)
  DeviceSlot dev[2];
  lab::cuda::Event arrived[2];  // gather: a piece received into dev[i]
  DeviceBuffer<double> blocks[3];  // this rank's A, B, C blocks, kept between calls

  // Buffers for pieces of `elems` elements.
  void reserve(size_t elems, bool host_ring, bool device_ring) {
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

  Link& link(int device) {
    for (auto& l : links)
      if (l->device == device) return *l;
    lab::cuda::KeepDevice on(device);
    links.push_back(std::make_unique<Link>(device));
    return *links.back();
  }

  // Rank 0: rank r's block of `slot`, mapped into this process (opened once per handle).
  double* open(int r, int slot, const cudaIpcMemHandle_t& h) {
    for (Mapped& m : mapped) {
      if (m.rank != r || m.slot != slot) continue;
      if (std::memcmp(&m.handle, &h, sizeof h) == 0) return static_cast<double*>(m.ptr);
      close(m);
      m = mapped.back();
      mapped.pop_back();
      break;
    }
    const int device = device_of[size_t(r)];
    lab::cuda::KeepDevice on(device);
    void* p = nullptr;
    LAB_CUDA_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess));
    mapped.push_back({r, slot, h, p, device});
    return static_cast<double*>(p);
  }
  static void close(const Mapped& m) {  // never throws: also called from the destructor
    int before = 0;
    cudaGetDevice(&before);
    cudaSetDevice(m.device);
    cudaIpcCloseMemHandle(m.ptr);
    cudaSetDevice(before);
  }

  ~RootStaging() {
    for (auto& l : links) cudaStreamSynchronize(l->stream.get());
    for (const Mapped& m : mapped) close(m);
    cudaGetLastError();
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

// The pieces in turns over the ranks (one piece of each in turn), so that on the
// direct path every GPU's link has a piece in flight while the host threads
// fill the next one.
std::vector<Piece> in_turns(const std::vector<Piece>& pieces) {
  std::vector<size_t> turn(pieces.size()), order(pieces.size());
  std::vector<size_t> seen;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const size_t r = size_t(pieces[i].rank);
    if (seen.size() <= r) seen.resize(r + 1, 0);
    turn[i] = seen[r]++;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return turn[a] < turn[b]; });
  std::vector<Piece> out;
  for (size_t i : order) out.push_back(pieces[i]);
  return out;
}

// What a scatter or a gather starts from on this rank: the staging (grown to
// the pieces of these blocks), the pieces in order, and the bytes it will move
// booked in `t` (rank 0 to or from every other rank that holds a block).
struct Move {
  DeviceContext::State& s;
  RootStaging& st;
  const Comm& comm;
  int rank;
  int slot;     // 0 A, 1 B, 2 C: which of the owners' blocks
  bool direct;  // RootCopy::direct (decided in root_prepare)
  bool nccl;    // relay with NCCL
  bool pinned;  // rank 0: M is page-locked (the direct path copies straight from or into it)
  const NcclCommPtr* all = nullptr;
  int threads;
  std::vector<Piece> pieces;
  cudaStream_t copy, nccl_stream;  // pinned <-> device copies; NCCL (the context's stream)

  void scatter(ConstMatView M, MatView mine);
  void gather(ConstMatView mine, MatView M);
  void direct_scatter(ConstMatView M, MatView mine);
  void direct_gather(ConstMatView mine, MatView M);
  std::vector<double*> targets(const double* mine);

  Move(DeviceContext& dev, int which, const std::vector<Block>& blocks, ConstMatView M, int host, bool to_root,
       Traffic& t)
      : s(dev.state()), st(*s.root), comm(s.cube->cart), rank(comm.rank()), slot(which), direct(st.direct),
        nccl(!direct && s.nccl && comm.size() > 1), pinned(rank == 0 && direct && lab::cuda::pinned_view(M)),
        threads(host_threads(host)), copy(st.copy.get()), nccl_stream(s.stream.get()) {
#if LAB_STEP08_HAVE_NCCL
    all = &s.all;
#endif
    const bool host_ring = direct ? rank == 0 && !pinned : rank == 0 || !nccl;
    // A piece: at most the piece size, at least one column of the tallest block.
    const size_t piece_bytes = s.root_piece_bytes ? s.root_piece_bytes : RootStaging::kChunkBytes;
    const size_t piece_elems = std::max(tallest(blocks), std::max<size_t>(1, piece_bytes / sizeof(double)));
    st.reserve(piece_elems, host_ring, !direct && rank == 0 && nccl);
    pieces = pieces_of(blocks, piece_elems);
    if (direct) pieces = in_turns(pieces);
    for (int r = 1; r < int(blocks.size()); ++r) {
      const Block& b = blocks[size_t(r)];
      if (!b.held || (rank != 0 && rank != r)) continue;
      ((rank == 0) != to_root ? t.sent : t.recv) += b.rows * b.cols * int64_t(sizeof(double));
    }
  }
};

// Rank 0, once per context and path asked for: whether it can copy into every
// rank's GPU itself. All ranks on its node, each rank's GPU visible here (found
// by its PCI address), and a trial block of each rank opened through CUDA IPC.
// Collective; every rank learns the answer. Asked for direct where it cannot
// be: rank 0 throws why (and the caller's all_or_none fails every rank).
void choose_route(DeviceContext::State& s, RootStaging& st) {
  const Comm& comm = s.cube->cart;
  const int p = comm.size(), rank = comm.rank();
  int want = static_cast<int>(s.root_copy);  // rank 0's wish is the call's
  LAB_MPI_CHECK(MPI_Bcast(&want, 1, MPI_INT, 0, comm.get()));
  if (st.decided && static_cast<int>(st.decided_for) == want) return;
  std::string why_not;
  int route = 0;  // 0 relay, 1 direct, 2 direct asked for and impossible
  st.device_of.assign(size_t(p), -1);
  if (want != static_cast<int>(RootCopy::relay)) {
    int one_node = s.ranks_on_node == p ? 1 : 0, all_one = 0;
    LAB_MPI_CHECK(MPI_Allreduce(&one_node, &all_one, 1, MPI_INT, MPI_MIN, comm.get()));
    struct Card {
      char bus[32];
      cudaIpcMemHandle_t handle;
      int ok;
    };
    Card card{};
    DeviceBuffer<double> trial;
    if (!all_one) {
      why_not = "the ranks are on more than one node";
    } else {
      if (rank != 0) {
        try {
          LAB_CUDA_CHECK(cudaDeviceGetPCIBusId(card.bus, sizeof card.bus, s.device));
          trial = DeviceBuffer<double>(1);
          LAB_CUDA_CHECK(cudaIpcGetMemHandle(&card.handle, trial.data()));
          card.ok = 1;
        } catch (const std::exception&) {
          cudaGetLastError();
        }
      }
      std::vector<Card> cards(rank == 0 ? size_t(p) : 0);
      LAB_MPI_CHECK(MPI_Gather(&card, sizeof card, MPI_BYTE, cards.data(), sizeof card, MPI_BYTE, 0, comm.get()));
      if (rank == 0) {
        st.device_of[0] = s.device;
        for (int r = 1; r < p && why_not.empty(); ++r) {
          const Card& c = cards[size_t(r)];
          const std::string who = "rank " + std::to_string(r);
          int d = -1;
          if (!c.ok) {
            why_not = who + " could not hand over a block of its GPU (CUDA IPC)";
          } else if (cudaDeviceGetByPCIBusId(&d, c.bus) != cudaSuccess) {
            cudaGetLastError();
            why_not = who + "'s GPU (" + c.bus + ") is not visible to rank 0 (CUDA_VISIBLE_DEVICES?)";
          } else {
            lab::cuda::KeepDevice on(d);
            void* q = nullptr;
            const cudaError_t e = cudaIpcOpenMemHandle(&q, c.handle, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) {
              cudaGetLastError();
              why_not = "rank 0 could not open " + who + "'s block (CUDA IPC: " + cudaGetErrorString(e) + ")";
            } else {
              cudaIpcCloseMemHandle(q);
              st.device_of[size_t(r)] = d;
            }
          }
        }
      }
    }
    if (rank == 0) route = why_not.empty() ? 1 : want == static_cast<int>(RootCopy::direct) ? 2 : 0;
    LAB_MPI_CHECK(MPI_Bcast(&route, 1, MPI_INT, 0, comm.get()));  // after it, the trial blocks may go
  }
  if (route == 1 && rank == 0) {  // one link per GPU; between GPUs that reach each other, NVLink
    std::vector<int> distinct;
    for (int d : st.device_of)
      if (std::find(distinct.begin(), distinct.end(), d) == distinct.end()) distinct.push_back(d);
    for (int d : distinct) st.link(d);
    st.peers = distinct.size() > 1 && lab::cuda::unreachable(distinct).empty();
    if (st.peers) lab::cuda::enable_peers(distinct);
  }
  st.decided = route != 2;
  st.decided_for = static_cast<RootCopy>(want);
  st.direct = route == 1;
  st.route = st.direct ? "rank 0 copies into every GPU through that GPU's own link (CUDA IPC)"
             : s.nccl && p > 1 ? "through rank 0's GPU, then NCCL"
                               : "through pinned pieces and MPI";
  if (route == 2 && rank == 0) throw std::runtime_error("rank-0 entry: direct copies asked for, but " + why_not);
}

}  // namespace

void root_prepare(DeviceContext& dev) {
  DeviceContext::State& s = dev.state();
  if (!s.root) s.root.reset(new RootStaging);
  choose_route(s, *s.root);
  if (!s.root->decided) return;  // direct asked for where it cannot be: rank 0 has thrown
#if LAB_STEP08_HAVE_NCCL
  // Every rank of the cube makes it at the same call: the first rank-0 entry that relays.
  if (!s.root->direct && s.nccl && s.cube->cart.size() > 1 && !s.all)
    s.all = std::make_unique<NcclComm>(s.cube->cart, "all ranks");
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

// Collective: every other rank hands rank 0 its block (a CUDA IPC handle; none
// where it holds none); rank 0 gets where each rank's block lies in its own
// address space (its own: `mine`), the others nothing.
std::vector<double*> Move::targets(const double* mine) {
  struct Card {
    cudaIpcMemHandle_t handle;
    int state;  // 0 no block, 1 a block, -1 failed
  };
  Card card{};
  std::string failed;
  if (rank != 0 && mine) {
    const cudaError_t e = cudaIpcGetMemHandle(&card.handle, const_cast<double*>(mine));
    card.state = e == cudaSuccess ? 1 : -1;
    if (e != cudaSuccess) failed = cudaGetErrorString(e);
    cudaGetLastError();
  }
  std::vector<Card> cards(rank == 0 ? size_t(comm.size()) : 0);
  LAB_MPI_CHECK(MPI_Gather(&card, sizeof card, MPI_BYTE, cards.data(), sizeof card, MPI_BYTE, 0, comm.get()));
  if (!failed.empty())
    throw std::runtime_error("rank " + std::to_string(rank) + ": cudaIpcGetMemHandle of its block failed: " + failed);
  if (rank != 0) return {};
  std::vector<double*> to(cards.size(), nullptr);
  to[0] = const_cast<double*>(mine);
  for (size_t r = 1; r < cards.size(); ++r) {
    if (cards[r].state < 0) throw std::runtime_error("rank " + std::to_string(r) + " could not hand over its block");
    if (cards[r].state == 1) to[r] = st.open(int(r), slot, cards[r].handle);
  }
  return to;
}

// Rank 0 waits until what went into or out of pinned slot i has ended (direct path).
void settle_slot(RootStaging& st, size_t i) {
  if (st.host_pending[i]) LAB_CUDA_CHECK(cudaEventSynchronize(st.host_pending[i]));
  st.host_pending[i] = nullptr;
}

// A piece goes through its owner's GPU link, or, where rank 0's GPUs reach each
// other, through the link with the fewest bytes given so far and on over NVLink
// (a 3D grid gives some GPUs no block of A or of B: their links would idle).
RootStaging::Link& link_for(RootStaging& st, int own, size_t bytes) {
  RootStaging::Link* best = &st.link(own);
  if (st.peers)
    for (auto& l : st.links)
      if (l->queued < best->queued) best = l.get();
  best->queued += int64_t(bytes);
  return *best;
}

void Move::direct_scatter(ConstMatView M, MatView mine) {
  const std::vector<double*> to = targets(mine.data);
  if (rank != 0) return;
  for (auto& l : st.links) l->queued = 0;
  size_t h = 0;
  for (const Piece& p : pieces) {
    const size_t bytes = p.count() * sizeof(double), col_bytes = size_t(p.block.rows) * sizeof(double);
    const int own = st.device_of[size_t(p.rank)];
    RootStaging::Link& L = link_for(st, own, bytes);
    const lab::cuda::KeepDevice on(L.device);
    double* dst = to[size_t(p.rank)] + p.col * p.block.rows;
    double* land = dst;  // where the copy from the host lands: dst, or L's stage on the way to it
    if (L.device != own) {
      if (L.stage.size() < st.chunk_elems) L.stage = DeviceBuffer<double>(st.chunk_elems);
      land = L.stage.data();
    }
    const ConstMatView src = host_part(M, p);
    if (pinned) {  // straight from M, column by column in one call
      LAB_CUDA_CHECK(cudaMemcpy2DAsync(land, col_bytes, src.data, size_t(src.ld) * sizeof(double), col_bytes,
                                       size_t(p.cols), cudaMemcpyHostToDevice, L.stream.get()));
    } else {
      const size_t i = h++ % RootStaging::kRing;
      settle_slot(st, i);
      RootStaging::HostSlot& hs = st.host[i];
      host_copy({static_cast<double*>(hs.buf.get()), p.block.rows, p.cols, p.block.rows}, src, threads);
      LAB_CUDA_CHECK(cudaMemcpyAsync(land, hs.buf.get(), bytes, cudaMemcpyHostToDevice, L.stream.get()));
      L.slot_done[i].record(L.stream.get());
      st.host_pending[i] = L.slot_done[i].get();
    }
    // The stage is free again once this copy out of it is done: the next copy into it is on the same stream.
    if (land != dst) LAB_CUDA_CHECK(cudaMemcpyAsync(dst, land, bytes, cudaMemcpyDeviceToDevice, L.stream.get()));
  }
  for (size_t i = 0; i < RootStaging::kRing; ++i) settle_slot(st, i);
  for (auto& l : st.links) l->stream.sync();
}

void Move::direct_gather(ConstMatView mine, MatView M) {
  // Before rank 0 may read a block, the product that writes it has ended (its
  // handle goes to rank 0 only after this).
  LAB_CUDA_CHECK(cudaStreamSynchronize(nccl_stream));
  const std::vector<double*> from = targets(mine.data);
  if (rank != 0) return;
  auto settle = [&](size_t i) {
    settle_slot(st, i);
    RootStaging::HostSlot& hs = st.host[i];
    if (hs.out.data)
      host_copy(hs.out, {static_cast<const double*>(hs.buf.get()), hs.out.rows, hs.out.cols, hs.out.rows}, threads);
    hs.out = {nullptr, 0, 0, 1};
  };
  size_t h = 0;
  for (const Piece& p : pieces) {
    RootStaging::Link& L = st.link(st.device_of[size_t(p.rank)]);
    const lab::cuda::KeepDevice on(L.device);
    const double* src = from[size_t(p.rank)] + p.col * p.block.rows;
    const MatView dst = host_part(M, p);
    const size_t bytes = p.count() * sizeof(double), col_bytes = size_t(p.block.rows) * sizeof(double);
    if (pinned) {
      LAB_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, size_t(dst.ld) * sizeof(double), src, col_bytes, col_bytes,
                                       size_t(p.cols), cudaMemcpyDeviceToHost, L.stream.get()));
      continue;
    }
    const size_t i = h++ % RootStaging::kRing;
    settle(i);
    RootStaging::HostSlot& hs = st.host[i];
    LAB_CUDA_CHECK(cudaMemcpyAsync(hs.buf.get(), src, bytes, cudaMemcpyDeviceToHost, L.stream.get()));
    L.slot_done[i].record(L.stream.get());
    st.host_pending[i] = L.slot_done[i].get();
    hs.out = dst;
  }
  for (size_t i = 0; i < RootStaging::kRing; ++i) settle(i);
  for (auto& l : st.links) l->stream.sync();
}

void Move::scatter(ConstMatView M, MatView mine) {
  if (direct) return direct_scatter(M, mine);
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
  if (direct) return direct_gather(mine, M);
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

void root_scatter(DeviceContext& dev, int slot, const std::vector<Block>& blocks, ConstMatView M, MatView mine,
                  int threads, Traffic& t) {
  Move(dev, slot, blocks, M, threads, /*to_root=*/false, t).scatter(M, mine);
}

void root_gather(DeviceContext& dev, int slot, const std::vector<Block>& blocks, ConstMatView mine, MatView M,
                 int threads, Traffic& t) {
  Move(dev, slot, blocks, M, threads, /*to_root=*/true, t).gather(mine, M);
}

void DeviceContext::set_root_copy(RootCopy how, size_t piece_bytes) {
  state_->root_copy = how;
  state_->root_piece_bytes = piece_bytes;
}
std::string DeviceContext::root_route() const { return state_->root ? state_->root->route : std::string(); }

}  // namespace lab::step08
