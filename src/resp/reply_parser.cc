#include "resp/reply_parser.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>

#include "resp/strict_integer.h"

namespace keywarden {
namespace {

// A declared length is only a promise: reserve at most this much up front and let the value
// grow as bytes really arrive, so a bogus header cannot make us allocate gigabytes.
constexpr size_t kMaxReservedBytes = 1 << 20;
constexpr size_t kMaxReservedElements = 1024;

void append_escaped(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '\\':
        out.append("\\\\");
        break;
      case '"':
        out.append("\\\"");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
          char hex[5];
          std::snprintf(hex, sizeof(hex), "\\x%02x", static_cast<unsigned char>(c));
          out.append(hex);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void append_debug(std::string& out, const RespValue& value) {
  auto append_elements = [&out, &value](std::string_view open, std::string_view close, bool pairs) {
    out.append(open);
    for (size_t i = 0; i < value.elements.size(); ++i) {
      if (i > 0) out.append(pairs && i % 2 == 1 ? ": " : ", ");
      append_debug(out, value.elements[i]);
    }
    out.append(close);
  };
  switch (value.type) {
    case RespType::kSimpleString:
      out.append("+").append(value.str);
      break;
    case RespType::kError:
      out.append("-").append(value.str);
      break;
    case RespType::kInteger:
      out.append(":").append(std::to_string(value.integer));
      break;
    case RespType::kBulkString:
      append_escaped(out, value.str);
      break;
    case RespType::kNull:
      out.append("(nil)");
      break;
    case RespType::kArray:
      append_elements("[", "]", false);
      break;
    case RespType::kMap:
      append_elements("{", "}", true);
      break;
    case RespType::kSet:
      append_elements("~{", "}", false);
      break;
    case RespType::kPush:
      append_elements(">[", "]", false);
      break;
    case RespType::kDouble: {
      char text[40];
      std::snprintf(text, sizeof(text), "%.17g", value.dbl);
      out.append(",").append(text);
      break;
    }
    case RespType::kBoolean:
      out.append(value.integer ? "#t" : "#f");
      break;
    case RespType::kVerbatim:
      out.append("=").append(value.format).append(":");
      append_escaped(out, value.str);
      break;
    case RespType::kBigNumber:
      out.append("(").append(value.str);
      break;
    case RespType::kBlobError:
      out.append("!");
      append_escaped(out, value.str);
      break;
  }
}

bool is_big_number(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string to_debug_string(const RespValue& value) {
  std::string out;
  append_debug(out, value);
  return out;
}

void ReplyParser::reset() {
  stack_.clear();
  in_blob_ = false;
  blob_ = RespValue();
  blob_left_ = 0;
  scanned_ = 0;
  consumed_ = 0;
  value_ = RespValue();
  failed_ = false;
  error_.clear();
}

ReplyParseStatus ReplyParser::fail(std::string_view message) {
  failed_ = true;
  error_.assign("Protocol error: ");
  error_.append(message);
  return ReplyParseStatus::kError;
}

bool ReplyParser::deliver(RespValue&& value) {
  RespValue done = std::move(value);
  while (!stack_.empty()) {
    Frame& top = stack_.back();
    top.value.elements.push_back(std::move(done));
    if (--top.remaining > 0) return false;
    const bool attribute = top.attribute;
    done = std::move(top.value);
    stack_.pop_back();
    // An attribute annotates the value that follows it and is not an element of its parent,
    // so once read it is simply dropped and the parent goes on waiting.
    if (attribute) return false;
  }
  value_ = std::move(done);
  return true;
}

bool ReplyParser::open_aggregate(RespType type, int64_t count, bool attribute, bool* complete) {
  *complete = false;
  if (count == 0) {
    if (!attribute) {
      RespValue empty;
      empty.type = type;
      *complete = deliver(std::move(empty));
    }
    return true;
  }
  if (stack_.size() >= kMaxDepth) {
    fail("reply nested too deep");
    return false;
  }
  Frame frame{RespValue(), count, attribute};
  frame.value.type = type;
  frame.value.elements.reserve(std::min<size_t>(static_cast<size_t>(count), kMaxReservedElements));
  stack_.push_back(std::move(frame));
  return true;
}

bool ReplyParser::finish_blob() {
  in_blob_ = false;
  if (blob_.type == RespType::kVerbatim) {
    // The body opens with a three-letter format and a colon: "txt:...".
    if (blob_.str.size() < 4 || blob_.str[3] != ':') {
      fail("invalid verbatim string");
      return false;
    }
    blob_.format.assign(blob_.str, 0, 3);
    blob_.str.erase(0, 4);
  }
  return true;
}

ReplyParseStatus ReplyParser::parse(const char* buf, size_t len) {
  consumed_ = 0;
  if (failed_) return ReplyParseStatus::kError;
  // A cut-short line is resumed from an offset into bytes the caller promised to pass again.
  assert(len >= scanned_);
  size_t pos = 0;
  auto need_more = [&]() {
    consumed_ = pos;
    return ReplyParseStatus::kNeedMore;
  };
  auto got_value = [&]() {
    consumed_ = pos;
    return ReplyParseStatus::kValue;
  };

  while (true) {
    if (in_blob_) {
      const size_t take = std::min(blob_left_, len - pos);
      blob_.str.append(buf + pos, take);
      pos += take;
      blob_left_ -= take;
      if (blob_left_ > 0 || len - pos < 2) return need_more();
      if (buf[pos] != '\r' || buf[pos + 1] != '\n') return fail("bulk string not followed by CRLF");
      pos += 2;
      if (!finish_blob()) return ReplyParseStatus::kError;
      if (deliver(std::move(blob_))) return got_value();
      continue;
    }

    if (pos == len) return need_more();
    const char* start = buf + pos;
    const size_t available = len - pos;
    const void* cr = std::memchr(start + scanned_, '\r', available - scanned_);
    if (cr == nullptr) {
      scanned_ = available;
      return need_more();
    }
    const size_t cr_index = static_cast<const char*>(cr) - start;
    if (cr_index + 1 == available) {
      scanned_ = cr_index;
      return need_more();
    }
    if (start[cr_index + 1] != '\n') return fail("line not terminated by CRLF");
    const char type = start[0];
    const std::string_view line(start + 1, cr_index - 1);
    pos += cr_index + 2;
    scanned_ = 0;

    RespValue value;
    int64_t number = 0;
    bool complete = false;
    switch (type) {
      case '+':
      case '-':
        value.type = type == '+' ? RespType::kSimpleString : RespType::kError;
        value.str.assign(line);
        complete = deliver(std::move(value));
        break;
      case ':':
        if (!parse_strict_int64(line, &number)) return fail("invalid integer");
        value.type = RespType::kInteger;
        value.integer = number;
        complete = deliver(std::move(value));
        break;
      case '$':
      case '!':
      case '=':
        if (!parse_strict_int64(line, &number) || number < -1 || (number == -1 && type != '$')) {
          return fail("invalid bulk length");
        }
        if (number == -1) {
          complete = deliver(RespValue());
          break;
        }
        in_blob_ = true;
        blob_ = RespValue();
        blob_.type = type == '$'   ? RespType::kBulkString
                     : type == '!' ? RespType::kBlobError
                                   : RespType::kVerbatim;
        blob_.str.reserve(std::min<size_t>(static_cast<size_t>(number), kMaxReservedBytes));
        blob_left_ = static_cast<size_t>(number);
        continue;
      case '*':
      case '~':
      case '>':
      case '%':
      case '|': {
        if (!parse_strict_int64(line, &number) || number < -1 || (number == -1 && type != '*')) {
          return fail("invalid aggregate length");
        }
        if (number == -1) {
          complete = deliver(RespValue());
          break;
        }
        const bool pairs = type == '%' || type == '|';
        if (pairs && number > std::numeric_limits<int64_t>::max() / 2) {
          return fail("invalid aggregate length");
        }
        const RespType aggregate = type == '*'   ? RespType::kArray
                                   : type == '~' ? RespType::kSet
                                   : type == '>' ? RespType::kPush
                                                 : RespType::kMap;
        if (!open_aggregate(aggregate, pairs ? number * 2 : number, type == '|', &complete)) {
          return ReplyParseStatus::kError;
        }
        break;
      }
      case '_':
        if (!line.empty()) return fail("invalid null");
        complete = deliver(RespValue());
        break;
      case '#':
        if (line != "t" && line != "f") return fail("invalid boolean");
        value.type = RespType::kBoolean;
        value.integer = line == "t" ? 1 : 0;
        complete = deliver(std::move(value));
        break;
      case ',': {
        double parsed = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), parsed);
        if (line.empty() || ec != std::errc() || end != line.data() + line.size()) {
          return fail("invalid double");
        }
        value.type = RespType::kDouble;
        value.dbl = parsed;
        complete = deliver(std::move(value));
        break;
      }
      case '(':
        if (!is_big_number(line)) return fail("invalid big number");
        value.type = RespType::kBigNumber;
        value.str.assign(line);
        complete = deliver(std::move(value));
        break;
      default: {
        std::string message = "invalid reply type byte 'X'";
        message[message.size() - 2] = type;
        return fail(message);
      }
    }
    if (complete) return got_value();
  }
}

}  // namespace keywarden
