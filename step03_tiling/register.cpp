// The variants of step03, as the benchmark CLI and the ladder know them.
#include "tiling.hpp"

namespace {
using lab::GemmCall;
LAB_REGISTER_VARIANT({"step03", "tiled", LAB_IMPL_NAME, lab::Backend::cpu,
                      [](const GemmCall& c) {
                        const auto tiles = lab::step03::tiles_with_overrides(
                            lab::step03::default_tiles(), c.params ? c.params->tile : std::vector<int64_t>{});
                        lab::step03::dgemm_tiled(c.alpha, c.A, c.B, c.beta, c.C, tiles);
                      },
                      "mc x nc x kc cache blocks (--tile mc,nc,kc), 2x2 register reuse"});
}  // namespace
