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
//
// A connection's writer can be watched for client-output-buffer-limit: once the buffer reaches
// the size given to watch_size(), the writer asks its ReplyOverflowHandler, and when that says
// the client is over its limit the writer drops everything written from then on
// (discarding()), so that a huge reply stops costing memory the moment it is doomed, and loops
// that could produce without end check discarding() to stop early (Redis's CLIENT_CLOSE_ASAP).
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

class ReplyWriter;

// Told when a watched writer's buffer reached the size it was asked to watch for.
class ReplyOverflowHandler {
 public:
  virtual ~ReplyOverflowHandler() = default;
  // True: the client is past its output limit and everything written from now on is dropped.
  // False: the handler may set a new size to watch for with ReplyWriter::watch_size().
  virtual bool reply_buffer_reached(ReplyWriter& writer) = 0;
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

  // Asks `handler` once the buffer holds `size` bytes or more (SIZE_MAX: never).
  void watch_size(size_t size, ReplyOverflowHandler* handler) {
    watch_at_ = size;
    overflow_handler_ = handler;
  }
  // The handler said the client is over its limit: nothing more is written, and whoever can
  // produce a large reply stops.
  bool discarding() const { return discarding_; }

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
  // Appends an aggregate or bulk header; checked_header() is the one a caller's element gets.
  void header(char type, uint64_t n);
  void checked_header(char type, uint64_t n);
  void bulk_header(size_t length);
  void end_deferred_header(DeferredLength placeholder, char type, uint64_t n);
  // After every append: one comparison, and the handler only when the watched size is reached.
  void check_size() {
    if (out_->size() >= watch_at_) [[unlikely]] size_reached();
  }
  void size_reached();

  std::string* out_;
  int resp_;
  size_t watch_at_ = SIZE_MAX;
  ReplyOverflowHandler* overflow_handler_ = nullptr;
  bool discarding_ = false;
};

}  // namespace keywarden
