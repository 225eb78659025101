// The append-only file as a service: its directives (appendonly, appendfsync, aof-*…), its
// life cycle (load at start-up, switch on and off at run time, background rewrites, DEBUG
// LOADAOF), BGREWRITEAOF, its INFO fields and its cron work. The log itself — files, manifest,
// buffer, fsync policy — is AofLog (aof.h); this class decides when it is written, rewritten
// and replayed.
//
// Fork children are arbitrated here too, for both kinds: Redis starts at most one child, and
// work scheduled behind one (a rewrite during a BGSAVE, BGSAVE SCHEDULE during a rewrite) must
// start however the running one ended, so the reaping lives in one place. Its order is
// Redis's: the scheduled rewrite, the reaping, then the RDB service's save points and
// scheduled save.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "commands/service.h"
#include "persistence/aof.h"
#include "persistence/fork_child.h"

namespace keywarden {

class RdbService;
class ServerState;
struct RdbSaveOptions;

class AofService final : public Service {
 public:
  AofService(ServerState& state, RdbService& rdb);
  ~AofService() override;

  void install(ServiceSetup& setup) override;
  void cron(int64_t now_ms) override;

  AofSettings& settings() { return settings_; }
  AofLog& log() { return *log_; }

  // Start-up, when appendonly is yes: replays the files (creating a base from the keyspace
  // when there were none) and opens the log for appending. "" or the fatal report.
  std::string load_at_startup(const AofLoadHooks& hooks);
  // DEBUG LOADAOF: writes what is buffered, empties every database and replays the files
  // (their effects are not written back). "" or why nothing could be loaded.
  std::string reload();
  // CONFIG SET appendonly yes / no at run time.
  std::string start();
  void stop();
  // BGREWRITEAOF: a new base from the keyspace in a child; writes meanwhile go to a new
  // incremental file. "" or the reason it could not start (it may be scheduled instead).
  std::string rewrite();
  // Before any reply leaves the process: what the log buffered is written (and fsynced under
  // appendfsync always) first, so nothing is acknowledged that the file does not hold.
  void sync_before_replies() {
    if (log_->has_pending()) log_->flush(false);
  }
  // At exit: ends a running rewrite and closes the log.
  void shutdown();

 private:
  // The options of an RDB-format base: the RDB service's, marked as an AOF base.
  RdbSaveOptions base_options();
  void child_cron(int64_t now_ms);
  void log_cron();
  void rewrite_child_done(const ForkChild::Exit& exit);
  // CONFIG SET appendonly no and shutdown end a running rewrite, as Redis does.
  void kill_rewrite_child();
  void finish_rewrite(bool ok);
  void register_config(ConfigRegistry& config);

  ServerState& state_;
  RdbService& rdb_;
  AofSettings settings_;
  std::unique_ptr<AofLog> log_;
  bool rewrite_rdb_format_ = false;  // the running rewrite writes an RDB-format base
};

}  // namespace keywarden
