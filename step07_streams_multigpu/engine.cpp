// The shared machinery of step07 (see engine.hpp).
#include "engine.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "lab/gemm_args.hpp"

namespace lab::step07::detail {
namespace {

// cudaHostAlloc pins memory at a few GB/s: allocating the staging buffers on
// every call would cost more than a product at n = 8192. They are kept for
// the life of the process and handed out again (host memory; the device cap
// does not count them).
class PinnedPool {
 public:
  static PinnedPool& get() {
    static PinnedPool* p = new PinnedPool;  // never destroyed: the CUDA runtime may be gone at exit
    return *p;
  }
  double* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= bytes && (best == free_.end() || it->second < best->second)) best = it;
    if (best != free_.end()) {
      double* p = best->first;
      size_[p] = best->second;
      free_.erase(best);
      return p;
    }
    void* p = nullptr;
    LAB_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
    size_[static_cast<double*>(p)] = bytes;
    return static_cast<double*>(p);
  }
  void give(double* p) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace_back(p, size_[p]);
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<double*, size_t>> free_;
  std::map<double*, size_t> size_;
};

// cublasCreate costs milliseconds and allocates a workspace: handles are kept
// per device and handed out again, like the staging buffers.
class HandlePool {
 public:
  static HandlePool& get() {
    static HandlePool* p = new HandlePool;
    return *p;
  }
  cublasHandle_t take(int device) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& list = free_[device];
      if (!list.empty()) {
        cublasHandle_t h = list.back();
        list.pop_back();
        return h;
      }
    }
    cublasHandle_t h = nullptr;
    LAB_CUDA_CHECK(cublasCreate(&h));
    return h;
  }
  void give(int device, cublasHandle_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    free_[device].push_back(h);
  }

 private:
  std::mutex mu_;
  std::map<int, std::vector<cublasHandle_t>> free_;
};

// Device buffers freed by a call, kept per device for the next call (see
// PooledBuffer in engine.hpp). A plan repeats its sizes, so a kept buffer is
// handed out again only for its own size, and a size the device keeps none
// of means a call of another plan: the device's kept buffers are freed then,
// so a device keeps at most one plan's (a test suite of many sizes does not
// pile them up), and never more than a quarter of its memory (a plan that
// fills a small GPU frees its buffers at once, as before).
class DevicePool {
 public:
  static DevicePool& get() {
    static DevicePool* p = new DevicePool;  // never destroyed: the CUDA runtime may be gone at exit
    return *p;
  }
  // (the current device is `device`)
  double* take(int device, size_t count) {
    std::vector<std::pair<double*, size_t>> stale;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& list = kept_[device];
      for (auto it = list.begin(); it != list.end(); ++it)
        if (it->second == count) {
          double* p = it->first;
          bytes_[device] -= sizeof(double) * count;
          list.erase(it);
          LAB_EMULATION(reuse_memory(p));
          return p;
        }
      stale.swap(list);
      bytes_[device] = 0;
    }
    for (auto& kept : stale) cudaFree(kept.first);
    void* p = nullptr;
    LAB_CUDA_CHECK(cudaMalloc(&p, sizeof(double) * count));
    return static_cast<double*>(p);
  }
  // (the current device is `device`)
  void give(int device, double* p, size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    size_t& total = total_[device];
    if (total == 0) {
      size_t free_b = 0;
      if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) cudaGetLastError(), total = 1;
    }
    if (bytes_[device] + sizeof(double) * count > total / 4) {
      lock.unlock();
      cudaFree(p);
      return;
    }
    bytes_[device] += sizeof(double) * count;
    kept_[device].emplace_back(p, count);
  }
  size_t kept_bytes(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_[device];
  }

 private:
  std::mutex mu_;
  std::map<int, std::vector<std::pair<double*, size_t>>> kept_;
  std::map<int, size_t> bytes_, total_;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

PooledBuffer::PooledBuffer(size_t count) : count_(count) {
  LAB_CUDA_CHECK(cudaGetDevice(&device_));
  if (count > 0) ptr_ = DevicePool::get().take(device_, count);
}

PooledBuffer::~PooledBuffer() {
  if (!ptr_) return;
  // (given back while its device is current, as the pool may free it)
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) cudaGetLastError();
  if (current != device_) cudaSetDevice(device_);
  DevicePool::get().give(device_, ptr_, count_);
  if (current != device_) cudaSetDevice(current);
}

PooledBuffer::PooledBuffer(PooledBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)), device_(o.device_) {}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(count_, o.count_);
  std::swap(device_, o.device_);
  return *this;
}

// A pinned buffer of the ring, its last copy's event, and (for a store) the
// host block that still waits for its part of the copy.
struct Worker::Staging {
  double* buf = nullptr;
  cuda::Event done;
  bool busy = false;
  bool has_out = false;
  MatView out{};
};

// A traced copy or product: the events around it.
struct Worker::Op {
  std::unique_ptr<cuda::Event> start, end;
  const char* kind = "";
  int64_t bytes = 0;
  cudaStream_t stream = nullptr;
};

size_t usable_device_memory(const std::map<int, int>& streams_per_device) {
  // (the caller's current device is left as it was: only the streams' own threads switch)
  int current = 0;
  LAB_CUDA_CHECK(cudaGetDevice(&current));
  // What the emptiest device has free, less room for cuBLAS's workspaces and the runtime.
  size_t least = SIZE_MAX;
  for (const auto& [dev, n] : streams_per_device) {
    LAB_CUDA_CHECK(cudaSetDevice(dev));
    size_t free_b = 0, total_b = 0;
    LAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    free_b = std::min(total_b, free_b + DevicePool::get().kept_bytes(dev));
    // (cuBLAS takes a workspace of up to 32 MiB per handle; the rest is room for the runtime)
    const size_t reserve = (size_t(64) << 20) * size_t(n);
    const size_t usable = std::max(free_b / 10 * 9 > reserve ? free_b / 10 * 9 - reserve : 0, free_b / 2);
    least = std::min(least, usable);
  }
  LAB_CUDA_CHECK(cudaSetDevice(current));
  return least;
}

std::unique_ptr<Call> prepare(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                              const Options& opts, const std::vector<StreamSlot>& slots) {
  check_gemm_args(A, B, C);
  check_options(opts);
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("no CUDA device: ") + cudaGetErrorString(e));
  }
  for (int g : opts.gpus)
    if (g >= count)
      throw std::invalid_argument("gpus: GPU id " + std::to_string(g) + " does not exist (" +
                                  std::to_string(count) + " visible)");
  if (gemm_quick_return(alpha, A, B, beta, C)) return nullptr;

  // Streams per device, from the slots this variant runs.
  std::map<int, int> per_device;
  int busiest = 0;
  for (const auto& s : slots) busiest = std::max(busiest, ++per_device[s.device]);
  const size_t cap = opts.device_mem_limit > 0 ? opts.device_mem_limit : usable_device_memory(per_device);
  auto call = std::make_unique<Call>();
  call->alpha = alpha, call->beta = beta;
  call->A = A, call->B = B, call->C = C;
  call->opts = opts;
  // Several GPUs: a tile for every stream, so that none idles (tile i goes to
  // stream i first, GPU by GPU). One GPU: one tile is enough (see make_plan).
  const int min_tiles = per_device.size() > 1 ? int(slots.size()) : 1;
  call->plan = make_plan(C.rows, C.cols, A.cols, opts, cap, busiest, min_tiles, opts.device_mem_limit > 0);
  call->cap = cap;
  call->streams_per_device = busiest;
  call->t0 = Clock::now();
  return call;
}

Worker::Worker(Call& call, StreamSlot slot)
    : call_(call), slot_(slot), device_((LAB_CUDA_CHECK(cudaSetDevice(slot.device)), slot.device)) {
  const TileShape& t = plan().shape;
  for (int c = 0; c < plan().c_buffers; ++c) dC_[c] = PooledBuffer(size_t(t.tm * t.tn));
  dCin_ = PooledBuffer(size_t(t.tm * c_block_width(t)));
  for (int b = 0; b < 2; ++b) {
    dA_[b] = PooledBuffer(size_t(t.tm * t.tk));
    dB_[b] = PooledBuffer(size_t(t.tk * t.tn));
  }
  LAB_EMULATION(name_stream(h2d_.get(), "h2d"));
  LAB_EMULATION(name_stream(compute_.get(), "compute"));
  LAB_EMULATION(name_stream(d2h_.get(), "d2h"));
  LAB_EMULATION(name_memory(dC_[0].data(), "the C tile"));
  if (plan().c_buffers > 1) LAB_EMULATION(name_memory(dC_[1].data(), "the C tile (second buffer)"));
  LAB_EMULATION(name_memory(dCin_.data(), "the C-in buffer"));
  for (int b = 0; b < 2; ++b) {
    LAB_EMULATION(name_memory(dA_[b].data(), "buffer slot " + std::to_string(b)));
    LAB_EMULATION(name_memory(dB_[b].data(), "buffer slot " + std::to_string(b)));
  }
  blas_ = HandlePool::get().take(slot.device);
  LAB_CUDA_CHECK(cublasSetStream(blas_, compute_.get()));
  cores_ = int(std::max(1u, std::thread::hardware_concurrency()));
  // Staging (only pageable matrices use it): four buffers for copies in, so
  // the host can fill the next panels while the last ones travel; enough for
  // a whole C tile out, so the host's part of a tile's store waits until the
  // next tile's.
  // (allocated on first use: pinned matrices need none).
  staging_elems_ = std::max(t.tm * t.tk, t.tk * t.tn);
  const int64_t chunk_cols = std::max<int64_t>(1, staging_elems_ / t.tm);
  out_ring_size_ = size_t(std::clamp<int64_t>((t.tn + chunk_cols - 1) / chunk_cols, 2, 64));
  if (call.opts.trace) {
    // The trace's clock: an event on an idle stream completes at once, so the
    // host time after waiting for it is the event's time (to a few microseconds).
    ref_.record(h2d_.get());
    ref_.sync();
    ref_s_ = seconds_since(call.t0);
  }
}

Worker::~Worker() {
  cudaSetDevice(slot_.device);
  cudaStreamSynchronize(h2d_.get());
  cudaStreamSynchronize(compute_.get());
  cudaStreamSynchronize(d2h_.get());
  cudaGetLastError();
  for (auto* ring : {&in_ring_, &out_ring_})
    for (auto& s : *ring)
      if (s.buf) PinnedPool::get().give(s.buf);
  if (blas_) HandlePool::get().give(slot_.device, blas_);
}

bool Worker::pinned(const void* p) const { return lab::cuda::pinned_memory(p); }

Worker::Staging& Worker::take(std::vector<Staging>& ring, size_t& next, size_t count) {
  if (ring.empty()) {
    ring = std::vector<Staging>(count);
    for (auto& s : ring) s.buf = PinnedPool::get().take(sizeof(double) * size_t(staging_elems_));
  }
  Staging& s = ring[next];
  next = (next + 1) % ring.size();
  settle(s);
  return s;
}

void Worker::settle(Staging& s) {
  if (s.busy) {
    const double t = seconds_since(call_.t0);
    s.done.sync();
    s.busy = false;
    host_event("wait", t, 0);
  }
  if (s.has_out) {
    host_copy(s.out, ConstMatView{s.buf, s.out.rows, s.out.cols, std::max<int64_t>(1, s.out.rows)});
    s.has_out = false;
  }
}

void Worker::host_copy(MatView dst, ConstMatView src) {
  // One host thread copies about 10 GB/s; pageable staging needs several. The
  // cores go to the workers still running (a worker with no tile never
  // starts; one that has finished hands its share to the others: the last
  // stream's copies into the pageable C at the end of the call then run on
  // every core), all of them together about what PCIe moves.
  const double t = seconds_since(call_.t0);
  const int64_t cols = dst.cols;
  const size_t col_bytes = sizeof(double) * size_t(dst.rows);
  const int threads = call_.opts.host_threads > 0 ? call_.opts.host_threads
                                                  : std::max(1, cores_ / std::max(1, call_.running.load()));
#pragma omp parallel for num_threads(threads) schedule(static) if (cols * dst.rows > 65536)
  for (int64_t j = 0; j < cols; ++j) std::memcpy(dst.data + j * dst.ld, src.data + j * src.ld, col_bytes);
  host_event("host", t, int64_t(col_bytes) * cols);
}

void Worker::host_event(const char* kind, double start_s, int64_t bytes) {
  if (call_.opts.trace) host_events_.push_back(event(kind, bytes, start_s, seconds_since(call_.t0)));
}

std::string Worker::host_block_name(const double* p) const {
  const Call& c = call_;
  const int64_t tk = plan().shape.tk, tn = plan().shape.tn;
  auto holds = [p](ConstMatView m) { return m.data && p >= m.data && p < m.data + m.ld * m.cols; };
  if (holds(c.A)) return "panel " + std::to_string((p - c.A.data) / c.A.ld / tk);
  if (holds(c.B)) return "panel " + std::to_string((p - c.B.data) % c.B.ld / tk);
  if (holds(c.C)) {
    const int64_t col = (p - c.C.data) / c.C.ld;
    return "block " + std::to_string(col % tn / c_block_width(plan().shape)) + " of the C tile";
  }
  return "a host block";
}

std::string Worker::tile_block_name(const double* p, int64_t cols) const {
  for (int c = 0; c < plan().c_buffers; ++c) {
    const PooledBuffer& buf = dC_[c];
    if (p < buf.data() || p >= buf.data() + buf.size()) continue;
    const int64_t col = (p - buf.data()) / plan().shape.tm, bw = c_block_width(plan().shape);
    const std::string second = c == 0 ? "" : " (second buffer)";
    if (col == 0 && cols > bw) return "the C tile" + second;
    return "block " + std::to_string(col / bw) + " of the C tile" + second;
  }
  return "the C-in buffer";
}

TraceEvent Worker::event(const std::string& kind, int64_t bytes, double start_s, double end_s) const {
  TraceEvent e;
  e.gpu = slot_.gpu;
  e.device = slot_.device;
  e.stream = slot_.stream;
  e.kind = kind;
  e.bytes = bytes;
  e.start_s = start_s;
  e.end_s = end_s;
  return e;
}

int Worker::begin_op(cudaStream_t s) {
  if (!call_.opts.trace) return -1;
  Op op;
  op.start = std::make_unique<cuda::Event>();
  op.end = std::make_unique<cuda::Event>();
  op.start->record(s);
  op.stream = s;
  ops_.push_back(std::move(op));
  return int(ops_.size()) - 1;
}

void Worker::end_op(int i, cudaStream_t s, const char* kind, int64_t bytes) {
  if (i < 0) return;
  ops_[size_t(i)].end->record(s);
  ops_[size_t(i)].kind = kind;
  ops_[size_t(i)].bytes = bytes;
}

void Worker::load(MatView dev, ConstMatView host, cudaStream_t s) {
  if (dev.rows == 0 || dev.cols == 0) return;
  const size_t width = sizeof(double) * size_t(host.rows);
  const int64_t bytes = int64_t(width) * host.cols;
  const double* last = host.data + (host.cols - 1) * host.ld + host.rows - 1;
  for (int b = 0; b < 2; ++b)
    if (dev.data == dA_[b].data()) slot_panel_[b] = host_block_name(host.data);
  if (pinned(host.data) && pinned(last)) {
    const int op = begin_op(s);
    LAB_EMULATION(describe("copy", host_block_name(host.data)));
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(dev.data, sizeof(double) * size_t(dev.ld), host.data,
                                     sizeof(double) * size_t(host.ld), width, size_t(host.cols),
                                     cudaMemcpyHostToDevice, s));
    end_op(op, s, "H2D", bytes);
    return;
  }
  // Pageable: through the staging buffers, in chunks of whole columns.
  const int64_t chunk = std::max<int64_t>(1, staging_elems_ / std::max<int64_t>(1, host.rows));
  for (int64_t j = 0; j < host.cols; j += chunk) {
    const int64_t w = std::min(chunk, host.cols - j);
    Staging& st = take(in_ring_, in_next_, 4);
    host_copy(MatView{st.buf, host.rows, w, host.rows}, host.block(0, j, host.rows, w));
    const int op = begin_op(s);
    LAB_EMULATION(describe("copy", host_block_name(host.data)));
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(dev.data + j * dev.ld, sizeof(double) * size_t(dev.ld), st.buf, width,
                                     width, size_t(w), cudaMemcpyHostToDevice, s));
    end_op(op, s, "H2D", int64_t(width) * w);
    st.done.record(s);
    st.busy = true;
  }
}

void Worker::store(MatView host, ConstMatView dev, cudaStream_t s) {
  if (host.rows == 0 || host.cols == 0) return;
  const size_t width = sizeof(double) * size_t(host.rows);
  const double* last = host.data + (host.cols - 1) * host.ld + host.rows - 1;
  if (pinned(host.data) && pinned(last)) {
    const int op = begin_op(s);
    LAB_EMULATION(describe("copy back", tile_block_name(dev.data, dev.cols)));
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(host.data, sizeof(double) * size_t(host.ld), dev.data,
                                     sizeof(double) * size_t(dev.ld), width, size_t(host.cols),
                                     cudaMemcpyDeviceToHost, s));
    end_op(op, s, "D2H", int64_t(width) * host.cols);
    return;
  }
  const int64_t chunk = std::max<int64_t>(1, staging_elems_ / std::max<int64_t>(1, host.rows));
  for (int64_t j = 0; j < host.cols; j += chunk) {
    const int64_t w = std::min(chunk, host.cols - j);
    Staging& st = take(out_ring_, out_next_, out_ring_size_);
    const int op = begin_op(s);
    LAB_EMULATION(describe("copy back", tile_block_name(dev.data, dev.cols)));
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(st.buf, width, dev.data + j * dev.ld, sizeof(double) * size_t(dev.ld),
                                     width, size_t(w), cudaMemcpyDeviceToHost, s));
    end_op(op, s, "D2H", int64_t(width) * w);
    st.done.record(s);
    st.busy = true;
    st.has_out = true;
    st.out = host.block(0, j, host.rows, w);
  }
}

void Worker::send(MatView dst, ConstMatView src, cudaStream_t s) {
  if (src.rows == 0 || src.cols == 0) return;
  const size_t width = sizeof(double) * size_t(src.rows);
  const int op = begin_op(s);
  [[maybe_unused]] auto in = [&](const PooledBuffer& buf) {
    return src.data >= buf.data() && src.data < buf.data() + buf.size();
  };
  LAB_EMULATION(describe("peer copy", slot_panel_[in(dA_[1]) || in(dB_[1]) ? 1 : 0]));
  // Unified addressing: the runtime sees from the pointers that both are
  // device memory, of one device or of two (then a peer copy).
  LAB_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, sizeof(double) * size_t(dst.ld), src.data,
                                   sizeof(double) * size_t(src.ld), width, size_t(src.cols), cudaMemcpyDefault, s));
  end_op(op, s, "P2P", int64_t(width) * src.cols);
}

void Worker::name_panel(int b, int64_t p) { slot_panel_[b] = "panel " + std::to_string(p); }

void Worker::gemm(double alpha, ConstMatView dA, ConstMatView dB, double beta, MatView dC) {
  if (dC.rows == 0 || dC.cols == 0) return;
  const int op = begin_op(compute_.get());
  LAB_EMULATION(describe(("product of " + slot_panel_[dA.data == dA_[1].data() ? 1 : 0]).c_str(),
                         tile_block_name(dC.data, dC.cols)));
  LAB_CUDA_CHECK(cublasDgemm_64(blas_, CUBLAS_OP_N, CUBLAS_OP_N, dC.rows, dC.cols, dA.cols, &alpha, dA.data,
                                dA.ld, dB.data, dB.ld, &beta, dC.data, dC.ld));
  end_op(op, compute_.get(), "compute", 0);
}

void Worker::add(double beta, ConstMatView dX, MatView dC) {
  if (dC.rows == 0 || dC.cols == 0) return;
  const int op = begin_op(compute_.get());
  const double one = 1.0;
  LAB_EMULATION(describe("addition of C", tile_block_name(dC.data, dC.cols)));
  // In place (dC is both the first operand and the result), which cuBLAS allows with CUBLAS_OP_N.
  LAB_CUDA_CHECK(cublasDgeam_64(blas_, CUBLAS_OP_N, CUBLAS_OP_N, dC.rows, dC.cols, &one, dC.data, dC.ld,
                                &beta, dX.data, dX.ld, dC.data, dC.ld));
  end_op(op, compute_.get(), "compute", 0);
}

void Worker::finish() {
  // Staged stores first, oldest first, each as soon as its copy is done: the
  // host's part of one block then runs while the next block is still on its
  // way back (the end of the call, which nothing else hides).
  for (size_t i = 0; i < out_ring_.size(); ++i) settle(out_ring_[(out_next_ + i) % out_ring_.size()]);
  h2d_.sync();
  compute_.sync();
  d2h_.sync();
  for (auto* ring : {&in_ring_, &out_ring_})
    for (auto& s : *ring) settle(s);
  if (!call_.opts.trace || (ops_.empty() && host_events_.empty())) return;
  std::vector<TraceEvent> mine;
  mine.swap(host_events_);
  for (const Op& op : ops_)
    mine.push_back(event(op.kind, op.bytes, ref_s_ + op.start->seconds_since(ref_),
                         ref_s_ + op.end->seconds_since(ref_)));
  ops_.clear();  // finish() may come once per tile (the synchronous loop)
  std::lock_guard<std::mutex> lock(call_.trace_mu);
  call_.opts.trace->insert(call_.opts.trace->end(), mine.begin(), mine.end());
}

Tile::Tile(Worker& w, int64_t index)
    : call(w.call()),
      r(call.plan.tile(index)),
      hC(call.C.block(r.i0, r.j0, r.rows, r.cols)),
      dC((w.next_c_buffer(), w.c_tile(r.rows, r.cols))),
      panels(call.plan.panels),
      bw(c_block_width(call.plan.shape)),
      blocks((r.cols + bw - 1) / bw),
      late_c(call.beta != 0 && panels > 1) {}

int64_t Tile::c_panel(int64_t j) const {
  if (!late_c) return -1;
  const int64_t after = panels - 1;  // the panels with products after which C can join
  return blocks <= after ? j * after / blocks : std::min(j, panels - 1);
}

void run_streams(Call& call, const std::vector<StreamSlot>& slots, const std::function<void(Worker&)>& body) {
  std::mutex mu;
  std::exception_ptr first;
  auto run_one = [&](StreamSlot slot) {
    try {
      Worker w(call, slot);
      body(w);
      w.finish();
    } catch (...) {
      call.failed = true;
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
    }
    --call.running;
  };
  // Slots past the tile count get no tile (every variant deals tile i to slot
  // i first): no Worker for them, whose device buffers nothing would use and
  // whose cudaFree would wait for the device, a stall in the others' queues.
  const size_t used = std::min(slots.size(), size_t(std::max<int64_t>(1, call.plan.tiles())));
  call.running = int(used);
  std::vector<std::thread> threads;
  threads.reserve(used);
  for (size_t i = 0; i < used; ++i) threads.emplace_back(run_one, slots[i]);
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace lab::step07::detail
