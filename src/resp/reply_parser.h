// The client-side reply parser: reads RESP2 and RESP3 replies incrementally into a small tree
// of RespValue, for the client library, tests and benchmarks. Every reply type is understood;
// attributes (`|`) are read and dropped, so the value they annotate is returned alone; RESP3
// streamed strings and aggregates (`$?`, `*?`) are not supported and rejected.
//
// Buffer contract, as for the request parser: each call passes the bytes not yet consumed plus
// whatever arrived since, and the caller then drops consumed() bytes, whatever the call
// returned. The parser copies what it consumes into the value it builds, so progress through a
// large reply is kept across calls: a big bulk string is copied piece by piece as it arrives
// and never rescanned, and a header line that is cut short is resumed where the search for its
// end stopped.
//
// Nesting is bounded (kMaxDepth) because values are destroyed and compared recursively; no
// server reply comes near the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

enum class RespType : uint8_t {
  kSimpleString,  // +
  kError,         // -
  kInteger,       // :
  kBulkString,    // $
  kNull,          // _ (RESP3), $-1 and *-1 (RESP2)
  kArray,         // *
  kMap,           // %
  kSet,           // ~
  kPush,          // >
  kDouble,        // ,
  kBoolean,       // #
  kVerbatim,      // =
  kBigNumber,     // (
  kBlobError,     // !
};

struct RespValue {
  RespType type = RespType::kNull;
  // The text of a simple string, error, bulk string, blob error or big number, and the body
  // of a verbatim string (without its format prefix).
  std::string str;
  std::string format;   // a verbatim string's format, e.g. "txt"
  int64_t integer = 0;  // an integer; a boolean as 1 or 0
  double dbl = 0;
  // Elements of an array, set or push; a map's keys and values alternate: k1, v1, k2, v2...
  std::vector<RespValue> elements;

  bool is_null() const { return type == RespType::kNull; }
  bool is_error() const { return type == RespType::kError || type == RespType::kBlobError; }
  bool is_aggregate() const {
    return type == RespType::kArray || type == RespType::kMap || type == RespType::kSet ||
           type == RespType::kPush;
  }

  bool operator==(const RespValue&) const = default;
};

// A one-line rendering for test failures and logs: +OK, -ERR x, :5, "bulk" (C-escaped), (nil),
// [a, b], {k: v}, ~{a, b}, >[a, b], ,1.5, #t, =txt:"text", (123, !"blob error".
std::string to_debug_string(const RespValue& value);

enum class ReplyParseStatus {
  kNeedMore,  // no complete reply yet; drop consumed() bytes and call again with more
  kValue,     // value() holds one complete reply
  kError,     // the stream is not valid RESP; error() says why; the connection is unusable
};

class ReplyParser {
 public:
  static constexpr size_t kMaxDepth = 128;

  // Parses at most one reply from buf[0, len). Once kError has been returned, every further
  // call returns it again until reset().
  ReplyParseStatus parse(const char* buf, size_t len);
  ReplyParseStatus parse(std::string_view buf) { return parse(buf.data(), buf.size()); }

  // Bytes of the buffer passed to the last parse() that the caller must now drop.
  size_t consumed() const { return consumed_; }
  // After kValue, the reply; valid until the next parse() or take_value().
  const RespValue& value() const { return value_; }
  RespValue take_value() { return std::move(value_); }
  std::string_view error() const { return error_; }

  // Forgets any partial reply and any error.
  void reset();

 private:
  struct Frame {
    RespValue value;
    int64_t remaining;  // elements still to come
    bool attribute;     // an attribute map, dropped once complete
  };

  ReplyParseStatus fail(std::string_view message);
  // Hands a finished value to the aggregate being built, closing every aggregate it completes.
  // Returns true when that completes the top-level reply (now in value_).
  bool deliver(RespValue&& value);
  // Starts an aggregate of `count` elements; returns false (after fail()) if too deep.
  bool open_aggregate(RespType type, int64_t count, bool attribute, bool* complete);
  // Completes the blob (bulk, verbatim, blob error) whose body has been copied.
  bool finish_blob();

  std::vector<Frame> stack_;
  bool in_blob_ = false;
  RespValue blob_;
  size_t blob_left_ = 0;  // body bytes still to copy; then the CRLF trailer

  size_t scanned_ = 0;  // bytes of a cut-short header line already searched for its CR
  size_t consumed_ = 0;
  RespValue value_;
  bool failed_ = false;
  std::string error_;
};

}  // namespace keywarden
