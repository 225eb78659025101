// keywarden::Reply accessors and rendering, ServerError's parsing of an error line, and the
// conversion from the RESP layer's RespValue (the public headers cannot see it).
#include "client/reply_convert.h"

#include <cstdio>

#include "keywarden/errors.h"
#include "keywarden/reply.h"

namespace keywarden {

namespace {

std::pair<std::string, std::string> split_error(const std::string& text) {
  size_t space = text.find(' ');
  if (space == std::string::npos) return {text, text};
  return {text.substr(0, space), text.substr(space + 1)};
}

void quote(std::string& out, const std::string& text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void render(std::string& out, const Reply& r);

void render_list(std::string& out, const Reply& r, const char* open, const char* close) {
  out += open;
  for (size_t i = 0; i < r.elements().size(); ++i) {
    if (i > 0) out += ", ";
    render(out, r.elements()[i]);
  }
  out += close;
}

void render(std::string& out, const Reply& r) {
  switch (r.type()) {
    case Reply::Type::kNull: out += "(nil)"; break;
    case Reply::Type::kSimpleString: out += "+" + r.str(); break;
    case Reply::Type::kError: out += "-" + r.str(); break;
    case Reply::Type::kInteger: out += ":" + std::to_string(r.integer()); break;
    case Reply::Type::kBulk: quote(out, r.str()); break;
    case Reply::Type::kArray: render_list(out, r, "[", "]"); break;
    case Reply::Type::kSet: render_list(out, r, "~{", "}"); break;
    case Reply::Type::kPush: render_list(out, r, ">[", "]"); break;
    case Reply::Type::kMap:
      out += "{";
      for (size_t i = 0; i < r.map_size(); ++i) {
        if (i > 0) out += ", ";
        render(out, r.key(i));
        out += ": ";
        render(out, r.value(i));
      }
      out += "}";
      break;
    case Reply::Type::kDouble: {
      char text[64];
      std::snprintf(text, sizeof(text), "%.17g", r.as_double());
      out += ",";
      out += text;
      break;
    }
    case Reply::Type::kBoolean: out += r.boolean() ? "#t" : "#f"; break;
    case Reply::Type::kBigNumber: out += "(" + r.str(); break;
    case Reply::Type::kVerbatim:
      out += "=" + r.verbatim_format() + ":";
      quote(out, r.str());
      break;
  }
}

[[noreturn]] void wrong_type(Reply::Type actual, const char* wanted) {
  throw ProtocolError(std::string("reply is ") + to_string(actual) + ", not " + wanted);
}

}  // namespace

ServerError::ServerError(const std::string& text) : Error(text) {
  auto [code, message] = split_error(text);
  code_ = std::move(code);
  message_ = std::move(message);
}

const char* to_string(Reply::Type type) {
  switch (type) {
    case Reply::Type::kNull: return "null";
    case Reply::Type::kSimpleString: return "simple string";
    case Reply::Type::kError: return "error";
    case Reply::Type::kInteger: return "integer";
    case Reply::Type::kBulk: return "bulk string";
    case Reply::Type::kArray: return "array";
    case Reply::Type::kMap: return "map";
    case Reply::Type::kSet: return "set";
    case Reply::Type::kPush: return "push";
    case Reply::Type::kDouble: return "double";
    case Reply::Type::kBoolean: return "boolean";
    case Reply::Type::kBigNumber: return "big number";
    case Reply::Type::kVerbatim: return "verbatim string";
  }
  return "unknown";
}

Reply Reply::simple_string(std::string text) {
  Reply r(Type::kSimpleString);
  r.str_ = std::move(text);
  return r;
}
Reply Reply::error(std::string text) {
  Reply r(Type::kError);
  r.str_ = std::move(text);
  return r;
}
Reply Reply::integer(int64_t value) {
  Reply r(Type::kInteger);
  r.integer_ = value;
  return r;
}
Reply Reply::bulk(std::string text) {
  Reply r(Type::kBulk);
  r.str_ = std::move(text);
  return r;
}
Reply Reply::array(std::vector<Reply> elements) {
  Reply r(Type::kArray);
  r.elements_ = std::move(elements);
  return r;
}
Reply Reply::map(std::vector<Reply> keys_and_values) {
  Reply r(Type::kMap);
  r.elements_ = std::move(keys_and_values);
  return r;
}
Reply Reply::set(std::vector<Reply> elements) {
  Reply r(Type::kSet);
  r.elements_ = std::move(elements);
  return r;
}
Reply Reply::push(std::vector<Reply> elements) {
  Reply r(Type::kPush);
  r.elements_ = std::move(elements);
  return r;
}
Reply Reply::double_value(double value) {
  Reply r(Type::kDouble);
  r.double_ = value;
  return r;
}
Reply Reply::boolean(bool value) {
  Reply r(Type::kBoolean);
  r.integer_ = value ? 1 : 0;
  return r;
}
Reply Reply::big_number(std::string digits) {
  Reply r(Type::kBigNumber);
  r.str_ = std::move(digits);
  return r;
}
Reply Reply::verbatim(std::string format, std::string text) {
  Reply r(Type::kVerbatim);
  r.format_ = std::move(format);
  r.str_ = std::move(text);
  return r;
}

const std::string& Reply::str() const {
  switch (type_) {
    case Type::kSimpleString:
    case Type::kError:
    case Type::kBulk:
    case Type::kVerbatim:
    case Type::kBigNumber:
      return str_;
    default:
      wrong_type(type_, "a string");
  }
}

int64_t Reply::integer() const {
  if (type_ != Type::kInteger) wrong_type(type_, "an integer");
  return integer_;
}

double Reply::as_double() const {
  if (type_ == Type::kDouble) return double_;
  if (type_ == Type::kInteger) return static_cast<double>(integer_);
  wrong_type(type_, "a double");
}

bool Reply::boolean() const {
  if (type_ == Type::kBoolean || type_ == Type::kInteger) return integer_ != 0;
  wrong_type(type_, "a boolean");
}

const std::string& Reply::verbatim_format() const {
  if (type_ != Type::kVerbatim) wrong_type(type_, "a verbatim string");
  return format_;
}

std::string Reply::error_code() const {
  if (type_ != Type::kError) wrong_type(type_, "an error");
  return split_error(str_).first;
}

void Reply::expect_aggregate() const {
  if (!is_aggregate()) wrong_type(type_, "an aggregate");
}

const std::vector<Reply>& Reply::elements() const {
  expect_aggregate();
  return elements_;
}

const Reply& Reply::operator[](size_t i) const {
  expect_aggregate();
  if (i >= elements_.size()) {
    throw ProtocolError("reply has " + std::to_string(elements_.size()) + " elements, no [" +
                        std::to_string(i) + "]");
  }
  return elements_[i];
}

size_t Reply::map_size() const {
  expect_aggregate();
  if (elements_.size() % 2 != 0) throw ProtocolError("reply has an odd number of elements");
  return elements_.size() / 2;
}

const Reply& Reply::key(size_t i) const { return (*this)[2 * i]; }
const Reply& Reply::value(size_t i) const { return (*this)[2 * i + 1]; }

const Reply* Reply::find(std::string_view key) const {
  size_t n = map_size();
  for (size_t i = 0; i < n; ++i) {
    const Reply& k = elements_[2 * i];
    if ((k.type_ == Type::kBulk || k.type_ == Type::kSimpleString ||
         k.type_ == Type::kVerbatim) && k.str_ == key) {
      return &elements_[2 * i + 1];
    }
  }
  return nullptr;
}

std::string Reply::to_string() const {
  std::string out;
  render(out, *this);
  return out;
}

namespace detail {

Reply to_reply(RespValue&& value) {
  auto convert_elements = [](std::vector<RespValue>& in) {
    std::vector<Reply> out;
    out.reserve(in.size());
    for (RespValue& element : in) out.push_back(to_reply(std::move(element)));
    return out;
  };
  switch (value.type) {
    case RespType::kSimpleString: return Reply::simple_string(std::move(value.str));
    case RespType::kError:
    case RespType::kBlobError: return Reply::error(std::move(value.str));
    case RespType::kInteger: return Reply::integer(value.integer);
    case RespType::kBulkString: return Reply::bulk(std::move(value.str));
    case RespType::kNull: return Reply::null();
    case RespType::kArray: return Reply::array(convert_elements(value.elements));
    case RespType::kMap: return Reply::map(convert_elements(value.elements));
    case RespType::kSet: return Reply::set(convert_elements(value.elements));
    case RespType::kPush: return Reply::push(convert_elements(value.elements));
    case RespType::kDouble: return Reply::double_value(value.dbl);
    case RespType::kBoolean: return Reply::boolean(value.integer != 0);
    case RespType::kVerbatim:
      return Reply::verbatim(std::move(value.format), std::move(value.str));
    case RespType::kBigNumber: return Reply::big_number(std::move(value.str));
  }
  throw ProtocolError("unknown reply type");
}

}  // namespace detail

}  // namespace keywarden
