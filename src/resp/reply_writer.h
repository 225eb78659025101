// Encodes replies in RESP2 or RESP3 onto the end of an output buffer the caller owns (a
// connection's reply buffer, a MULTI transaction's, a script's). Every method appends one
// complete protocol element, exactly as Redis 7.0 encodes it for the connection's protocol
// version: RESP3-only types degrade the way Redis degrades them for RESP2 clients (maps
// become flat arrays, doubles and big numbers bulk strings, booleans integers, nulls `$-1` or
// `*-1`).
//
// The writer holds no bytes itself and allocates nothing: appending costs a few bytes of
// formatting on the stack and one std::string append, which does not allocate once the buffer
// has grown to its working size. Aggregate headers are written before their elements, which the
// caller then writes; when the element count is only known at the end (SCAN, KEYS), use
// begin_deferred() / end_deferred_*().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

// A placeholder for an aggregate header whose length is not known yet, returned by
// begin_deferred() and redeemed exactly once by an end_deferred_*() call.
struct DeferredLength {
  size_t offset = 0;
};

class ReplyWriter {
 public:
  // `out` must outlive the writer (or be swapped with set_output()); resp is 2 or 3.
  explicit ReplyWriter(std::string* out, int resp = 2) : out_(out), resp_(resp) {}

  std::string* output() const { return out_; }
  void set_output(std::string* out) { out_ = out; }
  int resp() const { return resp_; }
  // HELLO switches a connection's protocol between replies; any other value is treated as 2.
  void set_resp(int version) { resp_ = version == 3 ? 3 : 2; }

  // `+<text>`. CR and LF in text become spaces: a status line cannot contain them.
  void simple_string(std::string_view text);
  // `-<text>`, text being the whole message with its code, e.g. "ERR unknown command ...".
  // CR and LF become spaces, as Redis does for every formatted error.
  void error(std::string_view text);
  // `:<value>`
  void integer(int64_t value);
  // `$<len>\r\n<bytes>\r\n`
  void bulk(std::string_view bytes);
  // A number sent as a bulk string (GET of an integer-encoded string, INCRBYFLOAT results...).
  void bulk_integer(int64_t value);
  // The null bulk: RESP2 `$-1`, RESP3 `_`.
  void null();
  // The null array (EXEC aborted by WATCH, BLPOP timeout): RESP2 `*-1`, RESP3 `_`.
  void null_array();
  // `*<n>`, followed by n elements.
  void array_header(size_t n);
  // RESP3 `%<pairs>`, followed by 2*pairs elements (key, value, ...); RESP2 `*<2*pairs>`.
  void map_header(size_t pairs);
  // RESP3 `~<n>`; RESP2 `*<n>`.
  void set_header(size_t n);
  // RESP3 `><n>` (pub/sub messages, invalidations); RESP2 `*<n>`.
  void push_header(size_t n);
  // RESP3 `,<text>`; RESP2 a bulk string of the same text. The text is printf's "%.17g" (as
  // Redis 7.0 sends scores, so 1.1 reads "1.1000000000000001"), "inf"/"-inf" for infinities
  // and "nan" for NaN.
  void double_value(double value);
  // RESP3 `#t`/`#f`; RESP2 `:1`/`:0`.
  void boolean(bool value);
  // RESP3 `=<len>\r\n<fmt>:<text>\r\n` with a three-letter format ("txt", "mkd"); RESP2 a bulk
  // string of the text alone.
  void verbatim(std::string_view text, std::string_view format = "txt");
  // RESP3 `(<digits>`; RESP2 a bulk string of the digits.
  void big_number(std::string_view digits);
  // Bytes already encoded in RESP (shared replies, a replayed script reply).
  void raw(std::string_view bytes);

  // Reserves room for an aggregate header. The elements are then written normally, and one
  // end_deferred_*() writes the header in front of them. Deferred headers nest and must be
  // ended in reverse order of opening; the bytes from the placeholder on must stay in the
  // buffer (not flushed) until then. Ending costs one memmove of the elements written since
  // begin_deferred(), because the placeholder is sized for the largest count and RESP allows
  // no padding.
  DeferredLength begin_deferred();
  void end_deferred_array(DeferredLength placeholder, size_t n);
  void end_deferred_map(DeferredLength placeholder, size_t pairs);
  void end_deferred_set(DeferredLength placeholder, size_t n);

 private:
  void header(char type, uint64_t n);
  void bulk_header(size_t length);
  void end_deferred_header(DeferredLength placeholder, char type, uint64_t n);

  std::string* out_;
  int resp_;
};

}  // namespace keywarden
