// The variants of step06, as the benchmark CLI and the ladder know them.
// --tile bm,bn[,bk] picks a block tile; --list shows the ones built.
#include <stdexcept>
#include <string>

#include "launch.cuh"
#include "register_blocking.hpp"

namespace {
using lab::GemmCall;

cudaStream_t stream_of(const GemmCall& c) { return static_cast<cudaStream_t>(c.stream); }

lab::step06::Tile tile_of(const GemmCall& c) {
  lab::step06::Tile t;
  const auto& v = c.params->tile;
  if (v.empty()) return t;
  if (v.size() < 2 || v.size() > 3) throw std::invalid_argument("--tile takes bm,bn or bm,bn,bk");
  t.bm = int(v[0]);
  t.bn = int(v[1]);
  t.bk = v.size() == 3 ? int(v[2]) : 0;
  return t;
}

// --tile bm,bn[,bk]: one of the tiles built; without it, dgemm picks one by the
// size of C and the GPU (the banner lists the built ones).
lab::TileSpec tiles(const std::vector<lab::step06::Tile>& built) {
  return {{"bm", "bn", "bk"}, 2, [built](const lab::Params& p) {
            if (p.tile.empty())
              return (built.size() == 1 ? "its one tile (" : "picked by the size of C (built: ") +
                     lab::step06::detail::tile_list(built) + ")";
            return lab::format_tiles({"bm", "bn", "bk"}, p.tile) +
                   (p.tile.size() == 2 ? ", bk " + std::to_string(built.front().bk) : "");
          }};
}

LAB_REGISTER_VARIANT(
    {"step06", "simt", LAB_IMPL_NAME, lab::Backend::gpu,
     [](const GemmCall& c) { lab::step06::dgemm(c.alpha, c.A, c.B, c.beta, c.C, stream_of(c), tile_of(c)); },
     "CUDA cores: 8 x 8 doubles of C per thread, 64 x 32 per warp, a cp.async pipeline in shared memory; --tile " +
         lab::step06::detail::tile_list(lab::step06::simt_tiles()),
     nullptr, nullptr, tiles(lab::step06::simt_tiles())});
LAB_REGISTER_VARIANT({"step06", "dmma", LAB_IMPL_NAME, lab::Backend::gpu,
                      [](const GemmCall& c) {
                        std::string why;
                        if (!lab::step06::dmma_supported(&why)) throw lab::NotOnThisMachine("step06 dmma: " + why);
                        lab::step06::dgemm_dmma(c.alpha, c.A, c.B, c.beta, c.C, stream_of(c), tile_of(c));
                      },
                      "FP64 tensor cores: mma.sync f64, a cp.async pipeline in shared memory (sm_80 or later); "
                      "--tile " +
                          lab::step06::detail::tile_list(lab::step06::dmma_tiles()),
                      nullptr, nullptr, tiles(lab::step06::dmma_tiles())});

// The candidate DMMA kernels (dmma_variants.cu), one variant each: given code,
// the same in every implementation.
[[maybe_unused]] const int candidates_registered = [] {
  for (const lab::step06::DmmaCandidate& k : lab::step06::dmma_candidates())
    lab::register_variant({"step06", k.name, LAB_IMPL_NAME, lab::Backend::gpu,
                           [name = k.name](const GemmCall& c) {
                             lab::step06::dgemm_dmma_candidate(name, c.alpha, c.A, c.B, c.beta, c.C, stream_of(c),
                                                               tile_of(c));
                           },
                           k.about + "; --tile " + lab::step06::detail::tile_list(k.tiles), nullptr, nullptr,
                           tiles(k.tiles)});
  return 0;
}();
}  // namespace
