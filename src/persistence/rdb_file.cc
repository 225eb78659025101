// Saving and loading whole RDB images; see rdb_file.h.
#include "persistence/rdb_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/crc64.h"
#include "common/number.h"
#include "common/version.h"
#include "persistence/rdb_codec.h"
#include "persistence/rdb_format.h"

namespace keywarden {
namespace {

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// The replication AUX fields seen so far in an image; they count once all three are there
// and well formed (Redis reads them with strtol and ignores a repl-id that is not 40
// characters long).
struct ReplicationAux {
  int stream_db = -1;
  std::string replid;
  int64_t offset = -1;
};

void read_replication_aux(std::string_view name, std::string_view value, ReplicationAux& seen,
                          RdbLoadStats* stats) {
  int64_t number;
  if (name == "repl-stream-db") {
    if (parse_int64(value, &number) && number >= 0 && number <= INT32_MAX) {
      seen.stream_db = static_cast<int>(number);
    }
  } else if (name == "repl-id") {
    if (value.size() == 40) seen.replid = value;
  } else if (name == "repl-offset") {
    if (parse_int64(value, &number) && number >= 0) seen.offset = number;
  } else {
    return;
  }
  if (seen.stream_db >= 0 && !seen.replid.empty() && seen.offset >= 0) {
    stats->replication = RdbReplicationInfo{seen.stream_db, seen.replid, seen.offset};
  }
}

void aux(RdbWriter& out, std::string_view key, std::string_view value) {
  out.byte(rdb::kOpAux);
  out.string(key);
  out.string(value);
}

void write_image(RdbWriter& out, const Keyspace& keyspace, const RdbSaveOptions& options) {
  // RDB 12 only when some hash has field deadlines (types 24/25): a file without them stays
  // loadable by Redis 7.0.
  bool field_ttls = false;
  for (int index = 0; index < keyspace.database_count(); ++index) {
    if (keyspace.db(index).volatile_hash_count() > 0) field_ttls = true;
  }
  char magic[10];
  std::snprintf(magic, sizeof magic, "REDIS%04d",
                field_ttls ? rdb::kVersionWithFieldTtl : rdb::kVersion);
  out.raw(std::string_view(magic, 9));
  aux(out, "redis-ver", "7.0.15");
  aux(out, "redis-bits", sizeof(void*) == 8 ? "64" : "32");
  aux(out, "ctime", std::to_string(options.now_ms / 1000));
  aux(out, "used-mem", std::to_string(options.used_memory));
  if (options.replication) {
    aux(out, "repl-stream-db", std::to_string(options.replication->stream_db));
    aux(out, "repl-id", options.replication->replid);
    aux(out, "repl-offset", std::to_string(options.replication->offset));
  }
  aux(out, "aof-base", options.aof_base ? "1" : "0");
  out.raw(options.functions);
  const bool lru = options.maxmemory_policy == kMaxmemoryVolatileLru ||
                   options.maxmemory_policy == kMaxmemoryAllKeysLru;
  const bool lfu = policy_uses_lfu(options.maxmemory_policy);
  for (int index = 0; index < keyspace.database_count(); ++index) {
    const Database& db = keyspace.db(index);
    if (db.size() == 0) continue;
    out.byte(rdb::kOpSelectDb);
    out.length(static_cast<uint64_t>(index));
    out.byte(rdb::kOpResizeDb);
    out.length(db.size());
    out.length(db.volatile_count());
    db.for_each([&](const Entry* entry) {
      if (entry->has_expiry()) {
        out.byte(rdb::kOpExpireTimeMs);
        out.int64_le(db.deadline_of(entry));
      }
      if (lru) {
        out.byte(rdb::kOpIdle);
        out.length(static_cast<uint64_t>(
            access_clock::lru_idle_ms(entry->access_clock, options.now_ms) / 1000));
      } else if (lfu) {
        out.byte(rdb::kOpFreq);
        out.byte(static_cast<uint8_t>(access_clock::lfu_decayed_count(
            entry->access_clock, options.now_ms, options.lfu_decay_time)));
      }
      out.byte(RdbWriter::object_type(entry->value));
      out.string(entry->key());
      out.object_body(entry->value);
      if (options.key_save_delay_us != 0) debug_key_delay(options.key_save_delay_us);
      return !out.failed();
    });
  }
  out.byte(rdb::kOpEof);
  const uint64_t crc = options.checksum ? out.checksum() : 0;
  std::string footer;
  for (int i = 0; i < 8; ++i) footer.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  out.raw(footer);
}

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace

void debug_key_delay(int64_t usec) {
  if (usec < 0) usec = (std::rand() % -usec) == 0 ? 1 : 0;
  if (usec > 0) ::usleep(static_cast<useconds_t>(usec));
}

std::string rdb_save_to_fd(int fd, const Keyspace& keyspace, const RdbSaveOptions& options) {
  int write_errno = 0;
  RdbWriter out(options.compression, [&](std::string_view bytes) {
    if (write_all(fd, bytes)) return true;
    write_errno = errno;
    return false;
  });
  write_image(out, keyspace, options);
  if (!out.flush()) return "write error: " + errno_text(write_errno);
  return "";
}

std::string rdb_save_to_string(const Keyspace& keyspace, const RdbSaveOptions& options) {
  RdbWriter out(options.compression);
  write_image(out, keyspace, options);
  return std::move(out.buffer());
}

std::string rdb_save_file(const std::string& path, const Keyspace& keyspace,
                          const RdbSaveOptions& options) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string temp = (slash == std::string::npos ? std::string() : dir) + "temp-" +
                           std::to_string(::getpid()) + ".rdb";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return "Failed opening the temp RDB file " + temp + " (in server root dir " + dir +
           ") for saving: " + errno_text(errno);
  }
  std::string error = rdb_save_to_fd(fd, keyspace, options);
  if (error.empty() && ::fsync(fd) != 0) error = "fsync error: " + errno_text(errno);
  if (::close(fd) != 0 && error.empty()) error = "close error: " + errno_text(errno);
  if (error.empty() && ::rename(temp.c_str(), path.c_str()) != 0) {
    error = "Error moving temp DB file " + temp + " on the final destination " + path + ": " +
            errno_text(errno);
  }
  if (!error.empty()) {
    ::unlink(temp.c_str());
    return error;
  }
  // The rename itself must reach the disk.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return "";
}

// Keys between two progress reports: about a millisecond of loading.
constexpr uint64_t kProgressEveryKeys = 1024;

std::string rdb_load(std::string_view image, Keyspace& keyspace, const CommandSettings& settings,
                     int64_t now_ms, RdbLoadStats* stats, const RdbLoadHooks& hooks) {
  RdbLoadStats local;
  if (stats == nullptr) stats = &local;
  *stats = {};
  size_t progress_reported_at = 0;  // image bytes consumed at the last key
  std::vector<bool> touched(static_cast<size_t>(keyspace.database_count()), false);
  auto refuse = [&](const std::string& why) {
    for (int i = 0; i < keyspace.database_count(); ++i) {
      if (touched[static_cast<size_t>(i)]) keyspace.db(i).clear();
    }
    stats->keys_loaded = 0;
    stats->function_libraries.clear();
    return why;
  };

  // Packed blobs are validated in depth only under sanitize-dump-payload yes, as Redis loads.
  RdbReader in(image, settings.sanitize_dump_payload == kSanitizeDumpYes);
  // Redis's log lines for a refused image. A read past the end is a short read; anything else
  // malformed is reported as rdbReportCorruptRDB does, with our own source location (the
  // caller's line through __builtin_LINE(), which GCC and Clang both evaluate at the call site
  // in a default argument; clang 14 with libstdc++ 12 has no std::source_location).
  auto internal_error = [&](std::string_view what, int line) {
    std::string_view file = __FILE__;
    file.remove_prefix(file.rfind('/') + 1);
    return "Internal error in RDB reading offset " + std::to_string(in.position()) +
           ", function at " + std::string(file) + ":" + std::to_string(line) + " -> " +
           std::string(what);
  };
  auto short_read = [&](int line = __builtin_LINE()) {
    return refuse("Short read or OOM loading DB. Unrecoverable error, aborting now.\n" +
                  internal_error("Unexpected EOF reading RDB file", line));
  };
  std::string_view magic;
  if (!in.take(9, &magic)) return short_read();
  auto bad_format = [&](const std::string& why) {
    stats->bad_format = true;
    return refuse(why);
  };
  if (magic.substr(0, 5) != "REDIS") {
    return bad_format("Wrong signature trying to load DB from file");
  }
  int version = 0;
  for (char c : magic.substr(5)) {
    if (c < '0' || c > '9') return bad_format("Wrong signature trying to load DB from file");
    version = version * 10 + (c - '0');
  }
  if (version < 1 || version > rdb::kMaxLoadableVersion) {
    return bad_format("Can't handle RDB format version " + std::to_string(version));
  }
  stats->version = version;

  int db_index = 0;
  ReplicationAux replication_aux;
  int64_t expire_ms = -1;
  int64_t idle_seconds = -1;
  int freq = -1;
  std::string key;
  // The codec's text for a read past the end of the image (rdb_codec.cc).
  constexpr std::string_view kEndOfData = "unexpected end of data";
  auto corrupt = [&](const std::string& what, int line = __builtin_LINE()) {
    if (what == "truncated" && in.error().empty()) return short_read(line);
    if (in.error() == kEndOfData) return short_read(line);
    return refuse(internal_error(in.error().empty() ? what : in.error(), line));
  };
  for (;;) {
    uint8_t type;
    if (!in.byte(&type)) return corrupt("truncated");
    switch (type) {
      case rdb::kOpExpireTime: {
        int32_t seconds;
        if (!in.int32_le(&seconds)) return corrupt("truncated");
        expire_ms = int64_t{seconds} * 1000;
        continue;
      }
      case rdb::kOpExpireTimeMs:
        if (!in.int64_le(&expire_ms)) return corrupt("truncated");
        continue;
      case rdb::kOpFreq: {
        uint8_t value;
        if (!in.byte(&value)) return corrupt("truncated");
        freq = value;
        continue;
      }
      case rdb::kOpIdle: {
        uint64_t value;
        if (!in.length(&value)) return corrupt("truncated");
        // The LRU clock holds no longer idle time (and times 1000 a huge one would overflow).
        idle_seconds = static_cast<int64_t>(std::min<uint64_t>(value, access_clock::kLruMax));
        continue;
      }
      case rdb::kOpEof:
        break;
      case rdb::kOpSelectDb: {
        uint64_t index;
        if (!in.length(&index)) return corrupt("truncated");
        if (index >= static_cast<uint64_t>(keyspace.database_count())) {
          return refuse(
              "FATAL: Data file was created with a Redis server configured to handle "
              "more than " +
              std::to_string(keyspace.database_count()) + " databases. Exiting");
        }
        db_index = static_cast<int>(index);
        continue;
      }
      case rdb::kOpResizeDb: {
        uint64_t size, expires;
        if (!in.length(&size) || !in.length(&expires)) return corrupt("truncated");
        continue;
      }
      case rdb::kOpAux: {
        std::string name, value;
        if (!in.string(&name) || !in.string(&value)) return corrupt("truncated");
        read_replication_aux(name, value, replication_aux, stats);
        continue;
      }
      case rdb::kOpModuleAux:
        return refuse("The RDB file contains module AUX data, but keywarden loads no modules");
      case rdb::kOpFunction:
        return refuse(
            "The RDB file contains functions in the pre-release format of Redis 7.0 "
            "release candidates (opcode 246), which keywarden does not load");
      case rdb::kOpFunction2: {
        std::string code;
        if (!in.string(&code)) return corrupt("truncated function library");
        stats->function_libraries.push_back(std::move(code));
        continue;
      }
      default: {
        if (!RdbReader::is_object_type(type)) {
          return corrupt("unknown RDB opcode/type " + std::to_string(type));
        }
        if (!in.string(&key)) return corrupt("truncated");
        Value value;
        const auto status = in.object(type, settings, &value);
        if (status == RdbReader::Status::kError) return corrupt("bad value");
        const int64_t deadline = expire_ms;
        const int64_t idle = idle_seconds;
        const int key_freq = freq;
        expire_ms = -1;
        idle_seconds = -1;
        freq = -1;
        if (status == RdbReader::Status::kEmpty) {
          ++stats->empty_keys_skipped;
          continue;
        }
        // A primary does not load keys that are already expired.
        if (deadline != -1 && deadline < now_ms && !hooks.keep_expired) {
          ++stats->keys_expired;
          continue;
        }
        Database& db = keyspace.db(db_index);
        if (Entry* existing = db.find_raw(key); existing != nullptr && hooks.replace_existing) {
          db.remove(existing);
        } else if (existing != nullptr) {
          return refuse("RDB has duplicated key '" + key + "' in DB " +
                        std::to_string(db_index) + "\n" +
                        internal_error("Duplicated key found in RDB file", __LINE__));
        }
        touched[static_cast<size_t>(db_index)] = true;
        Entry* entry = db.add(key, std::move(value), deadline == -1 ? kNoExpiry : deadline);
        if (key_freq >= 0) {
          entry->access_clock = (access_clock::lfu_initial(now_ms) & ~uint32_t{0xff}) |
                                static_cast<uint32_t>(key_freq);
        } else if (idle >= 0) {
          entry->access_clock = access_clock::lru_stamp(now_ms - idle * 1000);
        }
        ++stats->keys_loaded;
        if (hooks.key_load_delay > 0) {
          usleep(static_cast<useconds_t>(hooks.key_load_delay));
        } else if (hooks.key_load_delay < 0) {
          timespec pause{0, -hooks.key_load_delay};
          nanosleep(&pause, nullptr);
        }
        if (hooks.progress) {
          const size_t at = in.position();
          const auto interval = static_cast<size_t>(hooks.progress_interval_bytes);
          if (interval > 0 ? at / interval > progress_reported_at / interval
                           : stats->keys_loaded % kProgressEveryKeys == 0) {
            hooks.progress(at, image.size());
          }
          progress_reported_at = at;
        }
        continue;
      }
    }
    break;  // EOF
  }
  // Version 5 on carries a CRC64 of everything before it; 0 means it was saved without one.
  if (version >= 5) {
    const size_t covered = in.position();
    int64_t stored;
    if (!in.int64_le(&stored)) return corrupt("truncated");
    const uint64_t expected = static_cast<uint64_t>(stored);
    if (expected != 0) {
      const uint64_t actual = crc64(0, image.substr(0, covered));
      if (actual != expected) {
        // Redis's wording, "expected" being the checksum computed and "got" the one stored.
        char text[128];
        std::snprintf(text, sizeof text,
                      "Wrong RDB checksum expected: (%llx) but got (%llx). Aborting now.\n",
                      static_cast<unsigned long long>(actual),
                      static_cast<unsigned long long>(expected));
        return refuse(text + internal_error("RDB CRC error", __LINE__));
      }
    }
  }
  stats->bytes_consumed = in.position();
  return "";
}

std::string rdb_load_file(const std::string& path, Keyspace& keyspace,
                          const CommandSettings& settings, int64_t now_ms, RdbLoadStats* stats,
                          bool* missing, const RdbLoadHooks& hooks) {
  *missing = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      *missing = true;
      return "";
    }
    return "Fatal error loading the DB: " + errno_text(errno) + ". Exiting.";
  }
  std::string image;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return "Fatal error loading the DB: " + errno_text(error) + ". Exiting.";
    }
    if (got == 0) break;
    image.append(chunk, static_cast<size_t>(got));
  }
  ::close(fd);
  return rdb_load(image, keyspace, settings, now_ms, stats, hooks);
}

}  // namespace keywarden
