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
