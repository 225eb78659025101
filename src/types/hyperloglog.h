// HyperLogLog sketches in Redis's exact byte representation, as plain functions over the bytes
// of a string value (no keyspace, no replies). A Redis HLL is an ordinary string, so what PFADD
// leaves behind must be the very bytes Redis would leave: GET, DUMP/RESTORE, RDB and AOF carry
// it between the two servers unchanged, and each must count what the other wrote.
//
// Layout: a 16-byte header — "HYLL", an encoding byte (0 dense, 1 sparse), three unused bytes,
// and the cached cardinality as a little-endian uint64 whose top bit set means "stale" — then
// the registers. 16384 registers (the low 14 bits of a 64-bit MurmurHash64A select one) hold
// the longest run of zero bits + 1 seen in the other 50 bits (1..51).
//   - Dense: 12288 bytes, 6 bits per register packed from the least significant bit up, so
//     every 3 bytes hold 4 registers. The string is exactly kDenseSize bytes.
//   - Sparse: run-length opcodes. ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx yyyyyyyy
//     (1..16384 zero registers), VAL 1vvvvvxx (1..4 registers of value 1..32). A new HLL is
//     sparse; it becomes dense when a register needs a value above 32 or the string would
//     grow past hll-sparse-max-bytes.
//
// Sparse bytes come from the network (RESTORE, SET, a primary), so every decoder here checks
// bounds: the opcodes must cover exactly 16384 registers or the value is corrupt. A read one
// byte past the end (the second byte of a truncated XZERO) sees 0, as Redis's reads of the
// string's NUL terminator do, so that the two agree even on corrupt input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden::hll {

inline constexpr size_t kHeaderSize = 16;
inline constexpr int kPrecision = 14;
inline constexpr uint32_t kRegisters = 1u << kPrecision;
inline constexpr size_t kDenseRegisterBytes = kRegisters * 6 / 8;
inline constexpr size_t kDenseSize = kHeaderSize + kDenseRegisterBytes;
inline constexpr uint8_t kEncodingDense = 0;
inline constexpr uint8_t kEncodingSparse = 1;
// hll-sparse-max-bytes's default.
inline constexpr int64_t kDefaultSparseMaxBytes = 3000;

// Redis's MurmurHash64A (endian neutral) with the seed its HLL uses.
uint64_t murmur_hash64a(const void* key, size_t length, uint64_t seed);
// The register an element selects and the run length it offers that register.
uint8_t pattern_length(std::string_view element, uint32_t* index);

// The checks Redis makes before treating a string as an HLL: long enough for the header,
// "HYLL", a known encoding, and the exact size when dense. The sparse opcodes are checked only
// when used (and corrupt ones then give -INVALIDOBJ).
bool is_hll(std::string_view bytes);
inline uint8_t encoding(std::string_view bytes) { return static_cast<uint8_t>(bytes[4]); }

// An empty HLL as PFADD creates it: sparse, one XZERO of 16384 registers, cache 0 (valid).
std::string make_empty();

// Dense register access; `registers` points just past the header (kDenseRegisterBytes bytes).
uint8_t dense_get(const uint8_t* registers, uint32_t index);
void dense_set(uint8_t* registers, uint32_t index, uint8_t value);
// Raises a dense register to `count` if it is lower; true when it changed.
bool dense_raise(uint8_t* registers, uint32_t index, uint8_t count);

// What a change to an HLL string did.
enum class Update : int8_t { kCorrupt = -1, kUnchanged = 0, kChanged = 1 };

// An HLL string being edited by one command, with the byte after its end. Redis's strings
// carry a NUL there, which a truncated XZERO at the end reads as its second byte, and which
// one edit of such an opcode overwrites with the last byte of its replacement (Redis sets the
// new length, then copies the bytes). Later edits by the same command read that byte, so it is
// kept here for the command's duration; between commands it is 0 again (a difference from
// Redis only for values corrupt in exactly this way).
struct EditBuffer {
  std::string bytes;
  uint8_t past_end = 0;
};

// Raises register `index` to `count` in `hll` (either encoding), promoting a sparse HLL to
// dense when needed, exactly as Redis's hllSparseSet/hllDenseSet. On kCorrupt the sparse
// bytes may already have been edited in part, as Redis's are.
Update raise_register(EditBuffer& hll, uint32_t index, uint8_t count, int64_t sparse_max_bytes);
// PFADD of one element.
Update add(EditBuffer& hll, std::string_view element, int64_t sparse_max_bytes);
// Converts a sparse HLL to dense (the header, cache included, is kept). False, with `hll`
// untouched, when the sparse opcodes are corrupt. A dense HLL is left as it is.
bool sparse_to_dense(std::string& hll);

// Folds `hll`'s registers into max[kRegisters] (max[i] = MAX(max[i], register i)). False when
// its sparse opcodes are corrupt (max may then hold part of it).
bool merge_into(std::string_view hll, uint8_t* max);

// Writes one register per byte, values[kRegisters], as dense registers.
void store_dense_registers(uint8_t* registers, const uint8_t* values);

// The cached cardinality when it is valid.
bool cached_cardinality(std::string_view hll, uint64_t* cardinality);
void store_cardinality(char* header, uint64_t cardinality);
inline void invalidate_cache(char* header) { header[15] = static_cast<char>(header[15] | 0x80); }
// Estimates the cardinality of `hll` (Ertl's improved estimator, as Redis 7.0). False when its
// sparse opcodes are corrupt.
bool estimate(std::string_view hll, uint64_t* cardinality);
// The same for one register per byte (the union PFCOUNT builds over several keys).
uint64_t estimate_registers(const uint8_t* registers);

// PFDEBUG DECODE's text of the sparse opcodes ("Z:16384", "z:3 v:2,1"…).
std::string decode_sparse(std::string_view hll);
// PFSELFTEST: register access, then the estimator's error and sparse/dense agreement over 10
// million elements. An empty string on success, else the error text ("TESTFAILED …").
std::string self_test(int64_t sparse_max_bytes);

}  // namespace keywarden::hll
