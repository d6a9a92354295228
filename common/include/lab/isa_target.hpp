// lab/isa_target.hpp — compile a region of a file for one x86 instruction set.
//
//   LAB_ISA_BEGIN_AVX512   ... functions that use AVX-512 intrinsics ...   LAB_ISA_END
//   LAB_ISA_BEGIN_AVX2     ... AVX2 + FMA ...                              LAB_ISA_END
//
// The rest of the program is built for the machine's baseline, and a kernel
// of such a region runs only where the CPU has the instruction set (the
// program asks the CPU first). GCC spells this `#pragma GCC target`; Clang
// ignores that pragma (and then refuses the intrinsics where -march lacks the
// set), and spells it `#pragma clang attribute push(target(...))`, which puts
// the attribute on every function of the region, the member functions of a
// struct and the templates instantiated from it included.
#pragma once

#if defined(__clang__)
#define LAB_ISA_BEGIN_AVX512 _Pragma("clang attribute push(__attribute__((target(\"avx512f\"))), apply_to = function)")
#define LAB_ISA_BEGIN_AVX2 _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define LAB_ISA_END _Pragma("clang attribute pop")
#else
#define LAB_ISA_BEGIN_AVX512 _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f\")")
#define LAB_ISA_BEGIN_AVX2 _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define LAB_ISA_END _Pragma("GCC pop_options")
#endif
