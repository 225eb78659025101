#include "commands/arg_parser.h"

#include <cctype>

namespace keywarden {

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view ArgParser::next() {
  if (position_ >= args_.size()) {
    fail(errors::kSyntax);
    return {};
  }
  return args_[position_++];
}

bool ArgParser::accept(std::string_view keyword) {
  if (!ok() || position_ >= args_.size() || !equals_ignore_case(args_[position_], keyword)) {
    return false;
  }
  ++position_;
  return true;
}

int64_t ArgParser::next_int64(std::string_view error_text) {
  std::string_view text = next();
  int64_t value = 0;
  if (ok() && !parse_int64(text, &value)) fail(error_text);
  return ok() ? value : 0;
}

double ArgParser::next_double(std::string_view error_text) {
  std::string_view text = next();
  double value = 0;
  if (ok() && !parse_double(text, &value)) fail(error_text);
  return ok() ? value : 0;
}

void ArgParser::fail(std::string_view text) {
  if (error_.empty()) error_.assign(text);
}

}  // namespace keywarden
