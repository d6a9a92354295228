// Writing and reading distance matrices; the all-or-nothing output file.
#include "distance_io.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "text.hpp"

namespace lab::step09::apsp {
namespace {

constexpr char kMagic[8] = {'A', 'P', 'S', 'P', 'D', 'I', 'S', 'T'};
constexpr int64_t kHeaderBytes = 24;
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the binary distance format is written as stored in memory");

// Rows of a column-major matrix, a slab at a time: reading a row directly
// would touch one cache line per element.
constexpr int64_t kSlab = 64;
void transpose_slab(ConstMatView D, int64_t u0, int64_t rows, std::vector<double>& buf) {
  const int64_t n = D.cols;
  buf.resize(size_t(rows * n));
  for (int64_t v = 0; v < n; ++v)
    for (int64_t r = 0; r < rows; ++r) buf[size_t(r * n + v)] = D(u0 + r, v);
}

void put(std::FILE* f, const void* p, size_t bytes) {
  if (bytes && std::fwrite(p, 1, bytes, f) != bytes) throw std::runtime_error(std::strerror(errno));
}

}  // namespace

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) throw std::runtime_error("cannot write '" + path_ + "': is a folder");
  std::string templ = path_ + ".XXXXXX";
  const int fd = mkstemp(templ.data());
  if (fd < 0) throw std::runtime_error("cannot write '" + path_ + "': " + std::strerror(errno));
  tmp_ = templ;
  f_ = fdopen(fd, "wb");
  if (!f_) {
    close(fd);
    std::remove(tmp_.c_str());
    throw std::runtime_error("cannot write '" + path_ + "': " + std::strerror(errno));
  }
  // mkstemp makes the file 0600; a result file should be as readable as any other.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
}

OutputFile::~OutputFile() {
  if (f_) {
    std::fclose(f_);
    std::remove(tmp_.c_str());
  }
}

void OutputFile::commit() {
  const bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok || !closed || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp_.c_str());
    throw std::runtime_error("writing '" + path_ + "' failed: " + why);
  }
}

void write_distances(OutputFile& out, ConstMatView D, int base, DistanceFormat format) {
  std::FILE* f = out.stream();
  const int64_t n = D.rows;
  std::vector<double> slab;
  try {
    if (format == DistanceFormat::binary) {
      const uint64_t header[2] = {uint64_t(n), uint64_t(base)};
      put(f, kMagic, sizeof kMagic);
      put(f, header, sizeof header);
      for (int64_t u0 = 0; u0 < n; u0 += kSlab) {
        const int64_t rows = std::min(kSlab, n - u0);
        transpose_slab(D, u0, rows, slab);
        put(f, slab.data(), slab.size() * sizeof(double));
      }
    } else {
      const std::string head = "# apsp distances: line u holds d(u, v) for v = " + std::to_string(base) +
                               ".." + std::to_string(n - 1 + base) + "; inf: no path\nn " +
                               std::to_string(n) + " base " + std::to_string(base) + "\n";
      put(f, head.data(), head.size());
      std::string line;
      for (int64_t u0 = 0; u0 < n; u0 += kSlab) {
        const int64_t rows = std::min(kSlab, n - u0);
        transpose_slab(D, u0, rows, slab);
        for (int64_t r = 0; r < rows; ++r) {
          line.clear();
          for (int64_t v = 0; v < n; ++v) {
            if (v) line += ' ';
            line += format_number(slab[size_t(r * n + v)]);
          }
          line += '\n';
          put(f, line.data(), line.size());
        }
      }
    }
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("writing '" + out.path() + "' failed: " + e.what());
  }
}

DistanceFile read_distances(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DistanceFileError(path + ": is a folder, not a distance file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DistanceFileError(path + ": cannot open the distance file");
  char magic[sizeof kMagic] = {};
  in.read(magic, sizeof magic);
  DistanceFile out;
  if (in.gcount() == sizeof magic && std::memcmp(magic, kMagic, sizeof magic) == 0) {
    uint64_t header[2] = {};
    in.read(reinterpret_cast<char*>(header), sizeof header);
    in.seekg(0, std::ios::end);
    const int64_t bytes = int64_t(in.tellg());
    const uint64_t n = header[0];
    const unsigned __int128 want = kHeaderBytes + (unsigned __int128)8 * n * n;  // n*n*8 can pass 2^64
    if (!in || header[1] > 1 || n > (uint64_t(1) << 31) || want != (unsigned __int128)bytes)
      throw DistanceFileError(path + ": a binary distance file with a bad header or size (" +
                              std::to_string(bytes) + " bytes for n = " + std::to_string(n) + ")");
    out.base = int(header[1]);
    out.D = Matrix(int64_t(n), int64_t(n));
    in.seekg(kHeaderBytes);
    std::vector<double> row(n);
    for (uint64_t u = 0; u < n; ++u) {
      in.read(reinterpret_cast<char*>(row.data()), std::streamsize(8 * n));
      for (uint64_t v = 0; v < n; ++v) out.D(int64_t(u), int64_t(v)) = row[v];
    }
    if (!in) throw DistanceFileError(path + ": read error");
    return out;
  }
  in.clear();
  in.seekg(0);
  std::string text;
  int64_t line = 0, n = -1, u = 0;
  auto fail = [&](const std::string& what) {
    throw DistanceFileError(path + ":" + std::to_string(line) + ": " + what);
  };
  while (std::getline(in, text)) {
    ++line;
    const auto w = split_words(text);
    if (w.empty() || w[0][0] == '#') continue;
    if (n < 0) {
      int64_t count = -1, base = -1;
      if (w.size() == 4 && w[0] == "n" && w[2] == "base") {
        if (const auto x = parse_integer(w[1])) count = *x;
        if (const auto x = parse_integer(w[3])) base = *x;
      }
      if (count < 0 || count > (int64_t(1) << 31) || (base != 0 && base != 1))
        fail("expected the header 'n N base B' (B = 0 or 1)");
      n = count;
      out.base = int(base);
      out.D = Matrix(n, n);
      continue;
    }
    if (u == n) fail("more than the " + std::to_string(n) + " rows the header announces");
    if (int64_t(w.size()) != n)
      fail("row of vertex " + std::to_string(u + out.base) + " has " + std::to_string(w.size()) +
           " numbers, not " + std::to_string(n));
    for (int64_t v = 0; v < n; ++v) {
      const std::string why = parse_real(w[size_t(v)], out.D(u, v), "distance", true);
      if (!why.empty()) fail(why);
    }
    ++u;
  }
  if (n < 0) fail("no 'n N base B' header");
  if (u != n) fail("the file ends after " + std::to_string(u) + " of " + std::to_string(n) + " rows");
  return out;
}

}  // namespace lab::step09::apsp
