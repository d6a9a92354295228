// The main() of every step executable: the shared benchmark CLI, configured
// by lab_add_step through compile definitions.
#include "lab/bench.hpp"

int main(int argc, char** argv) {
  const lab::StepInfo info{LAB_STEP_ID, LAB_STEP_TITLE, lab::Backend::LAB_STEP_BACKEND, LAB_STEP_DEFAULT_SIZE};
  return lab::bench_main(argc, argv, info);
}
