// RdbService: SAVE, BGSAVE through the fork child, save points, start-up load; see the header.
#include "persistence/rdb_service.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "persistence/fork_child.h"
#include "commands/config_registry.h"
#include "commands/function_store.h"
#include "commands/info_text.h"
#include "common/number.h"
#include "resp/split_arguments.h"
#include "persistence/function_libraries.h"

namespace keywarden {
namespace {

// Where the RDB lines sit among the other owners' in INFO persistence (info_text.h).
constexpr int kInfoPersistenceOrder = 10;

}  // namespace
namespace {

// After a failed background save, automatic ones wait this long before trying again.
constexpr int64_t kBgsaveRetryDelaySeconds = 5;

}  // namespace

RdbService::RdbService(ServerState& state) : state_(state) {
  last_save_s_ = state_.clock().wall_ms() / 1000;
  state_.services().provide<RdbService>(this);
}

RdbService::~RdbService() {
  if (state_.services().find<RdbService>() == this) state_.services().provide<RdbService>(nullptr);
}

void RdbService::install(ServiceSetup& setup) {
  register_persistence_commands(setup.commands);
  register_config(setup.config);
  setup.info.add("persistence", kInfoPersistenceOrder, [this](InfoText& info) {
    const int64_t now_ms = state_.clock().wall_ms();
    info.field("rdb_changes_since_last_save", state_.stats().dirty);
    info.field("rdb_bgsave_in_progress", bgsave_in_progress() ? 1 : 0);
    info.field("rdb_last_save_time", last_save_time_s());
    info.field("rdb_last_bgsave_status", last_bgsave_ok() ? "ok" : "err");
    info.field("rdb_last_bgsave_time_sec", last_bgsave_duration_s());
    info.field("rdb_current_bgsave_time_sec", current_bgsave_duration_s(now_ms));
    info.field("rdb_saves", saves());
    info.field("rdb_last_cow_size", 0);
    info.field("rdb_last_load_keys_expired", last_load_keys_expired());
    info.field("rdb_last_load_keys_loaded", last_load_keys_loaded());
  });
}

void RdbService::register_config(ConfigRegistry& c) {
  // Pairs of non-negative integers (seconds, changes); "" disables snapshots.
  c.add({"save", {}, kConfigMultiArg,
         [this] {
           std::string text;
           for (const SavePoint& point : settings_.save_points) {
             if (!text.empty()) text += ' ';
             text += std::to_string(point.seconds) + ' ' + std::to_string(point.changes);
           }
           return text;
         },
         [this](std::string_view value, bool) -> std::string {
           std::vector<std::string> words;
           if (!split_arguments(value, words) || words.size() % 2 != 0) {
             return "Invalid save parameters";
           }
           std::vector<SavePoint> points;
           for (size_t i = 0; i < words.size(); i += 2) {
             SavePoint point;
             if (!parse_int64(words[i], &point.seconds) || point.seconds < 0 ||
                 !parse_int64(words[i + 1], &point.changes) || point.changes < 0) {
               return "Invalid save parameters";
             }
             points.push_back(point);
           }
           settings_.save_points = std::move(points);
           settings_changed();
           return "";
         }});
  c.add_integer("rdb-key-save-delay", &settings_.key_save_delay, INT32_MIN, INT32_MAX);
  c.add_string("dbfilename", &settings_.dbfilename);
  c.add_bool("rdbcompression", &settings_.compression);
  c.add_bool("rdbchecksum", &settings_.checksum);
  c.add_enum("sanitize-dump-payload", &state_.settings().sanitize_dump_payload,
             {{"no", kSanitizeDumpNo}, {"yes", kSanitizeDumpYes}, {"clients", kSanitizeDumpClients}});
  c.add_bool("stop-writes-on-bgsave-error", &settings_.stop_writes_on_bgsave_error, 0,
             [this] { settings_changed(); });
}

void RdbService::cron(int64_t now_ms) { migrate_connections_.close_idle(now_ms / 1000); }

RdbSaveOptions RdbService::save_options(int64_t now_ms) const {
  RdbSaveOptions options;
  options.compression = settings_.compression;
  options.checksum = settings_.checksum;
  options.now_ms = now_ms;
  options.maxmemory_policy = state_.settings().maxmemory_policy;
  options.lfu_decay_time = state_.settings().lfu_decay_time;
  options.used_memory = memory_gauge_ ? memory_gauge_() : 0;
  options.key_save_delay_us = settings_.key_save_delay;
  options.functions = function_library_records(state_.services().find<FunctionStore>());
  if (replication_info_) options.replication = replication_info_();
  return options;
}

std::string RdbService::install_functions() {
  if (last_load_.function_libraries.empty()) return "";
  std::string error = load_function_libraries(state_.services().find<FunctionStore>(),
                                              last_load_.function_libraries);
  if (!error.empty()) {
    // All or nothing, as the keys of a refused image.
    Keyspace& keyspace = state_.keyspace();
    for (int i = 0; i < keyspace.database_count(); ++i) keyspace.db(i).clear();
    last_load_.keys_loaded = 0;
  }
  return error;
}

bool RdbService::writes_refused() const {
  return settings_.stop_writes_on_bgsave_error && !settings_.save_points.empty() &&
         !last_bgsave_ok_;
}

void RdbService::update_write_refusal() {
  state_.set_write_refusal(ServerState::DiskError::kRdb,
                           writes_refused() ? kMisconfError : std::string_view());
}

bool RdbService::bgsave_in_progress() const {
  return ForkChild::active() && ForkChild::kind() == ForkChild::Kind::kRdb;
}

std::string RdbService::save() {
  const int64_t now_ms = state_.clock().wall_ms();
  const std::string error =
      rdb_save_file(settings_.dbfilename, state_.keyspace(), save_options(now_ms));
  if (!error.empty()) {
    log_message(LogLevel::kWarning, error);
    return error;
  }
  log_message(LogLevel::kNotice, "DB saved on disk");
  state_.stats().dirty = 0;
  last_save_s_ = now_ms / 1000;
  last_bgsave_ok_ = true;  // as Redis: a good SAVE clears the MISCONF condition
  ++saves_;
  update_write_refusal();
  return "";
}

std::string RdbService::background_save() {
  if (ForkChild::active()) {
    return ForkChild::kind() == ForkChild::Kind::kRdb ? "Background save already in progress"
                                                      : "Another child process is active (AOF?)";
  }
  const int64_t now_ms = state_.clock().wall_ms();
  // Gathered here, in the parent: the child must not run commands.
  const RdbSaveOptions options = save_options(now_ms);
  dirty_at_bgsave_start_ = state_.stats().dirty;
  last_bgsave_try_s_ = now_ms / 1000;
  const std::string path = settings_.dbfilename;
  const Keyspace& keyspace = state_.keyspace();
  auto started = ForkChild::start(ForkChild::Kind::kRdb, [&keyspace, path, options] {
    const std::string error = rdb_save_file(path, keyspace, options);
    if (!error.empty()) {
      log_message(LogLevel::kWarning, error);
      return 1;
    }
    log_message(LogLevel::kNotice, "DB saved on disk");
    return 0;
  });
  if (!started.ok()) {
    last_bgsave_ok_ = false;
    update_write_refusal();
    const std::string error =
        std::string("Can't save in background: fork: ") + std::strerror(started.error);
    log_message(LogLevel::kWarning, error);
    return error;
  }
  bgsave_scheduled_ = false;
  log_message(LogLevel::kNotice, "Background saving started by pid " + std::to_string(started.pid));
  return "";
}

void RdbService::background_done(const ForkChild::Exit& exit) {
  if (socket_child_) {
    // An image sent to replicas: nothing was saved to disk, the save status stays.
    socket_child_ = false;
    log_message(exit.success() ? LogLevel::kNotice : LogLevel::kWarning,
                exit.success() ? "Background RDB transfer terminated with success"
                               : "Background transfer error");
    if (child_listener_) child_listener_(exit);
    return;
  }
  last_bgsave_duration_s_ = exit.duration_ms / 1000;
  if (exit.success()) {
    log_message(LogLevel::kNotice, "Background saving terminated with success");
    // Writes that arrived while the child ran are not in the file.
    const uint64_t dirty = state_.stats().dirty;
    state_.stats().dirty = dirty > dirty_at_bgsave_start_ ? dirty - dirty_at_bgsave_start_ : 0;
    last_save_s_ = last_bgsave_try_s_;
    last_bgsave_ok_ = true;
    ++saves_;
  } else {
    ::unlink(("temp-" + std::to_string(exit.pid) + ".rdb").c_str());
    if (exit.signal == 0) {
      log_message(LogLevel::kWarning, "Background saving error");
      last_bgsave_ok_ = false;
    } else {
      log_message(LogLevel::kWarning,
                  "Background saving terminated by signal " + std::to_string(exit.signal));
      // Killed on purpose (SIGUSR1) is not an error, as in Redis.
      if (exit.signal != SIGUSR1) last_bgsave_ok_ = false;
    }
  }
  update_write_refusal();
  if (child_listener_) child_listener_(exit);
}

int64_t RdbService::current_bgsave_duration_s(int64_t now_ms) const {
  if (!bgsave_in_progress()) return -1;
  return (now_ms - ForkChild::start_time_ms()) / 1000;
}

void RdbService::kill_background_save() {
  if (!bgsave_in_progress()) return;
  const pid_t pid = ForkChild::pid();
  ForkChild::kill_child();
  socket_child_ = false;
  ::unlink(("temp-" + std::to_string(pid) + ".rdb").c_str());
  // Replicas waiting for this child's image must learn that it will not come.
  if (child_listener_) {
    ForkChild::Exit killed;
    killed.kind = ForkChild::Kind::kRdb;
    killed.pid = pid;
    killed.signal = SIGUSR1;
    child_listener_(killed);
  }
}

void RdbService::start_scheduled_save(int64_t now_ms) {
  if (!bgsave_scheduled_ || ForkChild::active()) return;
  if (!last_bgsave_ok_ && now_ms / 1000 - last_bgsave_try_s_ <= kBgsaveRetryDelaySeconds) return;
  background_save();
}

void RdbService::check_save_points(int64_t now_ms) {
  if (ForkChild::active()) return;
  const int64_t now_s = now_ms / 1000;
  const uint64_t dirty = state_.stats().dirty;
  for (const SavePoint& point : settings_.save_points) {
    if (dirty >= static_cast<uint64_t>(point.changes) && now_s - last_save_s_ > point.seconds &&
        (last_bgsave_ok_ || now_s - last_bgsave_try_s_ > kBgsaveRetryDelaySeconds)) {
      log_message(LogLevel::kNotice, std::to_string(point.changes) + " changes in " +
                                         std::to_string(point.seconds) + " seconds. Saving...");
      background_save();
      return;
    }
  }
}

std::string RdbService::load_at_startup(const RdbLoadHooks& given_hooks) {
  const int64_t now_ms = state_.clock().wall_ms();
  bool missing = false;
  const int64_t started_ms = now_ms;
  // A replica (replicaof in the config) keeps expired keys for its primary to delete.
  RdbLoadHooks hooks = given_hooks;
  hooks.keep_expired = state_.replication().replica;
  std::string error = rdb_load_file(settings_.dbfilename, state_.keyspace(), state_.settings(),
                                    now_ms, &last_load_, &missing, hooks);
  if (!error.empty()) return error;
  if (missing) return "";
  if (error = install_functions(); !error.empty()) return error;
  log_message(
      LogLevel::kNotice,
      "DB loaded from disk: " + std::to_string((state_.clock().wall_ms() - started_ms) / 1000.0) +
          " seconds (" + std::to_string(last_load_.keys_loaded) + " keys, " +
          std::to_string(last_load_.keys_expired) + " expired keys skipped)");
  return "";
}

std::string RdbService::load_from_primary(std::string_view image,
                                          const RdbLoadHooks& given_hooks) {
  RdbLoadHooks hooks = given_hooks;
  hooks.keep_expired = true;
  std::string error = rdb_load(image, state_.keyspace(), state_.settings(),
                               state_.clock().wall_ms(), &last_load_, hooks);
  if (error.empty()) error = install_functions();
  return error;
}

std::string RdbService::load_file_from_primary(const std::string& path,
                                               const RdbLoadHooks& given_hooks) {
  RdbLoadHooks hooks = given_hooks;
  hooks.keep_expired = true;
  bool missing = false;
  std::string error = rdb_load_file(path, state_.keyspace(), state_.settings(),
                                    state_.clock().wall_ms(), &last_load_, &missing, hooks);
  if (missing) error = "the received RDB file vanished before it could be loaded";
  if (error.empty()) error = install_functions();
  return error;
}

std::string RdbService::reload(bool save_first, bool flush, bool merge, bool* save_failed) {
  std::string error = save_first ? save() : "";
  if (save_failed != nullptr) *save_failed = !error.empty();
  if (!error.empty()) return error;
  Keyspace& keyspace = state_.keyspace();
  if (flush) {
    for (int i = 0; i < keyspace.database_count(); ++i) keyspace.db(i).clear();
  }
  bool missing = false;
  RdbLoadHooks hooks;
  hooks.replace_existing = merge;
  error = rdb_load_file(settings_.dbfilename, keyspace, state_.settings(), state_.clock().wall_ms(),
                        &last_load_, &missing, hooks);
  if (missing) error = "the RDB file vanished before it could be loaded";
  if (error.empty()) error = install_functions();
  return error;
}

}  // namespace keywarden
