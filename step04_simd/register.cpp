// The variants of step04, as the benchmark CLI and the ladder know them:
// "simd" runs the kernel dgemm chooses on this CPU (kernel_choice); every kernel
// the CPU can run is also registered as "simd_<isa>", to compare in one run.
#include <omp.h>

#include <functional>
#include <string>
#include <vector>

#include "lab/machine.hpp"
#include "microkernel.hpp"
#include "simd.hpp"
#include "tiling.hpp"
#include "ways.hpp"

namespace {

using lab::GemmCall;
using lab::Params;
using lab::step04::Blocking;
using lab::step04::Isa;

Blocking blocks(Isa isa, const Params* params) {
  const Blocking d = lab::step04::default_blocking(isa);
  const auto t =
      lab::step03::tiles_with_overrides({d.mc, d.nc, d.kc}, params ? params->tile : std::vector<int64_t>{});
  return {t.mc, t.nc, t.kc};
}

// As dgemm with this kernel (the short path for a small product included);
// --tile asks for the five loops with those blocks, whatever the size.
void run(Isa isa, const GemmCall& c) {
  if (!c.params || c.params->tile.empty()) {
    lab::step04::dgemm_isa(c.alpha, c.A, c.B, c.beta, c.C, isa);
    return;
  }
  lab::step04::dgemm_with(c.alpha, c.A, c.B, c.beta, c.C, isa, blocks(isa, c.params));
}

std::string kib(int64_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

// "avx512 16x14 kernel; default blocks from L1d 48 KiB, L2 1 MiB, L3 32 MiB"
// (the blocks themselves are on the banner's tiles line).
std::string describe(Isa isa, const Params& params) {
  const lab::step04::MicroKernel uk = lab::step04::microkernel(isa);
  const lab::CacheInfo c = lab::cache_info();
  return std::string(lab::step04::isa_name(isa)) + " " + std::to_string(uk.mr) + "x" + std::to_string(uk.nr) +
         " kernel" +
         (params.tile.size() < 3
              ? "; default blocks from L1d " + kib(c.l1d) + ", L2 " + kib(c.l2) + ", L3 " + kib(c.l3)
              : "");
}

// The banner's plan line: how the threads share the loops at this size
// ("ways jc 2 x ic 8 x jr 4 (64 threads), mc 512, nc 2058, kc 216", or
// "dealt 133 blocks of mc 592 x nc 224 (16 threads), kc 216").
std::string ways_line(Isa isa, const Params& params, int64_t m, int64_t n, int64_t k) {
  const lab::step04::MicroKernel uk = lab::step04::microkernel(isa);
  const int available = params.threads > 0 ? params.threads : omp_get_max_threads();
  const bool small = params.tile.empty() && double(m) * double(n) * double(k) <= 160.0 * 160 * 160 &&
                     lab::step04::threads_for(m, n, k, available) == 1;
  if (small) return "small product: one thread, no packing";
  return lab::step04::describe_for(
      lab::step04::layout_for_call(available, m, n, k, uk.mr, uk.nr,
                                   params.tile.empty() ? lab::step04::default_blocking(isa, available, m, n, k)
                                                       : blocks(isa, &params)),
      m, n);
}

// --tile mc,nc,kc (the first ones given replace step04's blocks for the kernel);
// without it, both sets of defaults (the plan line says which one a size gets).
lab::TileSpec tiles(std::function<Isa()> isa) {
  return {{"mc", "nc", "kc"}, 1, [isa](const Params& p) {
            if (p.tile.empty()) return lab::step04::describe_default_blocking(isa());
            const Blocking b = blocks(isa(), &p);
            return lab::format_tiles({"mc", "nc", "kc"}, {b.mc, b.nc, b.kc});
          }};
}

int register_all() {
  lab::register_variant(
      {"step04", "simd", LAB_IMPL_NAME, lab::Backend::cpu,
       [](const GemmCall& c) { run(lab::step04::best_isa(), c); },
       "packed panels, the micro-kernel chosen for this CPU, OpenMP over ways of columns, rows and panels "
       "(--tile mc,nc,kc); small products unpacked",
       [](const Params& p) {
         const auto& choice = lab::step04::kernel_choice();
         return describe(choice.isa, p) + "; chosen: " + choice.why;
       },
       nullptr, tiles([] { return lab::step04::best_isa(); }),
       [](const Params& p, int64_t m, int64_t n, int64_t k) {
         return ways_line(lab::step04::best_isa(), p, m, n, k);
       }});
  for (Isa isa : lab::step04::kIsas) {
    if (!lab::step04::isa_supported(isa)) continue;
    lab::register_variant(
        {"step04", std::string("simd_") + lab::step04::isa_name(isa), LAB_IMPL_NAME, lab::Backend::cpu,
         [isa](const GemmCall& c) { run(isa, c); },
         std::string("as simd, with the ") + lab::step04::isa_name(isa) + " micro-kernel",
         [isa](const Params& p) { return describe(isa, p); }, nullptr, tiles([isa] { return isa; }),
         [isa](const Params& p, int64_t m, int64_t n, int64_t k) { return ways_line(isa, p, m, n, k); }});
  }
  return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace
