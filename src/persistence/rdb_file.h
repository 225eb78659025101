// Whole RDB images: the dataset written as Redis 7.0 writes it (header "REDIS0010", AUX
// fields, the function libraries (FUNCTION2 records), per database SELECTDB/RESIZEDB then
// each key with its expiry and eviction hints, EOF, CRC64), and loaded back from any RDB
// version 1..10 image (and 11's listpack sets).
//
// Saving to a path writes "temp-<pid>.rdb" in the same directory, fsyncs it and renames it
// over the target, so a crash leaves either the old file or the new one, never a half file.
//
// Loading is all or nothing: the image is checked as it is read (lengths, encodings, the
// checksum at the end, duplicate keys), and on any error every database the load touched is
// emptied again and the error returned. The error is the text Redis 7.0 logs on the same
// condition, one or more lines ("Short read or OOM loading DB. …", "Wrong RDB checksum …",
// "Internal error in RDB reading offset …"), so that log alerts written for Redis match. Keys
// whose deadline has passed are skipped (as a primary does); empty collections are skipped as
// Redis skips them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/server_state.h"
#include "storage/keyspace.h"

namespace keywarden {

// The replication AUX fields (repl-stream-db, repl-id, repl-offset) a primary with a backlog
// writes, so that a replica loading the image (or the primary itself, restarted) knows where
// in the replication history the image stands.
struct RdbReplicationInfo {
  int stream_db = 0;       // the database the stream had selected at the fork
  std::string replid;      // the primary's replication ID
  int64_t offset = 0;      // the stream offset the image corresponds to
};

struct RdbSaveOptions {
  bool compression = true;   // rdbcompression
  bool checksum = true;      // rdbchecksum (0 written instead of the CRC when off)
  int64_t now_ms = 0;        // ctime, and the base of idle times
  int maxmemory_policy = 0;  // LRU policies write IDLE, LFU policies FREQ
  int64_t lfu_decay_time = 1;
  uint64_t used_memory = 0;  // the used-mem AUX field
  bool aof_base = false;     // the aof-base AUX field (an AOF base file / preamble)
  // Written only when set (Redis writes them when it has a replication backlog).
  std::optional<RdbReplicationInfo> replication;
  // FUNCTION2 records written before the keys (function_libraries.h gathers them in the
  // parent, before any fork).
  std::string functions;
  // rdb-key-save-delay: microseconds slept after each key (see debug_key_delay), so that tests
  // and operators can watch a save in progress and interrupt it. Applies to every image
  // written from the keyspace: SAVE, BGSAVE, the RDB base of an AOF rewrite.
  int64_t key_save_delay_us = 0;
};

// Redis's per-key test delay (rdb-key-save-delay, key-load-delay in Redis): a positive value
// sleeps that many microseconds; a negative -n sleeps 1 µs once every n calls on average,
// since even the shortest sleep costs a system call. 0 does nothing.
void debug_key_delay(int64_t usec);

struct RdbLoadStats {
  uint64_t keys_loaded = 0;
  uint64_t keys_expired = 0;  // skipped because their deadline had passed
  uint64_t empty_keys_skipped = 0;
  size_t bytes_consumed = 0;  // where the image ended (an AOF preamble continues after it)
  int version = 0;
  // The signature or the version was refused, not the contents: Redis then exits with "Fatal
  // error loading the DB: Invalid argument. Exiting." after the reason.
  bool bad_format = false;
  // The code of each FUNCTION2 library, in file order: the caller installs them once the keys
  // are in (load_function_libraries), and a refusal fails the load.
  std::vector<std::string> function_libraries;
  // The replication AUX fields, when the image has all three (a 40-character repl-id): where
  // the saving server stood in its replication history, so that after a restart it can
  // continue it (a replica sends PSYNC <replid> <offset + 1>).
  std::optional<RdbReplicationInfo> replication;
};

// Serializes the whole keyspace to `fd` (already open). Returns "" or the error.
std::string rdb_save_to_fd(int fd, const Keyspace& keyspace, const RdbSaveOptions& options);
// The same into a temporary file beside `path`, fsynced and renamed over it.
std::string rdb_save_file(const std::string& path, const Keyspace& keyspace,
                          const RdbSaveOptions& options);
// The whole image in memory (tests, DEBUG).
std::string rdb_save_to_string(const Keyspace& keyspace, const RdbSaveOptions& options);

// What a start-up load may be given besides the image.
struct RdbLoadHooks {
  // Told how far the load is (bytes of the image consumed, image size), so that the server
  // can answer clients meanwhile; it must not touch the keyspace. Called each time the load
  // passes a multiple of `progress_interval_bytes` (Redis's
  // loading-process-events-interval-bytes), or every 1024 keys when that is 0.
  std::function<void(size_t consumed, size_t total)> progress;
  int64_t progress_interval_bytes = 0;
  // Redis's key-load-delay (microseconds per key; negative: nanoseconds), for tests that need
  // a load to last.
  int64_t key_load_delay = 0;
  // DEBUG RELOAD MERGE: a key already in the keyspace is replaced by the image's (otherwise a
  // duplicate refuses the whole image).
  bool replace_existing = false;
  // Keys whose deadline has passed are loaded too: a replica keeps them until its primary's
  // DEL arrives, as Redis loads them when it is not a primary.
  bool keep_expired = false;
};

// Loads an image into `keyspace`, whose databases should be empty. `settings` gives the
// encoding limits new values follow. Returns "" or the reason the image was refused.
std::string rdb_load(std::string_view image, Keyspace& keyspace, const CommandSettings& settings,
                     int64_t now_ms, RdbLoadStats* stats, const RdbLoadHooks& hooks = {});
// Reads and loads the file at `path`. *missing is set (and "" returned) when there is no file;
// a file that cannot be opened or read gives Redis's "Fatal error loading the DB: <errno text>.
// Exiting.".
std::string rdb_load_file(const std::string& path, Keyspace& keyspace,
                          const CommandSettings& settings, int64_t now_ms, RdbLoadStats* stats,
                          bool* missing, const RdbLoadHooks& hooks = {});

}  // namespace keywarden
