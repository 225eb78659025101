#include "resp/request_parser.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "resp/strict_integer.h"

namespace keywarden {
namespace {

// Past these sizes the per-command buffers are given back after the command that grew them,
// so one huge MSET does not pin megabytes on an idle connection for its whole life.
constexpr size_t kKeptArgCapacity = 1024;
constexpr size_t kKeptArenaCapacity = 64 * 1024;
// Redis sizes argv for at most this many arguments up front and grows it as bulks arrive, so
// that `*2147483647` costs nothing until the arguments really come.
constexpr int64_t kMaxArgsReservedUpFront = 1024;

constexpr std::string_view kTooBigInline = "ERR Protocol error: too big inline request";
constexpr std::string_view kUnbalancedQuotes = "ERR Protocol error: unbalanced quotes in request";
constexpr std::string_view kTooBigCount = "ERR Protocol error: too big mbulk count string";
constexpr std::string_view kInvalidCount = "ERR Protocol error: invalid multibulk length";
constexpr std::string_view kUnauthenticatedCount =
    "ERR Protocol error: unauthenticated multibulk length";
constexpr std::string_view kTooBigBulkHeader = "ERR Protocol error: too big bulk count string";
constexpr std::string_view kInvalidBulkLength = "ERR Protocol error: invalid bulk length";
constexpr std::string_view kUnauthenticatedBulkLength =
    "ERR Protocol error: unauthenticated bulk length";

// Looks for `target` in text[from, end). Redis finds line ends with strchr() on its
// NUL-terminated query buffer, so a NUL byte ends the search as if the buffer ended there: the
// line end behind it is never seen, and the request waits until the inline limit turns it into
// an error. We reproduce that so that a connection behaves the same on both servers. Returns
// the index of `target`, or npos with *stop set to where a later search may resume (the end,
// or the NUL, which will stop every later search too).
size_t find_line_end(std::string_view text, size_t from, char target, size_t* stop) {
  const char* begin = text.data() + from;
  const size_t span = text.size() - from;
  const void* hit = std::memchr(begin, target, span);
  const size_t searched = hit ? static_cast<const char*>(hit) - begin : span;
  if (const void* nul = std::memchr(begin, '\0', searched)) {
    *stop = static_cast<const char*>(nul) - text.data();
    return std::string_view::npos;
  }
  if (!hit) {
    *stop = text.size();
    return std::string_view::npos;
  }
  return from + searched;
}

// isspace() in the C locale: what separates arguments before a word starts.
bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// What ends an unquoted word. Narrower than is_c_space on purpose: sdssplitargs keeps '\v'
// and '\f' inside a word although it skips them between words.
bool ends_bare_word(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool split_inline_arguments(std::string_view line, std::string& arena,
                            std::vector<ArgSpan>& spans) {
  // Decoding only ever shrinks text, so one resize up front bounds every write below and the
  // arena is trimmed to what was really written at the end.
  const size_t base = arena.size();
  arena.resize(base + line.size());
  char* out = arena.data();
  size_t written = base;
  const size_t n = line.size();
  size_t i = 0;
  bool balanced = true;

  while (balanced) {
    while (i < n && is_c_space(line[i])) ++i;
    if (i == n) break;

    enum class Mode { kBare, kDoubleQuoted, kSingleQuoted } mode = Mode::kBare;
    const size_t word_start = written;
    bool word_done = false;
    while (!word_done) {
      if (mode == Mode::kBare) {
        if (i == n || ends_bare_word(line[i])) {
          word_done = true;
          if (i < n) ++i;
        } else if (line[i] == '"') {
          mode = Mode::kDoubleQuoted;
          ++i;
        } else if (line[i] == '\'') {
          mode = Mode::kSingleQuoted;
          ++i;
        } else {
          out[written++] = line[i++];
        }
        continue;
      }
      if (i == n) {  // the line ended inside quotes
        balanced = false;
        break;
      }
      const char c = line[i];
      const char quote = mode == Mode::kDoubleQuoted ? '"' : '\'';
      if (c == quote) {
        // A closing quote glued to more text ("a"b) is refused rather than guessed at.
        if (i + 1 < n && !is_c_space(line[i + 1])) {
          balanced = false;
          break;
        }
        word_done = true;
        ++i;
      } else if (mode == Mode::kSingleQuoted) {
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          out[written++] = '\'';
          i += 2;
        } else {
          out[written++] = c;
          ++i;
        }
      } else if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && hex_value(line[i + 2]) >= 0 &&
                 hex_value(line[i + 3]) >= 0) {
        out[written++] = static_cast<char>(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3]));
        i += 4;
      } else if (c == '\\' && i + 1 < n) {
        char escaped = line[i + 1];
        switch (escaped) {
          case 'n':
            escaped = '\n';
            break;
          case 'r':
            escaped = '\r';
            break;
          case 't':
            escaped = '\t';
            break;
          case 'b':
            escaped = '\b';
            break;
          case 'a':
            escaped = '\a';
            break;
          default:
            break;  // \\, \" and any other character stand for themselves
        }
        out[written++] = escaped;
        i += 2;
      } else {
        out[written++] = c;
        ++i;
      }
    }
    if (balanced) spans.push_back({word_start, written - word_start});
  }
  arena.resize(written);
  return balanced;
}

RequestParser::RequestParser(const ParserLimits& limits) : limits_(limits) {}

void RequestParser::reset() {
  state_ = State::kIdle;
  failed_ = false;
  cursor_ = 0;
  scanned_ = 0;
  remaining_args_ = 0;
  bulk_length_ = 0;
  arg_spans_.clear();
  detached_.clear();
  args_.clear();
  consumed_ = 0;
  bytes_wanted_ = 0;
  error_.clear();
}

ParseStatus RequestParser::parse(const char* buf, size_t len) {
  consumed_ = 0;
  bytes_wanted_ = 0;
  args_.clear();
  if (failed_) return ParseStatus::kError;
  // A partial command is resumed from offsets into bytes the caller promised to pass again.
  assert(state_ == State::kIdle || (len >= cursor_ && len >= scanned_));

  // `start` walks over skipped empty commands; a partial command always begins at buf[0]
  // because the previous call had the caller drop everything before it.
  size_t start = 0;
  while (start < len) {
    const std::string_view cmd(buf + start, len - start);
    if (state_ == State::kIdle) start_command(cmd);
    const ParseStatus status = state_ == State::kInline ? parse_inline(cmd) : parse_multibulk(cmd);
    if (status != ParseStatus::kCommand) {
      consumed_ = start;
      return status;
    }
    const size_t end = start + cursor_;
    state_ = State::kIdle;
    cursor_ = 0;
    scanned_ = 0;
    if (!arg_spans_.empty()) {
      finish_command(inline_ ? std::string_view(arena_) : cmd);
      consumed_ = end;
      return ParseStatus::kCommand;
    }
    start = end;  // `*0`, `*-1` or a blank line: nothing to run, keep going
  }
  consumed_ = start;
  return ParseStatus::kNeedMore;
}

void RequestParser::start_command(std::string_view cmd) {
  inline_ = cmd.front() != '*';
  state_ = inline_ ? State::kInline : State::kMultibulkCount;
  cursor_ = 0;
  scanned_ = 0;
  if (arg_spans_.capacity() > kKeptArgCapacity) {
    arg_spans_ = {};
    args_ = {};
  }
  arg_spans_.clear();
  detached_.clear();
  if (arena_.capacity() > kKeptArenaCapacity) arena_ = {};
}

void RequestParser::finish_command(std::string_view base) {
  args_.reserve(arg_spans_.size());
  for (const ArgSpan& span : arg_spans_) {
    if (span.offset == kDetached) {
      args_.push_back(detached_[span.length]);
    } else {
      args_.emplace_back(base.data() + span.offset, span.length);
    }
  }
  arg_spans_.clear();
  detached_.clear();
}

std::optional<RequestParser::AwaitedBulk> RequestParser::awaited_bulk() const {
  if (failed_ || state_ != State::kBulkBody) return std::nullopt;
  return AwaitedBulk{cursor_, static_cast<size_t>(bulk_length_)};
}

size_t RequestParser::detach_bulk(std::string_view body) {
  assert(state_ == State::kBulkBody && body.size() == static_cast<size_t>(bulk_length_));
  const size_t index = arg_spans_.size();
  arg_spans_.push_back({kDetached, detached_.size()});
  detached_.push_back(body);
  scanned_ = cursor_;
  bytes_wanted_ = 0;
  --remaining_args_;
  state_ = State::kBulkHeader;
  return index;
}

ParseStatus RequestParser::fail(std::string_view message) {
  failed_ = true;
  error_.assign(message);
  return ParseStatus::kError;
}

ParseStatus RequestParser::parse_inline(std::string_view cmd) {
  size_t stop = 0;
  const size_t newline = find_line_end(cmd, scanned_, '\n', &stop);
  if (newline == std::string_view::npos) {
    scanned_ = stop;
    // Only a line still open counts against the limit: a long line that arrives whole with
    // its newline is accepted, as in Redis.
    if (cmd.size() > limits_.inline_max) return fail(kTooBigInline);
    return ParseStatus::kNeedMore;
  }
  size_t line_length = newline;
  if (line_length > 0 && cmd[line_length - 1] == '\r') --line_length;

  arena_.clear();
  arg_spans_.clear();
  if (!split_inline_arguments(cmd.substr(0, line_length), arena_, arg_spans_)) {
    arg_spans_.clear();
    return fail(kUnbalancedQuotes);
  }
  cursor_ = newline + 1;
  return ParseStatus::kCommand;
}

ParseStatus RequestParser::parse_multibulk(std::string_view cmd) {
  size_t stop = 0;
  if (state_ == State::kMultibulkCount) {
    const size_t cr = find_line_end(cmd, scanned_, '\r', &stop);
    if (cr == std::string_view::npos) {
      scanned_ = stop;
      if (cmd.size() > limits_.inline_max) return fail(kTooBigCount);
      return ParseStatus::kNeedMore;
    }
    // The header ends two bytes after the CR. Redis does not check that the second byte is
    // '\n', it just skips it; we need it to have arrived, though, before moving past it.
    if (cr + 1 >= cmd.size()) {
      scanned_ = cr;
      return ParseStatus::kNeedMore;
    }
    int64_t count = 0;
    if (!parse_strict_int64(cmd.substr(1, cr - 1), &count) || count > limits_.max_multibulk) {
      return fail(kInvalidCount);
    }
    if (limits_.auth_required && count > ParserLimits::kUnauthenticatedMaxMultibulk) {
      return fail(kUnauthenticatedCount);
    }
    cursor_ = cr + 2;
    scanned_ = cursor_;
    if (count <= 0) return ParseStatus::kCommand;  // an empty command, skipped by the caller
    remaining_args_ = count;
    arg_spans_.reserve(static_cast<size_t>(std::min(count, kMaxArgsReservedUpFront)));
    state_ = State::kBulkHeader;
  }

  while (remaining_args_ > 0) {
    if (state_ == State::kBulkHeader) {
      const size_t cr = find_line_end(cmd, std::max(scanned_, cursor_), '\r', &stop);
      if (cr == std::string_view::npos) {
        scanned_ = stop;
        if (cmd.size() - cursor_ > limits_.inline_max) return fail(kTooBigBulkHeader);
        return ParseStatus::kNeedMore;
      }
      if (cr + 1 >= cmd.size()) {
        scanned_ = cr;
        return ParseStatus::kNeedMore;
      }
      if (cmd[cursor_] != '$') {
        // Redis formats this reply with a printf-style call that turns CR and LF into
        // spaces to keep the reply on one line; the byte can be either when the line is empty.
        char got = cmd[cursor_];
        if (got == '\r' || got == '\n') got = ' ';
        std::string text = "ERR Protocol error: expected '$', got ' '";
        text[text.size() - 2] = got;
        return fail(text);
      }
      int64_t length = 0;
      if (!parse_strict_int64(cmd.substr(cursor_ + 1, cr - cursor_ - 1), &length) || length < 0 ||
          length > limits_.proto_max_bulk_len) {
        return fail(kInvalidBulkLength);
      }
      if (limits_.auth_required && length > ParserLimits::kUnauthenticatedMaxBulk) {
        return fail(kUnauthenticatedBulkLength);
      }
      cursor_ = cr + 2;
      scanned_ = cursor_;
      bulk_length_ = length;
      state_ = State::kBulkBody;
    }

    // The body is followed by two bytes that Redis skips without looking at them (a client
    // that sends "$4\r\nPINGxy" is understood), so we do the same. Computed in size_t: a
    // length of up to INT64_MAX plus 2 still fits.
    const size_t needed = static_cast<size_t>(bulk_length_) + 2;
    if (cmd.size() - cursor_ < needed) {
      bytes_wanted_ = cursor_ + needed;
      return ParseStatus::kNeedMore;
    }
    arg_spans_.push_back({cursor_, static_cast<size_t>(bulk_length_)});
    cursor_ += needed;
    scanned_ = cursor_;
    --remaining_args_;
    state_ = State::kBulkHeader;
  }
  return ParseStatus::kCommand;
}

}  // namespace keywarden
