// comm.hpp — the MPI toolbox of step08: one check macro, owned communicators,
// collectives that count the bytes they move, and failures that every rank agrees on.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "grid.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"

namespace lab::step08 {

/// Bytes one rank passed to MPI in one phase (counted by the wrappers below).
struct Traffic {
  int64_t sent = 0, recv = 0;
};

inline const char* progress_note();  // (below: where this rank last was, for the messages)

/// Throws std::runtime_error naming the MPI function, MPI's own error text, where
/// the rank last was (grid, phase, collective: which part of your cube.cpp made
/// the call) and the place of the call.
inline void mpi_check(int err, const char* call, const char* file, int line) {
  if (err == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(err, text, &len) != MPI_SUCCESS) len = 0;
  const std::string function(call, std::strcspn(call, "("));
  const char* where = progress_note();
  throw std::runtime_error(function + " failed: " + (len ? std::string(text, len) : "unknown error") + " (" +
                           (where ? "last in " + std::string(where) + "; " : std::string()) + file + ":" +
                           std::to_string(line) + ")");
}
#define LAB_MPI_CHECK(call) ::lab::step08::mpi_check((call), #call, __FILE__, __LINE__)

/// An owned communicator: freed when it goes out of scope, movable, not copyable.
/// It returns MPI errors to the caller (MPI_ERRORS_RETURN) instead of aborting, so
/// that LAB_MPI_CHECK can say which call failed; communicators made from it inherit that.
class Comm {
 public:
  Comm() = default;
  explicit Comm(MPI_Comm c) : c_(c) {
    if (c_ != MPI_COMM_NULL) LAB_MPI_CHECK(MPI_Comm_set_errhandler(c_, MPI_ERRORS_RETURN));
  }
  Comm(Comm&& o) noexcept : c_(std::exchange(o.c_, MPI_COMM_NULL)), label_(o.label_) {}
  Comm& operator=(Comm&& o) noexcept {
    if (this != &o) {
      free();
      c_ = std::exchange(o.c_, MPI_COMM_NULL);
      label_ = o.label_;
    }
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() { free(); }

  MPI_Comm get() const { return c_; }
  int rank() const {
    int r = 0;
    LAB_MPI_CHECK(MPI_Comm_rank(c_, &r));
    return r;
  }
  int size() const {
    int s = 0;
    LAB_MPI_CHECK(MPI_Comm_size(c_, &s));
    return s;
  }
  /// A name for notes ("fibre_a (along y)"): which communicator a rank waits in.
  void set_label(const char* label) { label_ = label; }
  const char* label() const { return label_; }

 private:
  void free() {
    if (c_ != MPI_COMM_NULL) MPI_Comm_free(&c_);  // nothing useful to do with an error in a destructor
  }
  MPI_Comm c_ = MPI_COMM_NULL;
  const char* label_ = nullptr;  ///< a string literal, or none
};

inline void note_collective(const char* call, const Comm& comm);  // below: the watchdog's note

// ---- communication that counts what it moves -------------------------------------
// Thin wrappers over MPI, in MPI's argument order (data first, communicator last),
// for blocks of any element type MPI knows (mpi_type<T>). Each checks the call and
// adds to `t` the bytes this rank hands to or gets from other ranks, which the tests
// and the benchmark compare with the formulas of grid.hpp. Sizes are 64-bit here;
// MPI counts are int, so a block larger than that travels in several messages.
namespace mpi {

template <class T>
MPI_Datatype mpi_type() {
  static_assert(sizeof(T) == 0, "no MPI datatype for this element type");
  return MPI_DATATYPE_NULL;
}
template <>
inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <>
inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
inline MPI_Datatype mpi_type<int32_t>() { return MPI_INT32_T; }
template <>
inline MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }

inline int count_of(int64_t n, const char* what) {
  if (n < 0 || n > INT_MAX)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(n) + " does not fit MPI's int count");
  return static_cast<int>(n);
}

template <class T>
int64_t bytes_of(View<T> blk) {
  return blk.rows * blk.cols * int64_t(sizeof(T));
}

/// True when the block is one run of rows * cols elements.
template <class T>
bool contiguous(View<T> blk) {
  return blk.ld == blk.rows || blk.cols <= 1 || blk.rows == 0;
}

/// A block of a column-major matrix as one MPI message, read or written where it
/// lies: `cols` runs of `rows` elements, `ld` apart (MPI_Type_vector). No packing
/// into a buffer first: MPI walks the stride itself. Two blocks of the same shape
/// have the same type signature whatever their ld, so one side may be strided and
/// the other contiguous.
class BlockType {
 public:
  template <class T>
  explicit BlockType(View<T> blk) {
    using U = std::remove_const_t<T>;
    LAB_MPI_CHECK(MPI_Type_vector(count_of(blk.cols, "block columns"), count_of(blk.rows, "block rows"),
                                  count_of(blk.ld, "block ld"), mpi_type<U>(), &type_));
    LAB_MPI_CHECK(MPI_Type_commit(&type_));
  }
  // MPI lets a type be freed while messages that use it are still in flight.
  ~BlockType() { MPI_Type_free(&type_); }
  BlockType(const BlockType&) = delete;
  BlockType& operator=(const BlockType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// Calls fn(piece) for consecutive groups of whole columns of `blk`, each small
/// enough for one MPI message (at most 2^30 elements, one column at the least).
template <class T, class F>
void by_column_groups(View<T> blk, F&& fn) {
  constexpr int64_t kMaxElements = int64_t(1) << 30;
  const int64_t step = std::max<int64_t>(1, kMaxElements / std::max<int64_t>(1, blk.rows));
  for (int64_t j = 0; j < blk.cols; j += step) fn(blk.block(0, j, blk.rows, std::min(step, blk.cols - j)));
}

/// A broadcast of the block `blk` (any ld) from `root`, one message (`call`:
/// send(data, type)) per group of columns, its bytes counted once.
template <class T, class Send>
void bcast_pieces(View<T> blk, int root, const Comm& comm, Traffic& t, const char* call, Send&& send) {
  if (blk.rows == 0 || blk.cols == 0) return;
  by_column_groups(blk, [&](View<T> piece) {
    const BlockType type(piece);
    note_collective(call, comm);
    send(piece.data, type.get());
  });
  if (comm.size() == 1) return;
  (comm.rank() == root ? t.sent : t.recv) += bytes_of(blk);
}

/// MPI_Bcast of the block `blk` (any ld) from `root`; the root's block is only read.
template <class T>
void bcast(View<T> blk, int root, const Comm& comm, Traffic& t) {
  bcast_pieces(blk, root, comm, t, "MPI_Bcast",
               [&](T* data, MPI_Datatype type) { LAB_MPI_CHECK(MPI_Bcast(data, 1, type, root, comm.get())); });
}

/// MPI_Reduce with `op` of a contiguous block onto `root`, in place: on the root
/// `blk` holds its own part before and the result after; elsewhere it is only read.
/// (Reductions are done on contiguous blocks only: MPI's predefined operations are
/// not promised to work on derived datatypes by every MPI.)
template <class T>
void reduce(View<T> blk, MPI_Op op, int root, const Comm& comm, Traffic& t) {
  if (!contiguous(blk)) throw std::logic_error("mpi::reduce: the block must be contiguous (ld == rows)");
  const int64_t total = blk.rows * blk.cols;
  constexpr int64_t kMaxElements = int64_t(1) << 30;
  for (int64_t at = 0; at < total; at += kMaxElements) {
    const int n = static_cast<int>(std::min(kMaxElements, total - at));
    T* part = blk.data + at;
    note_collective("MPI_Reduce", comm);
    if (comm.rank() == root) {
      LAB_MPI_CHECK(MPI_Reduce(MPI_IN_PLACE, part, n, mpi_type<T>(), op, root, comm.get()));
    } else {
      LAB_MPI_CHECK(MPI_Reduce(part, nullptr, n, mpi_type<T>(), op, root, comm.get()));
    }
  }
  if (comm.size() == 1 || total == 0) return;
  (comm.rank() == root ? t.recv : t.sent) += bytes_of(blk);
}

/// Messages in flight; wait_all() (or the destructor) waits for them to finish.
class Requests {
 public:
  Requests() = default;
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  ~Requests() {
    if (!reqs_.empty()) MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  }
  MPI_Request* add() { return &reqs_.emplace_back(MPI_REQUEST_NULL); }
  bool empty() const { return reqs_.empty(); }
  void wait_all() {
    const int n = static_cast<int>(reqs_.size());
    std::vector<MPI_Request> pending = std::move(reqs_);
    reqs_.clear();
    LAB_MPI_CHECK(MPI_Waitall(n, pending.data(), MPI_STATUSES_IGNORE));
  }

 private:
  std::vector<MPI_Request> reqs_;
};

/// MPI_Isend of the block `blk` (any ld) to `dest`; it must stay put until wait_all.
template <class T>
void isend(View<const T> blk, int dest, const Comm& comm, Requests& reqs, Traffic& t) {
  by_column_groups(blk, [&](View<const T> piece) {
    const BlockType type(piece);
    LAB_MPI_CHECK(MPI_Isend(piece.data, 1, type.get(), dest, 0, comm.get(), reqs.add()));
  });
  t.sent += bytes_of(blk);
}

/// MPI_Irecv into the block `blk` (any ld) from `src`; complete after wait_all.
template <class T>
void irecv(View<T> blk, int src, const Comm& comm, Requests& reqs, Traffic& t) {
  by_column_groups(blk, [&](View<T> piece) {
    const BlockType type(piece);
    LAB_MPI_CHECK(MPI_Irecv(piece.data, 1, type.get(), src, 0, comm.get(), reqs.add()));
  });
  t.recv += bytes_of(blk);
}

/// MPI_Ibcast of the block `blk` (any ld) from `root`: in flight until reqs.wait_all();
/// the root's block is only read. Every rank of `comm` must start the same
/// broadcasts in the same order.
template <class T>
void ibcast(View<T> blk, int root, const Comm& comm, Requests& reqs, Traffic& t) {
  bcast_pieces(blk, root, comm, t, "MPI_Ibcast", [&](T* data, MPI_Datatype type) {
    LAB_MPI_CHECK(MPI_Ibcast(data, 1, type, root, comm.get(), reqs.add()));
  });
}

/// Blocking MPI_Send / MPI_Recv of a block (any ld).
template <class T>
void send(View<const T> blk, int dest, const Comm& comm, Traffic& t) {
  Requests r;
  isend(blk, dest, comm, r, t);
  r.wait_all();
}
template <class T>
void recv(View<T> blk, int src, const Comm& comm, Traffic& t) {
  Requests r;
  irecv(blk, src, comm, r, t);
  r.wait_all();
}

}  // namespace mpi

// ---- where a rank is, for a watchdog ------------------------------------------------
// A rank that waits in a collective nobody else entered waits forever. The test
// program's watchdog (tests/mpi_test_main.cpp) reads this note from a signal
// handler when no progress was made for a while, and prints which grid, which
// phase and which collective of it the rank was in (a broadcast on fibre_b, or done
// with its part and waiting for the others). Each note is written whole into the
// slot not being read, then published with one atomic store, so the handler never
// sees half a note.
struct Progress {
  std::atomic<unsigned> ticks{0};  ///< counts every step a rank made
  std::atomic<int> shown{0};       ///< which of the two notes is current
  char note[2][256] = {};
  char grid[32] = {}, phase[32] = {};  ///< the current phase, for the notes inside it
  int x = 0, y = 0, z = 0;
};
inline Progress& progress() {
  static Progress p;
  return p;
}
/// Records what this rank does now within the current phase ("" : just entered it).
inline void note_step(const char* what) {
  Progress& p = progress();
  const int next = 1 - p.shown.load(std::memory_order_relaxed);
  std::snprintf(p.note[next], sizeof p.note[next], "grid %s, phase %s%s%s, rank at (%d,%d,%d)", p.grid, p.phase,
                *what ? ": " : "", what, p.x, p.y, p.z);
  p.shown.store(next, std::memory_order_release);
  p.ticks.fetch_add(1, std::memory_order_release);
}
/// Records that this rank enters `phase` of a call on grid `g`, at (x, y, z).
inline void note_progress(const char* phase, const Grid& g, int x, int y, int z) {
  Progress& p = progress();
  std::snprintf(p.grid, sizeof p.grid, "%s", g.str().c_str());
  std::snprintf(p.phase, sizeof p.phase, "%s", phase);
  p.x = x, p.y = y, p.z = z;
  note_step("");
}
/// The current note, or nullptr before the first one (safe in a signal handler:
/// the test program's watchdog reads it there).
inline const char* progress_note() {
  const Progress& p = progress();
  if (p.ticks.load(std::memory_order_acquire) == 0) return nullptr;
  return p.note[p.shown.load(std::memory_order_acquire)];
}
/// Records that this rank enters `call` (MPI_Bcast, ...) on `comm`.
inline void note_collective(const char* call, const Comm& comm) {
  if (!comm.label()) return;  // not one of the cube's: the phase says enough
  char what[96];
  std::snprintf(what, sizeof what, "in %s on %s", call, comm.label());
  note_step(what);
}

// ---- failures every rank agrees on ---------------------------------------------
// A rank that throws while the others go on into a collective leaves them waiting
// forever. So each part of a call runs under all_or_none: afterwards the ranks
// compare notes (one small allreduce, which also lines them up like a barrier), and
// if any rank failed, every rank throws the failure of the lowest failing rank.

enum class Failure : int { none = 0, invalid_argument = 1, todo = 2, error = 3 };

/// Collective over comm: returns when no rank failed, else throws on every rank.
inline void agree_on_failure(MPI_Comm comm, Failure mine, const std::string& what) {
  int rank = 0, size = 1;
  LAB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  LAB_MPI_CHECK(MPI_Comm_size(comm, &size));
  // Max of (failed?) and max of (size - rank) over the failed ranks: the lowest one.
  int local[2] = {mine != Failure::none, mine != Failure::none ? size - rank : 0}, all[2] = {0, 0};
  LAB_MPI_CHECK(MPI_Allreduce(local, all, 2, MPI_INT, MPI_MAX, comm));
  if (all[0] == 0) return;
  const int root = size - all[1];
  int head[2] = {static_cast<int>(mine), static_cast<int>(what.size())};
  LAB_MPI_CHECK(MPI_Bcast(head, 2, MPI_INT, root, comm));
  std::string text = rank == root ? what : std::string(head[1], ' ');
  LAB_MPI_CHECK(MPI_Bcast(text.data(), head[1], MPI_CHAR, root, comm));
  switch (static_cast<Failure>(head[0])) {
    case Failure::invalid_argument:
      throw std::invalid_argument(text);
    case Failure::todo: {
      const std::string prefix = "not implemented yet: ";  // lab::Todo adds it again
      throw lab::Todo(text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text);
    }
    default:
      throw std::runtime_error("rank " + std::to_string(root) + ": " + text);
  }
}

/// Runs fn() on every rank of comm; if it throws anywhere, it throws everywhere.
template <class F>
void all_or_none(MPI_Comm comm, F&& fn) {
  Failure kind = Failure::none;
  std::string what;
  try {
    fn();
  } catch (const lab::Todo& e) {
    kind = Failure::todo;
    what = e.what();
  } catch (const std::invalid_argument& e) {
    kind = Failure::invalid_argument;
    what = e.what();
  } catch (const std::exception& e) {
    kind = Failure::error;
    what = e.what();
  } catch (...) {
    kind = Failure::error;
    what = "an exception that is not a std::exception";
  }
  // where the others are still inside a collective of this part, they never come
  // to agree: the watchdog's note then says what this rank threw
  if (kind != Failure::none) note_step(("threw: " + what.substr(0, 140) + "; waiting for the others to agree").c_str());
  agree_on_failure(comm, kind, what);
}

/// What every rank must know of a call whose matrices only rank 0 has.
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  double alpha = 0, beta = 0;
};

/// Rank 0 checks its arguments (lab::check_gemm_args) and tells every rank the
/// sizes and scalars; bad arguments throw the same std::invalid_argument everywhere.
inline Problem share_problem(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta,
                             ConstMatView C) {
  int rank = 0;
  LAB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  all_or_none(comm, [&] {
    if (rank == 0) check_gemm_args(A, B, C);
  });
  int64_t sizes[3] = {C.rows, C.cols, A.cols};
  double scalars[2] = {alpha, beta};
  LAB_MPI_CHECK(MPI_Bcast(sizes, 3, MPI_INT64_T, 0, comm));
  LAB_MPI_CHECK(MPI_Bcast(scalars, 2, MPI_DOUBLE, 0, comm));
  return {sizes[0], sizes[1], sizes[2], scalars[0], scalars[1]};
}

}  // namespace lab::step08
