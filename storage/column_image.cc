#include "internal/column_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include "mentat/base/str_cat.h"

namespace mentat::storage::internal {
namespace {

// 02: the header and the arrays carry CRC32Cs (01 images are rebuilt).
constexpr char kMagic[8] = {'M', 'N', 'T', 'C', 'O', 'L', '0', '2'};
constexpr char kDir[] = "columns";

// The file's first 64 bytes, in the machine's byte order (an image is
// only ever read by the machine that wrote it, next to its store).
struct Header {
  char magic[8];
  uint32_t order;
  uint32_t with_entities;
  uint64_t attribute;
  uint64_t as_of;
  uint64_t count;       // keys
  uint64_t key_bytes;   // bytes of the keys, back to back
  uint32_t header_crc;  // of the bytes above
  uint32_t arrays_crc;  // ColumnImageChecksum of the arrays
  uint64_t reserved;
};
static_assert(sizeof(Header) == 64);
constexpr size_t kHeaderCrcBytes = offsetof(Header, header_crc);

// CRC32C of whole images: a reader checks the columns it reads before its
// first query can use them (ColumnCache::Find), so the check's speed is
// that query's. Crc32cExtend uses the CPU's crc32 instruction where it
// has one (about 6x RocksDB's generator as Debian builds it, which does
// not assume SSE4.2); the values are the same CRC32C.
class Crc32c {
 public:
  void Update(const void* data, size_t n) {
    crc_ = Crc32cExtend(crc_, static_cast<const char*>(data), n);
  }
  uint32_t Finish() const { return crc_; }

 private:
  uint32_t crc_ = 0;
};

#if defined(__x86_64__)
// The crc32 instruction waits about three cycles for its previous result,
// so one chain of it runs at a third of the speed the CPU can issue it.
// Whole rounds of 3 x kLane bytes run three chains side by side (lanes a,
// b, c) and join them: the CRC state is linear, so the state after a b c
// is Shift(2 kLane)(state after a) ^ Shift(kLane)(b from zero) ^ (c from
// zero), where Shift(n) is the state's change over n zero bytes.
constexpr size_t kLane = 8192;

__attribute__((target("sse4.2"))) uint64_t RawCrc32c(uint64_t c, const char* p,
                                                     size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; n > 0; ++p, --n) {
    c32 = __builtin_ia32_crc32qi(c32, static_cast<unsigned char>(*p));
  }
  return c32;
}

// Shift(n) as a table per byte of the state: a linear map of 32 bits,
// made from what n zero bytes do to each bit alone.
struct ZerosShift {
  explicit ZerosShift(size_t n) {
    const std::string zeros(n, '\0');
    uint32_t bit_image[32];
    for (int i = 0; i < 32; ++i) {
      bit_image[i] = static_cast<uint32_t>(
          RawCrc32c(uint64_t{1} << i, zeros.data(), zeros.size()));
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t image = 0;
        for (int i = 0; i < 8; ++i) {
          if ((b >> i) & 1) image ^= bit_image[8 * k + i];
        }
        table[k][b] = image;
      }
    }
  }
  uint32_t operator()(uint32_t x) const {
    return table[0][x & 0xff] ^ table[1][(x >> 8) & 0xff] ^
           table[2][(x >> 16) & 0xff] ^ table[3][x >> 24];
  }
  uint32_t table[4][256];
};

__attribute__((target("sse4.2"))) uint32_t HardwareCrc32c(uint32_t crc,
                                                          const char* p,
                                                          size_t n) {
  uint64_t c = ~crc;
  if (n >= 3 * kLane) {
    static const ZerosShift* const one_lane = new ZerosShift(kLane);
    static const ZerosShift* const two_lanes = new ZerosShift(2 * kLane);
    for (; n >= 3 * kLane; p += 3 * kLane, n -= 3 * kLane) {
      uint64_t a = c, b = 0, d = 0;
      for (size_t i = 0; i < kLane; i += 8) {
        uint64_t wa, wb, wd;
        std::memcpy(&wa, p + i, 8);
        std::memcpy(&wb, p + kLane + i, 8);
        std::memcpy(&wd, p + 2 * kLane + i, 8);
        a = __builtin_ia32_crc32di(a, wa);
        b = __builtin_ia32_crc32di(b, wb);
        d = __builtin_ia32_crc32di(d, wd);
      }
      c = (*two_lanes)(static_cast<uint32_t>(a)) ^
          (*one_lane)(static_cast<uint32_t>(b)) ^ static_cast<uint32_t>(d);
    }
  }
  return ~static_cast<uint32_t>(RawCrc32c(c, p, n));
}
#endif

uint32_t HeaderCrc(const Header& h) {
  Crc32c crc;
  crc.Update(&h, kHeaderCrcBytes);
  return crc.Finish();
}

size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

// Where each array starts, and the file's size.
struct Layout {
  size_t ends, txs, entities, keys, size;
};
Layout LayoutOf(uint64_t count, uint64_t key_bytes, bool with_entities) {
  Layout l;
  l.ends = sizeof(Header);
  l.txs = l.ends + Pad8(count * sizeof(uint32_t));
  l.entities = l.txs + count * sizeof(EntityId);
  l.keys = l.entities + (with_entities ? count * sizeof(uint64_t) : 0);
  l.size = l.keys + key_bytes;
  return l;
}

[[nodiscard]] absl::Status Errno(std::string_view what,
                                 const std::string& path) {
  return absl::UnavailableError(
      StrCat(what, " ", path, ": ", std::strerror(errno)));
}

[[nodiscard]] absl::Status WriteAll(int fd, const void* data, size_t size,
                                    const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("writing", path);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// A mapped file, unmapped when the last view of it goes.
struct Mapping {
  void* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data != nullptr) ::munmap(data, size);
  }
};

}  // namespace

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  if (hardware) return HardwareCrc32c(crc, data, n);
#endif
  // A byte at a time through a table of the reflected Castagnoli
  // polynomial: the same CRC, for CPUs without the instruction.
  static const auto* const table = [] {
    auto* t = new std::array<uint32_t, 256>();
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
      (*t)[i] = c;
    }
    return t;
  }();
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) {
    c = (*table)[(c ^ static_cast<unsigned char>(data[i])) & 0xff] ^ (c >> 8);
  }
  return ~c;
}

uint32_t ColumnImageChecksum(const KeyRun& keys) {
  Crc32c crc;
  auto update = [&crc](const auto& array) {
    crc.Update(array.data(), array.size() * sizeof(array[0]));
  };
  update(keys.ends);
  update(keys.txs);
  update(keys.entities);
  update(keys.keys);
  return crc.Finish();
}

bool ColumnImageIntact(const KeyRun& keys, uint32_t checksum) {
  if (keys.mapping != nullptr) {
    // The check reads the whole image in order, and readers may then
    // read any of it: read-ahead is welcome again (see MapColumnImage).
    const auto* m = static_cast<const Mapping*>(keys.mapping.get());
    ::madvise(m->data, m->size, MADV_NORMAL);
  }
  if (ColumnImageChecksum(keys) != checksum) return false;
  // Key bounds must hold before any key is read: ends in order, within the
  // keys, each key long enough for its attribute (and entity). Equal
  // checksums make this all but certain; a check this cheap beside the
  // CRC's pass over the same bytes makes it certain.
  const size_t min_key = keys.entities.empty() ? 8 : 16;
  uint64_t last = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint32_t end = keys.ends[i];
    if (end < last + min_key || end > keys.keys.size()) return false;
    last = end;
  }
  return last == keys.keys.size();
}

std::string ColumnImagePath(const std::string& store_path, IndexOrder order,
                            EntityId attribute) {
  return (std::filesystem::path(store_path) / kDir /
          StrCat(IndexOrderName(order), "-", attribute, ".col"))
      .string();
}

std::vector<std::string> ListColumnImages(const std::string& store_path) {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(store_path) / kDir;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".col") out.push_back(it->path().string());
  }
  return out;
}

absl::Status WriteColumnImage(const std::string& store_path, IndexOrder order,
                              EntityId attribute, EntityId as_of,
                              const KeyRun& keys) {
  const std::filesystem::path dir = std::filesystem::path(store_path) / kDir;
  std::error_code ec;
  // Never the store's own directory: a replica sets a diverged store aside
  // by renaming its directory while it is still open, and a column written
  // then must not make the old path again (the new copy could not be moved
  // into place there).
  std::filesystem::create_directory(dir, ec);
  if (ec) {
    return absl::UnavailableError(
        StrCat("creating ", dir.string(), ": ", ec.message()));
  }
  const std::string path = ColumnImagePath(store_path, order, attribute);
  const std::string tmp = path + ".tmp";
  const bool with_entities = !keys.entities.empty();
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.order = static_cast<uint32_t>(order);
  h.with_entities = with_entities ? 1 : 0;
  h.attribute = static_cast<uint64_t>(attribute);
  h.as_of = static_cast<uint64_t>(as_of);
  h.count = keys.size();
  h.key_bytes = keys.keys.size();
  h.header_crc = HeaderCrc(h);
  h.arrays_crc = ColumnImageChecksum(keys);
  const Layout l = LayoutOf(h.count, h.key_bytes, with_entities);
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("creating", tmp);
  static const char kZeros[8] = {};
  absl::Status s = WriteAll(fd, &h, sizeof h, tmp);
  if (s.ok()) s = WriteAll(fd, keys.ends.data(), h.count * 4, tmp);
  if (s.ok()) s = WriteAll(fd, kZeros, l.txs - l.ends - h.count * 4, tmp);
  if (s.ok()) s = WriteAll(fd, keys.txs.data(), h.count * 8, tmp);
  if (s.ok() && with_entities) {
    s = WriteAll(fd, keys.entities.data(), h.count * 8, tmp);
  }
  if (s.ok()) s = WriteAll(fd, keys.keys.data(), h.key_bytes, tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("syncing", tmp);
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = Errno("renaming", tmp);
  }
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

absl::Status AdvanceColumnImage(const std::string& store_path, IndexOrder order,
                                EntityId attribute, EntityId from,
                                EntityId to) {
  const std::string path = ColumnImagePath(store_path, order, attribute);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Errno("opening", path);
  Header h;
  absl::Status s;
  if (::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    s = absl::DataLossError(StrCat("column image ", path, ": too short"));
  } else if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 ||
             h.header_crc != HeaderCrc(h)) {
    s = absl::DataLossError(StrCat("column image ", path, ": bad header"));
  } else if (h.order != static_cast<uint32_t>(order) ||
             h.attribute != static_cast<uint64_t>(attribute) ||
             h.as_of != static_cast<uint64_t>(from)) {
    s = absl::FailedPreconditionError(
        StrCat("column image ", path, " is not as of ", from));
  } else {
    h.as_of = static_cast<uint64_t>(to);
    h.header_crc = HeaderCrc(h);
    if (::pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
      s = Errno("writing", path);
    } else if (::fsync(fd) != 0) {
      s = Errno("syncing", path);
    }
  }
  ::close(fd);
  return s;
}

absl::StatusOr<ColumnImage> MapColumnImage(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("opening", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status s = Errno("reading", path);
    ::close(fd);
    return s;
  }
  const auto size = static_cast<size_t>(st.st_size);
  auto malformed = [&](std::string_view why) {
    return absl::DataLossError(StrCat("column image ", path, ": ", why));
  };
  if (size < sizeof(Header)) {
    ::close(fd);
    return malformed("too short");
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping->data == MAP_FAILED) {
    mapping->data = nullptr;
    return Errno("mapping", path);
  }
  mapping->size = size;
  // Until its check (ColumnImageIntact), the open reads a few pages of
  // the image: each fault should read its page, not the read-around of a
  // sequential reader (read_ahead_kb, 8 MB per fault on our VMs, made
  // the three faults of each image cost 20-50 ms with the page cache
  // dropped).
  ::madvise(mapping->data, size, MADV_RANDOM);
  const char* base = static_cast<const char*>(mapping->data);
  Header h;
  std::memcpy(&h, base, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    return malformed("not a column image (or of an older format)");
  }
  if (h.header_crc != HeaderCrc(h)) return malformed("header checksum");
  const auto order = static_cast<IndexOrder>(h.order);
  if ((order != IndexOrder::kAevt && order != IndexOrder::kAvet) ||
      h.with_entities != (order == IndexOrder::kAevt ? 1u : 0u) ||
      h.count > UINT32_MAX || h.key_bytes > UINT32_MAX) {
    return malformed("bad header");
  }
  const Layout l = LayoutOf(h.count, h.key_bytes, h.with_entities != 0);
  if (l.size != size) return malformed("wrong size");
  auto keys = std::make_shared<KeyRun>();
  keys->ends.View(reinterpret_cast<const uint32_t*>(base + l.ends), h.count);
  keys->txs.View(reinterpret_cast<const EntityId*>(base + l.txs), h.count);
  if (h.with_entities != 0) {
    keys->entities.View(reinterpret_cast<const uint64_t*>(base + l.entities),
                        h.count);
  }
  keys->keys.View(base + l.keys, h.key_bytes);
  keys->mapping = mapping;
  // The first and last keys' bounds, so that they can be read below. The
  // others' are checked with the arrays' checksum (ColumnImageIntact),
  // before any reader is given the column: walking every offset here made
  // each opening read 4 bytes per key of every image (25 ms warm and 140
  // ms cold for the eight images of scale m).
  const size_t min_key = h.with_entities != 0 ? 16 : 8;
  if (h.count == 0) {
    if (h.key_bytes != 0) return malformed("bad key offsets");
  } else {
    const uint32_t first = keys->ends[0];
    const uint32_t last = keys->ends[h.count - 1];
    const uint64_t before_last = h.count > 1 ? keys->ends[h.count - 2] : 0;
    if (first < min_key || last != h.key_bytes ||
        before_last + min_key > last || (h.count > 1 && first > before_last)) {
      return malformed("bad key offsets");
    }
  }
  // Every key starts with the attribute (checked at both ends).
  if (h.count > 0) {
    char attribute[8];
    for (int i = 0; i < 8; ++i) {
      attribute[i] = static_cast<char>(h.attribute >> (56 - 8 * i));
    }
    const std::string_view want(attribute, 8);
    if (!keys->key(0).starts_with(want) ||
        !keys->key(h.count - 1).starts_with(want)) {
      return malformed("keys of another attribute");
    }
  }
  ColumnImage image;
  image.order = order;
  image.attribute = static_cast<EntityId>(h.attribute);
  image.as_of = static_cast<EntityId>(h.as_of);
  image.keys = std::move(keys);
  image.checksum = h.arrays_crc;
  return image;
}

}  // namespace mentat::storage::internal
