// openblas_probe — OpenBLAS's dgemm as its own users run it: a plain program
// with no OpenMP and nothing of the lab's harness, n x n x n on random doubles,
// the best of several calls after a warm-up. The lab's OpenBLAS row must come
// within a few per cent of what this prints on the same machine; if it does not,
// the harness handicaps its baseline.
//
//   openblas_probe [N] [THREADS] [REPEATS]     (defaults 2048, OpenBLAS's own count, 5)
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const auto arg = [&](int i, long dflt) {
    if (argc <= i) return dflt;
    char* end = nullptr;
    const long v = std::strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 1) {
      std::fprintf(stderr, "openblas_probe: error: argument %d must be a positive whole number, got '%s'\n", i,
                   argv[i]);
      std::exit(2);
    }
    return v;
  };
  if (argc > 4 || (argc > 1 && std::string(argv[1]) == "--help")) {
    std::fprintf(argc > 4 ? stderr : stdout, "usage: openblas_probe [N] [THREADS] [REPEATS]\n");
    return argc > 4 ? 2 : 0;
  }
  const long n = arg(1, 2048), threads = arg(2, 0), repeats = arg(3, 5);
  if (threads > 0) openblas_set_num_threads(static_cast<int>(threads));
  std::vector<double> a(n * n), b(n * n), c(n * n);
  std::mt19937_64 gen(2024);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto* m : {&a, &b, &c})
    for (double& x : *m) x = u(gen);
  const auto bn = static_cast<blasint>(n);
  double best = 1e30;
  for (long r = 0; r <= repeats; ++r) {  // call 0 is the warm-up
    const auto t0 = std::chrono::steady_clock::now();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, bn, bn, bn, 1.0, a.data(), bn, b.data(), bn, 0.5,
                c.data(), bn);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, s);
  }
  std::printf("openblas_probe: n %ld, %d threads, %s, kernel %s: %.2f GFLOP/s (best of %ld)\n", n,
              openblas_get_num_threads(), openblas_get_config(), openblas_get_corename(),
              2.0 * double(n) * double(n) * double(n) / best / 1e9, repeats);
  return 0;
}
