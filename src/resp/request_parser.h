// The server-side request parser: turns a connection's query buffer into commands, one at a
// time, exactly as Redis 7.0 reads its two request forms, multibulk (`*<n>\r\n` then n bulks
// `$<len>\r\n<bytes>\r\n`) and inline (one line split like a shell, with quotes), including
// their protocol errors, worded byte for byte, and their quirks (see request_parser.cc).
//
// Buffer contract. The caller owns one contiguous query buffer. Every call passes the bytes not
// yet consumed (those already passed, unchanged, followed by whatever arrived since); after
// every call, whatever it returned, the caller drops consumed() bytes from the front. The
// parser remembers its progress through a partly received command as offsets from the
// command's first byte, never as pointers, so the caller may move or grow the buffer between
// calls, and a 100 MB bulk is scanned once, not once per read.
//
// Lifetime of args(). After kCommand, the views in args() point into the caller's buffer for
// multibulk commands (zero copy) and into the parser's own arena for inline commands (which
// need unquoting). They stay valid until the next parse() or reset() and, for multibulk, as
// long as the caller has not dropped or changed those bytes: execute the command before
// dropping consumed() bytes if the buffer is shared.
//
// Big bulks. A bulk body that has not all arrived can be taken out of the buffer
// (awaited_bulk(), detach_bulk()): the caller reads it into a place of its own, of exactly the
// bulk's size, and the argument then views that place. This is how a connection reads a 64 MB
// SET value once, straight into the block the keyspace keeps (see common/string_block.h).
//
// Allocation. Steady state is allocation-free for ordinary commands: the argument table and
// the inline arena keep their capacity from one command to the next (both are released again
// after an unusually large command, as Redis frees a large argv).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

struct ParserLimits {
  // proto-max-bulk-len. The replication link to a primary is trusted and runs unlimited
  // (Redis skips this check for its master client): use kUnlimitedBulk there.
  int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  // PROTO_INLINE_MAX_SIZE: how many bytes an inline request, or a `*`/`$` header line, may
  // occupy in the buffer while its line end has not arrived.
  size_t inline_max = 64 * 1024;
  // Redis 7.0 accepts multibulk counts up to INT_MAX (6.x stopped at 1024*1024).
  int64_t max_multibulk = std::numeric_limits<int32_t>::max();
  // While the connection still has to authenticate, Redis 7.0 refuses big requests before
  // allocating anything for them: more than 10 arguments or a bulk longer than 16384 bytes.
  bool auth_required = false;

  static constexpr int64_t kUnlimitedBulk = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kUnauthenticatedMaxMultibulk = 10;
  static constexpr int64_t kUnauthenticatedMaxBulk = 16384;
};

// An argument located by offset rather than by pointer, so that it survives the buffer
// holding it being moved between calls.
struct ArgSpan {
  size_t offset;
  size_t length;
};

enum class ParseStatus {
  kNeedMore,  // no complete command yet; drop consumed() bytes and call again with more
  kCommand,   // args() holds one command; drop consumed() bytes after executing it
  kError,     // a protocol error: reply error() and close the connection
};

class RequestParser {
 public:
  explicit RequestParser(const ParserLimits& limits = {});

  // Parses at most one command from buf[0, len). Empty commands (`*0`, `*-1`, a blank inline
  // line) are skipped silently, as Redis skips them: their bytes count in consumed() even
  // when the call ends with kNeedMore. Once kError has been returned, every further call
  // returns it again until reset().
  ParseStatus parse(const char* buf, size_t len);
  ParseStatus parse(std::string_view buf) { return parse(buf.data(), buf.size()); }

  // The arguments of the command returned by the last kCommand (empty otherwise).
  std::span<const std::string_view> args() const { return args_; }
  // Bytes of the buffer passed to the last parse() that the caller must now drop.
  size_t consumed() const { return consumed_; }
  // After kError: the reply text, e.g. "ERR Protocol error: invalid bulk length", without
  // the leading '-' and the trailing CRLF.
  std::string_view error() const { return error_; }

  // After kNeedMore: the buffer length (counted after dropping consumed()) the next call
  // needs to make progress when a bulk body is awaited, else 0. A connection uses it to size
  // a single read buffer for a big argument instead of growing it read by read.
  size_t bytes_wanted() const { return bytes_wanted_; }
  // After kNeedMore: the bulk whose body (and 2-byte trailer) is awaited, if any, placed by
  // its offset in the buffer (counted after dropping consumed()) and its length.
  struct AwaitedBulk {
    size_t offset;
    size_t length;
  };
  std::optional<AwaitedBulk> awaited_bulk() const;
  // Takes the awaited bulk out of the command: its argument will be `body` (bytes the caller
  // keeps valid until the command has run), and the command goes on at the bulk's offset.
  // From then on the caller passes its buffer without the bulk: it drops the bytes from the
  // offset on (moving what it had of the body, and its trailer, to `body`'s place) and must
  // not parse again before it has read all of body and trailer there. Returns the argument's
  // index in the command.
  size_t detach_bulk(std::string_view body);

  // True while part of a command has been parsed and the rest is awaited.
  bool in_progress() const { return state_ != State::kIdle; }

  const ParserLimits& limits() const { return limits_; }
  void set_limits(const ParserLimits& limits) { limits_ = limits; }
  // Flipped by the connection when AUTH/HELLO succeeds (or requirepass changes).
  void set_auth_required(bool required) { limits_.auth_required = required; }

  // Forgets any partial command and any error; keeps limits and buffer capacity.
  void reset();

 private:
  enum class State {
    kIdle,            // between commands
    kInline,          // an inline line whose '\n' has not arrived
    kMultibulkCount,  // a `*` line whose CR has not arrived
    kBulkHeader,      // inside a multibulk, awaiting a `$` line
    kBulkBody,        // inside a multibulk, awaiting a bulk body and its 2-byte trailer
  };
  // Each step parses from command-relative offsets within `cmd` (the bytes from the current
  // command's first byte to the end of the buffer).
  ParseStatus parse_inline(std::string_view cmd);
  ParseStatus parse_multibulk(std::string_view cmd);
  ParseStatus fail(std::string_view message);
  void start_command(std::string_view cmd);
  void finish_command(std::string_view base);

  ParserLimits limits_;
  State state_ = State::kIdle;
  bool inline_ = false;  // the current command is an inline one (its args live in arena_)
  bool failed_ = false;

  // Progress through the current command, all relative to its first byte.
  size_t cursor_ = 0;   // first byte not yet parsed
  size_t scanned_ = 0;  // bytes already searched for the line end that has not arrived
  int64_t remaining_args_ = 0;
  int64_t bulk_length_ = 0;

  // Arguments taken out by detach_bulk(): their ArgSpan has offset kDetached and, as length,
  // an index into detached_.
  static constexpr size_t kDetached = static_cast<size_t>(-1);
  std::vector<ArgSpan> arg_spans_;
  std::vector<std::string_view> detached_;
  std::vector<std::string_view> args_;
  std::string arena_;  // unquoted inline arguments

  size_t consumed_ = 0;
  size_t bytes_wanted_ = 0;
  std::string error_;
};

// Splits one inline request line into arguments with the rules of Redis's sdssplitargs: runs
// of whitespace separate arguments; "double quotes" understand \xHH (two hex digits) and the
// escapes \n \r \t \b \a, any other escaped character standing for itself; 'single quotes'
// understand only \'; quotes may open in the middle of a word but a closing quote must be
// followed by whitespace or the end of the line. The decoded bytes are appended to `arena` and
// each argument's place in it is appended to `spans`. Returns false on unbalanced quotes
// (`arena` and `spans` then hold partial output). Public for tools that read typed commands.
bool split_inline_arguments(std::string_view line, std::string& arena, std::vector<ArgSpan>& spans);

}  // namespace keywarden
