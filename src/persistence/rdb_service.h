// The RDB side of the server: its settings (dbfilename, save points, rdbcompression,
// rdbchecksum, stop-writes-on-bgsave-error), SAVE and BGSAVE, the save points checked from the
// cron, the status INFO persistence reports, and loading the file at start-up.
//
// BGSAVE forks through ForkChild: the child serializes the keyspace as it was at the fork
// (copy-on-write) into temp-<childpid>.rdb and renames it over the target; the parent only
// learns the outcome from poll() in the cron. A failed background save, with save points
// configured and stop-writes-on-bgsave-error on, makes the dispatcher refuse writes with
// -MISCONF until a save succeeds (ServerState::write_refusal).
//
// As a service (commands/service.h) it installs its directives, the persistence commands
// (DUMP, RESTORE, MIGRATE, SAVE, BGSAVE, LASTSAVE), its lines of INFO persistence, and a cron
// that closes idle MIGRATE connections. The fork child is reaped by the AOF service, which
// hands an RDB child's end to background_done() and then calls check_save_points() and
// start_scheduled_save() (aof_service.h says why the reaping lives in one place). Commands
// reach the service through their context (`ctx.service<RdbService>()`); tests and the fuzz
// harness construct one without installing it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "commands/server_state.h"
#include "commands/service.h"
#include "persistence/fork_child.h"
#include "persistence/migrate_socket.h"
#include "persistence/rdb_file.h"

namespace keywarden {

struct SavePoint {
  int64_t seconds = 0;
  int64_t changes = 0;
};

struct RdbSettings {
  std::string dbfilename = "dump.rdb";
  std::vector<SavePoint> save_points = {{3600, 1}, {300, 100}, {60, 10000}};
  bool compression = true;
  bool checksum = true;
  bool stop_writes_on_bgsave_error = true;
  // rdb-key-save-delay: microseconds slept after each key a save writes (RdbSaveOptions).
  int64_t key_save_delay = 0;
};

class RdbService final : public Service {
 public:
  explicit RdbService(ServerState& state);
  ~RdbService() override;
  RdbService(const RdbService&) = delete;
  RdbService& operator=(const RdbService&) = delete;

  void install(ServiceSetup& setup) override;
  void cron(int64_t now_ms) override;

  RdbSettings& settings() { return settings_; }
  // To call after save points or stop-writes-on-bgsave-error change (CONFIG SET).
  void settings_changed() { update_write_refusal(); }
  // Bytes in use, for the used-mem AUX field (the server's gauge).
  void set_memory_gauge(std::function<uint64_t()> gauge) { memory_gauge_ = std::move(gauge); }

  // Replication's part in every save: the replication AUX fields to write (none when it
  // returns nullopt), and the end of a child it started for a full sync.
  void set_replication_info(std::function<std::optional<RdbReplicationInfo>()> provider) {
    replication_info_ = std::move(provider);
  }
  void set_child_listener(std::function<void(const ForkChild::Exit&)> listener) {
    child_listener_ = std::move(listener);
  }
  // A child the replication service forked to write an image to replicas' sockets (diskless
  // sync): counted as an RDB child (BGSAVE waits for it) but not as a save to disk.
  void socket_child_started() { socket_child_ = true; }

  // Synchronous save to dbfilename (SAVE, SHUTDOWN, DEBUG RELOAD). "" or the error, logged.
  std::string save();
  // Starts a background save. "" when started, else the error reply text (without "ERR ").
  std::string background_save();
  // BGSAVE SCHEDULE while an AOF rewrite runs: the save starts once the child is gone.
  void schedule_background_save() { bgsave_scheduled_ = true; }
  bool bgsave_scheduled() const { return bgsave_scheduled_; }
  bool bgsave_in_progress() const;

  // From the server cron, while no child runs: starts a save whose save point is due (after a
  // failed one, not sooner than 5 seconds later, as Redis).
  void check_save_points(int64_t now_ms);
  // From the server cron, while no child runs: starts the save BGSAVE SCHEDULE asked for (after
  // a failed save, not sooner than 5 seconds later, as Redis).
  void start_scheduled_save(int64_t now_ms);
  // The RDB child the server reaped: logs its end as Redis does, updates the status INFO
  // reports and the MISCONF refusal, removes its temp file when it failed.
  void background_done(const ForkChild::Exit& exit);
  // Reaps the child synchronously when one is running (shutdown): kills it.
  void kill_background_save();

  // Loads dbfilename into the (empty) keyspace. "" when loaded or when there is no file.
  std::string load_at_startup(const RdbLoadHooks& hooks = {});
  // A full synchronization from this server's primary: loads `image` (already received
  // whole) into the emptied keyspace, expired keys included, then its function libraries.
  // "" or the error; on an error the keyspace is empty.
  std::string load_from_primary(std::string_view image, const RdbLoadHooks& hooks);
  // The same from a file (the received image written to disk first).
  std::string load_file_from_primary(const std::string& path, const RdbLoadHooks& hooks);
  // What the last load found (its repl-* AUX fields among others).
  const RdbLoadStats& last_load() const { return last_load_; }
  // DEBUG RELOAD: save (unless !save), empty the keyspace (unless !flush), load the file back
  // (with `merge`, its keys replace those already there). "" or the error, and *save_failed
  // tells which step failed.
  std::string reload(bool save = true, bool flush = true, bool merge = false,
                     bool* save_failed = nullptr);

  // INFO persistence.
  int64_t last_save_time_s() const { return last_save_s_; }
  bool last_bgsave_ok() const { return last_bgsave_ok_; }
  int64_t last_bgsave_duration_s() const { return last_bgsave_duration_s_; }
  int64_t current_bgsave_duration_s(int64_t now_ms) const;
  uint64_t saves() const { return saves_; }
  uint64_t last_load_keys_loaded() const { return last_load_.keys_loaded; }
  uint64_t last_load_keys_expired() const { return last_load_.keys_expired; }
  // The last load refused the file's signature or version (RdbLoadStats::bad_format).
  bool last_load_bad_format() const { return last_load_.bad_format; }
  // Whether the MISCONF refusal applies (see the header comment).
  bool writes_refused() const;
  // MIGRATE's cached connections to its targets (INFO migrate_cached_sockets).
  MigrateConnections& migrate_connections() { return migrate_connections_; }

  // The options of a save at `now_ms`, the function libraries included (an AOF base in RDB
  // format is saved with them too).
  RdbSaveOptions save_options(int64_t now_ms) const;

 private:
  // Installs the libraries of the image just loaded (last_load_); on a refusal the keys are
  // emptied again and the reason returned.
  std::string install_functions();
  void update_write_refusal();
  void register_config(ConfigRegistry& config);

  ServerState& state_;
  RdbSettings settings_;
  std::function<uint64_t()> memory_gauge_;
  int64_t last_save_s_ = 0;
  int64_t last_bgsave_try_s_ = 0;
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_duration_s_ = -1;
  uint64_t dirty_at_bgsave_start_ = 0;
  uint64_t saves_ = 0;
  bool bgsave_scheduled_ = false;
  bool socket_child_ = false;
  std::function<std::optional<RdbReplicationInfo>()> replication_info_;
  std::function<void(const ForkChild::Exit&)> child_listener_;
  RdbLoadStats last_load_;
  MigrateConnections migrate_connections_;
};

// The -MISCONF error of a refused write, byte for byte as Redis 7.0.
inline constexpr std::string_view kMisconfError =
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
    "disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB "
    "error.";

// DUMP, RESTORE, SAVE, BGSAVE, LASTSAVE.
void register_persistence_commands(CommandTable& table);

}  // namespace keywarden
