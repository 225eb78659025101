// RdbService: SAVE, BGSAVE through the fork child, save points, start-up load; see the header.
#include "persistence/rdb_service.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "persistence/fork_child.h"
#include "persistence/function_libraries.h"

namespace keywarden {
namespace {

// After a failed background save, automatic ones wait this long before trying again.
constexpr int64_t kBgsaveRetryDelaySeconds = 5;

}  // namespace

RdbService::RdbService(ServerState& state) : state_(state) {
  last_save_s_ = state_.clock().wall_ms() / 1000;
}

std::string RdbService::save_options(int64_t now_ms, RdbSaveOptions* out) const {
  RdbSaveOptions& options = *out;
  options.compression = settings_.compression;
  options.checksum = settings_.checksum;
  options.now_ms = now_ms;
  options.maxmemory_policy = state_.settings().maxmemory_policy;
  options.lfu_decay_time = state_.settings().lfu_decay_time;
  options.used_memory = memory_gauge_ ? memory_gauge_() : 0;
  options.key_save_delay_us = settings_.key_save_delay;
  std::string error;
  if (state_.dispatcher() != nullptr &&
      !dump_function_libraries(*state_.dispatcher(), &options.functions, &error)) {
    return error;
  }
  return "";
}

std::string RdbService::install_functions() {
  if (last_load_.function_libraries.empty()) return "";
  if (state_.dispatcher() == nullptr) return "the RDB file contains function libraries";
  std::string error = load_function_libraries(*state_.dispatcher(), last_load_.function_libraries);
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
  RdbSaveOptions options;
  std::string error = save_options(now_ms, &options);
  if (error.empty()) error = rdb_save_file(settings_.dbfilename, state_.keyspace(), options);
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
  RdbSaveOptions options;
  // Gathered here, in the parent: the child must not run commands.
  if (std::string error = save_options(now_ms, &options); !error.empty()) {
    last_bgsave_ok_ = false;
    update_write_refusal();
    log_message(LogLevel::kWarning, error);
    return error;
  }
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
}

int64_t RdbService::current_bgsave_duration_s(int64_t now_ms) const {
  if (!bgsave_in_progress()) return -1;
  return (now_ms - ForkChild::start_time_ms()) / 1000;
}

void RdbService::kill_background_save() {
  if (!bgsave_in_progress()) return;
  const pid_t pid = ForkChild::pid();
  ForkChild::kill_child();
  ::unlink(("temp-" + std::to_string(pid) + ".rdb").c_str());
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

std::string RdbService::load_at_startup(const RdbLoadHooks& hooks) {
  const int64_t now_ms = state_.clock().wall_ms();
  bool missing = false;
  const int64_t started_ms = now_ms;
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
