// `stepNN_x --serve VARIANT`: one product for the grader's checker (see
// lab/grade_wire.hpp). The step program reads the inputs from stdin, runs the
// student's variant once and writes C back on the stdout it was started with;
// anything the student's code prints goes to stderr instead, so a debugging
// line cannot break the answer.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/bench.hpp"
#include "lab/grade_wire.hpp"
#include "lab/todo.hpp"

namespace lab {
namespace {

bool read_all(int fd, void* p, size_t n) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t got = ::read(fd, b, n);
    if (got <= 0) return false;
    b += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* p, size_t n) {
  auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t put = ::write(fd, b, n);
    if (put <= 0) return false;
    b += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

}  // namespace

int serve_main(const char* variant, const StepInfo& info) {
  // the answer's own channel; fd 1 from here on is stderr
  const int out = ::dup(1);
  if (out < 0 || ::dup2(2, 1) < 0) return kExitError;
  wire::Request rq{};
  if (!read_all(0, &rq, sizeof rq) || rq.magic != wire::kRequestMagic) {
    std::fprintf(stderr, "--serve: no request on stdin (this mode is for ./lab grade)\n");
    return kExitUsage;
  }
  const int64_t na = wire::buffer_elements(rq.lda, rq.k), nb = wire::buffer_elements(rq.ldb, rq.n),
                nc = wire::buffer_elements(rq.ldc, rq.n);
  std::vector<double> a(static_cast<size_t>(na)), b(static_cast<size_t>(nb)), c(static_cast<size_t>(nc));
  if (!read_all(0, a.data(), a.size() * sizeof(double)) || !read_all(0, b.data(), b.size() * sizeof(double)) ||
      !read_all(0, c.data(), c.size() * sizeof(double)))
    return kExitUsage;
  const Variant* v = nullptr;
  for (const Variant& x : registered_variants())
    if (x.step == info.step && x.name == variant && x.impl == "student") v = &x;
  wire::Reply reply{wire::kReplyMagic, wire::kDone, 0};
  std::string msg;
  std::string no_gpu;  // why a GPU variant cannot run here ("" where it can)
  if (v != nullptr && v->backend != Backend::cpu) {
    const GpuHooks* h = gpu_hooks();
    std::string why;
    if (h == nullptr) no_gpu = "this build has no CUDA";
    else if (!h->available(&why)) no_gpu = why.empty() ? "no usable GPU" : why;
  }
  if (v == nullptr) {
    reply.status = wire::kNoVariant;
    msg = std::string("no student variant '") + variant + "' in " + info.step;
  } else if (!no_gpu.empty()) {
    reply.status = wire::kNoDevice;
    msg = no_gpu;
  } else {
    const Params params;
    const GemmCall call{rq.alpha, {a.data(), rq.m, rq.k, rq.lda}, {b.data(), rq.kb, rq.n, rq.ldb}, rq.beta,
                        {c.data(), rq.m, rq.n, rq.ldc}, &params, nullptr};
    try {
      // a device variant on copies of the buffers on the GPU (the hooks); the others on them here
      if (v->backend == Backend::gpu) gpu_hooks()->serve(*v, call);
      else v->run(call);
    } catch (const Todo& e) {
      reply.status = wire::kNotImplemented;
      msg = e.what();
    } catch (const std::invalid_argument& e) {
      reply.status = wire::kInvalidArgument;
      msg = e.what();
    } catch (const std::exception& e) {
      reply.status = wire::kOtherError;
      msg = e.what();
    } catch (...) {
      reply.status = wire::kOtherError;
      msg = "an exception that is not a std::exception";
    }
  }
  if (msg.size() > 4096) msg.resize(4096);
  reply.msg_len = static_cast<int64_t>(msg.size());
  const bool ok = write_all(out, &reply, sizeof reply) && write_all(out, msg.data(), msg.size()) &&
                  write_all(out, c.data(), c.size() * sizeof(double));
  return ok ? kExitOk : kExitError;
}

}  // namespace lab
