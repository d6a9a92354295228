// Repeated squaring, blocked Floyd-Warshall and plain Floyd-Warshall over an Engine.
#include "algorithms.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <type_traits>

namespace lab::step09::apsp {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds per phase name, kept in first-use order; each step waits for the
// engine so that queued GPU work is charged to the phase that queued it.
class PhaseClock {
 public:
  explicit PhaseClock(Engine& e) : e_(e), start_(now()) {}
  template <class F>
  auto time(const char* phase, F&& f) {
    const double t0 = now();
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      e_.finish();
      add(phase, now() - t0);
    } else {
      auto result = f();
      e_.finish();
      add(phase, now() - t0);
      return result;
    }
  }
  void close(RunReport& r) {
    r.phases = phases_;
    r.seconds = now() - start_;
  }

 private:
  void add(const char* phase, double s) {
    for (auto& p : phases_)
      if (p.first == phase) {
        p.second += s;
        return;
      }
    phases_.emplace_back(phase, s);
  }
  Engine& e_;
  double start_;
  std::vector<std::pair<std::string, double>> phases_;
};

int64_t negative_check(PhaseClock& clock, Engine& e) {
  return clock.time("checks", [&] { return e.first_negative_diagonal(); });
}

RunReport run_squaring(Engine& e, const AlgorithmOptions& o) {
  RunReport r;
  PhaseClock clock(e);
  const int64_t n = e.n();
  r.product_limit = squaring_products(n);
  bool changed = true;
  if (o.negative_weights) r.negative_cycle = negative_check(clock, e);  // a negative self-loop
  while (r.negative_cycle < 0 && changed && r.products < r.product_limit) {
    changed = clock.time("products", [&] { return e.square(); });
    ++r.products;
    if (o.negative_weights) r.negative_cycle = negative_check(clock, e);
  }
  // Without a negative cycle D is now the distance matrix, a fixed point of
  // squaring. With negative arcs, one more product tells: if D still changes,
  // there is a negative cycle, and it is on the diagonal by now (the products
  // cover every walk of up to 2^(limit + 1) >= n arcs, so every simple cycle).
  if (o.negative_weights && r.negative_cycle < 0 && changed && n > 1) {
    ++r.product_limit;
    changed = clock.time("products", [&] { return e.square(); });
    ++r.products;
    r.negative_cycle = negative_check(clock, e);
    if (changed && r.negative_cycle < 0)
      throw std::logic_error("repeated squaring: D changed after every path was covered, yet no D(v, v) < 0");
  }
  r.inner = double(r.products) * double(n);
  clock.close(r);
  return r;
}

RunReport run_blocked_fw(Engine& e, const AlgorithmOptions& o) {
  RunReport r;
  PhaseClock clock(e);
  const int64_t n = e.n(), b = std::clamp<int64_t>(o.block, 1, std::max<int64_t>(n, 1));
  int64_t done = 0;
  for (int64_t k0 = 0; k0 < n; k0 += b) {
    const int64_t bk = std::min(b, n - k0);
    clock.time("closure", [&] { e.close_diagonal_block(k0, bk); });
    clock.time("panels", [&] { e.update_panels(k0, bk); });
    clock.time("bulk", [&] { e.update_rest(k0, bk); });
    done = k0 + bk;
    // Around a negative cycle the entries only fall further (and could overflow
    // to -inf): stop at the first sign of one.
    if (o.negative_weights && (r.negative_cycle = negative_check(clock, e)) >= 0) break;
  }
  r.inner = double(done);
  clock.close(r);
  return r;
}

RunReport run_plain(Engine& e, const AlgorithmOptions& o) {
  RunReport r;
  PhaseClock clock(e);
  clock.time("floyd-warshall", [&] { e.close_diagonal_block(0, e.n()); });
  if (o.negative_weights) r.negative_cycle = negative_check(clock, e);
  r.inner = double(e.n());
  clock.close(r);
  return r;
}

}  // namespace

int squaring_products(int64_t n) {
  int p = 0;
  while (n > 2 && (int64_t(1) << p) < n - 1) ++p;
  return p;
}

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> list = {
      {"squaring", "repeated squaring", run_squaring},
      {"fw", "blocked Floyd-Warshall", run_blocked_fw},
      {"plain", "plain Floyd-Warshall", run_plain},
  };
  return list;
}

const Algorithm* find_algorithm(const std::string& name) {
  for (const auto& a : algorithms())
    if (a.name == name) return &a;
  return nullptr;
}

std::string algorithm_names() {
  std::string s;
  for (const auto& a : algorithms()) s += (s.empty() ? "" : ", ") + a.name;
  return s;
}

}  // namespace lab::step09::apsp
