// HyperLogLog in Redis's representation: see hyperloglog.h for the layout. The sparse editing
// below follows Redis's algorithm step by step (split the opcode covering the register, then
// merge equal VAL neighbours within a short window) because the sparse encoding is not
// canonical: a different but equivalent edit would count the same yet leave other bytes, and
// GET/DUMP must give Redis's bytes.
#include "types/hyperloglog.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace keywarden::hll {
namespace {

constexpr int kQ = 64 - kPrecision;  // hash bits that feed the run length
constexpr uint8_t kXZeroBit = 0x40;
constexpr uint8_t kValBit = 0x80;
constexpr int kValMaxValue = 32;
constexpr int kValMaxLength = 4;
constexpr int kZeroMaxLength = 64;
constexpr uint32_t kXZeroMaxLength = 16384;
constexpr uint64_t kHashSeed = 0xadc83b19ULL;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

bool is_zero(uint8_t op) { return (op & 0xc0) == 0; }
bool is_xzero(uint8_t op) { return (op & 0xc0) == kXZeroBit; }
bool is_val(uint8_t op) { return (op & kValBit) != 0; }
uint32_t zero_length(uint8_t op) { return (op & 0x3fu) + 1; }
uint32_t xzero_length(uint8_t op, uint8_t next) { return (((op & 0x3fu) << 8) | next) + 1; }
int val_value(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
int val_length(uint8_t op) { return (op & 0x3) + 1; }
uint8_t val_op(int value, int length) {
  return static_cast<uint8_t>(((value - 1) << 2 | (length - 1)) | kValBit);
}
uint8_t zero_op(uint32_t length) { return static_cast<uint8_t>(length - 1); }
void xzero_ops(uint8_t* out, uint32_t length) {
  const uint32_t l = length - 1;
  out[0] = static_cast<uint8_t>((l >> 8) | kXZeroBit);
  out[1] = static_cast<uint8_t>(l & 0xff);
}

// Sparse bytes of a string, with Redis's NUL terminator: the byte at the end reads as 0.
struct SparseView {
  const uint8_t* data;
  size_t size;
  uint8_t at(size_t i) const { return i < size ? data[i] : 0; }
};

SparseView sparse_view(std::string_view hll) {
  return {reinterpret_cast<const uint8_t*>(hll.data()), hll.size()};
}

// Walks the sparse opcodes from the header on, calling on_run(value, length) per opcode (value
// 0 for ZERO/XZERO). Stops early when on_run returns false. Returns the registers covered.
template <typename OnRun>
int64_t walk_sparse(std::string_view hll, OnRun on_run) {
  const SparseView s = sparse_view(hll);
  size_t p = kHeaderSize;
  int64_t covered = 0;
  while (p < s.size) {
    const uint8_t op = s.data[p];
    uint32_t length;
    int value = 0;
    if (is_zero(op)) {
      length = zero_length(op);
      p += 1;
    } else if (is_xzero(op)) {
      length = xzero_length(op, s.at(p + 1));
      p += 2;
    } else {
      length = static_cast<uint32_t>(val_length(op));
      value = val_value(op);
      p += 1;
    }
    if (!on_run(value, length, covered)) return -1;
    covered += length;
  }
  return covered;
}

// Counts of registers per value (0..63).
using Histogram = int64_t[64];

void dense_histogram(const uint8_t* r, Histogram histogram) {
  // Four registers per three bytes: unpack a group at a time, with no bit arithmetic per index.
  for (uint32_t group = 0; group < kRegisters / 4; ++group, r += 3) {
    histogram[r[0] & 63]++;
    histogram[(r[0] >> 6 | r[1] << 2) & 63]++;
    histogram[(r[1] >> 4 | r[2] << 4) & 63]++;
    histogram[(r[2] >> 2) & 63]++;
  }
}

// Ertl's sigma and tau ("New cardinality estimation algorithms for HyperLogLog sketches",
// arXiv:1702.01284): the corrections for registers still at 0 and registers at the maximum,
// which replace the classic estimator's switch to linear counting. Evaluated in the same order
// as Redis's so that the doubles — and the rounded counts — come out identical.
double sigma(double x) {
  if (x == 1.) return INFINITY;
  double previous;
  double y = 1;
  double z = x;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double previous;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}

uint64_t estimate_from_histogram(const Histogram histogram) {
  const double m = kRegisters;
  double z = m * tau((m - static_cast<double>(histogram[kQ + 1])) / m);
  for (int j = kQ; j >= 1; --j) {
    z += static_cast<double>(histogram[j]);
    z *= 0.5;
  }
  z += m * sigma(static_cast<double>(histogram[0]) / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

}  // namespace

uint64_t murmur_hash64a(const void* key, size_t length, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  // Redis passes the length as an int; elements are far below 2 GiB (proto-max-bulk-len caps
  // them at 512 MB by default) but keep its arithmetic for any size.
  const int len = static_cast<int>(length);
  uint64_t h = (seed & 0xffffffffu) ^ (static_cast<uint64_t>(static_cast<int64_t>(len)) * m);
  const uint8_t* data = static_cast<const uint8_t*>(key);
  const uint8_t* end = data + (len - (len & 7));
  while (data != end) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | data[i];  // little-endian load, any host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
    data += 8;
  }
  switch (len & 7) {
    case 7: h ^= static_cast<uint64_t>(data[6]) << 48; [[fallthrough]];
    case 6: h ^= static_cast<uint64_t>(data[5]) << 40; [[fallthrough]];
    case 5: h ^= static_cast<uint64_t>(data[4]) << 32; [[fallthrough]];
    case 4: h ^= static_cast<uint64_t>(data[3]) << 24; [[fallthrough]];
    case 3: h ^= static_cast<uint64_t>(data[2]) << 16; [[fallthrough]];
    case 2: h ^= static_cast<uint64_t>(data[1]) << 8; [[fallthrough]];
    case 1:
      h ^= static_cast<uint64_t>(data[0]);
      h *= m;
      break;
    default: break;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint8_t pattern_length(std::string_view element, uint32_t* index) {
  uint64_t hash = murmur_hash64a(element.data(), element.size(), kHashSeed);
  *index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kPrecision;
  // A sentinel bit past the 50 used ones bounds the run at Q+1.
  hash |= uint64_t{1} << kQ;
  return static_cast<uint8_t>(__builtin_ctzll(hash) + 1);
}

bool is_hll(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) return false;
  if (bytes.substr(0, 4) != "HYLL") return false;
  const uint8_t enc = encoding(bytes);
  if (enc > kEncodingSparse) return false;
  return enc != kEncodingDense || bytes.size() == kDenseSize;
}

std::string make_empty() {
  std::string hll(kHeaderSize + 2, '\0');
  std::memcpy(hll.data(), "HYLL", 4);
  hll[4] = static_cast<char>(kEncodingSparse);
  xzero_ops(reinterpret_cast<uint8_t*>(hll.data()) + kHeaderSize, kRegisters);
  return hll;
}

uint8_t dense_get(const uint8_t* registers, uint32_t index) {
  const uint8_t* b = registers + (index / 4) * 3;
  switch (index & 3) {
    case 0: return b[0] & 63;
    case 1: return (b[0] >> 6 | b[1] << 2) & 63;
    case 2: return (b[1] >> 4 | b[2] << 4) & 63;
    default: return b[2] >> 2;
  }
}

void dense_set(uint8_t* registers, uint32_t index, uint8_t value) {
  uint8_t* b = registers + (index / 4) * 3;
  const unsigned v = value & 63u;
  switch (index & 3) {
    case 0: b[0] = static_cast<uint8_t>((b[0] & 0xc0) | v); break;
    case 1:
      b[0] = static_cast<uint8_t>((b[0] & 0x3f) | (v << 6));
      b[1] = static_cast<uint8_t>((b[1] & 0xf0) | (v >> 2));
      break;
    case 2:
      b[1] = static_cast<uint8_t>((b[1] & 0x0f) | (v << 4));
      b[2] = static_cast<uint8_t>((b[2] & 0xfc) | (v >> 4));
      break;
    default: b[2] = static_cast<uint8_t>((b[2] & 0x03) | (v << 2)); break;
  }
}

bool dense_raise(uint8_t* registers, uint32_t index, uint8_t count) {
  if (count <= dense_get(registers, index)) return false;
  dense_set(registers, index, count);
  return true;
}

bool sparse_to_dense(std::string& hll) {
  if (encoding(hll) == kEncodingDense) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), hll.data(), kHeaderSize);
  dense[4] = static_cast<char>(kEncodingDense);
  uint8_t* registers = reinterpret_cast<uint8_t*>(dense.data()) + kHeaderSize;
  const int64_t covered = walk_sparse(hll, [&](int value, uint32_t length, int64_t first) {
    if (first + length > kRegisters) return false;
    if (value != 0) {
      for (uint32_t i = 0; i < length; ++i) {
        dense_set(registers, static_cast<uint32_t>(first) + i, static_cast<uint8_t>(value));
      }
    }
    return true;
  });
  if (covered != kRegisters) return false;
  hll = std::move(dense);
  return true;
}

namespace {

Update promote_and_raise(EditBuffer& buffer, uint32_t index, uint8_t count) {
  if (!sparse_to_dense(buffer.bytes)) return Update::kCorrupt;
  buffer.past_end = 0;
  uint8_t* registers = reinterpret_cast<uint8_t*>(buffer.bytes.data()) + kHeaderSize;
  return dense_raise(registers, index, count) ? Update::kChanged : Update::kUnchanged;
}

// Redis's hllSparseSet on `hll` (sparse).
Update sparse_raise(EditBuffer& buffer, uint32_t index, uint8_t count,
                    int64_t sparse_max_bytes) {
  if (count > kValMaxValue) return promote_and_raise(buffer, index, count);
  std::string& hll = buffer.bytes;

  // Step 1: find the opcode covering `index`, the one before it, and where it starts.
  auto bytes = [&] { return reinterpret_cast<uint8_t*>(hll.data()); };
  auto at = [&](size_t i) -> uint8_t { return i < hll.size() ? bytes()[i] : buffer.past_end; };
  size_t end = hll.size();
  size_t p = kHeaderSize;
  int64_t first = 0;
  int64_t span = 0;
  bool has_prev = false;
  size_t prev = 0;
  while (p < end) {
    const uint8_t op = bytes()[p];
    size_t op_length = 1;
    if (is_zero(op)) {
      span = zero_length(op);
    } else if (is_val(op)) {
      span = val_length(op);
    } else {
      span = xzero_length(op, at(p + 1));
      op_length = 2;
    }
    if (index <= first + span - 1) break;
    has_prev = true;
    prev = p;
    p += op_length;
    first += span;
  }
  if (span == 0 || p >= end) return Update::kCorrupt;

  const uint8_t op = bytes()[p];
  const bool op_is_xzero = is_xzero(op);
  const bool op_is_zero = is_zero(op);
  const size_t next = p + (op_is_xzero ? 2 : 1);
  const bool has_next = next < end;
  int64_t run_length;
  if (op_is_zero) {
    run_length = zero_length(op);
  } else if (op_is_xzero) {
    run_length = xzero_length(op, at(p + 1));
  } else {
    run_length = val_length(op);
  }

  // Step 2: the trivial edits in place (a VAL already high enough; a run of one register),
  // else the covering opcode split into at most XZERO VAL XZERO.
  bool edited_in_place = false;
  if (!op_is_zero && !op_is_xzero) {
    if (val_value(op) >= count) return Update::kUnchanged;
    if (run_length == 1) {
      bytes()[p] = val_op(count, 1);
      edited_in_place = true;
    }
  }
  if (op_is_zero && run_length == 1) {
    bytes()[p] = val_op(count, 1);
    edited_in_place = true;
  }
  if (!edited_in_place) {
    uint8_t seq[5];
    size_t n = 0;
    const int64_t last = first + span - 1;
    auto put_zeros = [&](int64_t length) {
      if (length > kZeroMaxLength) {
        xzero_ops(seq + n, static_cast<uint32_t>(length));
        n += 2;
      } else {
        seq[n++] = zero_op(static_cast<uint32_t>(length));
      }
    };
    if (op_is_zero || op_is_xzero) {
      if (index != first) put_zeros(index - first);
      seq[n++] = val_op(count, 1);
      if (index != last) put_zeros(last - index);
    } else {
      const int current = val_value(op);
      if (index != first) seq[n++] = val_op(current, static_cast<int>(index - first));
      seq[n++] = val_op(count, 1);
      if (index != last) seq[n++] = val_op(current, static_cast<int>(last - index));
    }

    // Step 3: put the sequence in place of the opcode, or go dense when the string would
    // outgrow hll-sparse-max-bytes.
    const size_t old_length = op_is_xzero ? 2 : 1;
    const int64_t delta = static_cast<int64_t>(n) - static_cast<int64_t>(old_length);
    if (delta > 0 && static_cast<int64_t>(hll.size()) + delta > sparse_max_bytes) {
      return promote_and_raise(buffer, index, count);
    }
    buffer.past_end = 0;
    if (has_next) {
      hll.replace(p, old_length, reinterpret_cast<const char*>(seq), n);
    } else {
      // The opcode ends the string. A truncated XZERO (its second byte missing) leaves the
      // sequence's last byte past the new end, where Redis's copy puts it.
      const size_t new_size = static_cast<size_t>(static_cast<int64_t>(hll.size()) + delta);
      hll.resize(p);
      const size_t kept = std::min(n, new_size - p);
      hll.append(reinterpret_cast<const char*>(seq), kept);
      if (kept < n) buffer.past_end = seq[kept];
    }
    end = hll.size();
  }

  // Step 4: merge equal adjacent VAL opcodes, scanning up to five opcodes from the previous.
  p = has_prev ? prev : kHeaderSize;
  int scan = 5;
  while (p < end && scan--) {
    const uint8_t current = bytes()[p];
    if (is_xzero(current)) {
      p += 2;
      continue;
    }
    if (is_zero(current)) {
      p += 1;
      continue;
    }
    if (p + 1 < end && is_val(bytes()[p + 1])) {
      const int v1 = val_value(current);
      const int v2 = val_value(bytes()[p + 1]);
      if (v1 == v2) {
        const int length = val_length(current) + val_length(bytes()[p + 1]);
        if (length <= kValMaxLength) {
          bytes()[p + 1] = val_op(v1, length);
          hll.erase(p, 1);
          buffer.past_end = 0;
          end = hll.size();
          continue;
        }
      }
    }
    p += 1;
  }
  invalidate_cache(hll.data());
  return Update::kChanged;
}

}  // namespace

Update raise_register(EditBuffer& hll, uint32_t index, uint8_t count, int64_t sparse_max_bytes) {
  if (encoding(hll.bytes) == kEncodingDense) {
    uint8_t* registers = reinterpret_cast<uint8_t*>(hll.bytes.data()) + kHeaderSize;
    return dense_raise(registers, index, count) ? Update::kChanged : Update::kUnchanged;
  }
  return sparse_raise(hll, index, count, sparse_max_bytes);
}

Update add(EditBuffer& hll, std::string_view element, int64_t sparse_max_bytes) {
  uint32_t index;
  const uint8_t count = pattern_length(element, &index);
  return raise_register(hll, index, count, sparse_max_bytes);
}

bool merge_into(std::string_view hll, uint8_t* max) {
  if (encoding(hll) == kEncodingDense) {
    const uint8_t* r = reinterpret_cast<const uint8_t*>(hll.data()) + kHeaderSize;
    // Four registers per three bytes, unpacked a group at a time (PFCOUNT of several keys and
    // PFMERGE spend their time here).
    for (uint32_t i = 0; i < kRegisters; i += 4, r += 3) {
      const uint8_t values[4] = {static_cast<uint8_t>(r[0] & 63),
                                 static_cast<uint8_t>((r[0] >> 6 | r[1] << 2) & 63),
                                 static_cast<uint8_t>((r[1] >> 4 | r[2] << 4) & 63),
                                 static_cast<uint8_t>(r[2] >> 2)};
      for (int j = 0; j < 4; ++j) max[i + j] = std::max(max[i + j], values[j]);
    }
    return true;
  }
  const int64_t covered = walk_sparse(hll, [&](int value, uint32_t length, int64_t first) {
    if (first + length > kRegisters) return false;
    if (value != 0) {
      for (uint32_t i = 0; i < length; ++i) {
        uint8_t& slot = max[first + i];
        if (value > slot) slot = static_cast<uint8_t>(value);
      }
    }
    return true;
  });
  return covered == kRegisters;
}

void store_dense_registers(uint8_t* registers, const uint8_t* values) {
  for (uint32_t i = 0; i < kRegisters; i += 4, registers += 3) {
    const unsigned a = values[i] & 63u, b = values[i + 1] & 63u, c = values[i + 2] & 63u,
                   d = values[i + 3] & 63u;
    registers[0] = static_cast<uint8_t>(a | b << 6);
    registers[1] = static_cast<uint8_t>(b >> 2 | c << 4);
    registers[2] = static_cast<uint8_t>(c >> 4 | d << 2);
  }
}

bool cached_cardinality(std::string_view hll, uint64_t* cardinality) {
  const auto* card = reinterpret_cast<const uint8_t*>(hll.data()) + 8;
  if (card[7] & 0x80) return false;
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | card[i];
  *cardinality = value;
  return true;
}

void store_cardinality(char* header, uint64_t cardinality) {
  for (int i = 0; i < 8; ++i) header[8 + i] = static_cast<char>((cardinality >> (8 * i)) & 0xff);
}

bool estimate(std::string_view hll, uint64_t* cardinality) {
  Histogram histogram = {};
  if (encoding(hll) == kEncodingDense) {
    dense_histogram(reinterpret_cast<const uint8_t*>(hll.data()) + kHeaderSize, histogram);
  } else {
    const int64_t covered = walk_sparse(hll, [&](int value, uint32_t length, int64_t) {
      histogram[value] += length;
      return true;
    });
    if (covered != kRegisters) return false;
  }
  *cardinality = estimate_from_histogram(histogram);
  return true;
}

uint64_t estimate_registers(const uint8_t* registers) {
  Histogram histogram = {};
  for (uint32_t i = 0; i < kRegisters; i += 8) {
    uint64_t word;
    std::memcpy(&word, registers + i, sizeof(word));
    if (word == 0) {
      histogram[0] += 8;
      continue;
    }
    // A register holds at most 51, but guard the index all the same.
    for (uint32_t j = 0; j < 8; ++j) histogram[registers[i + j] & 63]++;
  }
  return estimate_from_histogram(histogram);
}

std::string decode_sparse(std::string_view hll) {
  std::string text;
  const SparseView s = sparse_view(hll);
  size_t p = kHeaderSize;
  while (p < s.size) {
    const uint8_t op = s.data[p];
    if (is_zero(op)) {
      text += "z:" + std::to_string(zero_length(op)) + " ";
      p += 1;
    } else if (is_xzero(op)) {
      text += "Z:" + std::to_string(xzero_length(op, s.at(p + 1))) + " ";
      p += 2;
    } else {
      text += "v:" + std::to_string(val_value(op)) + "," + std::to_string(val_length(op)) + " ";
      p += 1;
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string self_test(int64_t sparse_max_bytes) {
  std::random_device device;
  std::mt19937_64 random(device());
  // Test 1: every register keeps its value and leaves its neighbours alone.
  std::string dense(kDenseSize, '\0');
  uint8_t* registers = reinterpret_cast<uint8_t*>(dense.data()) + kHeaderSize;
  uint8_t expected[kRegisters];
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (uint32_t i = 0; i < kRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(random() & 63);
      dense_set(registers, i, expected[i]);
    }
    for (uint32_t i = 0; i < kRegisters; ++i) {
      const uint8_t value = dense_get(registers, i);
      if (value != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(value);
      }
    }
  }
  // Test 2: the estimate stays within a few standard errors, and sparse and dense agree.
  std::memset(registers, 0, kDenseRegisterBytes);
  std::memcpy(dense.data(), "HYLL", 4);
  EditBuffer sparse{make_empty()};
  const double relative_error = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  int64_t checkpoint = 1;
  const uint64_t seed = random();
  for (uint64_t j = 1; j <= 10000000; ++j) {
    const uint64_t element = j ^ seed;
    const std::string_view bytes(reinterpret_cast<const char*>(&element), sizeof(element));
    uint32_t index;
    const uint8_t count = pattern_length(bytes, &index);
    dense_raise(registers, index, count);
    raise_register(sparse, index, count, sparse_max_bytes);
    if (static_cast<int64_t>(j) != checkpoint) continue;
    if (static_cast<int64_t>(j) < sparse_max_bytes / 2 &&
        encoding(sparse.bytes) != kEncodingSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    uint64_t dense_count = 0, sparse_count = 0;
    estimate(dense, &dense_count);
    estimate(sparse.bytes, &sparse_count);
    if (dense_count != sparse_count) return "TESTFAILED dense/sparse disagree";
    int64_t error = checkpoint - static_cast<int64_t>(dense_count);
    if (error < 0) error = -error;
    uint64_t max_error = static_cast<uint64_t>(std::ceil(relative_error * 6 * checkpoint));
    // At 10 a collision is likely enough to give a larger error now and then.
    if (j == 10) max_error = 1;
    if (error > static_cast<int64_t>(max_error)) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
             " abserr:" + std::to_string(error);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace keywarden::hll
