// step09_semiring: the shared benchmark CLI over the semiring variants
// (register.cpp), plus one subcommand:
//
//   step09_semiring [benchmark options]     see --help
//   step09_semiring apsp [options]          all-pairs shortest paths (apsp/apsp_cli.hpp)
//
// The apsp command runs on this step's min-plus GEMM: the solution's in an
// instructor's build, the student's in a student tree (CMake compiles this file
// with LAB_IMPL_NS set to the one it links).
#include <cstdio>
#include <cstring>

#include "apsp/apsp_cli.hpp"
#include "apsp/minplus_gemm.hpp"
#include "lab/bench.hpp"
#include "semiring.hpp"
#ifdef LAB_STEP09_GPU
#include "semiring_cuda.hpp"
#endif

namespace {

lab::step09::apsp::MinPlusGemms step_gemms() {
  using lab::step09::MinPlus;
  lab::step09::apsp::MinPlusGemms g;
  g.cpu_name = std::string("step09 gemm<MinPlus> (") + LAB_IMPL_NAME + ")";
  g.cpu = [](lab::ConstMatView A, lab::ConstMatView B, lab::MatView C, bool accumulate) {
    lab::step09::gemm<MinPlus>(A, B, C, accumulate);
  };
#ifdef LAB_STEP09_GPU
  g.gpu_name = std::string("step09 gemm_device<MinPlus> (") + LAB_IMPL_NAME + ")";
  g.gpu = [](lab::ConstMatView A, lab::ConstMatView B, lab::MatView C, bool accumulate, CUstream_st* stream) {
    lab::step09::gemm_device<MinPlus>(A, B, C, accumulate, stream);
  };
#endif
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "apsp") == 0) {
    lab::step09::apsp::register_gemms(step_gemms());
    return lab::step09::apsp_main(argc - 1, argv + 1, "step09_semiring apsp");
  }
  const lab::StepInfo info{"step09", "one GEMM structure, any semiring", lab::Backend::cpu, 2048};
  const int status = lab::bench_main(argc, argv, info);
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0))
    std::printf("\nalso: step09_semiring apsp --graph FILE [options]: all-pairs shortest paths on a graph\n"
                "      with this build's min-plus GEMM (step09_semiring apsp --help)\n");
  return status;
}
