// Glob-style pattern matching with the exact semantics of Redis 7.0's matcher, used by KEYS,
// SCAN/HSCAN/SSCAN/ZSCAN MATCH, PSUBSCRIBE, CONFIG GET and friends.
//
// Syntax: `*` matches any run of bytes (consecutive stars count as one), `?` exactly one byte,
// `[abc]` one byte of a set, `[^abc]` one byte outside it, `[a-z]` a range (either order),
// and `\x` the byte x literally, both inside and outside brackets. Matching is byte-wise and
// binary safe; `nocase` folds ASCII letters only (the reference runs in the C locale).
//
// Quirks kept on purpose, because clients observe them:
//   - A non-empty pattern never matches the empty text, not even "*" or "**"; KEYS and SCAN
//     special-case the exact pattern "*" before calling the matcher, and callers must too.
//   - An unterminated "[..." runs to the end of the pattern and acts as if closed there; "["
//     alone never matches and "[^" matches any single byte. "[]" never matches, "[^]" is "?".
//   - "a-" followed by at least one more byte is a range even if that byte is ']'.
//   - Ranges compare bytes as signed chars; `\x` inside brackets ignores `nocase`.
//   - A trailing lone backslash matches a literal backslash.
//   - A pattern needing more than 1000 nested `*` expansions does not match.
// The matcher never takes exponential time: once the rest of a pattern after some `*` has been
// found to match no suffix of the text, every enclosing `*` gives up as well.
#pragma once

#include <string_view>

namespace keywarden {

// Depth of `*` expansion beyond which a match attempt fails (Redis' guard against patterns
// crafted to exhaust the stack).
inline constexpr int kMaxGlobNesting = 1000;

bool glob_match(std::string_view pattern, std::string_view text, bool nocase = false);

// True when the pattern has no special byte (`*`, `?`, `[`, `\`), so that it matches exactly
// the one text equal to it and a lookup can replace a scan.
bool glob_is_literal(std::string_view pattern);

}  // namespace keywarden
