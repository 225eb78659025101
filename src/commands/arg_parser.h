// A cursor over a command's arguments that latches the first error. Handlers read all their
// options first, then check ok() once and reply with error(): the first problem found is the
// one reported, which is the order Redis reports them in as long as the handler reads
// arguments in Redis's order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "commands/errors.h"
#include "common/number.h"

namespace keywarden {

// ASCII case-insensitive equality, for keywords ("nx" == "NX").
bool equals_ignore_case(std::string_view a, std::string_view b);

class ArgParser {
 public:
  ArgParser(std::span<const std::string_view> args, size_t start)
      : args_(args), position_(start) {}

  bool has_more() const { return ok() && position_ < args_.size(); }
  size_t remaining() const { return position_ < args_.size() ? args_.size() - position_ : 0; }
  size_t position() const { return position_; }

  // The next argument, consumed. Past the end it latches a syntax error and returns "".
  std::string_view next();
  // Consumes the next argument if it equals `keyword` (case-insensitive).
  bool accept(std::string_view keyword);
  // The next argument as an integer; on failure latches `error_text` and returns 0.
  int64_t next_int64(std::string_view error_text = errors::kNotInteger);
  // The next argument as a finite-or-infinite double (not NaN).
  double next_double(std::string_view error_text = errors::kNotFloat);

  // Latches an error unless one is latched already.
  void fail(std::string_view text);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  std::span<const std::string_view> args_;
  size_t position_;
  std::string error_;
};

}  // namespace keywarden
