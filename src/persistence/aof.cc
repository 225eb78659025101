// The AOF writer, its background fsync thread, and start-up loading (aof.h).
#include "persistence/aof.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "commands/client_session.h"
#include "common/log.h"
#include "commands/function_store.h"
#include "persistence/function_libraries.h"
#include "persistence/rdb_file.h"
#include "resp/command_encoding.h"
#include "resp/reply_writer.h"

namespace keywarden {
namespace {

bool file_exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool dir_exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

int64_t file_size(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size) : -1;
}

// fsync of a directory makes a rename or a new file in it durable.
void fsync_directory(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  ::close(fd);
}

std::string errno_text() { return std::strerror(errno); }

bool write_fully(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t count = ::write(fd, bytes.data(), bytes.size());
    if (count < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(count));
  }
  return true;
}

std::string read_whole_file(const std::string& path, bool* ok) {
  std::ifstream file(path, std::ios::binary);
  *ok = static_cast<bool>(file);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

}  // namespace

AofReplay replay_aof_data(Dispatcher& dispatcher, std::string_view bytes, const std::string& name,
                          bool old_style, uint64_t* commands, const AofLoadHooks& hooks,
                          int64_t loaded_before, int64_t total) {
  const char* data = bytes.data();
  const size_t size = bytes.size();
  size_t at = 0;
  if (size >= 5 && std::memcmp(data, "REDIS", 5) == 0) {
    // An RDB-format base, or a pre-7.0 AOF with an RDB preamble followed by commands.
    log_message(LogLevel::kNotice, old_style ? "Reading RDB preamble from AOF file..."
                                             : "Reading RDB base file on AOF loading...");
    ServerState& state = dispatcher.server();
    RdbLoadStats stats;
    std::string problem = rdb_load(std::string_view(data, size), state.keyspace(), state.settings(),
                                   state.clock().wall_ms(), &stats);
    if (!problem.empty()) {
      // The loader's reason, then Redis's line naming the file.
      log_message(LogLevel::kWarning, problem);
      log_message(LogLevel::kWarning, (old_style ? "Error reading the RDB preamble of the AOF file "
                                                 : "Error reading the RDB base file ") +
                                          name + ", AOF loading aborted");
      return {AofReplay::kFailed, 0};
    }
    problem = load_function_libraries(state.services().find<FunctionStore>(),
                                      stats.function_libraries);
    if (!problem.empty()) {
      log_message(LogLevel::kWarning, "Error loading the function libraries of the AOF file " +
                                          name + ", AOF loading aborted: " + problem);
      return {AofReplay::kFailed, 0};
    }
    *commands += stats.keys_loaded;
    at = stats.bytes_consumed;
    if (old_style && at < size) log_message(LogLevel::kNotice, "Reading the remaining AOF tail...");
  }

  ClientSession session;
  session.id = UINT64_MAX;
  session.authenticated = true;
  session.payloads_trusted = true;
  session.must_obey = true;  // replayed while the server is loading
  session.is_local = true;
  std::string replies;
  ReplyWriter writer(&replies);
  std::vector<std::string_view> args;

  size_t valid_up_to = at;
  size_t valid_before_multi = 0;
  // Reads one line (without its terminator); false at the end of the data.
  auto read_line = [&](std::string_view* line, bool* complete) {
    if (at >= size) return false;
    const char* end = static_cast<const char*>(std::memchr(data + at, '\n', size - at));
    size_t stop = end != nullptr ? static_cast<size_t>(end - data) : size;
    *line = std::string_view(data + at, stop - at);
    *complete = end != nullptr;
    at = end != nullptr ? stop + 1 : size;
    return true;
  };
  bool short_read = false;
  bool format_error = false;
  while (at < size) {
    std::string_view line;
    bool complete;
    read_line(&line, &complete);
    if (line.starts_with('#')) continue;
    if (line.empty() || line[0] != '*') {
      format_error = true;
      break;
    }
    if (line.size() == 1 && !complete) {
      short_read = true;
      break;
    }
    const long argc = std::strtol(std::string(line.substr(1)).c_str(), nullptr, 10);
    if (argc < 1) {
      format_error = true;
      break;
    }
    args.clear();
    for (long i = 0; i < argc; ++i) {
      std::string_view header;
      if (!read_line(&header, &complete)) {
        short_read = true;
        break;
      }
      if (header.empty() || header[0] != '$') {
        format_error = true;
        break;
      }
      const long length = std::strtol(std::string(header.substr(1)).c_str(), nullptr, 10);
      if (length < 0 || static_cast<size_t>(length) + 2 > size - at) {
        short_read = true;
        break;
      }
      args.emplace_back(data + at, static_cast<size_t>(length));
      at += static_cast<size_t>(length) + 2;  // the CRLF is skipped unread, as Redis does
    }
    if (short_read || format_error) break;
    Command* command = dispatcher.server().commands().find_for_args(args);
    if (command == nullptr) {
      log_message(LogLevel::kWarning, "Unknown command '" + std::string(args[0]) +
                                          "' reading the append only file " + name);
      return {AofReplay::kFailed, valid_up_to};
    }
    if (command->parent == nullptr && command->spec->name == "multi") {
      valid_before_multi = valid_up_to;
    }
    dispatcher.execute(session, args, writer, command);
    replies.clear();
    ++*commands;
    valid_up_to = at;
    if (hooks.key_load_delay > 0) {
      usleep(static_cast<useconds_t>(hooks.key_load_delay));
    } else if (hooks.key_load_delay < 0) {
      timespec pause{0, -hooks.key_load_delay};
      nanosleep(&pause, nullptr);
    }
    if (hooks.progress && *commands % 1024 == 0) {
      hooks.progress(loaded_before + static_cast<int64_t>(at), total);
    }
  }
  if (format_error) {
    log_message(LogLevel::kWarning,
                "Bad file format reading the append only file " + name +
                    ": make a backup of your AOF file, then use ./redis-check-aof --fix "
                    "<filename.manifest>");
    return {AofReplay::kFailed, valid_up_to};
  }
  if (!short_read && session.transaction.in_multi()) {
    log_message(LogLevel::kWarning, "Revert incomplete MULTI/EXEC transaction in AOF file " + name);
    valid_up_to = valid_before_multi;
    short_read = true;
  }
  if (session.transaction.in_multi()) session.transaction.discard();
  return {short_read ? AofReplay::kShortRead : AofReplay::kOk, valid_up_to};
}

namespace {

enum class ReplayStatus { kOk, kTruncated, kFailed };

// Replays one file with replay_aof_data and deals with a truncated tail as
// aof-load-truncated says.
ReplayStatus replay_file(Dispatcher& dispatcher, const std::string& path, const std::string& name,
                         const std::string& old_style_name, bool load_truncated, uint64_t* commands,
                         const AofLoadHooks& hooks, int64_t loaded_before, int64_t total) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    log_message(LogLevel::kWarning, "Fatal error: can't open the append log file " + name +
                                        " for reading: " + errno_text());
    return ReplayStatus::kFailed;
  }
  struct stat info;
  fstat(fd, &info);
  const size_t size = static_cast<size_t>(info.st_size);
  if (size == 0) {
    ::close(fd);
    return ReplayStatus::kOk;
  }
  void* mapped = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapped == MAP_FAILED) {
    log_message(LogLevel::kWarning,
                "Unrecoverable error reading the append only file " + name + ": " + errno_text());
    return ReplayStatus::kFailed;
  }
  struct Unmap {
    void* at;
    size_t size;
    ~Unmap() { munmap(at, size); }
  } unmap{mapped, size};

  const AofReplay replay = replay_aof_data(
      dispatcher, std::string_view(static_cast<const char*>(mapped), size), name,
      name == old_style_name, commands, hooks, loaded_before, total);
  if (replay.status == AofReplay::kFailed) return ReplayStatus::kFailed;
  if (replay.status == AofReplay::kOk) return ReplayStatus::kOk;
  const size_t valid_up_to = replay.valid_up_to;
  if (load_truncated) {
    log_message(LogLevel::kWarning,
                "!!! Warning: short read while loading the AOF file " + name + "!!!");
    log_message(LogLevel::kWarning, "!!! Truncating the AOF " + name + " at offset " +
                                        std::to_string(valid_up_to) + " !!!");
    if (truncate(path.c_str(), static_cast<off_t>(valid_up_to)) != 0) {
      log_message(LogLevel::kWarning,
                  "Error truncating the AOF file " + name + ": " + errno_text());
    } else {
      log_message(LogLevel::kWarning,
                  "AOF " + name + " loaded anyway because aof-load-truncated is enabled");
      return ReplayStatus::kTruncated;
    }
  }
  log_message(LogLevel::kWarning,
              "Unexpected end of file reading the append only file " + name +
                  ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof "
                  "--fix <filename.manifest>. 2) Alternatively you can set the "
                  "'aof-load-truncated' configuration option to yes and restart the server.");
  return ReplayStatus::kFailed;
}

}  // namespace

// ---- BackgroundFsync -------------------------------------------------------------------------

BackgroundFsync::BackgroundFsync() : thread_([this] { run(); }) {}

BackgroundFsync::~BackgroundFsync() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void BackgroundFsync::fsync_later(int fd) {
  pending_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back({fd, false});
  }
  wake_.notify_one();
}

void BackgroundFsync::close_later(int fd) {
  pending_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back({fd, true});
  }
  wake_.notify_one();
}

void BackgroundFsync::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and every job done
    Job job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    if (job.close) {
      fsync(job.fd);
      ::close(job.fd);
    } else if (sync_) {
      sync_(job.fd);
    } else {
      fdatasync(job.fd);
    }
    pending_.fetch_sub(1, std::memory_order_acq_rel);
    lock.lock();
  }
}

// ---- AofLog ----------------------------------------------------------------------------------

AofLog::AofLog(const AofSettings& settings, const Clock& clock)
    : settings_(settings), clock_(clock) {}

AofLog::~AofLog() { close(); }

AofLoadResult AofLog::load(Dispatcher& dispatcher, const AofLoadHooks& hooks) {
  AofLoadResult result;
  const std::string dir = settings_.dirname;
  const std::string manifest_path = path_of(manifest_file_name(settings_.filename));
  manifest_ = AofManifest{};
  if (dir_exists(dir) && file_exists(manifest_path)) {
    bool ok;
    std::string text = read_whole_file(manifest_path, &ok);
    std::string bad_line;
    std::string problem =
        ok ? AofManifest::parse(text, &manifest_, &bad_line) : "Read AOF manifest failed";
    if (!problem.empty()) {
      std::string report = "*** FATAL AOF MANIFEST FILE ERROR ***\n";
      if (!bad_line.empty()) report += ">>> '" + bad_line + "'\n";
      result.error = report + problem;
      return result;
    }
  }
  // Upgrade from a single-file AOF (Redis before 7.0): the old file becomes the base, under
  // its own name, inside the directory.
  if (file_exists(settings_.filename) &&
      (!dir_exists(dir) || manifest_.empty() ||
       (manifest_.has_base && manifest_.incremental.empty() &&
        manifest_.base.name == settings_.filename && !file_exists(path_of(settings_.filename))))) {
    if (!dir_exists(dir) && mkdir(dir.c_str(), 0755) != 0) {
      result.error = "Can't open or create append-only dir " + dir + ": " + errno_text();
      return result;
    }
    AofManifest upgraded;
    upgraded.has_base = true;
    upgraded.base = AofFileInfo{settings_.filename, 1, AofFileType::kBase};
    upgraded.base_seq = 1;
    if (std::string problem = persist_manifest(upgraded); !problem.empty()) {
      result.error = problem;
      return result;
    }
    if (rename(settings_.filename.c_str(), path_of(settings_.filename).c_str()) != 0) {
      result.error =
          "Error trying to rename the existing AOF to the AOF directory: " + errno_text();
      return result;
    }
    fsync_directory(dir);
    log_message(LogLevel::kNotice,
                "Successfully migrated an old-style AOF into the AOF "
                "directory");
  }
  if (manifest_.empty()) return result;

  std::vector<const AofFileInfo*> files;
  if (manifest_.has_base) files.push_back(&manifest_.base);
  for (const AofFileInfo& info : manifest_.incremental) files.push_back(&info);
  int64_t total = 0;
  for (const AofFileInfo* info : files) {
    int64_t size = file_size(path_of(info->name));
    if (size < 0) {
      log_message(LogLevel::kWarning,
                  "The append log file " + info->name + " doesn't exist: " + errno_text());
      result.error = "Fatal error: the AOF file " + info->name +
                     " listed in the manifest is "
                     "missing";
      return result;
    }
    total += size;
  }
  result.existed = true;
  const int64_t start_us = clock_.monotonic_us();
  int64_t loaded = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const AofFileInfo& info = *files[i];
    const bool last = i + 1 == files.size();
    const int64_t size = file_size(path_of(info.name));
    ReplayStatus status =
        replay_file(dispatcher, path_of(info.name), info.name, settings_.filename,
                    settings_.load_truncated, &result.commands, hooks, loaded, total);
    loaded += std::max<int64_t>(size, 0);
    if (status == ReplayStatus::kFailed) {
      result.error = "AOF loading aborted: see the messages above about " + info.name;
      return result;
    }
    if (status == ReplayStatus::kTruncated) {
      if (!last) {
        result.error = "Fatal error: the truncated file is not the last file";
        return result;
      }
      result.truncated = true;
    }
    if (info.type == AofFileType::kBase) {
      log_message(LogLevel::kNotice, "DB loaded from base file " + info.name);
    } else {
      log_message(LogLevel::kNotice, "DB loaded from incr file " + info.name);
    }
  }
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.3f",
                static_cast<double>(clock_.monotonic_us() - start_us) / 1e6);
  log_message(LogLevel::kNotice,
              std::string("DB loaded from append only file: ") + seconds + " seconds");
  if (hooks.progress) hooks.progress(total, total);
  return result;
}

int64_t AofLog::files_size() const {
  int64_t total = 0;
  if (manifest_.has_base) total += std::max<int64_t>(0, file_size(path_of(manifest_.base.name)));
  for (const AofFileInfo& info : manifest_.incremental) {
    total += std::max<int64_t>(0, file_size(path_of(info.name)));
  }
  return total;
}

std::string AofLog::persist_manifest(const AofManifest& manifest) {
  const std::string temp = path_of(temp_manifest_file_name(settings_.filename));
  const std::string final_path = path_of(manifest_file_name(settings_.filename));
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "Can't open the AOF manifest file " + temp + ": " + errno_text();
  const std::string text = manifest.to_text();
  if (!write_fully(fd, text) || fsync(fd) != 0) {
    std::string problem = "Error writing the AOF manifest file " + temp + ": " + errno_text();
    ::close(fd);
    return problem;
  }
  ::close(fd);
  if (rename(temp.c_str(), final_path.c_str()) != 0) {
    return "Error trying to rename the temporary AOF manifest file " + temp + ": " + errno_text();
  }
  fsync_directory(settings_.dirname);
  manifest_ = manifest;
  return "";
}

std::string AofLog::prepare_directory() {
  const std::string dir = settings_.dirname;
  if (!dir_exists(dir) && mkdir(dir.c_str(), 0755) != 0) {
    return "Can't open or create append-only dir " + dir + ": " + errno_text();
  }
  // A manifest that changed on disk since load (or was never read) is read again.
  const std::string manifest_path = path_of(manifest_file_name(settings_.filename));
  if (manifest_.empty() && file_exists(manifest_path)) {
    bool ok;
    std::string text = read_whole_file(manifest_path, &ok);
    std::string bad_line;
    AofManifest parsed;
    if (ok && AofManifest::parse(text, &parsed, &bad_line).empty()) manifest_ = parsed;
  }
  return "";
}

std::string AofLog::create_base(const std::function<std::string(int fd)>& write_base,
                                bool rdb_format) {
  if (std::string problem = prepare_directory(); !problem.empty()) return problem;
  AofManifest next = manifest_;
  const std::string name = next.start_new_base(settings_.filename, rdb_format);
  log_message(LogLevel::kNotice, "Creating AOF base file " + name + " on server start");
  int fd = open(path_of(name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "Can't open the AOF base file " + name + ": " + errno_text();
  std::string problem = write_base(fd);
  if (problem.empty() && fsync(fd) != 0) problem = errno_text();
  ::close(fd);
  if (problem.empty()) problem = persist_manifest(next);
  if (!problem.empty()) unlink(path_of(name).c_str());
  return problem;
}

std::string AofLog::open_for_append() {
  if (std::string problem = prepare_directory(); !problem.empty()) return problem;
  AofManifest next = manifest_;
  std::string name;
  const bool create = next.incremental.empty();
  if (create) {
    name = next.add_incremental(settings_.filename);
  } else {
    name = next.incremental.back().name;
  }
  int fd = open(path_of(name).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return "Can't open the append-only file " + name + ": " + errno_text();
  if (create) {
    if (std::string problem = persist_manifest(next); !problem.empty()) {
      ::close(fd);
      return problem;
    }
  }
  fd_ = fd;
  report_write_error();  // an error from before the log was closed counts again
  selected_db_ = -1;
  current_size_ = files_size();
  rewrite_base_size_ = current_size_;
  last_fsync_sec_ = clock_.wall_ms() / 1000;
  return "";
}

void AofLog::close() {
  if (fd_ < 0) return;
  flush(true);
  // The close goes through the fsync thread, behind any fsync still queued for this
  // descriptor, so no job ever runs on a closed (or reused) one.
  fsyncer_.close_later(fd_);
  fd_ = -1;
  buffer_.clear();
  report_write_error();
}

void AofLog::report_write_error() {
  const int error = fd_ >= 0 ? last_write_error_ : 0;
  if (error == reported_write_error_) return;
  reported_write_error_ = error;
  if (write_error_listener_) write_error_listener_(error);
}

void AofLog::write_batch(std::span<const PropagatedCommand> batch) {
  if (fd_ < 0) return;
  for (const PropagatedCommand& command : batch) {
    if (settings_.timestamp_enabled) {
      // One annotation per second that saw writes, before the command (and its SELECT).
      const int64_t now_sec = clock_.wall_ms() / 1000;
      if (now_sec > last_timestamp_sec_) {
        buffer_ += "#TS:" + std::to_string(now_sec) + "\r\n";
        last_timestamp_sec_ = now_sec;
      }
    }
    if (command.db != selected_db_) {
      const std::string db = std::to_string(command.db);
      append_resp_command(buffer_, {"SELECT", db});
      selected_db_ = command.db;
    }
    append_resp_command(buffer_, command.args);
  }
}

void AofLog::flush(bool force) {
  if (fd_ < 0) return;
  const int64_t now_sec = clock_.wall_ms() / 1000;
  const bool everysec = settings_.fsync == kAppendFsyncEverySec;
  if (buffer_.empty()) {
    // Data written earlier and never fsynced gets its fsync within the second even when no
    // new write comes.
    if (everysec && written_since_fsync_ > 0 && now_sec > last_fsync_sec_ &&
        fsyncer_.pending() == 0 && !(settings_.no_fsync_on_rewrite && rewrite_child_running_)) {
      fsyncer_.fsync_later(fd_);
      last_fsync_sec_ = now_sec;
      written_since_fsync_ = 0;
    }
    return;
  }
  if (everysec && !force && fsyncer_.pending() > 0) {
    // A write(2) to a file being fsynced blocks on most file systems: wait for the fsync,
    // up to two seconds, then write anyway.
    if (postponed_since_sec_ == 0) {
      postponed_since_sec_ = now_sec;
      return;
    }
    if (now_sec - postponed_since_sec_ < 2) return;
    ++delayed_fsync_;
    log_message(LogLevel::kNotice,
                "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF "
                "buffer without waiting for fsync to complete, this may slow down Redis.");
  }
  postponed_since_sec_ = 0;
  if (flush_sleep_us_ > 0) ::usleep(static_cast<useconds_t>(flush_sleep_us_));

  size_t written = 0;
  while (written < buffer_.size()) {
    ssize_t count = ::write(fd_, buffer_.data() + written, buffer_.size() - written);
    if (count < 0) {
      if (errno == EINTR) continue;
      break;
    }
    written += static_cast<size_t>(count);
  }
  if (written < buffer_.size()) {
    const int error = errno != 0 ? errno : ENOSPC;
    // A partial write is taken back so the file never ends in half a command; if that is
    // not possible the written part stays and only the rest is retried.
    if (written > 0) {
      if (ftruncate(fd_, static_cast<off_t>(current_size_)) == 0) {
        written = 0;
      } else {
        current_size_ += static_cast<int64_t>(written);
        buffer_.erase(0, written);
      }
    }
    if (settings_.fsync == kAppendFsyncAlways) {
      // The client may have been told nothing yet, but the file's state is unknown.
      log_message(LogLevel::kWarning,
                  "Can't recover from AOF write error when the AOF fsync policy is 'always'. "
                  "Exiting...");
      std::exit(1);
    }
    if (last_write_error_ == 0) {
      log_message(LogLevel::kWarning,
                  std::string("Error writing to the AOF file: ") + std::strerror(error));
    }
    last_write_error_ = error;
    report_write_error();
    return;
  }
  if (last_write_error_ != 0) {
    log_message(LogLevel::kWarning, "AOF write error looks solved, Redis can write again.");
    last_write_error_ = 0;
    report_write_error();
  }
  current_size_ += static_cast<int64_t>(buffer_.size());
  written_since_fsync_ += static_cast<int64_t>(buffer_.size());
  if (buffer_.capacity() > 4 * 1024 * 1024) {
    std::string().swap(buffer_);
  } else {
    buffer_.clear();
  }
  if (settings_.no_fsync_on_rewrite && rewrite_child_running_) return;
  if (settings_.fsync == kAppendFsyncAlways) {
    if (fdatasync(fd_) != 0) {
      log_message(LogLevel::kWarning,
                  "Can't persist AOF for fsync error when the AOF fsync "
                  "policy is 'always': " +
                      errno_text() + ". Exiting...");
      std::exit(1);
    }
    last_fsync_sec_ = now_sec;
    written_since_fsync_ = 0;
  } else if (everysec && now_sec > last_fsync_sec_ && fsyncer_.pending() == 0) {
    fsyncer_.fsync_later(fd_);
    last_fsync_sec_ = now_sec;
    written_since_fsync_ = 0;
  }
}

void AofLog::cron() {
  if (fd_ < 0) return;
  if (postponed_since_sec_ != 0 || last_write_error_ != 0 ||
      settings_.fsync == kAppendFsyncEverySec) {
    flush(false);
  }
}

std::string AofLog::switch_to_new_incremental() {
  flush(true);
  AofManifest next = manifest_;
  const std::string name = next.add_incremental(settings_.filename);
  int fd = open(path_of(name).c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return "Can't open the append-only file " + name + ": " + errno_text();
  if (std::string problem = persist_manifest(next); !problem.empty()) {
    ::close(fd);
    unlink(path_of(name).c_str());
    return problem;
  }
  if (fd_ >= 0) fsyncer_.close_later(fd_);
  fd_ = fd;
  report_write_error();
  selected_db_ = -1;
  return "";
}

std::string AofLog::install_rewritten_base(const std::string& temp_path, bool rdb_format) {
  AofManifest next = manifest_;
  const std::string base = next.start_new_base(settings_.filename, rdb_format);
  // The incremental file opened when the rewrite started stays; without an open log (a
  // rewrite with appendonly no) the base alone describes the data.
  next.retire_incremental(is_open() ? 1 : 0);
  if (rename(temp_path.c_str(), path_of(base).c_str()) != 0) {
    return "Error trying to rename the temporary AOF base file " + temp_path + " into " + base +
           ": " + errno_text();
  }
  if (std::string problem = persist_manifest(next); !problem.empty()) {
    unlink(path_of(base).c_str());
    return problem;
  }
  // History files are no longer needed once the new manifest is durable.
  AofManifest cleaned = manifest_;
  for (const AofFileInfo& info : cleaned.history) unlink(path_of(info.name).c_str());
  cleaned.history.clear();
  persist_manifest(cleaned);
  current_size_ = files_size();
  rewrite_base_size_ = current_size_;
  return "";
}

}  // namespace keywarden
