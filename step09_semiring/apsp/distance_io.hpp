// distance_io.hpp — distance matrices as files, and files that appear whole or not at all.
//
// Text format (--out-format text):
//     # any number of comment lines
//     n N base B
//     N lines of N numbers: line u holds d(u, v) for v = B .. B+N-1
// where u, v are vertex numbers as in the graph file (B = 1, or 0 for a
// 0-based edge list), each number is the shortest decimal that reads back as
// exactly the double computed ("7", "0.1", "2.5e-05"), and "inf" means v cannot
// be reached from u. Separators are single spaces.
//
// Binary format (--out-format binary), little-endian:
//     bytes 0-7    "APSPDIST"
//     bytes 8-15   N     (uint64)
//     bytes 16-23  B     (uint64, 0 or 1)
//     then N*N IEEE-754 doubles, row-major: element (u, v) = d(u, v) at
//     24 + 8 (u N + v); +inf for no path.
// In Python: numpy.fromfile(path, dtype="<f8", offset=24).reshape(N, N).
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "lab/matrix.hpp"

namespace lab::step09::apsp {

enum class DistanceFormat { text, binary };

/// A distance file that is malformed: what() names the file (and the line).
struct DistanceFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A file written under a temporary name beside `path` and renamed onto it by
/// commit(): a run that fails or is stopped leaves no half-written file. The
/// temporary file is made at construction, so an unwritable path is reported
/// before any long computation (std::runtime_error naming the path).
class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::FILE* stream() const { return f_; }
  const std::string& path() const { return path_; }
  /// Flushes, closes and renames onto the final path; throws when any write failed.
  void commit();

 private:
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

/// Writes D (D(u, v) = distance u -> v) in `format`, vertex numbers from `base`.
void write_distances(OutputFile& out, ConstMatView D, int base, DistanceFormat format);

struct DistanceFile {
  Matrix D;
  int base = 1;
};
/// Reads either format (told apart by the first bytes).
DistanceFile read_distances(const std::string& path);

}  // namespace lab::step09::apsp
