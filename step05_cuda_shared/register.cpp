// The variants of step05, as the benchmark CLI and the ladder know them.
#include <utility>

#include "shared.hpp"

namespace {
using lab::GemmCall;

cudaStream_t stream_of(const GemmCall& c) { return static_cast<cudaStream_t>(c.stream); }

// The two global-memory kernels are given code, compiled into every
// implementation alike: the first implementation to start up registers them.
int register_baseline(lab::Variant v) {
  for (const auto& r : lab::registered_variants())
    if (r.step == v.step && r.name == v.name && r.impl == v.impl) return -1;
  return lab::register_variant(std::move(v));
}

[[maybe_unused]] const int naive = register_baseline(
    {"step05", "naive", "baseline", lab::Backend::gpu,
     [](const GemmCall& c) { lab::step05::dgemm_naive(c.alpha, c.A, c.B, c.beta, c.C, stream_of(c)); },
     "one thread per C(i,j) from global memory, threadIdx.x -> column j (uncoalesced)"});
[[maybe_unused]] const int naive_coalesced =
    register_baseline({"step05", "naive_coalesced", "baseline", lab::Backend::gpu,
                       [](const GemmCall& c) {
                         lab::step05::dgemm_naive_coalesced(c.alpha, c.A, c.B, c.beta, c.C, stream_of(c));
                       },
                       "one thread per C(i,j) from global memory, threadIdx.x -> row i (coalesced)"});

LAB_REGISTER_VARIANT({"step05", "tiled", LAB_IMPL_NAME, lab::Backend::gpu,
                      [](const GemmCall& c) {
                        lab::step05::dgemm(c.alpha, c.A, c.B, c.beta, c.C, stream_of(c));
                      },
                      "32 x 32 tiles of A and B staged in shared memory, one C(i,j) per thread"});
}  // namespace
