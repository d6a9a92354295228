// step09_apsp_reference — the apsp command on the plain reference kernels of
// reference.hpp: the tool with nothing of the step's GEMM in it, for checking
// the tool apart from the step's kernels (and timing it against them). The
// step's own executable runs `step09_semiring apsp ...` on its fast GEMMs.
#include "apsp_cli.hpp"

int main(int argc, char** argv) {
  lab::step09::apsp::register_gemms(lab::step09::apsp::reference_gemms());
  return lab::step09::apsp_main(argc, argv, "step09_apsp_reference");
}
