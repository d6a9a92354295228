// step06 — given: the FP64 tensor-core instruction the DMMA kernels are built
// on (dmma.cu, dmma_variants.cu and ata_dmma.cu).
#pragma once

namespace lab::step06::detail {

struct Dmma {
  // Before sm_90: one k quarter of the 16 x 8 piece, two m8n8k4 (rows g, then g + 8).
  __device__ __forceinline__ static void quarter(double (&d)[4], double a_row_g, double a_row_g8, double b) {
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d[0]), "+d"(d[1])
        : "d"(a_row_g), "d"(b));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d[2]), "+d"(d[3])
        : "d"(a_row_g8), "d"(b));
#endif
  }

  // D (16 x 8) += A (16 x 16) * B (16 x 8). With g = lane / 4 and t = lane % 4,
  // each thread holds
  //   a[v0 + 2 v1] = A(g + 8 v0, t + 4 v1)   v0 = 0..1, v1 = 0..3
  //   b[v]         = B(t + 4 v, g)           v  = 0..3
  //   d[v0 + 2 v1] = D(g + 8 v1, 2 t + v0)
  // One mma.sync.m16n8k16 on sm_90. Before sm_90 FP64 has only m8n8k4, and
  // the same step is four k quarters q (A(:, 4q..4q+3) * B(4q..4q+3, :), the
  // registers a[2q], a[2q + 1], b[q]), each two m8n8k4: rows g, then g + 8.
  __device__ __forceinline__ static void mma_16x8x16(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
        "{%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#elif __CUDA_ARCH__ >= 800
#pragma unroll
    for (int q = 0; q < 4; ++q) quarter(d, a[2 * q], a[2 * q + 1], b[q]);
#else
    __trap();  // never launched: the host checks the compute capability first
#endif
  }

  // D (16 x 8) += A (16 x 8) * B (8 x 8): the same layout with half the k,
  //   a[v0 + 2 v1] = A(g + 8 v0, t + 4 v1)   v0 = 0..1, v1 = 0..1
  //   b[v]         = B(t + 4 v, g)           v  = 0..1
  // and D as above. Half the operand registers per instruction, for kernels
  // that hold a whole k step of operands twice (dmma_variants.cu); one
  // mma.sync.m16n8k8 on sm_90, four m8n8k4 before.
  __device__ __forceinline__ static void mma_16x8x8(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif __CUDA_ARCH__ >= 800
#pragma unroll
    for (int q = 0; q < 2; ++q) quarter(d, a[2 * q], a[2 * q + 1], b[q]);
#else
    __trap();
#endif
  }
};

}  // namespace lab::step06::detail
