// Serialization of single values in the RDB format, shared by RDB files and DUMP/RESTORE.
//
// RdbWriter appends the primitives of the format (length prefixes, strings with their integer
// and LZF encodings, doubles, little-endian integers) to a buffer; a file writer drains that
// buffer to disk as it grows, and the writer keeps the CRC64 of everything drained so far.
// RdbReader walks a complete image in memory and checks every length against what remains,
// so a truncated or lying input is refused with a message, never read past its end.
//
// Values are written in encodings a stock Redis 7.0 loads: strings as strings, lists as
// quicklist-2 nodes of listpacks, small hashes and sorted sets as listpacks, integer sets as
// intsets, everything else in the plain per-element types. Reading accepts every encoding
// Redis 7.0 writes or reads, plus 7.2's listpack sets; modules and streams are refused.
//
// Every input is hostile. Whatever the validation depth, a reader never reads past its input,
// never reserves memory for a length or count before the bytes behind it are there, does a
// bounded amount of work per input byte, and builds values through the types' own insertion
// calls, so what it returns is internally consistent. A value whose elements repeat (set
// members, hash fields, sorted set members), or whose score is NaN, is always refused.
// Validation depth is Redis's sanitize-dump-payload: shallow checks what decoding needs
// (headers, bounds, encodings, terminators); deep also checks what only a reader that trusts
// the blob would need: listpack back-lengths and element counts, intset order. Ziplists and
// zipmaps are always checked deep, as Redis 7.0 converts them on load.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "commands/server_state.h"
#include "types/stream_value.h"
#include "types/value.h"

namespace keywarden {

class RdbWriter {
 public:
  // `drain`, when given, receives the buffer each time it passes kDrainThreshold bytes (and at
  // flush()); returning false marks the writer failed, and later writes are dropped.
  explicit RdbWriter(bool compression, std::function<bool(std::string_view)> drain = {})
      : compression_(compression), drain_(std::move(drain)) {}

  static constexpr size_t kDrainThreshold = 64 * 1024;

  void byte(uint8_t value) {
    buffer_.push_back(static_cast<char>(value));
    maybe_drain();
  }
  void raw(std::string_view bytes) {
    buffer_.append(bytes);
    maybe_drain();
  }
  void length(uint64_t value);
  // A string with the smallest encoding Redis would pick: an int8/16/32 when the text is a
  // canonical integer of at most 11 characters, LZF when compression is on, the string is
  // longer than 20 bytes and shrinks by more than 4, else length and bytes.
  void string(std::string_view bytes);
  // An integer as a string object (int8/16/32 encoding, or its decimal text).
  void integer_string(int64_t value);
  void binary_double(double value);
  void int64_le(int64_t value);
  void uint32_le(uint32_t value);

  // Writes `value` as its object type byte plus body.
  void object(const Value& value);
  // The type byte object() writes for `value`.
  static uint8_t object_type(const Value& value);
  void object_body(const Value& value);
  void stream_body(const StreamValue& stream);

  // Hands what is buffered to the drain (a no-op without one). False once failed.
  bool flush();
  bool failed() const { return failed_; }
  // The CRC64 of everything written so far (drained and buffered).
  uint64_t checksum() const;
  // The bytes not drained yet (all of them for a writer without a drain).
  std::string& buffer() { return buffer_; }

 private:
  void maybe_drain() {
    if (drain_ && buffer_.size() >= kDrainThreshold) flush();
  }

  bool compression_;
  std::function<bool(std::string_view)> drain_;
  std::string buffer_;
  uint64_t drained_crc_ = 0;
  bool failed_ = false;
};

class RdbReader {
 public:
  // `deep`: validate packed blobs in depth (sanitize-dump-payload yes), see above.
  explicit RdbReader(std::string_view data, bool deep = true) : data_(data), deep_(deep) {}

  bool byte(uint8_t* out);
  bool take(size_t count, std::string_view* out);
  // A length prefix. With `encoded`, a special string encoding is reported through it (and
  // the encoding number returned in *out) instead of failing.
  bool length(uint64_t* out, bool* encoded = nullptr);
  // A string object in any of its encodings.
  bool string(std::string* out);
  // The text double of the old zset type (length byte, 253 NaN, 254 +inf, 255 -inf).
  bool text_double(double* out);
  bool binary_double(double* out);
  bool int64_le(int64_t* out);
  bool int32_le(int32_t* out);

  // Reads the body of an object of `type` into *out. kEmpty: the value had no elements (Redis
  // refuses such keys in RESTORE and skips them when loading a file).
  enum class Status { kOk, kEmpty, kError };
  Status object(uint8_t type, const CommandSettings& settings, Value* out);
  static bool is_object_type(uint8_t type);

  size_t position() const { return position_; }
  size_t remaining() const { return data_.size() - position_; }
  std::string_view data() const { return data_; }
  // Records the first error (later ones are ignored) and returns false.
  bool fail(std::string message);
  const std::string& error() const { return error_; }
  // Packed blobs (listpacks, intsets) validated in depth so far: INFO's
  // dump_payload_sanitizations counts them as Redis does.
  uint64_t deep_validations() const { return deep_validations_; }

 private:
  Status read_list(uint8_t type, const CommandSettings& settings, Value* out);
  Status read_set(uint8_t type, const CommandSettings& settings, Value* out);
  Status read_zset(uint8_t type, const CommandSettings& settings, Value* out);
  Status read_hash(uint8_t type, const CommandSettings& settings, Value* out);
  Status read_stream(uint8_t type, const CommandSettings& settings, Value* out);

  std::string_view data_;
  size_t position_ = 0;
  bool deep_;
  uint64_t deep_validations_ = 0;
  std::string error_;
};

// A DUMP payload: the object (type byte and body), the RDB version (2 bytes LE), the CRC64 of
// everything before it (8 bytes LE), as Redis 7.0 writes it.
std::string encode_dump_payload(const Value& value);

// What RESTORE makes of a payload: kBadFooter when the version is newer than ours or the
// checksum does not match (Redis's verifyDumpPayload), kBadData when the object cannot be
// loaded: malformed, empty, of a type Redis 7.0 does not know, or refused (module, stream).
// `deep` as RdbReader's; *deep_validations counts the blobs validated in depth.
enum class DumpPayloadStatus { kOk, kBadFooter, kBadData };
DumpPayloadStatus decode_dump_payload(std::string_view payload, const CommandSettings& settings,
                                      bool deep, Value* out, uint64_t* deep_validations = nullptr);

// The packed blobs found inside RDB strings. Each parser walks the whole blob, checking the
// header, every entry's encoding and bounds and the terminator, and calls
// visit(std::string_view element) for each element in order; false when the blob is malformed
// (visit may have been called for the elements before the fault). With `deep` it also checks
// what Redis's deep sanitization checks: a listpack's back-lengths and header count, an
// intset's strictly increasing order. Ziplists and zipmaps are always checked in depth
// (prev-lengths, tail offset, counts), as Redis 7.0 always does. An intset or zipmap without
// elements is malformed; an empty listpack or ziplist is not.
bool rdb_parse_listpack(std::string_view blob, const std::function<void(std::string_view)>& visit,
                        bool deep = true);
bool rdb_parse_ziplist(std::string_view blob, const std::function<void(std::string_view)>& visit);
bool rdb_parse_intset(std::string_view blob, const std::function<void(std::string_view)>& visit,
                      bool deep = true);
// Zipmaps hold pairs: visit is called with field, value, field, value…
bool rdb_parse_zipmap(std::string_view blob, const std::function<void(std::string_view)>& visit);

// Builds a listpack of `elements` (integers in their integer encodings, as Redis's lpAppend).
class ListpackBuilder {
 public:
  ListpackBuilder() { buffer_.assign(6, '\0'); }
  void append(std::string_view element);
  size_t count() const { return count_; }
  size_t bytes() const { return buffer_.size() + 1; }
  // The finished blob; the builder is empty again afterwards.
  std::string finish();

 private:
  std::string buffer_;
  size_t count_ = 0;
};

}  // namespace keywarden
