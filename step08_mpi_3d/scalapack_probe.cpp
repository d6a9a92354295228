// Configure-time probe: does the ScaLAPACK that was found link here (its Fortran
// runtime, BLAS, LAPACK and MPI libraries all present)? Never run.
#include <mpi.h>

extern "C" void pdgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                        const int*, const int*, const int*, const double*, const int*, const int*, const int*,
                        const double*, double*, const int*, const int*, const int*);
extern "C" int Csys2blacs_handle(MPI_Comm comm);

int main(int argc, char**) {
  if (argc > 1000) {
    pdgemm_(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    return Csys2blacs_handle(MPI_COMM_WORLD);
  }
  return 0;
}
