// `stepNN_x --serve VARIANT`: one product for the grader's checker (see
// lab/grade_wire.hpp). The step program reads the inputs from stdin, runs the
// student's variant once and writes C back on the stdout it was started with;
// anything the student's code prints goes to stderr instead, so a debugging
// line cannot break the answer.
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/bench.hpp"
#include "lab/grade_wire.hpp"
#include "lab/registry.hpp"
#include "lab/todo.hpp"

namespace lab {

namespace {

// The Params a request carries (lab/grade_wire.hpp): tiles, a device-memory cap, GPU ids.
Params params_of(const wire::Request& rq) {
  Params p;
  for (const int64_t t : rq.tile)
    if (t > 0) p.tile.push_back(t);
  p.device_mem_limit = rq.device_mem_limit > 0 ? rq.device_mem_limit : 0;
  for (int64_t i = 0; i < rq.gpus && i < 8; ++i) p.gpu_list.push_back(static_cast<int>(rq.gpu_list[i]));
  p.gpus = static_cast<int>(p.gpu_list.size());
  return p;
}

}  // namespace

int serve_main(const char* variant, const StepInfo& info, const char* impl) {
  // the answer's own channel; fd 1 from here on is stderr
  const int out = ::dup(1);
  if (out < 0 || ::dup2(2, 1) < 0) return kExitError;
  const Variant* v = nullptr;
  for (const Variant& x : registered_variants())
    if (x.step == info.step && x.name == variant && x.impl == impl) v = &x;
  // A GPU variant's device is made ready before the request is read: the
  // grader's clock starts with its last byte.
  std::string no_gpu;  // why a GPU variant cannot run here ("" where it can)
  if (v != nullptr && v->backend != Backend::cpu) {
    const GpuHooks* h = gpu_hooks();
    std::string why;
    if (h == nullptr) no_gpu = "this build has no CUDA";
    else if (!h->available(&why)) no_gpu = why.empty() ? "no usable GPU" : why;
    else if (h->warm_up && wire::run_call(h->warm_up, &why) != wire::kDone) no_gpu = "the GPU cannot be used: " + why;
  }
  wire::Request rq{};
  wire::Buffer a, b, c;
  // Host matrices the request wants pinned (a speed case of step07) are pinned
  // before their bytes arrive, so that the pinning is not timed.
  std::vector<std::shared_ptr<void>> pinned;  // unpinned when the answer has gone
  std::string pin_failed;
  const auto pin = [&] {
    if (rq.pinned_host == 0 || v == nullptr || v->backend != Backend::gpu_host || !no_gpu.empty() ||
        !gpu_hooks()->pin_host)
      return;
    wire::run_call(
        [&] {
          for (wire::Buffer* x : {&a, &b, &c})
            if (!x->empty()) pinned.push_back(gpu_hooks()->pin_host(x->data(), x->size() * sizeof(double)));
        },
        &pin_failed);
  };
  if (!wire::read_request(0, &rq, &a, &b, &c, pin)) {
    std::fprintf(stderr, "--serve: no request on stdin (this mode is for ./lab grade)\n");
    return kExitUsage;
  }
  wire::Status status = wire::kDone;
  std::string msg;
  if (v == nullptr) {
    status = wire::kNoVariant;
    msg = std::string("no ") + (std::strcmp(impl, "student") == 0 ? "student " : "") + "variant '" + variant +
          "' in " + info.step;
  } else if (!no_gpu.empty()) {
    status = wire::kNoDevice;
    msg = no_gpu;
  } else if (!pin_failed.empty()) {
    status = wire::kOtherError;
    msg = "the grader's pinning of the host matrices failed: " + pin_failed;
  } else {
    const Params params = params_of(rq);
    const int64_t repeat = std::min<int64_t>(std::max<int64_t>(rq.repeat, 1), wire::kMaxRepeat);
    const GemmCall call{rq.alpha, {a.data(), rq.m, rq.k, rq.lda}, {b.data(), rq.kb, rq.n, rq.ldb}, rq.beta,
                        {c.data(), rq.m, rq.n, rq.ldc}, &params, nullptr};
    // a device variant on copies of the buffers on the GPU (the hooks); the others on them here
    status = wire::run_call(
        [&] {
          if (v->backend == Backend::gpu) return gpu_hooks()->serve(*v, call, repeat, rq.refill_seed, rq.refill_a != 0);
          for (int64_t r = 0; r < repeat; ++r) {
            if (r > 0) {  // fresh numbers for every call (lab/grade_wire.hpp)
              wire::refill(b.data(), b.size(), wire::refill_key(rq.refill_seed, r, 1));
              if (rq.refill_a != 0) wire::refill(a.data(), a.size(), wire::refill_key(rq.refill_seed, r, 0));
            }
            v->run(call);
          }
        },
        &msg);
  }
  return wire::send_reply(out, status, msg, c) ? kExitOk : kExitError;
}

// On every core of the machine, whatever OMP_NUM_THREADS the grader gave the
// student's code (1): a refill between timed calls (step07's speed case
// refills 4 GiB) adds as little as it can to the calls it separates, the
// reference's and the student's alike.
void wire::refill(double* x, size_t count, uint64_t key) {
  const int64_t size = static_cast<int64_t>(count);
#ifdef _OPENMP
  const int cores = omp_get_num_procs();
#else
  const int cores = 1;
#endif
#pragma omp parallel for schedule(static) num_threads(cores) if (size > (int64_t(1) << 18))
  for (int64_t e = 0; e < size; ++e) x[e] = refill_value(key, static_cast<uint64_t>(e));
}

wire::Status wire::run_call(const std::function<void()>& call, std::string* msg) {
  try {
    call();
    return kDone;
  } catch (const Todo& e) {
    *msg = e.what();
    return kNotImplemented;
  } catch (const std::invalid_argument& e) {
    *msg = e.what();
    return kInvalidArgument;
  } catch (const NotOnThisMachine& e) {
    *msg = e.what();
    return kNoDevice;
  } catch (const std::exception& e) {
    *msg = e.what();
    return kOtherError;
  } catch (...) {
    *msg = "an exception that is not a std::exception";
    return kOtherError;
  }
}

bool wire::send_reply(int fd, Status status, std::string msg, const Buffer& c) {
  if (msg.size() > 4096) msg.resize(4096);
  const Reply reply{kReplyMagic, status, static_cast<int64_t>(msg.size())};
  return write_all(fd, &reply, sizeof reply) && write_all(fd, msg.data(), msg.size()) &&
         write_all(fd, c.data(), c.size() * sizeof(double));
}

}  // namespace lab
