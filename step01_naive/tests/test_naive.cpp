// step01 tests: the shared kernel contract, for both loop orders.
#include "contract.hpp"
#include "naive.hpp"

LAB_CONTRACT_SUITE(Step01Naive, ::lab::testing::Subject{&lab::step01::dgemm});
LAB_CONTRACT_SUITE(Step01NaiveIjk, ::lab::testing::Subject{&lab::step01::dgemm_ijk});
