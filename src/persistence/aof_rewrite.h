// The AOF rewrite's serializer: the whole keyspace as the shortest command stream that
// rebuilds it (a FUNCTION LOAD per function library first, then a SELECT per non-empty
// database, one SET/RPUSH/SADD/ZADD/HSET per key with at most 64 elements per command,
// PEXPIREAT for deadlines), as Redis writes an AOF-format base.
//
// It only reads the keyspace, so it runs unchanged in a fork child (copy-on-write snapshot)
// or, for tests, in-process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/keyspace.h"

namespace keywarden {

// Writes the keyspace to `fd`; keys whose deadline is before `now_ms` are left out. With
// `timestamp`, the stream starts with a `#TS:<seconds>` annotation. `key_delay_us` (Redis's
// rdb-key-save-delay, for tests) sleeps after each key. `function_records` are the FUNCTION2
// records of the libraries (function_libraries.h), gathered by the parent before the fork.
// Returns "" or the reason.
std::string write_keyspace_as_commands(const Keyspace& keyspace, int fd, int64_t now_ms,
                                       bool timestamp, int64_t key_delay_us = 0,
                                       std::string_view function_records = {});

}  // namespace keywarden
