// The append-only file: every write effect, in RESP, appended to the current incremental file
// of Redis 7's multi-part layout (aof_manifest.h), and replayed through the dispatcher at
// start-up.
//
// Writing follows Redis's contract. Effects arrive from the propagation path (it is a
// PropagationSink) and only accumulate in a buffer; the server calls flush() before any reply
// leaves the process. With `appendfsync always` flush() writes and fsyncs, so acknowledged
// means durable. With `everysec` it writes and a background thread fsyncs about once a second;
// when that fsync is still running (a slow disk) the write is postponed — replies go out
// meanwhile, as in Redis — for at most two seconds, then done anyway and counted in
// aof_delayed_fsync. With `no` it writes and the kernel decides when to sync.
//
// The object never reaches the network or the config table: the server owns it, points its
// settings into the config table and calls flush() / cron() from its loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "commands/dispatcher.h"
#include "commands/propagation.h"
#include "common/clock.h"
#include "persistence/aof_manifest.h"

namespace keywarden {

enum AppendFsync : int { kAppendFsyncNo = 0, kAppendFsyncAlways = 1, kAppendFsyncEverySec = 2 };

struct AofSettings {
  bool appendonly = false;
  std::string filename = "appendonly.aof";
  std::string dirname = "appendonlydir";
  int fsync = kAppendFsyncEverySec;  // an AppendFsync
  bool load_truncated = true;
  bool use_rdb_preamble = true;
  bool timestamp_enabled = false;
  bool no_fsync_on_rewrite = false;
  int64_t rewrite_percentage = 100;
  int64_t rewrite_min_size = 64LL * 1024 * 1024;
  bool rewrite_incremental_fsync = true;
};

// Runs fsync (and the close of retired files) off the command thread.
class BackgroundFsync {
 public:
  BackgroundFsync();
  ~BackgroundFsync();
  void fsync_later(int fd);
  void close_later(int fd);
  // Jobs queued or running.
  int64_t pending() const { return pending_.load(std::memory_order_acquire); }
  // Replaces fdatasync for fsync jobs (tests simulate a slow disk). Set before any job.
  void set_sync_function(std::function<int(int)> sync) { sync_ = std::move(sync); }

 private:
  struct Job {
    int fd;
    bool close;
  };
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::atomic<int64_t> pending_{0};
  bool stopping_ = false;
  std::function<int(int)> sync_;
  std::thread thread_;
};

// BGREWRITEAOF's state, for INFO persistence.
struct AofRewriteStats {
  bool in_progress = false;
  bool scheduled = false;  // asked for while another child ran
  int64_t started_ms = 0;
  int64_t last_time_sec = -1;
  bool last_ok = true;
  uint64_t rewrites = 0;
  uint64_t consecutive_failures = 0;
};

// What a load did, for the log and INFO.
struct AofLoadResult {
  std::string error;     // "" on success; the fatal report otherwise
  bool existed = false;  // there were files to load
  uint64_t commands = 0;
  bool truncated = false;
};

// How a load lets the rest of the server live meanwhile.
struct AofLoadHooks {
  // Called every 1024 commands with the bytes read so far and the total of all files: the
  // server answers clients (-LOADING) and reports progress.
  std::function<void(int64_t loaded, int64_t total)> progress;
  // Redis's key-load-delay (microseconds per command; negative: nanoseconds), for tests that
  // need a load slow enough to watch.
  int64_t key_load_delay = 0;
};

// What replaying the bytes of one AOF file did.
struct AofReplay {
  enum Status { kOk, kShortRead, kFailed };
  Status status;
  // Bytes of whole commands before the failure or short read (a MULTI left open ends before
  // its MULTI): where aof-load-truncated cuts the file.
  size_t valid_up_to;
};

// Replays one file's bytes through `dispatcher` (Redis's loadSingleAppendOnlyFile rules): an
// RDB image first when they start with "REDIS" (`old_style`: a pre-7.0 preamble, worded so in
// the log), `#` lines are annotations, a short read at the end is a truncated tail, anything
// else malformed is a format error, an unknown command fails the load. A MULTI left open at the
// end counts as a truncated tail that ends before it. Counts commands (and RDB keys) into
// `commands`. AofLog::load calls it per file; the AOF fuzz target calls it on its input.
AofReplay replay_aof_data(Dispatcher& dispatcher, std::string_view bytes, const std::string& name,
                          bool old_style, uint64_t* commands, const AofLoadHooks& hooks = {},
                          int64_t loaded_before = 0, int64_t total = 0);

class AofLog final : public PropagationSink {
 public:
  AofLog(const AofSettings& settings, const Clock& clock);
  ~AofLog() override;

  // At start-up: turns an old single-file AOF into the multi-part layout, then replays the
  // base (RDB or AOF format) and incremental files through `dispatcher` (nothing is
  // propagated: the log is not a sink yet). Paths are relative to the working directory,
  // which `dir` set.
  AofLoadResult load(Dispatcher& dispatcher, const AofLoadHooks& hooks = {});
  // Opens the last incremental file for appending, creating one (and the directory and
  // manifest) when there is none. Returns "" or the reason.
  std::string open_for_append();
  // Creates the directory if needed and reads the manifest when none is in memory.
  std::string prepare_directory();
  // Start-up with no AOF at all: writes a base of the (empty) dataset with `write_base`, as
  // Redis 7 does, so the directory starts as base + incremental file. "" or the reason.
  std::string create_base(const std::function<std::string(int fd)>& write_base, bool rdb_format);
  // CONFIG SET appendonly no, SHUTDOWN: writes what is buffered, then fsyncs and closes on the
  // fsync thread (behind any fsync queued there; the thread drains before it ends).
  void close();
  bool is_open() const { return fd_ >= 0; }

  void write_batch(std::span<const PropagatedCommand> batch) override;
  // Writes the buffer and fsyncs as appendfsync says. `force` writes even while a background
  // fsync is running (shutdown, switching files).
  void flush(bool force);
  // DEBUG AOF-FLUSH-SLEEP: microseconds slept before each write of a non-empty buffer (a test
  // knob, as Redis's aof_flush_sleep); 0 is off.
  void set_flush_sleep_us(int64_t micros) { flush_sleep_us_ = micros; }
  bool has_pending() const { return !buffer_.empty(); }
  // Once per server cron tick: retries a postponed or failed write, and keeps the everysec
  // promise when no new write came.
  void cron();

  // Set by the rewrite machinery: while true and no-appendfsync-on-rewrite is yes, nothing
  // is fsynced.
  void set_rewrite_child_running(bool running) { rewrite_child_running_ = running; }

  // The manifest in force and the directory path of the files.
  const AofManifest& manifest() const { return manifest_; }
  std::string directory() const { return settings_.dirname; }
  std::string path_of(const std::string& name) const { return settings_.dirname + "/" + name; }
  // Persists `manifest` (temp file + rename + fsync of the directory) and makes it current.
  std::string persist_manifest(const AofManifest& manifest);
  // Closes the current incremental file and appends to a new one (a rewrite starts).
  std::string switch_to_new_incremental();
  // After a rewrite: `temp_path` becomes the new base, earlier files become history and are
  // deleted. Returns "" or the reason (the old files are then still in force).
  // `rdb_format`: the base is an RDB image (aof-use-rdb-preamble), named .base.rdb.
  std::string install_rewritten_base(const std::string& temp_path, bool rdb_format);

  // INFO persistence.
  AofRewriteStats& rewrite_stats() { return rewrite_stats_; }
  int64_t current_size() const { return current_size_; }
  int64_t base_size() const { return rewrite_base_size_; }
  void set_rewrite_base_size(int64_t size) { rewrite_base_size_ = size; }
  size_t buffer_length() const { return buffer_.size(); }
  int64_t pending_fsync() const { return fsyncer_.pending(); }
  uint64_t delayed_fsync() const { return delayed_fsync_; }
  BackgroundFsync& fsyncer() { return fsyncer_; }
  bool last_write_ok() const { return last_write_error_ == 0; }
  int last_write_error() const { return last_write_error_; }
  // Told the errno of a failed write while the log is open, and 0 once writes succeed again
  // or the log is closed: the server refuses writes meanwhile (-MISCONF). Called only when
  // that state changes.
  void set_write_error_listener(std::function<void(int error)> listener) {
    write_error_listener_ = std::move(listener);
  }

 private:
  // Sum of the base and incremental files' sizes.
  int64_t files_size() const;
  // Tells the write-error listener when the error it last heard of (none when closed) changed.
  void report_write_error();

  const AofSettings& settings_;
  const Clock& clock_;
  AofManifest manifest_;
  int fd_ = -1;
  std::string buffer_;
  int selected_db_ = -1;
  int64_t last_timestamp_sec_ = 0;
  int64_t current_size_ = 0;
  int64_t rewrite_base_size_ = 0;
  int64_t last_fsync_sec_ = 0;
  int64_t flush_sleep_us_ = 0;
  int64_t postponed_since_sec_ = 0;
  int64_t written_since_fsync_ = 0;
  uint64_t delayed_fsync_ = 0;
  int last_write_error_ = 0;
  int reported_write_error_ = 0;
  std::function<void(int)> write_error_listener_;
  bool rewrite_child_running_ = false;
  AofRewriteStats rewrite_stats_;
  BackgroundFsync fsyncer_;
};

}  // namespace keywarden
