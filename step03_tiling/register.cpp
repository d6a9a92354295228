// The variants of step03, as the benchmark CLI and the ladder know them.
#include "tiling.hpp"

namespace {
using lab::GemmCall;
lab::step03::Tiles tiles_of(const lab::Params* params) {
  return lab::step03::tiles_with_overrides(lab::step03::default_tiles(),
                                           params ? params->tile : std::vector<int64_t>{});
}

LAB_REGISTER_VARIANT({"step03", "tiled", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) {
                        lab::step03::dgemm_tiled(c.alpha, c.A, c.B, c.beta, c.C, tiles_of(c.params));
                      },
                      "mc x nc x kc cache blocks (--tile mc,nc,kc), 2x2 register reuse", nullptr, nullptr,
                      {{"mc", "nc", "kc"}, 1, [](const lab::Params& p) {
                         const lab::step03::Tiles t = tiles_of(&p);
                         return lab::format_tiles({"mc", "nc", "kc"}, {t.mc, t.nc, t.kc});
                       }}});
}  // namespace
