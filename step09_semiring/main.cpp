// step09_semiring: the shared benchmark CLI over the semiring variants
// (register.cpp), plus one subcommand:
//
//   step09_semiring [benchmark options]     see --help
//   step09_semiring apsp [options]          all-pairs shortest paths (apsp/apsp_cli.hpp)
#include <cstring>

#include "apsp/apsp_cli.hpp"
#include "lab/bench.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "apsp") == 0) return lab::step09::apsp_main(argc - 1, argv + 1);
  const lab::StepInfo info{"step09", "one GEMM structure, any semiring", lab::Backend::cpu, 2048};
  return lab::bench_main(argc, argv, info);
}
