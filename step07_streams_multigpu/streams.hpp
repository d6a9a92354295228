// step07_streams_multigpu — DGEMM on matrices that live in HOST memory (and
// may be larger than the GPU): C is cut into tiles, the panels of A and B that
// a tile needs travel through pinned buffers, cublasDgemm with beta = 1
// accumulates over k, and the tile goes back. Three variants, in the order
// of the lecture:
//
//   dgemm_sync      one stream, every copy waited for: the lecture's loop
//   dgemm_streams   one GPU, several streams: double-buffered panels, events
//                   for the dependencies, the C tile stays on the device for
//                   the whole k loop (each byte crosses PCIe as few times as
//                   the memory cap allows)
//   dgemm_multigpu  every GPU of opts.gpus, several streams each, C tiles
//                   dealt from one shared queue so the GPUs finish together
//
// All three take HOST views (pageable or pinned, any ld) and keep the kernel
// contract of every step. Pinned host matrices (cudaHostRegister or
// cudaMallocHost) are copied straight from; pageable ones are staged through
// pinned buffers by host threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step07 {

/// One copy or product as the GPU ran it (bracketed by events), for the timeline.
struct TraceEvent {
  int gpu = 0;         ///< index into Options::gpus (0, 1, ... even where ids repeat)
  int device = 0;      ///< the CUDA device id
  int stream = 0;      ///< the stream (worker) on that GPU entry
  std::string kind;    ///< "H2D", "compute", "D2H" or "P2P" (a panel slice sent to another GPU entry,
                       ///< dgemm_multigpu sharing panels) on the GPU; "host" (a host thread's staging
                       ///< copy, pageable matrices only) or "wait" (a host thread waiting for a staging buffer)
  double start_s = 0;  ///< seconds since the call began (host clock)
  double end_s = 0;
  int64_t bytes = 0;  ///< bytes copied (copies), 0 for products
};

struct Options {
  /// CUDA device ids; an id may repeat (`0,0`: two GPU entries on one device,
  /// so the multi-GPU code runs on one GPU). dgemm_sync and dgemm_streams use
  /// the first entry only.
  std::vector<int> gpus{0};
  int streams_per_gpu = 2;  ///< streams (each with its own C tile) per GPU entry
  /// Tile of C (tm x tn) and depth of a k panel (tk); 0 = chosen from the
  /// memory cap so that the fewest bytes cross PCIe.
  int64_t tm = 0, tn = 0, tk = 0;
  /// Device memory the step's buffers may use on each device, in bytes
  /// (0 = what the device has free, less a reserve for cuBLAS).
  size_t device_mem_limit = 0;
  /// Host threads that stage a pageable matrix, per stream (0 = share the cores).
  int host_threads = 0;
  /// When set, every copy and product of the call is appended here.
  std::vector<TraceEvent>* trace = nullptr;
  /// dgemm_multigpu: share the panels of A and B between the GPU entries
  /// (plan.hpp's SharePlan: each loads a slice from the host and copies it to
  /// the others over NVLink). automatic: when A and B are pinned, there are
  /// two entries or more and every pair of devices can reach each other;
  /// off: never; on: whenever the devices can reach each other, pageable
  /// matrices too (std::invalid_argument, naming share, when they cannot or
  /// there is one entry).
  enum class Share { automatic, off, on };
  Share share = Share::automatic;
};

inline namespace LAB_IMPL_NS {

/// Variant 1: the lecture's synchronous loop on opts.gpus[0].
void dgemm_sync(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                const Options& opts = {});
/// Variant 2: streams and events on opts.gpus[0].
void dgemm_streams(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                   const Options& opts = {});
/// Variant 3: every GPU entry of opts.gpus, opts.streams_per_gpu streams each.
void dgemm_multigpu(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                    const Options& opts = {});

}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
