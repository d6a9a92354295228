// lab_grade_check: the grader's own checker, the only source of points for
// the steps it checks (./lab grade; INSTRUCTORS.md, "How a grade is made").
//
//   lab_grade_check --runner EXE --step stepNN --variant NAME --kind gemm|minplus|maxplus|plustimes|grid
//                   --seed S --json OUT [--uid U --gid G] [--timeout SEC] [--speed REF,N,RATIO]
//                   [--launch WORD ...] [--env NAME=VALUE ...] [--case-timeout SEC]
//                   [--param tile=A,B,C|mem=BYTES|gpus=I,J,... ...] [--needs gpu|fp64_tensor_cores]
//                   [--reference-runner EXE] [--window SEC]
//
// It is built by the grader from the lab's own sources (the harness, no student
// code) and runs as the grader's account. For each case it makes A, B and C
// from the seed, which the submission never sees, starts `EXE --serve NAME`
// (the step program with the student's code) in a process group of its own,
// as the account --uid/--gid when given, writes the inputs to its stdin and
// reads C back from its stdout (lab/grade_wire.hpp). It then checks C itself:
// against the harness's reference with the harness's elementwise bound
// (lab/check.hpp), exactly for min-plus and max-plus, the guard rows below the
// m x n block bit for bit, and bad arguments refused with C untouched. After
// each case every process of the account is killed, detached ones included.
// A GPU variant runs in the step program on device copies of the buffers, at
// the same leading dimensions (the guard rows travel too); where the step
// program has no usable GPU it answers so on the first case, which becomes one
// skipped case with its reason: the step is graded on a GPU host.
// --param gives the variant Params (its tiles, a device-memory cap, its GPU
// ids) with every case, e.g. step07's pipelines on many tiles.
// A speed case times the fixed reference loop (lab/speed_reference.hpp) here,
// while no process of the account runs, and the student's products from
// outside: from the last byte of input written to the last byte of C read,
// each round one fresh process with 1 product and one with 1 + K (B, and for
// step07 A, refilled with fresh numbers before each call after the first, so
// that no answer of an earlier call helps: lab/grade_wire.hpp), each result checked
// (Freivalds); the difference of the best times over K is one product without
// the process's start-up (a kernel choice, first page faults); each side's
// best of 4 alternating rounds counts. A GPU speed case (reference
// naive_coalesced, cublas or fp64_peak; cublasxt on host matrices, pinned on
// both sides, for step07) has its reference served by --reference-runner
// (lab_grade_reference, built from the lab's own files) over the same pipe,
// and both sides are timed alike from outside: each round one process with 1
// product and one with 1 + K on the same buffers, so that the
// difference of the best times over K is one product without the start-up
// and the transfers to the step program. A step program that answers it cannot run here
// (kNoDevice) is believed only for a variant with --needs (gpu or
// fp64_tensor_cores), and, where a reference program is given, only when it
// says the same of what the variant needs: otherwise that answer fails the
// variant's cases, since a skipped variant would hand its share of the points
// to the others.
// An MPI step (step08) is started as `--launch` words before EXE (mpiexec -n P
// ...): rank 0 reads the inputs and answers, every rank runs the student's code.
// Kind grid asks the step's choose_grid(p, m, n, k) (p in the request's kb) and
// checks the grid against the rule the handout states, in the checker's own loop.
// A variant that needs no GPU and no launcher runs its step program under a
// system-call filter (seccomp) that lets it start no other program: a step
// program that tries (a vendor BLAS built and started behind the pipe) is
// killed, and its case fails saying so.
// --window sets the time the K products of a speed case are sized to (the
// grader leaves it: 1 s on the CPU, 1.5 s with a GPU reference; the checker's
// own tests time stand-in programs in shorter windows).
// The verdicts go to OUT (JSON); nothing the step program prints counts.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#define LAB_EXEC_FILTER 1
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/grade_wire.hpp"
#include "lab/matrix.hpp"
#include "lab/speed_reference.hpp"
#include "lab/timer.hpp"
#include "grid.hpp"  // step08's factorizations and words_per_rank (given code, no MPI)

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using lab::Matrix;

struct Options {
  std::string runner, step, variant, kind = "gemm", json, speed, reference_runner;
  std::string needs;  // what a variant that says it cannot run here needs (gpu, fp64_tensor_cores); "": it runs anywhere
  lab::wire::Request params{};  // the variant's Params (tile, device_mem_limit, gpus), sent with every case
  std::vector<std::string> launch, env;  // words before the runner (mpiexec -n P ...); NAME=VALUE for it
  uint64_t seed = 0;
  long uid = -1, gid = -1;
  double timeout = 600;       // the variant's cases together
  double case_timeout = 0;    // each case (0: only the variant's); a deadlock ends the variant sooner
  double window = 0;          // the seconds the K timed products are sized to (0: 1 s on the CPU, 1.5 s on a GPU)
};

[[noreturn]] void usage(const std::string& what) {
  std::fprintf(stderr, "lab_grade_check: error: %s\n", what.c_str());
  std::exit(2);
}

// tile=A[,B[,C]], mem=BYTES, gpus=I[,J...] into the request's Params fields
void parse_param(const std::string& text, lab::wire::Request* rq) {
  const size_t eq = text.find('=');
  const std::string name = text.substr(0, eq), value = eq == std::string::npos ? "" : text.substr(eq + 1);
  std::vector<int64_t> numbers;
  std::istringstream in(value);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    const long long x = std::stoll(item, &used);  // std::invalid_argument: not a number
    if (used != item.size() || x < 0) usage("--param " + text + ": '" + item + "' is not a whole number >= 0");
    numbers.push_back(x);
  }
  if (numbers.empty()) usage("--param " + text + ": expected NAME=NUMBER[,NUMBER...]");
  if (name == "tile" && numbers.size() <= 3) std::copy(numbers.begin(), numbers.end(), rq->tile);
  else if (name == "mem" && numbers.size() == 1) rq->device_mem_limit = numbers[0];
  else if (name == "gpus" && numbers.size() <= 8) {
    std::copy(numbers.begin(), numbers.end(), rq->gpu_list);
    rq->gpus = static_cast<int64_t>(numbers.size());
  } else usage("--param " + text + ": expected tile=A[,B[,C]], mem=BYTES or gpus=I[,J...] (at most 8)");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    try {
      if (a == "--runner") o.runner = v;
      else if (a == "--step") o.step = v;
      else if (a == "--variant") o.variant = v;
      else if (a == "--kind") o.kind = v;
      else if (a == "--json") o.json = v;
      else if (a == "--speed") o.speed = v;
      else if (a == "--launch") o.launch.push_back(v);
      else if (a == "--reference-runner") o.reference_runner = v;
      else if (a == "--needs") {
        if (v != "gpu" && v != "fp64_tensor_cores") usage("--needs: '" + v + "' is not gpu or fp64_tensor_cores");
        o.needs = v;
      }
      else if (a == "--param") parse_param(v, &o.params);
      else if (a == "--env") {
        if (v.find('=') == std::string::npos || v[0] == '=') usage("--env: '" + v + "' is not NAME=VALUE");
        o.env.push_back(v);
      }
      else if (a == "--seed") o.seed = std::stoull(v);
      else if (a == "--uid") o.uid = std::stol(v);
      else if (a == "--gid") o.gid = std::stol(v);
      else if (a == "--timeout") o.timeout = std::stod(v);
      else if (a == "--case-timeout") o.case_timeout = std::stod(v);
      else if (a == "--window") {  // (the checker's own tests time stand-ins in shorter windows)
        o.window = std::stod(v);
        if (!(o.window > 0 && o.window <= 60)) usage("--window: '" + v + "' is not a number of seconds in (0, 60]");
      }
      else usage("unknown option " + a);
    } catch (const std::logic_error&) {
      usage(a + ": '" + v + "' is not a number");
    }
  }
  if (o.runner.empty() || o.step.empty() || o.variant.empty() || o.json.empty())
    usage("--runner, --step, --variant and --json are required");
  if (o.kind != "gemm" && o.kind != "minplus" && o.kind != "maxplus" && o.kind != "plustimes" && o.kind != "grid")
    usage("--kind: '" + o.kind + "' is not gemm, minplus, maxplus, plustimes or grid");
  if (o.timeout <= 0) usage("--timeout must be positive");
  if (o.case_timeout < 0) usage("--case-timeout must be positive (or 0: none)");
  return o;
}

// ---- the account's processes -------------------------------------------------------
void become(const Options& o) {  // in a child: the grading account, if one was named
  if (o.uid < 0) return;
  if (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(o.gid)) != 0 || setuid(static_cast<uid_t>(o.uid)) != 0)
    _exit(126);
}

// In the child, as its last step before the step program starts: execve at
// `path`, and from then on no other program. The filter lets execve through
// only for the filename at that address, a page at a random place of this
// child's memory that the exec replaces (the step program cannot know it, and
// a wrong guess is its end); any other execve, and every execveat, kills the
// process (SIGSYS). Where the kernel has no seccomp, the program starts
// unfiltered (the grader's check of what the student's objects call still holds).
[[noreturn]] void exec_alone(const std::string& path, std::vector<char*>& argv) {
#ifdef LAB_EXEC_FILTER
  const size_t page = 4096;
  void* at = MAP_FAILED;
  for (int attempt = 0; attempt < 8 && at == MAP_FAILED; ++attempt) {
    uint64_t r = 0;
    const int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0 && read(fd, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r = 0;
    if (fd >= 0) close(fd);
    void* hint = reinterpret_cast<void*>((uint64_t(1) << 32) + (r % ((uint64_t(1) << 46) - (uint64_t(1) << 32))) / page * page);
    at = mmap(hint, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (at != MAP_FAILED && path.size() < page) {
    char* name = static_cast<char*>(at);
    std::memcpy(name, path.c_str(), path.size() + 1);
    const auto addr = reinterpret_cast<uint64_t>(name);
#if defined(__x86_64__)
    constexpr uint32_t arch = AUDIT_ARCH_X86_64;
#else
    constexpr uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
#ifdef SECCOMP_RET_KILL_PROCESS
    constexpr uint32_t kill_it = SECCOMP_RET_KILL_PROCESS;
#else
    constexpr uint32_t kill_it = SECCOMP_RET_KILL;
#endif
    const uint32_t lo = static_cast<uint32_t>(addr), hi = static_cast<uint32_t>(addr >> 32);
    sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, kill_it),  // another ABI (x86's 32-bit calls)
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kill_it),  // x32's numbers
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kill_it),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),  // (little-endian: the low half)
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, lo, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, kill_it),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]) + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, kill_it),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0) {
      execve(name, argv.data(), environ);
      _exit(127);
    }
  }
#endif
  execv(path.c_str(), argv.data());
  _exit(127);
}

// Every process of the account, detached ones included: a child that becomes
// the account and signals all it may (kill(-1) spares only itself).
void kill_account(const Options& o) {
  if (o.uid < 0) return;
  for (int round = 0; round < 3; ++round) {
    const pid_t p = fork();
    if (p == 0) {
      become(o);
      kill(-1, SIGKILL);
      _exit(0);
    }
    if (p > 0) waitpid(p, nullptr, 0);
  }
}

// ---- one case ------------------------------------------------------------------------
struct Case {
  std::string name;
  int64_t m, n, k, kb, lda, ldb, ldc;
  double alpha, beta;
  bool poison_ab = false;  // A and B all NaN (alpha == 0 or k == 0: never read)
  bool poison_c = false;   // C all NaN (beta == 0: never read)
  bool refuse = false;     // bad arguments: must throw std::invalid_argument, C untouched
};

struct Outcome {
  bool answered = false;
  std::string failure;  // why no answer came (empty when answered)
  lab::wire::Reply reply{};
  std::string msg;
  std::vector<double> c;
  double seconds = 0;  // last input byte written -> last byte of C read
  int launcher_signal = 0;  // the signal the launcher itself (mpiexec) died of, 0: it did not
};

constexpr double kGuard = -7777.25;  // in the rows of C's buffer below row m

std::string signal_text(int status) {
  if (WIFSIGNALED(status)) return std::string("it was killed by ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "it exited with status " + std::to_string(WEXITSTATUS(status));
  return "it ended";
}

// A folder of the case's own for the step program's TMPDIR (the account's when
// one is named), removed with everything in it after the case: mpiexec's session
// folder goes there, and nothing a case leaves in it outlives the case.
struct CaseTmp {
  std::string path;
  explicit CaseTmp(const Options& o) {
    const char* base = std::getenv("TMPDIR");
    std::string t = std::string(base && *base ? base : "/tmp") + "/lab-check.XXXXXX";
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("cannot make a folder in " + t);
    path = t;
    if (o.uid >= 0 && chown(path.c_str(), static_cast<uid_t>(o.uid), static_cast<gid_t>(o.gid)) != 0)
      throw std::runtime_error("cannot give " + path + " to the grading account");
  }
  ~CaseTmp() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  CaseTmp(const CaseTmp&) = delete;
  CaseTmp& operator=(const CaseTmp&) = delete;
};

struct Inputs {
  Matrix A, B, C0;
};

// The program's message as the report shows it: printable ASCII (other bytes
// as '?'), at most 400 characters, and never empty: every status but kDone is
// a failure, and a failure's reason is never "" (which reads as a pass).
std::string said(const std::string& msg) {
  std::string out;
  for (const char ch : msg.substr(0, 400)) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c >= 0x20 && c < 0x7f) ? ch : (c == '\n' || c == '\t') ? ' ' : '?';
  }
  if (out.find_first_not_of(' ') == std::string::npos) out = "(it gave no message)";
  return out;
}

// One request answered by a fresh process of the step program: the inputs go
// in through one pipe, the reply and C come back through another.
Outcome serve(const Options& o, const lab::wire::Request& rq, const Inputs& inputs, Clock::time_point deadline) {
  Outcome out;
  const CaseTmp tmp(o);
  // C's buffer is made (and its pages touched) before the clock starts
  out.c.resize(static_cast<size_t>(inputs.C0.size()));
  int in[2], back[2];
  if (pipe(in) != 0 || pipe(back) != 0) throw std::runtime_error("pipe failed");
#ifdef F_SETPIPE_SZ
  // 1 MiB pipes where the system allows (its default cap): a 2 GiB buffer then
  // passes in a few thousand wake-ups of each side instead of 32768 (a hint only)
  fcntl(in[1], F_SETPIPE_SZ, 1 << 20);
  fcntl(back[0], F_SETPIPE_SZ, 1 << 20);
#endif
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(back[1], 1);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2);
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    become(o);
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("TMPDIR", tmp.path.c_str(), 1);
    setenv("HOME", tmp.path.c_str(), 1);  // (not the grader's: nothing of the account's outlives the case)
    for (const std::string& e : o.env) setenv(e.substr(0, e.find('=')).c_str(), e.substr(e.find('=') + 1).c_str(), 1);
    std::vector<std::string> words = o.launch;
    words.insert(words.end(), {o.runner, "--serve", o.variant});
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    // a CPU variant's program alone starts no other program (exec_alone); a
    // launcher (mpiexec) starts the ranks, and a GPU's driver may start its helpers
    if (o.launch.empty() && o.needs.empty() && o.runner.find('/') != std::string::npos) exec_alone(o.runner, argv);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(in[0]);
  close(back[1]);
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(back[0], F_SETFL, O_NONBLOCK);
  // what goes in: the request and the three buffers, one after the other
  auto bytes = [](const Matrix& M) {
    return std::pair<const char*, size_t>{reinterpret_cast<const char*>(M.data()), M.size() * sizeof(double)};
  };
  const std::vector<std::pair<const char*, size_t>> parts = {
      {reinterpret_cast<const char*>(&rq), sizeof rq}, bytes(inputs.A), bytes(inputs.B), bytes(inputs.C0)};
  size_t part = 0, done = 0;
  // what comes back: the reply's header and message into `got`, then C's
  // buffer straight into out.c, never a byte past what is due
  std::string got;
  const size_t head = sizeof(lab::wire::Reply);
  size_t want = head;  // the header, then the header and the message once the header is in
  const size_t c_bytes = out.c.size() * sizeof(double);
  size_t c_in = 0;  // bytes of C in out.c
  bool header = false, eof = false, ended = false;
  const auto complete = [&] { return header && got.size() == want && c_in == c_bytes; };
  int status = 0;
  Clock::time_point sent{}, grace{};
  int to_child = in[1];
  // Under a launcher (mpiexec) its stdin stays open until the answer is in:
  // an end of input that reaches mpiexec while its job ends is not needed.
  int held_open = -1;
  while (!eof && !complete()) {
    // the program ended without closing its answer (a process it left behind
    // holds the pipe): what it wrote in the next moment is all there is
    if (!ended && waitpid(pid, &status, WNOHANG) == pid) ended = true, grace = Clock::now() + std::chrono::milliseconds(300);
    if (ended && Clock::now() > grace) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      out.failure = "timed out";
      break;
    }
    pollfd fds[2] = {{back[0], POLLIN, 0}, {to_child, POLLOUT, 0}};
    const int nfds = to_child >= 0 ? 2 : 1;
    if (poll(fds, nfds, static_cast<int>(std::min<long long>(left, 100))) < 0) continue;
    if (to_child >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      while (part < parts.size()) {
        if (parts[part].second == 0) {  // an empty buffer (a matrix with no columns): nothing to write
          ++part;
          continue;
        }
        const ssize_t put = write(to_child, parts[part].first + done, parts[part].second - done);
        if (put < 0) {
          if (errno == EAGAIN) break;
          part = parts.size();  // the program stopped reading: its answer (or its end) tells
          break;
        }
        done += static_cast<size_t>(put);
        if (done == parts[part].second) ++part, done = 0;
      }
      if (part == parts.size()) {
        if (o.launch.empty()) close(to_child);
        else held_open = to_child;
        to_child = -1;
        sent = Clock::now();
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[8192];
      while (!complete()) {
        const bool into_c = header && got.size() == want;
        char* const to = into_c ? reinterpret_cast<char*>(out.c.data()) + c_in : buf;
        const size_t room = into_c ? c_bytes - c_in : std::min(want - got.size(), sizeof buf);
        const ssize_t r = read(back[0], to, room);
        if (r <= 0) {
          if (r == 0) eof = true;
          break;
        }
        if (into_c) {
          c_in += static_cast<size_t>(r);
          continue;
        }
        got.append(buf, static_cast<size_t>(r));
        if (!header && got.size() == head) {
          std::memcpy(&out.reply, got.data(), head);
          if (out.reply.magic != lab::wire::kReplyMagic || out.reply.msg_len < 0 || out.reply.msg_len > 4096) {
            out.failure = "its output is not an answer to the grader (did the program print on stdout before main?)";
            break;
          }
          header = true;
          want = head + static_cast<size_t>(out.reply.msg_len);
        }
      }
      if (!out.failure.empty()) break;
    }
  }
  const auto finished = Clock::now();
  if (to_child >= 0) close(to_child);
  if (held_open >= 0) close(held_open);
  close(back[0]);
  kill(-pid, SIGKILL);
  if (!ended) waitpid(pid, &status, 0);
  kill_account(o);
  if (!out.failure.empty()) return out;
  if (!complete()) {
    out.failure = "no answer: " + signal_text(status) + (status == 127 << 8 ? " (the program is missing)" : "") +
                  (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS
                       ? " (it tried to start another program, which the grader's filter forbids a step program)"
                       : "");
    if (!o.launch.empty() && WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) out.launcher_signal = WTERMSIG(status);
    return out;
  }
  out.answered = true;
  out.msg = said(got.substr(head));
  out.seconds = std::chrono::duration<double>(finished - (sent == Clock::time_point{} ? finished : sent)).count();
  return out;
}

// ---- the checks --------------------------------------------------------------------------

Inputs make_inputs(const Case& cs, uint64_t seed) {
  auto cols = [](int64_t x) { return std::max<int64_t>(x, 0); };
  auto rows = [](int64_t ld) { return std::max<int64_t>(ld, 1); };
  Inputs in{Matrix(rows(cs.lda), cols(cs.k)), Matrix(rows(cs.ldb), cols(cs.n)), Matrix(rows(cs.ldc), cols(cs.n))};
  in.A.fill_random(seed * 3 + 1);
  in.B.fill_random(seed * 3 + 2);
  in.C0.fill_random(seed * 3 + 3);
  if (cs.poison_ab) in.A.fill_nan(), in.B.fill_nan();
  if (cs.poison_c) in.C0.fill_nan();
  // the rows of C's buffer below the m x n block are guards
  for (int64_t j = 0; j < in.C0.cols(); ++j)
    for (int64_t i = std::max<int64_t>(cs.m, 0); i < in.C0.rows(); ++i) in.C0(i, j) = kGuard;
  return in;
}

// One case's request, with the variant's Params (--param) and `repeat` calls,
// refilled from a seed of this grade and `seed` (the inputs').
lab::wire::Request request(const Options& o, const Case& cs, int64_t repeat = 1, uint64_t seed = 0) {
  lab::wire::Request rq = o.params;
  rq.magic = lab::wire::kRequestMagic;
  rq.m = cs.m, rq.n = cs.n, rq.k = cs.k, rq.kb = cs.kb, rq.lda = cs.lda, rq.ldb = cs.ldb, rq.ldc = cs.ldc;
  rq.alpha = cs.alpha, rq.beta = cs.beta;
  rq.repeat = repeat;
  rq.refill_seed = lab::mix64(o.seed ^ lab::mix64(seed + 0x9e3779b97f4a7c15ULL));
  return rq;
}

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// A semiring's reference, in the checker's own loops: exact for min and max
// (every order of the minimum gives the same bits).
void semiring_reference(const std::string& kind, const Case& cs, const Inputs& in, Matrix& R) {
  const bool mn = kind == "minplus";
  const double zero = mn ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  const bool accumulate = cs.beta != 0.0;
  for (int64_t j = 0; j < cs.n; ++j)
    for (int64_t i = 0; i < cs.m; ++i) {
      double acc = zero;
      for (int64_t p = 0; p < cs.k; ++p) {
        const double s = in.A(i, p) + in.B(p, j);
        acc = mn ? std::min(acc, s) : std::max(acc, s);
      }
      if (accumulate) acc = mn ? std::min(in.C0(i, j), acc) : std::max(in.C0(i, j), acc);
      R(i, j) = acc;
    }
}

// step08's choose_grid, by the rule its handout states: the fewest words per
// rank, then the least data on rank (0, 0, 0), then the smaller pz, then the
// first in factorizations(p) order.
lab::step08::Grid rule_grid(int p, int64_t m, int64_t n, int64_t k) {
  using lab::step08::Split;
  lab::step08::Grid best{};
  int64_t best_words = std::numeric_limits<int64_t>::max(), best_data = best_words;
  for (const lab::step08::Grid& g : lab::step08::factorizations(p)) {
    const int64_t mx = Split{m, g.px}.largest(), ny = Split{n, g.py}.largest(), kz = Split{k, g.pz}.largest();
    const int64_t words = lab::step08::words_per_rank(g, m, n, k), data = mx * kz + kz * ny + mx * ny;
    if (words < best_words || (words == best_words && (data < best_data || (data == best_data && g.pz < best.pz)))) {
      best = g;
      best_words = words;
      best_data = data;
    }
  }
  return best;
}

// A grid case (p in kb): the answer's px, py, pz are the first three numbers of C.
std::string grid_verdict(const Case& cs, const std::vector<double>& c) {
  const int p = static_cast<int>(cs.kb);
  const lab::step08::Grid want = rule_grid(p, cs.m, cs.n, cs.k);
  const lab::step08::Grid got{static_cast<int>(c[0]), static_cast<int>(c[1]), static_cast<int>(c[2])};
  if (got.px == want.px && got.py == want.py && got.pz == want.pz) return "";
  std::ostringstream s;
  s << "chose " << got.str();
  if (got.px < 1 || got.py < 1 || got.pz < 1 || got.size() != p) s << ", which is not a grid of " << p << " ranks";
  else s << " (" << lab::step08::words_per_rank(got, cs.m, cs.n, cs.k) << " words per rank)";
  s << "; the fewest words with the handout's ties is " << want.str() << " ("
    << lab::step08::words_per_rank(want, cs.m, cs.n, cs.k) << ")";
  return s.str();
}

std::string verdict(const Options& o, const Case& cs, const Inputs& in, const Outcome& out) {
  using namespace lab::wire;
  if (!out.answered) return out.failure;
  const auto st = out.reply.status;
  if (st == kNotImplemented) return out.msg;
  if (st == kNoVariant) return out.msg;
  if (cs.refuse) {
    if (st != kInvalidArgument)
      return st == kDone ? "bad arguments were not refused (std::invalid_argument expected)"
                         : "bad arguments: expected std::invalid_argument, got another error: " + out.msg;
    for (size_t i = 0; i < out.c.size(); ++i)
      if (!same_bits(out.c[i], in.C0.data()[i])) return "bad arguments were refused, but C was written";
    return "";
  }
  if (st == kInvalidArgument) return "valid arguments refused: " + out.msg;
  if (st != kDone) return "an exception: " + out.msg;
  if (o.kind == "grid") return grid_verdict(cs, out.c);
  Matrix C(in.C0.rows(), in.C0.cols());
  std::copy(out.c.begin(), out.c.end(), C.data());
  for (int64_t j = 0; j < C.cols(); ++j)
    for (int64_t i = std::max<int64_t>(cs.m, 0); i < C.rows(); ++i)
      if (!same_bits(C(i, j), kGuard))
        return "wrote outside the m x n block of C (row " + std::to_string(i) + ", column " + std::to_string(j) + ")";
  const lab::ConstMatView A{in.A.data(), cs.m, cs.k, cs.lda}, B{in.B.data(), cs.k, cs.n, cs.ldb},
      C0{in.C0.data(), cs.m, cs.n, cs.ldc}, Cv{C.data(), cs.m, cs.n, cs.ldc};
  if (o.kind == "minplus" || o.kind == "maxplus") {
    Matrix R = in.C0.clone();
    semiring_reference(o.kind, cs, in, R);
    for (int64_t j = 0; j < cs.n; ++j)
      for (int64_t i = 0; i < cs.m; ++i)
        if (!same_bits(C(i, j), R(i, j))) {
          std::ostringstream s;
          s << "C(" << i << ", " << j << ") = " << C(i, j) << ", the exact " << o.kind << " product is " << R(i, j);
          return s.str();
        }
    return "";
  }
  const double beta = o.kind == "plustimes" ? (cs.beta != 0.0 ? 1.0 : 0.0) : cs.beta;
  const lab::CheckResult r = lab::check_against_reference(cs.alpha, A, B, beta, C0, Cv);
  if (r.ok) return "";
  // one line: how many, the first wrong element, and whether C was written at all
  std::string first, note, line;
  std::istringstream lines(r.report);
  while (std::getline(lines, line)) {
    if (first.empty() && line.rfind("  C(", 0) == 0) first = line.substr(2);
    if (note.empty() && line.rfind("  (", 0) == 0) note = line.substr(2);
  }
  return std::to_string(r.mismatches) + " of " + std::to_string(r.checked) + " elements of C (" +
         std::to_string(cs.m) + " x " + std::to_string(cs.n) + ") outside the bound; the first: " + first +
         (note.empty() ? "" : "; " + note);
}

// choose_grid(p, m, n, k): p in kb, the answer in C (1 x n, n >= 3)
std::vector<Case> grid_cases() {
  std::vector<Case> all;
  const int64_t shapes[][3] = {{1000, 1000, 1000}, {8000, 500, 500}, {500, 8000, 500}, {300, 300, 20000}};
  const char* names[] = {"square", "tall", "wide", "deep"};
  for (int p : {2, 3, 4, 6, 8, 12, 16, 61, 64})
    for (int i = 0; i < 4; ++i) {
      const int64_t m = shapes[i][0], n = shapes[i][1], k = shapes[i][2];
      all.push_back({"p = " + std::to_string(p) + ", " + names[i] + " " + std::to_string(m) + "x" + std::to_string(n) +
                         "x" + std::to_string(k),
                     m, n, k, p, 1, 1, 1, 1.0, 0.0});
    }
  all.push_back({"p = 1", 100, 100, 100, 1, 1, 1, 1, 1.0, 0.0});
  all.push_back({"p = 8, a 3x5x7 product (fewer rows than ranks)", 3, 5, 7, 8, 1, 1, 1, 1.0, 0.0});
  all.push_back({"bad: p = 0", 100, 100, 100, 0, 1, 1, 1, 1.0, 0.0, false, false, true});
  return all;
}

std::vector<Case> cases(const std::string& kind) {
  if (kind == "grid") return grid_cases();
  std::vector<Case> all;
  const bool gemm = kind == "gemm";
  const int64_t shapes[][3] = {{1, 1, 1},   {2, 3, 4},    {7, 5, 3},    {17, 13, 11}, {33, 65, 31},
                               {64, 64, 64}, {100, 37, 129}, {129, 130, 67}, {0, 5, 4},  {5, 0, 4}, {5, 4, 0}};
  auto shape_name = [](int64_t m, int64_t n, int64_t k) {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  };
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const std::string sz = shape_name(m, n, k);
    // padded leading dimensions: every buffer a few rows longer than its matrix
    if (gemm) {
      all.push_back({sz + " alpha=1.5 beta=-0.5 padded", m, n, k, k, m + 3, k + 2, m + 5, 1.5, -0.5});
      all.push_back({sz + " alpha=1 beta=0 (C holds NaN)", m, n, k, k, std::max<int64_t>(m, 1),
                     std::max<int64_t>(k, 1), m + 1, 1.0, 0.0, false, true});
    } else {
      all.push_back({sz + " accumulate padded", m, n, k, k, m + 3, k + 2, m + 5, 1.0, 1.0});
      all.push_back({sz + " overwrite (C holds NaN)", m, n, k, k, std::max<int64_t>(m, 1), std::max<int64_t>(k, 1),
                     m + 1, 1.0, 0.0, false, true});
    }
  }
  if (gemm) {
    all.push_back({"33x17x9 alpha=0 (A, B hold NaN)", 33, 17, 9, 9, 33, 9, 34, 0.0, 2.0, true});
    all.push_back({"45x31x27 alpha=-2 beta=1", 45, 31, 27, 27, 45, 27, 45, -2.0, 1.0});
  }
  all.push_back({"bad: ldc < m", 8, 4, 3, 3, 8, 3, 7, 1.0, 0.5, false, false, true});
  all.push_back({"bad: lda < m", 8, 4, 3, 3, 7, 3, 9, 1.0, 0.5, false, false, true});
  all.push_back({"bad: A is 8x3, B is 4x4", 8, 4, 3, 4, 8, 4, 9, 1.0, 0.5, false, false, true});
  all.push_back({"bad: m < 0", -1, 4, 3, 3, 1, 3, 1, 1.0, 0.5, false, false, true});
  return all;
}

// ---- speed ---------------------------------------------------------------------------------
struct Speed {
  std::string reference;
  int64_t n = 0;
  double ratio = 0;
  bool gpu() const { return reference == "naive_coalesced" || reference == "cublas" || reference == "fp64_peak" || host(); }
  /// a reference on host matrices (step07's): both sides get them pinned
  bool host() const { return reference == "cublasxt"; }
};

Speed parse_speed(const std::string& text) {
  Speed s;
  std::istringstream in(text);
  std::string n, r;
  if (!std::getline(in, s.reference, ',') || !std::getline(in, n, ',') || !std::getline(in, r))
    usage("--speed takes REFERENCE,N,RATIO, e.g. transposed_dot,1024,1.2");
  try {
    s.n = std::stoll(n);
    s.ratio = std::stod(r);
  } catch (const std::logic_error&) {
    usage("--speed: '" + text + "' has no numbers where N and RATIO go");
  }
  if (s.reference != "transposed_dot" && s.reference != "naive_ijk" && !s.gpu())
    usage("--speed: unknown reference " + s.reference +
          " (transposed_dot, naive_ijk, naive_coalesced, cublas, fp64_peak or cublasxt)");
  if (s.n < 1 || s.ratio <= 0) usage("--speed: N and RATIO must be positive");
  return s;
}

const char* reference_name(const Speed& sp) {
  if (sp.reference == "naive_coalesced") return "the coalesced global-memory kernel";
  if (sp.reference == "cublas") return "cublasDgemm";
  if (sp.reference == "fp64_peak") return "the FP64 CUDA-core peak";
  if (sp.reference == "cublasxt") return "cuBLASXt (block 8192)";
  return sp.reference == "naive_ijk" ? "the i-j-p loop" : "transposed dot products";
}

std::string speed_name(const Speed& sp) {
  std::ostringstream s;
  s << "speed: at least " << sp.ratio << "x " << reference_name(sp) << " (n = " << sp.n
    << (sp.host() ? ", pinned host matrices, the same GPU)" : sp.gpu() ? ", the same GPU)" : ", one thread)");
  return s.str();
}

// Whether a timed n x n product (beta = 0) came back right, by Freivalds: the
// last of the request's calls, which multiplied the last refills of B (and A)
// where there were several (lab/grade_wire.hpp), made here again.
bool timed_product_ok(const Options& o, const lab::wire::Request& rq, const Inputs& in, const Outcome& out) {
  Matrix C(in.C0.rows(), in.C0.cols());
  std::copy(out.c.begin(), out.c.end(), C.data());
  const int64_t last = rq.repeat - 1;  // the last call's number (0: the inputs as sent)
  auto refilled = [&](const Matrix& M, int which) {
    Matrix R(M.rows(), M.cols());
    lab::wire::refill(R.data(), static_cast<size_t>(R.size()), lab::wire::refill_key(rq.refill_seed, last, which));
    return R;
  };
  const bool new_a = last > 0 && rq.refill_a, new_b = last > 0;
  const Matrix A = new_a ? refilled(in.A, 0) : Matrix(), B = new_b ? refilled(in.B, 1) : Matrix();
  return lab::freivalds_check(rq.alpha, (new_a ? A : in.A).cview(), (new_b ? B : in.B).cview(), 0.0, in.C0.cview(),
                              C.cview(), 3, o.seed + 76 + static_cast<uint64_t>(rq.repeat))
      .ok;
}

// The student's `repeat` products of case `cs` in a fresh process, on inputs of
// `seed`: seconds from the last byte in to the last byte of C out, each result
// checked; < 0 with *why set when it failed.
double timed_student(const Options& o, const Case& cs, uint64_t seed, int64_t repeat, Clock::time_point deadline,
                     std::string* why) {
  const Inputs in = make_inputs(cs, seed);
  const lab::wire::Request rq = request(o, cs, repeat, seed);
  const Outcome out = serve(o, rq, in, deadline);
  if (!out.answered) *why = out.failure;
  else if (out.reply.status != lab::wire::kDone) *why = out.msg;
  else if (!timed_product_ok(o, rq, in, out))
    *why = "the timed product is wrong (a randomized check of C failed" +
           std::string(repeat > 1 ? " after " + std::to_string(repeat) + " calls)" : ")");
  else return out.seconds;
  return -1;
}

// "" when the student's product is correct and at least sp.ratio times as fast
// as the reference loop; else why not.
std::string speed_case(const Options& o, const Speed& sp, Clock::time_point deadline, std::string* figures) {
  const char* ref_name = reference_name(sp);
  const int64_t n = sp.n;
  // the reference first, with no process of the account alive
  kill_account(o);
  Matrix A(n, n), B(n, n), C(n, n);
  A.fill_random(o.seed ^ 0x5eedULL);
  B.fill_random(o.seed ^ 0x5eedbULL);
  C.fill_random(3);
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  const auto ref = sp.reference == "naive_ijk" ? &lab::speed::naive_ijk : &lab::speed::transposed_dot;
  const Case cs{"", n, n, n, n, n, n, n, 1.0, 0.0, false, true};
  uint64_t round_seed = o.seed + 1000;
  std::string why;
  auto timed = [&](int64_t repeat) { return timed_student(o, cs, ++round_seed, repeat, deadline, &why); };
  // One product and 1 + K in a fresh process each, so that what a process
  // does once (its start, a kernel choice, the first touch of its buffers)
  // cancels: (t(1 + K) - t(1)) / K is one product. K makes about a second (--window).
  const double first = timed(1);
  if (first < 0) return why;
  const double window = o.window > 0 ? o.window : 1.0;
  const int64_t K = std::clamp<int64_t>(static_cast<int64_t>(window / std::max(first, 1e-4)), 2, lab::wire::kMaxRepeat / 2);
  // round after round, the reference (no process of the account alive: each
  // case kills them all) then the student's products from outside; each
  // side's best round counts, so a burst of load hits both alike
  const double inf = std::numeric_limits<double>::infinity();
  double t_ref = inf, s1 = inf, sk = inf;
  for (int round = 0; round < 4; ++round) {
    t_ref = std::min(t_ref, lab::time_host([&] { ref(1.0, A.cview(), B.cview(), 0.0, C.view()); }).median_s);
    const double one = timed(1);
    if (one < 0) return why;
    const double many = timed(1 + K);
    if (many < 0) return why;
    s1 = std::min(s1, one);
    sk = std::min(sk, many);
  }
  // One product: the difference of 1 + K and 1, but never less than the 1 + K
  // products' whole time spread over them. The program cannot make its time
  // shorter than its work, only longer: one that stalls where it sees a single
  // call (to shrink the difference) gains nothing then; an honest one loses
  // only its first call's own costs over 1 + K (well under 1 %).
  const double best = std::max({(sk - s1) / static_cast<double>(K), sk / static_cast<double>(1 + K), 1e-9});
  const double ratio = t_ref / best;
  std::ostringstream s;
  s.precision(2);
  s << std::fixed << ratio << "x " << ref_name << " (" << 2.0 * n * n * n / best / 1e9 << " against "
    << 2.0 * n * n * n / t_ref / 1e9 << " GFLOP/s, " << K << " products timed from outside)";
  *figures = s.str();
  return ratio >= sp.ratio ? "" : "too slow: " + s.str() + ", needs " + speed_name(sp).substr(16);
}

// The grader's own failure (its reference program), not the submission's: the checker stops.
struct GraderError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The grader's reference program (--reference-runner) serving `variant`, as the grader.
Options reference_options(const Options& o, const std::string& variant) {
  Options ref = o;
  ref.runner = o.reference_runner;
  ref.variant = variant;
  ref.launch.clear();
  ref.env.clear();
  ref.params = lab::wire::Request{};
  ref.uid = ref.gid = -1;
  return ref;
}

// A GPU speed case: the reference (lab_grade_reference) and the student's
// variant, each timed from outside over the pipe, with 1 and with 1 + K
// products on the same buffers in fresh processes; per side the best
// of 3 rounds of each, and (best(1 + K) - best(1)) / K is one product. K is
// chosen so that the reference's K products take about 1.5 s (--window). B is
// refilled with fresh numbers before every call but the first (the step
// program's serve loop), so a kernel that remembers an earlier answer gains
// nothing. The student's variant runs with its default Params (not the
// device-memory cap or tiles its correctness cases are given); for a
// reference on host matrices (cublasxt, step07) the step program pins both
// sides' matrices and refills A too, so that no upload of either can be kept
// from a call before.
std::string gpu_speed_case(const Options& o, const Speed& sp, Clock::time_point deadline, std::string* figures) {
  if (o.reference_runner.empty()) throw GraderError("a GPU speed case needs --reference-runner (lab_grade_reference)");
  Options ref = reference_options(o, sp.reference), student = o;
  student.params = lab::wire::Request{};
  ref.params.pinned_host = student.params.pinned_host = sp.host() ? 1 : 0;
  ref.params.refill_a = student.params.refill_a = sp.host() ? 1 : 0;
  const int64_t n = sp.n;
  const Case cs{"", n, n, n, n, n, n, n, 1.0, 0.0, false, true};
  uint64_t round_seed = o.seed + 2000;
  std::string why;
  // seconds from the last byte in to the last byte of C out; < 0 with *why set when it failed
  auto timed = [&](const Options& who, int64_t repeat) -> double {
    if (&who == &student) return timed_student(student, cs, ++round_seed, repeat, deadline, &why);
    const Inputs in = make_inputs(cs, ++round_seed);
    const Outcome out = serve(who, request(who, cs, repeat, round_seed), in, deadline);
    const std::string failure = !out.answered ? out.failure : out.reply.status != lab::wire::kDone ? out.msg : "";
    if (!failure.empty()) throw GraderError("the reference " + sp.reference + " did not answer: " + failure);
    return out.seconds;
  };
  // K from the reference's 1 and 21 calls (twenty products against the noise of a process start)
  const double once = timed(ref, 1), more = timed(ref, 21);
  const double each = std::max((more - once) / 20, 1e-4);
  const double window = o.window > 0 ? o.window : 1.5;
  const int64_t K = std::clamp<int64_t>(static_cast<int64_t>(window / each), 2, lab::wire::kMaxRepeat / 2);
  const double inf = std::numeric_limits<double>::infinity();
  double r1 = inf, rk = inf, s1 = inf, sk = inf;
  for (int round = 0; round < 3; ++round) {
    r1 = std::min(r1, timed(ref, 1));
    rk = std::min(rk, timed(ref, 1 + K));
    const double one = timed(student, 1);
    if (one < 0) return why;
    const double many = timed(student, 1 + K);
    if (many < 0) return why;
    s1 = std::min(s1, one);
    sk = std::min(sk, many);
  }
  const double t_ref = (rk - r1) / static_cast<double>(K);
  if (t_ref <= 0) throw GraderError("the reference " + sp.reference + " could not be timed (1 and " +
                                    std::to_string(1 + K) + " products took the same time)");
  // As speed_case, but the floor is the time past the reference's one call: a
  // GPU program's first call carries its start (a context, a handle), which
  // the reference's carries too. A program that stalls where it sees a single
  // call gains at most one product over 1 + K.
  const double t_student =
      std::max({(sk - s1) / static_cast<double>(K), (sk - r1) / static_cast<double>(1 + K), 1e-9});
  const double ratio = t_ref / t_student;
  std::ostringstream s;
  s.precision(2);
  s << std::fixed << ratio << "x " << reference_name(sp) << " (" << 2.0 * n * n * n / t_student / 1e12 << " against "
    << 2.0 * n * n * n / t_ref / 1e12 << " TFLOP/s, " << K << " products timed from outside)";
  *figures = s.str();
  return ratio >= sp.ratio ? "" : "too slow: " + s.str() + ", needs " + speed_name(sp).substr(16);
}

// "" when the grader's reference program cannot run `what` either (the
// machine lacks it); else what it found.
std::string machine_can(const Options& o, const std::string& what, Clock::time_point deadline) {
  const Options ref = reference_options(o, what);
  const Case cs{"", 1, 1, 1, 1, 1, 1, 1, 1.0, 0.0};
  const Inputs in = make_inputs(cs, 1);
  const Outcome out = serve(ref, request(ref, cs), in, deadline);
  if (!out.answered) throw GraderError("the reference program did not answer about " + what + ": " + out.failure);
  if (out.reply.status == lab::wire::kNoDevice) return "";
  if (out.reply.status != lab::wire::kDone) throw GraderError("the reference program about " + what + ": " + out.msg);
  return "the grader's own program finds this machine has it (" + what + ")";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out += '\\', out += ch;
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += ch;
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout));
  struct Verdict {
    std::string name, why, figures;  // why it failed ("" passed); a speed case's measured rates
    bool skipped = false;            // not run here: a GPU variant without a usable GPU (why says why)
    std::string note = "";           // what the grader did beside the verdict (a case run twice)
  };
  std::vector<Verdict> verdicts;
  uint64_t index = 0;
  bool out_of_time = false, no_device = false;
  std::string not_run = "not run: the step's time ran out";  // the verdict of the cases after a timeout
  for (const Case& cs : cases(o.kind)) {
    ++index;
    if (out_of_time) {
      verdicts.push_back({cs.name, not_run, ""});
      continue;
    }
    const Inputs in = make_inputs(cs, o.seed * 1000003ULL + index);
    const lab::wire::Request rq = request(o, cs);
    const auto case_deadline =
        o.case_timeout > 0 ? std::min(deadline, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                                   std::chrono::duration<double>(o.case_timeout)))
                           : deadline;
    Outcome out = serve(o, rq, in, case_deadline);
    // mpiexec itself killed by a signal (a rank's crash makes it exit with a
    // status instead): the launcher's failure, tried once more
    std::string note;
    if (out.launcher_signal != 0) {
      const std::string& launcher = o.launch.front();
      note = "run twice: its launcher " + launcher.substr(launcher.find_last_of('/') + 1) + " was killed by " +
             strsignal(out.launcher_signal) + " on the first try";
      out = serve(o, rq, in, case_deadline);
    }
    // A variant that needs a GPU is not even built where the lab has no CUDA
    // (step09's GPU semirings): where the grader has no program of its own for
    // the GPU either, that too is the machine's lack, not the submission's.
    if (out.answered && out.reply.status == lab::wire::kNoVariant && !o.needs.empty() &&
        o.reference_runner.empty()) {
      out.reply.status = lab::wire::kNoDevice;
      out.msg = "not built here (this build has no CUDA): " + out.msg;
    }
    if (out.answered && out.reply.status == lab::wire::kNoDevice) {
      std::string doubt = o.needs.empty() ? "this variant needs nothing a machine could lack" : "";
      if (doubt.empty() && !o.reference_runner.empty()) {
        try {
          doubt = machine_can(o, o.needs, deadline);
        } catch (const GraderError& e) {
          std::fprintf(stderr, "lab_grade_check: error: %s\n", e.what());
          return 3;
        }
      }
      if (doubt.empty()) {
        // the machine, not the submission: one skipped case says why, and the step is graded elsewhere
        verdicts.assign(1, {"the variant on this machine", out.msg, "", true});
        no_device = true;
        break;
      }
      out.reply.status = lab::wire::kOtherError;
      out.msg = "it says it cannot run here (" + out.msg + "), but " + doubt;
    }
    std::string why = verdict(o, cs, in, out);
    if (!out.answered && out.failure == "timed out") {
      out_of_time = true;
      if (case_deadline < deadline) {  // this case's own limit: the variant stops here
        std::ostringstream s;
        s << "timed out: no answer within " << o.case_timeout << " s (a deadlock, or an endless loop?)";
        why = s.str();
        not_run = "not run: an earlier case never answered";
      }
    }
    verdicts.push_back({cs.name, why, "", false, note});
  }
  if (!o.speed.empty() && !no_device) {
    const Speed sp = parse_speed(o.speed);
    Verdict v{speed_name(sp), not_run, ""};
    if (!out_of_time) {
      try {
        v.why = sp.gpu() ? gpu_speed_case(o, sp, deadline, &v.figures) : speed_case(o, sp, deadline, &v.figures);
      } catch (const GraderError& e) {
        std::fprintf(stderr, "lab_grade_check: error: %s\n", e.what());
        return 3;
      }
    }
    verdicts.push_back(v);
  }
  std::ostringstream js;
  js << "{\"step\": " << json_string(o.step) << ", \"variant\": " << json_string(o.variant)
     << ", \"kind\": " << json_string(o.kind) << ", \"cases\": [";
  for (size_t i = 0; i < verdicts.size(); ++i)
    js << (i ? ",\n  " : "\n  ") << "{\"name\": " << json_string(verdicts[i].name)
       << ", \"passed\": " << (verdicts[i].why.empty() ? "true" : "false") << ", \"why\": " << json_string(verdicts[i].why)
       << (verdicts[i].skipped ? ", \"skipped\": true" : "")
       << (verdicts[i].figures.empty() ? "" : ", \"figures\": " + json_string(verdicts[i].figures))
       << (verdicts[i].note.empty() ? "" : ", \"note\": " + json_string(verdicts[i].note)) << "}";
  js << "\n]}\n";
  const std::string tmp = o.json + ".part";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << js.str();
    if (!f) usage("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), o.json.c_str()) != 0) usage("cannot write " + o.json);
  return 0;
}
