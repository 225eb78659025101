#include "resp/reply_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/number.h"

namespace keywarden {
namespace {

// A type byte, up to 20 digits (a uint64_t) and CRLF: the longest header we ever write, and so
// the size of a deferred placeholder.
constexpr size_t kMaxHeader = 1 + 20 + 2;
// A bulk at least this long reserves its whole element before it is appended (bulk()).
constexpr size_t kReserveBulk = 16 * 1024;

// Appends text with CR and LF turned into spaces, the one-line form status and error replies
// need. The common case (nothing to replace) is a single append.
void append_single_line(std::string& out, std::string_view text) {
  const size_t start = out.size();
  out.append(text);
  if (text.find_first_of("\r\n") == std::string_view::npos) return;
  for (size_t i = start; i < out.size(); ++i) {
    if (out[i] == '\r' || out[i] == '\n') out[i] = ' ';
  }
}

// Formats `type` + n + CRLF into buf and returns the length.
size_t format_header(char* buf, char type, uint64_t n) {
  buf[0] = type;
  char* end = std::to_chars(buf + 1, buf + kMaxHeader, n).ptr;
  end[0] = '\r';
  end[1] = '\n';
  return static_cast<size_t>(end + 2 - buf);
}

}  // namespace

void ReplyWriter::header(char type, uint64_t n) {
  char buf[kMaxHeader];
  out_->append(buf, format_header(buf, type, n));
}

void ReplyWriter::checked_header(char type, uint64_t n) {
  if (discarding_) return;
  header(type, n);
  check_size();
}

void ReplyWriter::size_reached() {
  if (overflow_handler_ == nullptr) return;
  // The handler moves the mark (or not: then it is asked again at the next append).
  if (overflow_handler_->reply_buffer_reached(*this)) {
    discarding_ = true;
    watch_at_ = SIZE_MAX;
  }
}

void ReplyWriter::bulk_header(size_t length) { header('$', length); }

void ReplyWriter::simple_string(std::string_view text) {
  if (discarding_) return;
  out_->push_back('+');
  append_single_line(*out_, text);
  out_->append("\r\n", 2);
  check_size();
}

void ReplyWriter::error(std::string_view text) {
  if (discarding_) return;
  out_->push_back('-');
  append_single_line(*out_, text);
  out_->append("\r\n", 2);
  check_size();
}

void ReplyWriter::integer(int64_t value) {
  if (discarding_) return;
  char buf[kMaxHeader];
  buf[0] = ':';
  char* end = std::to_chars(buf + 1, buf + sizeof(buf), value).ptr;
  end[0] = '\r';
  end[1] = '\n';
  out_->append(buf, end + 2 - buf);
  check_size();
}

void ReplyWriter::bulk(std::string_view bytes) {
  if (discarding_) return;
  // A big string gets room for its whole element first. Appended piece by piece, it would fill
  // a buffer grown exactly to it, and its CRLF would then reallocate (and copy) it all again.
  // Small ones are left to append's own growth: reserving for every element measured 2-2.5x
  // the server CPU per push in bench/tracking_benchmark.py's fan-out (many small bulks into
  // a hundred growing buffers), for no gain.
  if (bytes.size() >= kReserveBulk) {
    const size_t element = kMaxHeader + bytes.size() + 2;
    if (out_->capacity() - out_->size() < element) out_->reserve(out_->size() + element);
  }
  bulk_header(bytes.size());
  out_->append(bytes);
  out_->append("\r\n", 2);
  check_size();
}

void ReplyWriter::bulk_integer(int64_t value) {
  char digits[21];
  char* end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  bulk(std::string_view(digits, end - digits));
}

void ReplyWriter::null() {
  if (discarding_) return;
  if (resp_ == 3) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("$-1\r\n", 5);
  }
  check_size();
}

void ReplyWriter::null_array() {
  if (discarding_) return;
  if (resp_ == 3) {
    out_->append("_\r\n", 3);
  } else {
    out_->append("*-1\r\n", 5);
  }
  check_size();
}

void ReplyWriter::array_header(size_t n) { checked_header('*', n); }

void ReplyWriter::map_header(size_t pairs) {
  if (resp_ == 3) {
    checked_header('%', pairs);
  } else {
    checked_header('*', static_cast<uint64_t>(pairs) * 2);
  }
}

void ReplyWriter::set_header(size_t n) { checked_header(resp_ == 3 ? '~' : '*', n); }

void ReplyWriter::push_header(size_t n) { checked_header(resp_ == 3 ? '>' : '*', n); }

void ReplyWriter::double_value(double value) {
  if (discarding_) return;
  // Redis's "%.17g" (what double_to_chars writes), with NaN spelled without a sign.
  char text[kMaxDoubleChars];
  size_t length;
  if (std::isnan(value)) {
    std::memcpy(text, "nan", 3);
    length = 3;
  } else {
    length = double_to_chars(value, text);
  }
  if (resp_ == 3) {
    out_->push_back(',');
    out_->append(text, length);
    out_->append("\r\n", 2);
  } else {
    bulk(std::string_view(text, length));
  }
  check_size();
}

void ReplyWriter::boolean(bool value) {
  if (discarding_) return;
  if (resp_ == 3) {
    out_->append(value ? "#t\r\n" : "#f\r\n", 4);
  } else {
    out_->append(value ? ":1\r\n" : ":0\r\n", 4);
  }
  check_size();
}

void ReplyWriter::verbatim(std::string_view text, std::string_view format) {
  if (discarding_) return;
  if (resp_ != 3) {
    bulk(text);
    return;
  }
  assert(format.size() == 3 && "a verbatim format is exactly three characters");
  header('=', text.size() + 4);
  out_->append(format);
  out_->push_back(':');
  out_->append(text);
  out_->append("\r\n", 2);
  check_size();
}

void ReplyWriter::big_number(std::string_view digits) {
  if (discarding_) return;
  if (resp_ != 3) {
    bulk(digits);
    return;
  }
  out_->push_back('(');
  out_->append(digits);
  out_->append("\r\n", 2);
  check_size();
}

void ReplyWriter::raw(std::string_view bytes) {
  if (discarding_) return;
  out_->append(bytes);
  check_size();
}

DeferredLength ReplyWriter::begin_deferred() {
  DeferredLength placeholder{out_->size()};
  if (discarding_) return placeholder;
  out_->append(kMaxHeader, '\0');
  check_size();
  return placeholder;
}

void ReplyWriter::end_deferred_array(DeferredLength placeholder, size_t n) {
  end_deferred_header(placeholder, '*', n);
}

void ReplyWriter::end_deferred_header(DeferredLength placeholder, char type, uint64_t n) {
  // Dropping since (perhaps since before the placeholder): nothing of this reply is sent.
  if (discarding_) return;
  char buf[kMaxHeader];
  const size_t length = format_header(buf, type, n);
  // Slide the elements back over the unused part of the placeholder, then write the header in
  // the room left in front of them.
  char* base = out_->data() + placeholder.offset;
  const size_t elements = out_->size() - placeholder.offset - kMaxHeader;
  std::memmove(base + length, base + kMaxHeader, elements);
  std::memcpy(base, buf, length);
  out_->resize(out_->size() - (kMaxHeader - length));
}

void ReplyWriter::end_deferred_map(DeferredLength placeholder, size_t pairs) {
  if (resp_ == 3) {
    end_deferred_header(placeholder, '%', pairs);
  } else {
    end_deferred_header(placeholder, '*', static_cast<uint64_t>(pairs) * 2);
  }
}

void ReplyWriter::end_deferred_set(DeferredLength placeholder, size_t n) {
  end_deferred_header(placeholder, resp_ == 3 ? '~' : '*', n);
}

}  // namespace keywarden
