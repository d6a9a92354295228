// The contract suite's cases and checks (see contract.hpp).
#include "contract.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "lab/check.hpp"
#include "lab/todo.hpp"

namespace lab::testing {
namespace {

// A NaN with a payload no arithmetic produces: a guard cell that still holds
// these bits was neither written nor overwritten with a computed NaN.
double guard_value() {
  const uint64_t bits = 0x7ff4dead0000beefULL;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

std::string num_name(double v) {
  if (v == 0) return "0";
  std::ostringstream o;
  o << (v < 0 ? "m" : "") << std::fabs(v);
  std::string s = o.str();
  for (auto& c : s)
    if (c == '.') c = 'p';
  return s;
}

// An operand with a guard frame of NaN around it: reading outside the matrix
// poisons the result, and writes outside C show up in the frame.
struct Framed {
  Matrix full;
  int64_t rows, cols;
  Framed(int64_t r, int64_t c, int64_t pad) : full(r + 2 + pad, c + 2), rows(r), cols(c) {
    full.fill_all(guard_value());
  }
  MatView view() { return {full.data() + 1 + full.ld(), rows, cols, full.ld()}; }
};

}  // namespace

uint64_t fresh_seed() {
  if (const char* s = std::getenv("LAB_SEED")) return std::strtoull(s, nullptr, 10);
  static std::atomic<uint64_t> counter{0};
  const auto now = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return now ^ (0x9e3779b97f4a7c15ULL * ++counter);
}

std::string seed_note(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (rerun with LAB_SEED=" + std::to_string(seed) + ")";
}

std::vector<Case> contract_cases() {
  std::vector<Case> cs;
  const double alphas[] = {0, 1, -1, 0.5, 2.5};
  const double betas[] = {0, 1, -1, 0.5, 2.5};
  // Square sizes around the tile sizes steps use (16, 32, 64, 128).
  const int64_t sq[] = {0, 1, 2, 3, 7, 16, 17, 31, 33, 64, 65, 127, 129};
  int i = 0;
  for (int64_t s : sq) {
    cs.push_back({s, s, s, i % 2 ? 2.5 : 1.0, i % 3 == 0 ? 0.0 : (i % 3 == 1 ? 1.0 : -1.0), i % 2 ? 3 : 0});
    ++i;
  }
  // Rectangular shapes: every dimension different, k = 1, k >> m, n, and empty ones.
  const int64_t rect[][3] = {{7, 5, 3},    {17, 33, 1},  {33, 17, 1}, {1, 65, 9},    {65, 1, 9},
                             {3, 5, 300},  {20, 10, 257}, {129, 3, 64}, {3, 129, 64}, {100, 37, 65},
                             {0, 5, 7},    {5, 0, 7},     {5, 7, 0},    {1, 1, 1},    {2, 130, 5}};
  i = 0;
  for (auto& r : rect) {
    cs.push_back({r[0], r[1], r[2], alphas[1 + i % 4], betas[i % 5], i % 2 ? 0 : 5});
    ++i;
  }
  // Every alpha x beta at one odd size with padded leading dimensions.
  for (double a : alphas)
    for (double b : betas) cs.push_back({19, 13, 11, a, b, 2});
  // beta == 0 must overwrite a NaN-filled C; alpha == 0 must not read NaN A, B.
  cs.push_back({33, 31, 17, 1.0, 0.0, 1, Poison::nan_c});
  cs.push_back({64, 64, 64, 2.5, 0.0, 0, Poison::nan_c});
  cs.push_back({9, 9, 0, 1.0, 0.0, 0, Poison::nan_c});
  for (double b : {0.0, 1.0, 2.5}) cs.push_back({17, 19, 23, 0.0, b, 1, Poison::nan_ab});
  return cs;
}

std::string describe(const Case& c) {
  std::ostringstream o;
  o << "m=" << c.m << " n=" << c.n << " k=" << c.k << " alpha=" << c.alpha << " beta=" << c.beta
    << " ld=rows+" << c.pad;
  if (c.poison == Poison::nan_c) o << " (C poisoned with NaN)";
  if (c.poison == Poison::nan_ab) o << " (A and B poisoned with NaN)";
  return o.str();
}

void PrintTo(const Case& c, std::ostream* os) { *os << describe(c); }

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::ostringstream o;
  o << "m" << c.m << "_n" << c.n << "_k" << c.k << "_a" << num_name(c.alpha) << "_b" << num_name(c.beta) << "_pad"
    << c.pad;
  if (c.poison == Poison::nan_c) o << "_nanC";
  if (c.poison == Poison::nan_ab) o << "_nanAB";
  o << "_" << info.index;
  return o.str();
}

void run_contract_case(const Subject& s, const Case& c, uint64_t seed) {
  SCOPED_TRACE("case " + describe(c) + ", " + seed_note(seed));
  Framed A(c.m, c.k, c.pad), B(c.k, c.n, c.pad), C(c.m, c.n, c.pad);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Matrix a(c.m, c.k), b(c.k, c.n), c0(c.m, c.n);
  a.fill_random(seed);
  b.fill_random(seed + 1);
  c0.fill_random(seed + 2);
  if (c.poison == Poison::nan_c) c0.fill(nan);
  if (c.poison == Poison::nan_ab) {
    a.fill(nan);
    b.fill(nan);
  }
  auto copy_in = [](const Matrix& src, MatView dst) {
    for (int64_t j = 0; j < dst.cols; ++j)
      for (int64_t i = 0; i < dst.rows; ++i) dst(i, j) = src(i, j);
  };
  copy_in(a, A.view());
  copy_in(b, B.view());
  copy_in(c0, C.view());
  const Matrix a_before = A.full.clone(), b_before = B.full.clone();

  try {
    s.gemm(c.alpha, A.view(), B.view(), c.beta, C.view());
  } catch (const Todo& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "dgemm threw for a valid call: " << e.what();
  }

  Matrix out(c.m, c.n);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) out(i, j) = C.view()(i, j);
  const CheckResult r = check_against_reference(c.alpha, a.cview(), b.cview(), c.beta, c0.cview(), out.cview());
  EXPECT_TRUE(r.ok) << "wrong result for " << describe(c) << ":\n" << r.report;
  std::string where;
  EXPECT_TRUE(guards_intact(C.full, 1, 1, c.m, c.n, guard_value(), &where)) << "wrote outside C: " << where;
  EXPECT_EQ(0, std::memcmp(a_before.data(), A.full.data(), sizeof(double) * a_before.size())) << "dgemm changed A";
  EXPECT_EQ(0, std::memcmp(b_before.data(), B.full.data(), sizeof(double) * b_before.size())) << "dgemm changed B";
}

void run_bad_argument_checks(const Subject& s) {
  struct Bad {
    const char* what;
    int64_t am, ak, bk, bn, cm, cn;
    int64_t lda_delta, ldb_delta, ldc_delta;  // ld = rows + delta (negative: too small)
    bool null_a;
    const char* must_mention;
  };
  const Bad bads[] = {
      {"A.rows != C.rows", 5, 4, 4, 3, 6, 3, 0, 0, 0, false, "A"},
      {"B.cols != C.cols", 5, 4, 4, 3, 5, 2, 0, 0, 0, false, "B"},
      {"A.cols != B.rows", 5, 4, 3, 3, 5, 3, 0, 0, 0, false, "k"},
      {"negative m", -1, 4, 4, 3, -1, 3, 0, 0, 0, false, "rows"},
      {"negative n", 5, 4, 4, -2, 5, -2, 0, 0, 0, false, "cols"},
      {"A.ld < A.rows", 5, 4, 4, 3, 5, 3, -1, 0, 0, false, "ld"},
      {"B.ld < B.rows", 5, 4, 4, 3, 5, 3, 0, -2, 0, false, "ld"},
      {"C.ld < C.rows", 5, 4, 4, 3, 5, 3, 0, 0, -1, false, "ld"},
      {"A.data is null", 5, 4, 4, 3, 5, 3, 0, 0, 0, true, "null"},
  };
  for (const Bad& bad : bads) {
    SCOPED_TRACE(bad.what);
    // Buffers big enough for any of the shapes above.
    Matrix abuf(8, 8), bbuf(8, 8), cbuf(8, 8);
    abuf.fill_random(1);
    bbuf.fill_random(2);
    cbuf.fill_random(3);
    const Matrix c_before = cbuf.clone();
    auto ld = [](int64_t rows, int64_t delta) { return std::max<int64_t>(rows, 1) + delta; };
    ConstMatView A{bad.null_a ? nullptr : abuf.data(), bad.am, bad.ak, ld(bad.am, bad.lda_delta)};
    ConstMatView B{bbuf.data(), bad.bk, bad.bn, ld(bad.bk, bad.ldb_delta)};
    MatView C{cbuf.data(), bad.cm, bad.cn, ld(bad.cm, bad.ldc_delta)};
    bool threw = false;
    try {
      s.gemm(1.0, A, B, 0.5, C);
    } catch (const std::invalid_argument& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find(bad.must_mention), std::string::npos)
          << "the message should name the argument (" << bad.must_mention << "): " << e.what();
    } catch (const Todo& e) {
      FAIL() << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw something other than std::invalid_argument: " << e.what();
      threw = true;
    }
    EXPECT_TRUE(threw) << "no std::invalid_argument for " << bad.what;
    EXPECT_EQ(0, std::memcmp(c_before.data(), cbuf.data(), sizeof(double) * cbuf.size()))
        << "C was written although the arguments were bad";
  }
}

void expect_invalid_argument(const std::function<void(MatView C)>& call, const Matrix& C0, const std::string& name) {
  Matrix C = C0.clone();
  try {
    call(C.view());
    ADD_FAILURE() << "no std::invalid_argument for a bad " << name;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos)
        << "the message should name " << name << ": " << e.what();
  }
  EXPECT_EQ(0, std::memcmp(C.data(), C0.data(), sizeof(double) * C.size())) << "C written despite a bad " << name;
}

}  // namespace lab::testing
