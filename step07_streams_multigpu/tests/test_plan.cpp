// step07's tile plan and work queue, on the CPU: the logic every variant
// relies on, tested on any machine (the GPU tests need a GPU).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "plan.hpp"

namespace {

using lab::step07::make_plan;
using lab::step07::Options;
using lab::step07::Plan;
using lab::step07::stream_device_bytes;
using lab::step07::TileQueue;

constexpr size_t GiB = size_t(1) << 30;

// Every element of C lies in exactly one tile, and every k index in one panel.
void expect_covers(const Plan& p) {
  std::vector<int> hits(size_t(p.m * p.n), 0);
  for (int64_t t = 0; t < p.tiles(); ++t) {
    const auto r = p.tile(t);
    ASSERT_GT(r.rows, 0);
    ASSERT_GT(r.cols, 0);
    ASSERT_LE(r.i0 + r.rows, p.m);
    ASSERT_LE(r.j0 + r.cols, p.n);
    for (int64_t j = r.j0; j < r.j0 + r.cols; ++j)
      for (int64_t i = r.i0; i < r.i0 + r.rows; ++i) ++hits[size_t(i + j * p.m)];
  }
  for (size_t e = 0; e < hits.size(); ++e) ASSERT_EQ(hits[e], 1) << "element " << e;
  int64_t depth = 0;
  for (int64_t q = 0; q < p.panels; ++q) {
    EXPECT_EQ(p.panel_start(q), depth);
    ASSERT_GT(p.panel_depth(q), 0);
    depth += p.panel_depth(q);
  }
  EXPECT_EQ(depth, p.k);
}

TEST(Step07Plan, RequestedTilesAreKeptAndEdgesCovered) {
  Options o;
  o.tm = 7, o.tn = 9, o.tk = 4;
  const Plan p = make_plan(65, 33, 17, o, GiB, 2, 2, false);
  EXPECT_EQ(p.shape.tm, 7);
  EXPECT_EQ(p.shape.tn, 9);
  EXPECT_EQ(p.shape.tk, 4);
  EXPECT_EQ(p.tiles_m, 10);  // 9 full rows of tiles and an edge of 2
  EXPECT_EQ(p.tiles_n, 4);
  EXPECT_EQ(p.panels, 5);
  expect_covers(p);
}

TEST(Step07Plan, OneSizeMeansSquareTilesAndClipsToTheMatrix) {
  Options o;
  o.tm = 100;
  const Plan p = make_plan(30, 50, 8, o, GiB, 1, 1, false);
  EXPECT_EQ(p.shape.tm, 30);
  EXPECT_EQ(p.shape.tn, 50);
  EXPECT_EQ(p.shape.tk, 8);
  EXPECT_EQ(p.tiles(), 1);
  expect_covers(p);
}

TEST(Step07Plan, ChosenTilesFitTheCapOfEachStream) {
  Options o;
  for (size_t cap : {size_t(40) << 10, size_t(3) << 20, size_t(1) << 30, size_t(60) * GiB})
    for (int streams : {1, 2, 3, 8}) {
      // (a cap below the smallest plan within kMaxProducts is refused, naming that plan's need)
      if (int64_t(cap) < lab::step07::min_device_mem(32768, 32768, 32768, streams)) {
        EXPECT_THROW(make_plan(32768, 32768, 32768, o, cap, streams, 1, true), std::invalid_argument);
        continue;
      }
      const Plan p = make_plan(32768, 32768, 32768, o, cap, streams, 1, true);
      EXPECT_LE(stream_device_bytes(p.shape) * streams, int64_t(cap))
          << "cap " << cap << ", streams " << streams;
      EXPECT_LE(p.products(), lab::step07::kMaxProducts);
    }
}

TEST(Step07Plan, PanelsTwiceAsDeepWhereTheMemoryHoldsThemNotAtTheTilesCost) {
  Options o;
  // 80 GB, 2 streams: the largest tile, with panels a quarter of it deep.
  const Plan roomy = make_plan(32768, 32768, 32768, o, 80 * GiB, 2, 1, true);
  EXPECT_EQ(roomy.shape.tm, 16384);
  EXPECT_EQ(roomy.shape.tk, 4096);
  // 4 GiB, 2 streams: 12288 tiles fit only with panels an eighth deep, and a
  // deeper panel is not bought with a smaller tile (more host traffic).
  const Plan tight = make_plan(32768, 32768, 32768, o, 4 * GiB, 2, 1, true);
  EXPECT_EQ(tight.shape.tm, 12288);
  EXPECT_EQ(tight.shape.tk, 1536);
  expect_covers(make_plan(1000, 900, 5000, o, 80 * GiB, 2, 1, true));
}

TEST(Step07Plan, CapBelowTheSmallestPlanNamesTheMinimum) {
  // 1K for 1G: at 256 a 1 KiB cap for 2 streams fits 2x2 tiles, 2.1 million products.
  Options o;
  for (int64_t n : {256, 8192})
    for (int streams : {1, 2}) {
      const int64_t need = lab::step07::min_device_mem(n, n, n, streams);
      try {
        make_plan(n, n, n, o, 512, streams, 1, true);
        FAIL() << "a 512-byte cap was accepted at " << n;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("device_mem_limit"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("needs at least"), std::string::npos) << e.what();
      }
      // The minimum named is enough, and its plan stays within the bound.
      const Plan p = make_plan(n, n, n, o, size_t(need), streams, 1, true);
      EXPECT_LE(p.products(), lab::step07::kMaxProducts);
      EXPECT_LE(stream_device_bytes(p.shape) * streams, need);
      EXPECT_THROW(make_plan(n, n, n, o, size_t(need - 1), streams, 1, true), std::invalid_argument);
    }
}

TEST(Step07Plan, RequestedTilesWithTooManyProductsAreRefused) {
  Options o;
  o.tm = o.tn = o.tk = 7;  // 293^3 = 25 million products at 2048
  try {
    make_plan(2048, 2048, 2048, o, GiB, 2, 1, true);
    FAIL() << "7x7x7 tiles at 2048 were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tile"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_plan(64, 64, 64, o, GiB, 2, 1, true).products(), 10 * 10 * 10);
}

TEST(Step07Plan, LargeCapGivesLargeTilesAndFewBytes) {
  Options o;
  const Plan p = make_plan(32768, 32768, 32768, o, size_t(60) * GiB, 2, 2, false);
  EXPECT_EQ(p.shape.tm, 16384);
  EXPECT_EQ(p.shape.tn, 16384);
  // A and B cross twice each, C once: 5 n^2 doubles.
  EXPECT_DOUBLE_EQ(p.h2d_bytes(true), 8.0 * 5 * 32768.0 * 32768.0);
  EXPECT_DOUBLE_EQ(p.d2h_bytes(), 8.0 * 32768.0 * 32768.0);
}

TEST(Step07Plan, SmallCapForcesManySmallTiles) {
  Options o;
  const Plan p = make_plan(129, 65, 33, o, size_t(40) << 10, 2, 2, true);
  EXPECT_GT(p.tiles(), 4);
  EXPECT_GT(p.panels, 1);
  expect_covers(p);
}

TEST(Step07Plan, NoFewerTilesThanAsked) {
  Options o;
  const Plan p = make_plan(8192, 8192, 8192, o, size_t(60) * GiB, 4, 8, false);
  EXPECT_GE(p.tiles(), 8);
  expect_covers(make_plan(300, 200, 100, o, GiB, 4, 8, false));
}

TEST(Step07Plan, StreamsOfOneDeviceDoNotSplitATileThatFits) {
  // One GPU with 2 streams at 16384: one 16384^2 tile (A, B, C cross once:
  // 3 n^2 doubles), not two halves (4 n^2) so that the second stream has one.
  Options o;
  const Plan p = make_plan(16384, 16384, 16384, o, size_t(60) * GiB, 2, 1, false);
  EXPECT_EQ(p.tiles(), 1);
  EXPECT_DOUBLE_EQ(p.h2d_bytes(true), 8.0 * 3 * 16384.0 * 16384.0);
}

TEST(Step07Plan, CapTooSmallForOneTileSetThrowsNamingIt) {
  Options o;
  try {
    make_plan(100, 100, 100, o, 16, 1, 1, true);
    FAIL() << "a 16-byte cap was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device_mem_limit"), std::string::npos) << e.what();
  }
  o.tm = 64;
  EXPECT_THROW(make_plan(100, 100, 100, o, 1 << 10, 1, 1, true), std::invalid_argument);
  // A cap read from the device (none given) that is too small is not an argument error.
  EXPECT_THROW(make_plan(100, 100, 100, o, 1 << 10, 1, 1, false), std::runtime_error);
}

TEST(Step07Options, BadOptionsAreNamed) {
  auto expect_named = [](Options o, const std::string& name) {
    try {
      lab::step07::check_options(o);
      ADD_FAILURE() << "accepted options that should name " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  Options o;
  o.gpus.clear();
  expect_named(o, "gpus");
  o = Options{};
  o.gpus = {0, -1};
  expect_named(o, "gpus");
  o = Options{};
  o.streams_per_gpu = 0;
  expect_named(o, "streams_per_gpu");
  o = Options{};
  o.tk = -3;
  expect_named(o, "tile");
  o = Options{};
  o.host_threads = -1;
  expect_named(o, "host_threads");
  o = Options{};
  o.gpus = {0, 0, 1};
  o.streams_per_gpu = 3;
  EXPECT_NO_THROW(lab::step07::check_options(o));
  // The two entries of device 0 share its 3 streams (as dgemm_streams would run there).
  EXPECT_EQ(lab::step07::streams_on_busiest_device(o), 3);
  o.gpus = {1, 1, 1, 1, 0};
  o.streams_per_gpu = 2;
  EXPECT_EQ(lab::step07::streams_on_busiest_device(o), 4);  // at least one stream per entry
}

// ---- panels shared between the GPUs (plan.hpp's SharePlan) ----

TEST(Step07SharePlan, TeamGridIsTheMostSquareSplit) {
  const int want[9][2] = {{1, 1}, {1, 1}, {1, 2}, {1, 3}, {2, 2}, {1, 5}, {2, 3}, {1, 7}, {2, 4}};
  for (int g = 1; g <= 8; ++g) {
    const lab::step07::TeamGrid t = lab::step07::team_grid(g);
    EXPECT_EQ(t.rows, want[g][0]) << g << " entries";
    EXPECT_EQ(t.cols, want[g][1]) << g << " entries";
    EXPECT_EQ(t.size(), g);
  }
}

TEST(Step07SharePlan, SlicesCoverTheirExtentInOrder) {
  for (int64_t extent : {0, 1, 5, 16, 17})
    for (int parts = 1; parts <= 5; ++parts) {
      int64_t at = 0;
      for (int q = 0; q < parts; ++q) {
        const auto s = lab::step07::slice_of(extent, q, parts);
        EXPECT_EQ(s.start, at);
        EXPECT_GE(s.size, extent / parts);
        EXPECT_LE(s.size, extent / parts + 1);
        at += s.size;
      }
      EXPECT_EQ(at, extent);
    }
}

// Every tile goes to exactly one entry of one super tile, the entry at its
// place in the grid; an entry idles only where its tile lies outside C.
void expect_team_covers(const lab::step07::SharePlan& sp, int entries) {
  std::vector<int> hits(size_t(sp.plan.tiles()), 0);
  for (int64_t s = 0; s < sp.supers(); ++s)
    for (int e = 0; e < entries; ++e) {
      const int64_t t = sp.tile_of(s, e);
      if (t < 0) {
        EXPECT_EQ(sp.row_sharers(s, e), 0);
        continue;
      }
      ASSERT_LT(t, sp.plan.tiles());
      ++hits[size_t(t)];
      EXPECT_EQ(t % sp.plan.tiles_m % sp.grid.rows, e / sp.grid.cols) << "tile " << t << ", entry " << e;
      EXPECT_EQ(t / sp.plan.tiles_m % sp.grid.cols, e % sp.grid.cols) << "tile " << t << ", entry " << e;
      EXPECT_GE(sp.row_sharers(s, e), 1);
      EXPECT_GE(sp.col_sharers(s, e), 1);
    }
  for (size_t t = 0; t < hits.size(); ++t) ASSERT_EQ(hits[t], 1) << "tile " << t;
}

TEST(Step07SharePlan, EveryTileGoesToOneEntryOnce) {
  for (int entries = 1; entries <= 8; ++entries)
    for (const auto& mnk : {std::vector<int64_t>{45, 38, 50}, {100, 100, 7}, {5, 300, 9}, {129, 65, 33}}) {
      Options o;
      o.tm = 16, o.tn = 11, o.tk = 8;
      const auto sp = lab::step07::make_share_plan(mnk[0], mnk[1], mnk[2], o, GiB, entries, entries, false);
      SCOPED_TRACE(std::to_string(entries) + " entries, " + std::to_string(sp.plan.tiles_m) + " x " +
                   std::to_string(sp.plan.tiles_n) + " tiles");
      expect_team_covers(sp, entries);
    }
}

TEST(Step07SharePlan, TheBytesFollowTheFormula) {
  // 2 x 2 entries, 4 x 4 tiles of 32 x 32 and 4 panels of 16: every entry
  // computes 4 tiles, and the slices divide evenly.
  Options o;
  o.tm = o.tn = 32, o.tk = 16;
  const int64_t m = 128, n = 128, k = 64;
  const auto sp = lab::step07::make_share_plan(m, n, k, o, GiB, 1, 4, false);
  ASSERT_EQ(sp.grid.rows, 2);
  ASSERT_EQ(sp.grid.cols, 2);
  const auto per_tile = lab::step07::share_bytes(32, 32, k, sp.grid);
  EXPECT_DOUBLE_EQ(per_tile.host, 8.0 * (32.0 * 64 / 2 + 64.0 * 32 / 2));
  EXPECT_DOUBLE_EQ(per_tile.peer, 8.0 * (32.0 * 64 / 2 + 64.0 * 32 / 2));
  for (int e = 0; e < 4; ++e) {
    const auto b = sp.bytes(e, true);
    EXPECT_DOUBLE_EQ(b.host, 4 * per_tile.host + 8.0 * 4 * 32 * 32) << "entry " << e;
    EXPECT_DOUBLE_EQ(b.peer, 4 * per_tile.peer) << "entry " << e;
  }
  // One entry: no peers, the host bytes of the plan without sharing.
  const auto one = lab::step07::share_bytes(32, 32, k, lab::step07::team_grid(1));
  EXPECT_DOUBLE_EQ(one.host, 8.0 * (32.0 * 64 + 64.0 * 32));
  EXPECT_DOUBLE_EQ(one.peer, 0.0);
  // 8 entries (2 x 4): A from the host a quarter, B a half.
  const auto eight = lab::step07::share_bytes(32, 32, k, lab::step07::team_grid(8));
  EXPECT_DOUBLE_EQ(eight.host, 8.0 * (32.0 * 64 / 4 + 64.0 * 32 / 2));
  EXPECT_DOUBLE_EQ(eight.peer, 8.0 * (3 * 32.0 * 64 / 4 + 64.0 * 32 / 2));
}

TEST(Step07SharePlan, EachPanelLeavesTheHostOncePerSuperTile) {
  // Whatever the edges: A crosses the host link once per column of super
  // tiles, B once per row of super tiles, C once; what the entries receive
  // from their peers is what they send.
  for (int entries = 1; entries <= 8; ++entries)
    for (const auto& mnk : {std::vector<int64_t>{45, 38, 50}, {129, 65, 33}, {7, 90, 3}}) {
      Options o;
      o.tm = 9, o.tn = 7, o.tk = 5;
      const int64_t m = mnk[0], n = mnk[1], k = mnk[2];
      const auto sp = lab::step07::make_share_plan(m, n, k, o, GiB, entries, entries, false);
      double host = 0;
      for (int e = 0; e < entries; ++e) host += sp.bytes(e, true).host;
      EXPECT_DOUBLE_EQ(host, 8.0 * (double(sp.super_cols) * m * k + double(sp.super_rows) * k * n + double(m) * n))
          << entries << " entries, " << m << " x " << n << " x " << k;
    }
}

TEST(Step07SharePlan, ChosenTilesMakeAWholeSuperTile) {
  Options o;
  // 4 entries at 32768 (the measured case): 16384-wide tiles, one each.
  auto sp = lab::step07::make_share_plan(32768, 32768, 32768, o, size_t(60) * GiB, 1, 4, false);
  EXPECT_EQ(sp.plan.shape.tm, 16384);
  EXPECT_EQ(sp.plan.shape.tn, 16384);
  EXPECT_EQ(sp.supers(), 1);
  // Host bytes per GPU halve: 8 (tm k / 2 + k tn / 2) instead of 8 (tm k + k tn).
  EXPECT_DOUBLE_EQ(sp.bytes(0, false).host, 8.0 * 16384.0 * 32768.0);
  // 8 entries (2 x 4) at 32768: the tiles narrow to 8192 columns, 2 x 4 of them.
  sp = lab::step07::make_share_plan(32768, 32768, 32768, o, size_t(60) * GiB, 1, 8, false);
  EXPECT_EQ(sp.plan.tiles_m, 2);
  EXPECT_EQ(sp.plan.tiles_n, 4);
  // 4 entries at 16384 (one tile fits): four tiles of 8192.
  sp = lab::step07::make_share_plan(16384, 16384, 16384, o, size_t(60) * GiB, 1, 4, false);
  EXPECT_EQ(sp.plan.tiles(), 4);
  expect_team_covers(sp, 4);
}

// An entry with several tiles one after the other gets a second C tile where
// the cap holds it (one goes back while the next is computed); one super
// tile, or a cap without room, keeps one.
TEST(Step07SharePlan, SeveralSuperTilesGetTwoCBuffersWhereTheyFit) {
  Options o;
  auto sp = lab::step07::make_share_plan(65536, 65536, 65536, o, size_t(60) * GiB, 1, 4, false);
  EXPECT_EQ(sp.supers(), 4);
  EXPECT_EQ(sp.plan.c_buffers, 2);
  EXPECT_EQ(sp.plan.device_bytes(),
            lab::step07::stream_device_bytes(sp.plan.shape) + 8 * sp.plan.shape.tm * sp.plan.shape.tn);
  EXPECT_NE(sp.plan.describe(false).find("two C tiles"), std::string::npos) << sp.plan.describe(false);
  sp = lab::step07::make_share_plan(32768, 32768, 32768, o, size_t(60) * GiB, 1, 4, false);
  EXPECT_EQ(sp.supers(), 1);
  EXPECT_EQ(sp.plan.c_buffers, 1) << "one tile per entry: nothing to overlap";
  // Tiles asked for, and a cap that holds one tile set and not a second C tile.
  o.tm = o.tn = o.tk = 1024;
  const int64_t one = lab::step07::stream_device_bytes({1024, 1024, 1024});
  sp = lab::step07::make_share_plan(8192, 8192, 8192, o, size_t(2 * one), 2, 4, true);
  EXPECT_GT(sp.supers(), 1);
  EXPECT_EQ(sp.plan.c_buffers, 1) << "two entries on the device share the cap";
  sp = lab::step07::make_share_plan(8192, 8192, 8192, o, size_t(one + 8 * 1024 * 1024), 1, 4, true);
  EXPECT_EQ(sp.plan.c_buffers, 2);
}

TEST(Step07Queue, EveryTileGoesOutOnceAcrossThreads) {
  constexpr int64_t kTiles = 10000;
  constexpr int kThreads = 8;
  TileQueue q(kTiles, kThreads);  // tiles 0..7 dealt up front, one per thread
  std::vector<std::atomic<int>> taken(kTiles);
  std::vector<std::thread> ts;
  for (int w = 0; w < kThreads; ++w)
    ts.emplace_back([&, w] {
      for (int64_t t = w; t >= 0; t = q.next()) taken[size_t(t)]++;
    });
  for (auto& t : ts) t.join();
  for (int64_t t = 0; t < kTiles; ++t) ASSERT_EQ(taken[size_t(t)].load(), 1) << "tile " << t;
  EXPECT_EQ(q.next(), -1);
}

TEST(Step07Queue, StopEndsTheDealing) {
  TileQueue q(100);
  EXPECT_EQ(q.next(), 0);
  EXPECT_EQ(q.next(), 1);
  q.stop();
  EXPECT_TRUE(q.stopped());
  EXPECT_EQ(q.next(), -1);
}

}  // namespace
