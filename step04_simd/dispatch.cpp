// step04_simd — which micro-kernel runs: decided at run time from what the CPU
// reports, so one binary runs on any x86-64 (and the generic kernel elsewhere).
// Nothing to do here.
#include <stdexcept>

#include "microkernel.hpp"

namespace {

bool cpu_has(lab::step04::Isa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  // __builtin_cpu_supports also checks that the OS saves the wide registers.
  // The init call makes it safe during static initialization (variant registration).
  __builtin_cpu_init();
  switch (isa) {
    case lab::step04::Isa::avx512:
      return __builtin_cpu_supports("avx512f");
    case lab::step04::Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case lab::step04::Isa::generic:
      return true;
  }
  return false;
#else
  return isa == lab::step04::Isa::generic;
#endif
}

}  // namespace

const char* lab::step04::isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return "avx512";
    case Isa::avx2:
      return "avx2";
    case Isa::generic:
      return "generic";
  }
  return "unknown";
}

lab::step04::MicroKernel lab::step04::microkernel(Isa isa) {
  switch (isa) {
    case Isa::avx512:
      return microkernel_avx512();
    case Isa::avx2:
      return microkernel_avx2();
    case Isa::generic:
      break;
  }
  return microkernel_generic();
}

bool lab::step04::isa_supported(Isa isa) { return microkernel(isa).fn != nullptr && cpu_has(isa); }

lab::step04::Isa lab::step04::best_isa() {
  for (Isa isa : {Isa::avx512, Isa::avx2}) {
    if (isa_supported(isa)) return isa;
  }
  return Isa::generic;
}
