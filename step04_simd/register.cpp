// The variants of step04, as the benchmark CLI and the ladder know them:
// "simd" runs the widest micro-kernel this CPU has; the narrower ones that it
// can also run are registered as "simd_<isa>", to compare in one run.
#include <string>
#include <vector>

#include "simd.hpp"
#include "tiling.hpp"

namespace {

using lab::GemmCall;
using lab::step04::Isa;

void run(Isa isa, const GemmCall& c) {
  const lab::step04::Blocking d = lab::step04::default_blocking(isa);
  const auto t = lab::step03::tiles_with_overrides({d.mc, d.nc, d.kc},
                                                   c.params ? c.params->tile : std::vector<int64_t>{});
  lab::step04::dgemm_with(c.alpha, c.A, c.B, c.beta, c.C, isa, {t.mc, t.nc, t.kc});
}

int register_all() {
  const Isa best = lab::step04::best_isa();
  lab::register_variant({"step04", "simd", LAB_IMPL_NAME, lab::Backend::cpu,
                         [best](const GemmCall& c) { run(best, c); },
                         std::string("packed panels, ") + lab::step04::isa_name(best) +
                             " micro-kernel, OpenMP over row blocks (--tile mc,nc,kc)"});
  for (Isa isa : {Isa::avx2, Isa::generic}) {
    if (isa == best || !lab::step04::isa_supported(isa)) continue;
    lab::register_variant({"step04", std::string("simd_") + lab::step04::isa_name(isa), LAB_IMPL_NAME,
                           lab::Backend::cpu, [isa](const GemmCall& c) { run(isa, c); },
                           std::string("as simd, with the ") + lab::step04::isa_name(isa) + " micro-kernel"});
  }
  return 0;
}

[[maybe_unused]] const int registered = register_all();

}  // namespace
