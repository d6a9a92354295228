// The openblas local kernel: OpenBLAS's dgemm, the local BLAS that ScaLAPACK's
// pdgemm runs on too, so that the two distributed algorithms compare on equal terms.
#include <cblas.h>

#include "lab/gemm_args.hpp"
#include "local_kernel.hpp"

namespace lab::step08 {

void openblas_gemm(int threads, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  // BLAS's early exits, with the lab's rule that beta == 0 never reads C.
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  if (threads > 0) openblas_set_num_threads(threads);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, blasint(C.rows), blasint(C.cols), blasint(A.cols),
              alpha, A.data, blasint(A.ld), B.data, blasint(B.ld), beta, C.data, blasint(C.ld));
}

}  // namespace lab::step08
