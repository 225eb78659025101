// The AOF service (aof_service.h): directives, life cycle, rewrites, INFO and cron.
#include "persistence/aof_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "commands/command_table.h"
#include "commands/config_registry.h"
#include "commands/context.h"
#include "commands/dispatcher.h"
#include "commands/errors.h"
#include "commands/info_text.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/number.h"
#include "persistence/aof_rewrite.h"
#include "persistence/rdb_file.h"
#include "persistence/rdb_service.h"

namespace keywarden {
namespace {

void bgrewriteaof_command(CommandContext& ctx) {
  AofService& aof = ctx.service<AofService>();
  if (aof.log().rewrite_stats().in_progress) {
    ctx.reply.error("ERR Background append only file rewriting already in progress");
    return;
  }
  std::string problem = aof.rewrite();
  if (!problem.empty()) {
    ctx.reply.error("ERR " + problem);
    return;
  }
  if (aof.log().rewrite_stats().scheduled) {
    ctx.reply.simple_string("Background append only file rewriting scheduled");
    return;
  }
  ctx.reply.simple_string("Background append only file rewriting started");
}

constexpr CommandSpec kAofCommands[] = {
    {"bgrewriteaof", 1, kAdmin | kNoScript | kNoAsyncLoading, 0, 0, 0, 0, bgrewriteaof_command,
     "server", "1.0.0", "Asynchronously rewrite the append-only file", "O(1)"},
};

// Where the AOF's lines sit among the other owners' in INFO persistence (info_text.h).
constexpr int kInfoPersistenceOrder = 20;

}  // namespace

AofService::AofService(ServerState& state, RdbService& rdb)
    : state_(state), rdb_(rdb), log_(std::make_unique<AofLog>(settings_, state.clock())) {
  state_.services().provide<AofService>(this);
  // After a failed write, writes (and PING) are refused until a write succeeds again, so that
  // nothing is acknowledged that the file may not hold.
  log_->set_write_error_listener([this](int error) {
    state_.set_write_refusal(ServerState::DiskError::kAof,
                             error == 0 ? std::string()
                                        : std::string(errors::kMisconfAofPrefix) +
                                              std::strerror(error));
  });
}

AofService::~AofService() {
  if (state_.services().find<AofService>() == this) state_.services().provide<AofService>(nullptr);
}

void AofService::install(ServiceSetup& setup) {
  setup.commands.add(kAofCommands);
  register_config(setup.config);
  setup.info.add("persistence", kInfoPersistenceOrder, [this](InfoText& info) {
    AofLog& aof = *log_;
    const AofRewriteStats& rewrite = aof.rewrite_stats();
    const int64_t now_ms = state_.clock().wall_ms();
    const bool aof_on = aof.is_open();
    info.field("aof_enabled", aof_on ? 1 : 0);
    info.field("aof_rewrite_in_progress", rewrite.in_progress ? 1 : 0);
    info.field("aof_rewrite_scheduled", rewrite.scheduled ? 1 : 0);
    info.field("aof_last_rewrite_time_sec", rewrite.last_time_sec);
    info.field("aof_current_rewrite_time_sec",
               rewrite.in_progress ? (now_ms - rewrite.started_ms) / 1000 : -1);
    info.field("aof_last_bgrewrite_status", rewrite.last_ok ? "ok" : "err");
    info.field("aof_rewrites", rewrite.rewrites);
    info.field("aof_rewrites_consecutive_failures", rewrite.consecutive_failures);
    info.field("aof_last_write_status", aof.last_write_ok() ? "ok" : "err");
    info.field("aof_last_cow_size", 0);
    info.field("module_fork_in_progress", 0);
    info.field("module_fork_last_cow_size", 0);
    if (aof_on) {
      info.field("aof_current_size", aof.current_size());
      info.field("aof_base_size", aof.base_size());
      info.field("aof_pending_rewrite", rewrite.scheduled ? 1 : 0);
      info.field("aof_buffer_length", aof.buffer_length());
      info.field("aof_pending_bio_fsync", aof.pending_fsync());
      info.field("aof_delayed_fsync", aof.delayed_fsync());
    }
  });
}

void AofService::register_config(ConfigRegistry& c) {
  AofSettings& aof = settings_;
  c.add({"appendonly", {}, 0, [&aof] { return std::string(aof.appendonly ? "yes" : "no"); },
         [this](std::string_view value, bool starting) -> std::string {
           bool enable;
           if (equals_ignore_case(value, "yes")) {
             enable = true;
           } else if (equals_ignore_case(value, "no")) {
             enable = false;
           } else {
             return "argument must be 'yes' or 'no'";
           }
           if (starting || enable == settings_.appendonly) {
             settings_.appendonly = enable;
             return "";
           }
           if (!enable) {
             stop();
             return "";
           }
           return start();
         }});
  // Names of files and of the directory may not be paths, as Redis checks.
  auto base_name_only = [](std::string* target, const char* what) {
    return [target, what](std::string_view value, bool) -> std::string {
      if (value.empty() || value.find('/') != std::string_view::npos) {
        return std::string(what) + " can't be a path, just a filename";
      }
      target->assign(value);
      return "";
    };
  };
  c.add({"appendfilename", {}, kConfigImmutable, [&aof] { return aof.filename; },
         base_name_only(&aof.filename, "appendfilename")});
  c.add({"appenddirname", {}, kConfigImmutable, [&aof] { return aof.dirname; },
         base_name_only(&aof.dirname, "appenddirname")});
  c.add_enum("appendfsync", &aof.fsync,
             {{"always", kAppendFsyncAlways}, {"everysec", kAppendFsyncEverySec},
              {"no", kAppendFsyncNo}});
  c.add_bool("aof-load-truncated", &aof.load_truncated);
  c.add_bool("aof-use-rdb-preamble", &aof.use_rdb_preamble);
  c.add_bool("aof-timestamp-enabled", &aof.timestamp_enabled);
  c.add_bool("no-appendfsync-on-rewrite", &aof.no_fsync_on_rewrite);
  c.add_bool("aof-rewrite-incremental-fsync", &aof.rewrite_incremental_fsync);
  c.add_integer("auto-aof-rewrite-percentage", &aof.rewrite_percentage, 0, INT32_MAX);
  c.add_memory("auto-aof-rewrite-min-size", &aof.rewrite_min_size, 0, INT64_MAX);
}

std::string AofService::load_at_startup(const AofLoadHooks& hooks) {
  log_message(LogLevel::kNotice, "Loading the dataset from the append only file...");
  AofLoadResult loaded = log_->load(state_.services().get<Dispatcher>(), hooks);
  if (!loaded.error.empty()) return loaded.error;
  if (!loaded.existed) {
    const bool rdb_format = settings_.use_rdb_preamble;
    std::string problem = log_->create_base(
        [&](int fd) {
          const RdbSaveOptions options = base_options();
          return rdb_format ? rdb_save_to_fd(fd, state_.keyspace(), options)
                            : write_keyspace_as_commands(state_.keyspace(), fd, options.now_ms,
                                                         settings_.timestamp_enabled, 0,
                                                         options.functions);
        },
        rdb_format);
    if (!problem.empty()) return problem;
  }
  // Replayed commands are not client traffic: no counters, no commandstats, no errorstats.
  state_.stats().reset();
  state_.stats().dirty = 0;
  state_.commands().reset_stats();
  if (std::string problem = log_->open_for_append(); !problem.empty()) return problem;
  state_.propagator().add_sink(log_.get());
  return "";
}

std::string AofService::reload() {
  const bool open = log_->is_open();
  if (open) {
    log_->flush(true);
    state_.propagator().remove_sink(log_.get());
  }
  for (int i = 0; i < state_.keyspace().database_count(); ++i) state_.keyspace().db(i).clear();
  AofLoadResult loaded = log_->load(state_.services().get<Dispatcher>(), AofLoadHooks{});
  if (open) state_.propagator().add_sink(log_.get());
  state_.stats().dirty = 0;
  if (!loaded.error.empty()) return loaded.error;
  return loaded.existed ? "" : "no append only file to load";
}

std::string AofService::start() {
  if (std::string problem = log_->open_for_append(); !problem.empty()) {
    log_message(LogLevel::kWarning, "Redis needs to enable the AOF but can't open the append "
                                    "only file: " + problem);
    return problem;
  }
  state_.propagator().add_sink(log_.get());
  settings_.appendonly = true;
  // As Redis: the file must hold the data already in memory, so a rewrite starts at once.
  if (std::string problem = rewrite(); !problem.empty()) {
    state_.propagator().remove_sink(log_.get());
    log_->close();
    settings_.appendonly = false;
    return "Failed to start the AOF rewrite: " + problem;
  }
  return "";
}

void AofService::stop() {
  kill_rewrite_child();
  state_.propagator().flush();
  log_->close();
  state_.propagator().remove_sink(log_.get());
  settings_.appendonly = false;
  log_message(LogLevel::kNotice, "Calling fsync() on the AOF file.");
}

void AofService::shutdown() {
  kill_rewrite_child();
  if (log_->is_open()) log_->close();
}

RdbSaveOptions AofService::base_options() {
  RdbSaveOptions options = rdb_.save_options(state_.clock().wall_ms());
  options.aof_base = true;
  return options;
}

std::string AofService::rewrite() {
  AofRewriteStats& stats = log_->rewrite_stats();
  if (stats.in_progress) return "Background append only file rewriting already in progress";
  // One child at a time, as Redis: the rewrite starts from the cron once the save ends. Inside
  // EXEC (effects pending) the file switch would split the transaction: it waits as well.
  if (ForkChild::active() || state_.propagator().pending_count() > 0) {
    stats.scheduled = true;
    return "";
  }
  // Writes from now on go to a new incremental file; the child's base covers what came before.
  if (std::string problem = log_->is_open() ? log_->switch_to_new_incremental()
                                            : log_->prepare_directory();
      !problem.empty()) {
    ++stats.consecutive_failures;
    stats.last_ok = false;
    return problem;
  }
  const std::string directory = log_->directory();
  const bool timestamp = settings_.timestamp_enabled;
  const Keyspace& keyspace = state_.keyspace();
  // aof-use-rdb-preamble: the base is an RDB image (smaller, faster to load), as Redis 7.
  const bool rdb_format = settings_.use_rdb_preamble;
  const RdbSaveOptions rdb_options = base_options();
  ForkChild::Started started = ForkChild::start(ForkChild::Kind::kAof, [&] {
    const std::string temp = directory + "/temp-rewriteaof-bg-" + std::to_string(getpid()) +
                             ".aof";
    int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return 1;
    std::string problem =
        rdb_format ? rdb_save_to_fd(fd, keyspace, rdb_options)
                   : write_keyspace_as_commands(keyspace, fd, rdb_options.now_ms, timestamp,
                                                rdb_options.key_save_delay_us,
                                                rdb_options.functions);
    if (problem.empty() && fsync(fd) != 0) problem = strerror(errno);
    close(fd);
    if (!problem.empty()) {
      log_message(LogLevel::kWarning, problem);
      return 1;
    }
    return 0;
  });
  if (!started.ok()) {
    ++stats.consecutive_failures;
    stats.last_ok = false;
    return std::string("Can't rewrite append only file in background: fork: ") +
           strerror(started.error);
  }
  log_message(LogLevel::kNotice, "Background append only file rewriting started by pid " +
                                     std::to_string(started.pid));
  stats.in_progress = true;
  stats.scheduled = false;
  stats.started_ms = state_.clock().wall_ms();
  rewrite_rdb_format_ = rdb_format;
  log_->set_rewrite_child_running(true);
  return "";
}

void AofService::rewrite_child_done(const ForkChild::Exit& exit) {
  log_->set_rewrite_child_running(false);
  const std::string temp =
      log_->path_of("temp-rewriteaof-bg-" + std::to_string(exit.pid) + ".aof");
  std::string problem;
  if (!exit.success()) {
    // Redis's wording, which log scrapers match.
    problem = exit.signal != 0
                  ? "Background AOF rewrite terminated by signal " + std::to_string(exit.signal)
                  : "Background AOF rewrite terminated with error";
    log_message(LogLevel::kWarning, problem);
    unlink(temp.c_str());
  } else {
    // Written data goes to disk before the manifest says the new base is in force.
    log_->flush(true);
    problem = log_->install_rewritten_base(temp, rewrite_rdb_format_);
    if (!problem.empty()) {
      unlink(temp.c_str());
      log_message(LogLevel::kWarning, "Background AOF rewrite failed: " + problem);
    }
  }
  finish_rewrite(problem.empty());
  // An AOF switched on at run time has no base until its first rewrite succeeds: until then
  // the files do not hold the data, so the rewrite is tried again (a few times).
  AofRewriteStats& stats = log_->rewrite_stats();
  if (!problem.empty() && log_->is_open() && !log_->manifest().has_base &&
      stats.consecutive_failures < 10) {
    stats.scheduled = true;
  }
}

void AofService::kill_rewrite_child() {
  if (!ForkChild::active() || ForkChild::kind() != ForkChild::Kind::kAof) return;
  const pid_t pid = ForkChild::pid();
  log_message(LogLevel::kNotice, "Killing running AOF rewrite child: " + std::to_string(pid));
  ForkChild::kill_child();
  unlink(log_->path_of("temp-rewriteaof-bg-" + std::to_string(pid) + ".aof").c_str());
  log_->set_rewrite_child_running(false);
  finish_rewrite(false);
}

void AofService::finish_rewrite(bool ok) {
  AofRewriteStats& stats = log_->rewrite_stats();
  stats.in_progress = false;
  stats.last_time_sec = (state_.clock().wall_ms() - stats.started_ms) / 1000;
  stats.last_ok = ok;
  if (ok) {
    ++stats.rewrites;
    stats.consecutive_failures = 0;
    log_message(LogLevel::kNotice, "Background AOF rewrite finished successfully");
  } else {
    ++stats.consecutive_failures;
    log_message(LogLevel::kWarning, "Background AOF rewrite failed");
  }
}

void AofService::cron(int64_t now_ms) {
  child_cron(now_ms);
  log_cron();
}

void AofService::child_cron(int64_t now_ms) {
  AofRewriteStats& rewrite_stats = log_->rewrite_stats();
  if (!ForkChild::active() && rewrite_stats.scheduled && !rewrite_stats.in_progress) rewrite();
  if (ForkChild::active()) {
    if (std::optional<ForkChild::Exit> exit = ForkChild::poll()) {
      if (exit->kind == ForkChild::Kind::kAof) {
        rewrite_child_done(*exit);
      } else {
        rdb_.background_done(*exit);
      }
    }
  } else {
    rdb_.check_save_points(now_ms);
  }
  rdb_.start_scheduled_save(now_ms);
}

void AofService::log_cron() {
  if (!log_->is_open()) return;
  log_->cron();
  // Automatic rewrite once the files grew by auto-aof-rewrite-percentage over their size
  // after the last rewrite (or load), and are at least auto-aof-rewrite-min-size.
  AofRewriteStats& stats = log_->rewrite_stats();
  if (settings_.rewrite_percentage <= 0 || stats.in_progress || ForkChild::active()) return;
  const int64_t size = log_->current_size();
  const int64_t base = std::max<int64_t>(log_->base_size(), 1);
  if (size < settings_.rewrite_min_size) return;
  const int64_t growth = (size * 100 / base) - 100;
  if (growth >= settings_.rewrite_percentage) {
    log_message(LogLevel::kNotice, "Starting automatic rewriting of AOF on " +
                                       std::to_string(growth) + "% growth");
    rewrite();
  }
}

}  // namespace keywarden
