#include "server/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "commands/context.h"
#include "commands/errors.h"
#include "common/log.h"
#include "persistence/fork_child.h"
#include "resp/split_arguments.h"
#include "scripting/script_engine.h"
#include "server/server_families.h"
#include "storage/memory_accounting.h"

namespace keywarden {
namespace {

bool set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Opens a listening TCP socket on `host`:`port`; returns the descriptor or -1 with `error`.
int listen_tcp(const std::string& host, int port, int backlog, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* results = nullptr;
  std::string port_text = std::to_string(port);
  const char* node = host == "*" ? nullptr : host.c_str();
  if (int rc = getaddrinfo(node, port_text.c_str(), &hints, &results); rc != 0) {
    *error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* info = results; info != nullptr; info = info->ai_next) {
    fd = socket(info->ai_family, info->ai_socktype | SOCK_CLOEXEC, info->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (info->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof(yes));
    // The step that failed leads the error text, as in Redis ("bind: Address already in use").
    const char* step = "bind";
    if (bind(fd, info->ai_addr, info->ai_addrlen) == 0) {
      step = "listen";
      if (listen(fd, backlog) == 0 && set_nonblocking(fd)) break;
    }
    *error = std::string(step) + ": " + strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(results);
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
}

}  // namespace

class Server::Listener final : public EventHandler {
 public:
  Listener(Server& server, int fd, bool unix_socket, std::string path, bool tls = false)
      : server_(server), fd_(fd), unix_socket_(unix_socket), tls_(tls), path_(std::move(path)) {
    server_.loop().watch(fd_, EventLoop::kReadable, this);
  }
  ~Listener() override {
    server_.loop().unwatch(fd_);
    close(fd_);
    if (unix_socket_) unlink(path_.c_str());
  }
  void on_events(uint32_t) override { server_.accept_client(fd_, unix_socket_, tls_); }
  int fd() const { return fd_; }
  bool unix_socket() const { return unix_socket_; }
  bool tls() const { return tls_; }

 private:
  Server& server_;
  int fd_;
  bool unix_socket_;
  bool tls_;
  std::string path_;
};

Server::Server() : state_(clock_, 16), dispatcher_(state_) {
  state_.services().provide<Server>(this);
  run_id_ = random_replication_id();
  rdb_ = std::make_unique<RdbService>(state_);
  rdb_->set_memory_gauge([this] { return used_memory(); });
  aof_ = std::make_unique<AofService>(state_, *rdb_);
  ForkChild::attach(&state_.keyspace());
  diagnostics_ = std::make_unique<Diagnostics>(*this);
  replication_ = std::make_unique<ReplicationService>(state_, dispatcher_, loop_, *rdb_);
  scripting_ = std::make_unique<ScriptEngine>(state_);
  clients_ = std::make_unique<ClientRegistry>(state_, dispatcher_, loop_, settings_.hz);
  scripting_->set_busy_handler([this] { process_while_busy(); });
  // A replica loads its primary's full sync as it loads at start-up, and serves clients
  // blocked on keys its primary's stream filled.
  replication_->set_loading_support(
      {[this](bool loading) { set_loading(loading); },
       [this] {
         RdbLoadHooks hooks;
         hooks.key_load_delay = settings_.key_load_delay;
         hooks.progress_interval_bytes = settings_.loading_process_events_interval_bytes;
         hooks.progress = [this](size_t loaded, size_t total) {
           serve_while_loading(static_cast<int64_t>(loaded), static_cast<int64_t>(total));
         };
         return hooks;
       }});
  replication_->set_commands_applied_hook([this] { clients_->serve_blocked_clients(); });
  scripting_->set_monitor_feed(
      [this](const ClientSession& client, std::span<const std::string_view> args) {
        diagnostics_->feed_monitors_from_script(client, args);
      });
  dispatcher_.set_nested_observer([this](const ClientSession& session,
                                         std::span<const std::string_view> args,
                                         const Command& command, int64_t duration_us) {
    diagnostics_->after_nested_command(session, args, command, duration_us);
  });
  register_config();
  // Eviction counts what Redis counts: used memory less the buffers it leaves out
  // (mem_not_counted_for_evict: replication backlog, AOF buffer; none exist yet).
  state_.eviction().set_memory_gauge([this] { return used_memory(); });
  start_time_ms_ = clock_.wall_ms();
}

std::string Server::load_data() {
  // With appendonly the AOF is the source of truth and the RDB file is not read (the AOF
  // side loads its own files).
  if (aof_->settings().appendonly) return "";
  set_loading(true);
  RdbLoadHooks hooks;
  hooks.key_load_delay = settings_.key_load_delay;
  hooks.progress_interval_bytes = settings_.loading_process_events_interval_bytes;
  hooks.progress = [this](size_t loaded, size_t total) {
    serve_while_loading(static_cast<int64_t>(loaded), static_cast<int64_t>(total));
  };
  std::string error = rdb_->load_at_startup(hooks);
  set_loading(false);
  // Redis's lines, which log alerts match: the reason, and after a refused signature or
  // version (errno EINVAL there) the "Fatal error loading" line.
  if (!error.empty() && rdb_->last_load_bad_format()) {
    error += "\nFatal error loading the DB: Invalid argument. Exiting.";
  }
  return error;
}

void Server::serve_while_loading(int64_t loaded_bytes, int64_t total_bytes) {
  loading_.loaded_bytes = loaded_bytes;
  loading_.total_bytes = total_bytes;
  // Clients connected meanwhile are answered (-LOADING for most commands), as Redis does with
  // processEventsWhileBlocked.
  clients_->flush_pending_writes();
  loop_.poll_once(0);
  clients_->flush_pending_writes();
  clients_->reap_closed();
}

Server::~Server() {
  rdb_->kill_background_save();
  clients_->drop_all();
  scripting_.reset();
  listeners_.clear();
}

std::string Server::load_append_only_file() {
  if (!aof_->settings().appendonly) return "";
  AofLoadHooks hooks;
  hooks.key_load_delay = settings_.key_load_delay;
  hooks.progress = [this](int64_t loaded, int64_t total) { serve_while_loading(loaded, total); };
  set_loading(true);
  std::string problem = aof_->load_at_startup(hooks);
  set_loading(false);
  return problem;
}

void Server::set_loading(bool loading) {
  if (loading) loading_ = LoadingState{clock_.wall_ms() / 1000, 0, 0, monotonic_now_us()};
  state_.set_loading(loading);
}

void Server::register_config() {
  ConfigRegistry& c = config_;
  CommandSettings& command = state_.settings();
  constexpr int64_t kMax = INT64_MAX;

  // port and bind may change at run time: the new sockets must open before the old ones close.
  c.add_integer("port", &network_.port, 0, 65535);
  c.add_string("bind", &network_.bind, kConfigMultiArg);
  c.find("port")->set = [this, parse = c.find("port")->set](std::string_view value,
                                                            bool starting) -> std::string {
    int64_t previous = network_.port;
    std::string problem = parse(value, starting);
    if (!problem.empty() || starting || network_.port == previous) return problem;
    if (!reopen_tcp_listeners().empty()) {
      network_.port = previous;
      return "Unable to listen on this port. Check server logs.";
    }
    return "";
  };
  c.find("bind")->set = [this](std::string_view value, bool starting) -> std::string {
    std::string previous = network_.bind;
    network_.bind.assign(value);
    if (starting || network_.bind == previous) return "";
    // Both kinds of listeners move to the new addresses (back to the old on failure).
    if (!reopen_tcp_listeners().empty() ||
        (tls_port_ != 0 && !reopen_tcp_listeners(true).empty())) {
      network_.bind = previous;
      reopen_tcp_listeners();
      return "Failed to bind to specified addresses.";
    }
    return "";
  };
  c.add_string("unixsocket", &network_.unixsocket, kConfigImmutable);
  // Permissions read and shown in octal, as chmod takes them.
  c.add({"unixsocketperm", {}, kConfigImmutable,
         [this] {
           char text[16];
           snprintf(text, sizeof(text), "%llo",
                    static_cast<unsigned long long>(network_.unixsocketperm));
           return std::string(text);
         },
         [this](std::string_view value, bool) -> std::string {
           std::string text(value);
           char* end = nullptr;
           errno = 0;
           long long mode = std::strtoll(text.c_str(), &end, 8);
           if (text.empty() || *end != '\0' || errno != 0) {
             return "argument couldn't be parsed into an integer";
           }
           if (mode < 0 || mode > 0777) return "argument must be between 0 and 511 inclusive";
           network_.unixsocketperm = mode;
           return "";
         }});
  c.add_integer("tcp-backlog", &network_.tcp_backlog, 0, INT32_MAX, kConfigImmutable);
  c.add_bool("protected-mode", &network_.protected_mode);
  c.add_memory("proto-max-bulk-len", &command.proto_max_bulk_len, 1024 * 1024, kMax);
  // requirepass is the default user's password (none: nopass), as in Redis 6+.
  c.add_string("requirepass", &command.requirepass, kConfigSensitive,
               [this] { state_.acl().set_default_password(state_.settings().requirepass); });
  c.add_integer("acllog-max-len", &state_.acl().log_max_len, 0, INT64_MAX);
  c.add_string("aclfile", &state_.acl().acl_file, kConfigImmutable);
  c.add_enum("acl-pubsub-default", &state_.acl().pubsub_default_all,
             {{"allchannels", 1}, {"resetchannels", 0}});
  // user <name> <rule>…: an ACL user, defined once per file (Redis's ACLAppendUserForLoading).
  // Every command is registered by now, so the rules apply at once.
  c.add_file_only("user", [this, seen = std::set<std::string>()](
                              std::span<const std::string> args) mutable -> std::string {
    if (args.empty()) return "Bad directive or wrong number of arguments";
    config_declares_users_ = true;
    // Redis names the argument at the failing rule's index counted from the line's start
    // ("user" is argument 0), which is how its message reads.
    auto culprit = [&](size_t index) { return index == 0 ? std::string("user") : args[index - 1]; };
    if (!seen.insert(args[0]).second) {
      return "Error in user declaration '" + culprit(1) +
             "': Duplicate user found. A user can only be defined once in config files";
    }
    // The default user exists already: its line starts from a reset, as in Redis.
    const bool existing = args[0] == "default";
    std::vector<std::string_view> rules;
    if (existing) rules.push_back("reset");
    rules.insert(rules.end(), args.begin() + 1, args.end());
    size_t failed = 0;
    std::string reason;
    std::string error = state_.acl().set_user(args[0], rules, &failed, &reason);
    if (error.empty()) return "";
    if (existing) --failed;
    if (reason.empty()) return error.substr(4);  // a username or parenthesis problem
    return "Error in user declaration '" + culprit(failed) + "': " + reason;
  }, [this] {
    // CONFIG REWRITE writes every user (default included), unless they live in an aclfile:
    // then the config file loses its user lines, as in Redis 7.0.
    if (!state_.acl().acl_file.empty()) return std::vector<std::string>();
    return state_.acl().user_lines();
  });
  c.add_enum("enable-debug-command", &command.enable_debug_command,
             {{"no", kDebugCommandNo}, {"yes", kDebugCommandYes}, {"local", kDebugCommandLocal}},
             kConfigImmutable);
  // Any non-negative int is accepted and clamped to 1..500, as Redis does.
  c.add_int("hz", &settings_.hz, 0, INT32_MAX, 0, [this] {
    settings_.hz = std::clamp(settings_.hz, 1, 500);
    apply_hz();
  });
  c.add_bool("dynamic-hz", &settings_.dynamic_hz);
  c.add_int("databases", &settings_.databases, 1, INT32_MAX, kConfigImmutable);
  c.add_bool("jemalloc-bg-thread", &jemalloc_bg_thread_, 0,
             [this] { memory::set_background_purge(jemalloc_bg_thread_); });
  c.add_string("dir", &settings_.dir, 0, [this] {
    if (!settings_.dir.empty() && chdir(settings_.dir.c_str()) != 0) {
      log_message(LogLevel::kWarning, "Can't chdir to '" + settings_.dir + "'");
    }
  });
  c.add_string("logfile", &settings_.logfile, kConfigImmutable,
               [this] { set_log_file(settings_.logfile); });
  c.add_enum("loglevel", &settings_.loglevel,
             {{"debug", 0}, {"verbose", 1}, {"notice", 2}, {"warning", 3}}, 0,
             [this] { set_log_level(static_cast<LogLevel>(settings_.loglevel)); });
  settings_.loglevel = 2;
  c.add_string("pidfile", &settings_.pidfile, kConfigImmutable);
  c.add_bool("daemonize", &settings_.daemonize, kConfigImmutable);
  c.add_integer("key-load-delay", &settings_.key_load_delay, INT32_MIN, INT32_MAX);
  c.add_integer("loading-process-events-interval-bytes",
                &settings_.loading_process_events_interval_bytes, 1024, INT32_MAX);
  c.add_string("bind-source-addr", &settings_.bind_source_addr);
  register_process_config();
  register_tls_config();
  c.add_integer("io-threads", &settings_.io_threads, 1, 128, kConfigImmutable);
  c.add_bool("io-threads-do-reads", &settings_.io_threads_do_reads, kConfigImmutable);
  c.add_bool("io-uring", &settings_.io_uring, kConfigImmutable);
  install_services();
  inert_directives_.register_all(c);
  c.seal();
}

void Server::apply_hz() {
  loop_.set_timer_period(1'000'000 / std::max(settings_.hz, 1));
}

void Server::register_process_config() {
  ConfigRegistry& c = config_;
  // rename-command <name> <new-name>: config file (and arguments) only, as in Redis 7.0.
  c.add_file_only("rename-command", [this](std::span<const std::string> args) -> std::string {
    if (args.size() != 2) return "Bad directive or wrong number of arguments";
    return state_.commands().rename(args[0], args[1]);
  });
  // oom-score-adj and its values apply at once; a value the kernel refuses is taken back.
  OomScoreSettings& oom = settings_.oom_score;
  auto apply = [this](bool starting) -> std::string {
    if (starting) return "";  // applied once the whole configuration is read
    std::string problem = apply_oom_score_adj(settings_.oom_score, OomProcessClass::kPrimary);
    if (problem.empty()) return "";
    log_message(LogLevel::kWarning, problem);
    return "Failed to set current oom_score_adj. Check server logs.";
  };
  const std::vector<std::pair<std::string, int>> modes = {
      {"no", kOomScoreNo},
      {"yes", kOomScoreRelative},
      {"relative", kOomScoreRelative},
      {"absolute", kOomScoreAbsolute}};
  c.add({"oom-score-adj", {}, 0,
         [&oom, modes] {
           for (const auto& [name, mode] : modes) {
             if (mode == oom.mode) return name;
           }
           return std::string();
         },
         [&oom, modes, apply](std::string_view value, bool starting) -> std::string {
           std::string lower(value);
           for (char& ch : lower) {
             ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
           }
           for (const auto& [name, mode] : modes) {
             if (name != lower) continue;
             const int before = oom.mode;
             oom.mode = mode;
             std::string problem = apply(starting);
             if (!problem.empty()) oom.mode = before;
             return problem;
           }
           return "argument(s) must be one of the following: no, yes, relative, absolute";
         }});
  c.add({"oom-score-adj-values", {}, kConfigMultiArg,
         [&oom] {
           return std::to_string(oom.values[0]) + " " + std::to_string(oom.values[1]) + " " +
                  std::to_string(oom.values[2]);
         },
         [&oom, apply](std::string_view value, bool starting) -> std::string {
           std::vector<std::string> words;
           if (!split_arguments(value, words) || words.size() != 3) {
             return "wrong number of arguments";
           }
           int parsed[3];
           for (int i = 0; i < 3; ++i) {
             char* end = nullptr;
             errno = 0;
             const long long number = std::strtoll(words[i].c_str(), &end, 10);
             if (*end != '\0' || number < -2000 || number > 2000) {
               return "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
             }
             parsed[i] = static_cast<int>(number);
           }
           if (parsed[1] < parsed[0] || parsed[2] < parsed[1]) {
             log_message(LogLevel::kWarning,
                         "The oom-score-adj-values configuration may not work for "
                         "non-privileged processes! Please consult the documentation.");
           }
           int before[3];
           std::copy(std::begin(oom.values), std::end(oom.values), before);
           std::copy(std::begin(parsed), std::end(parsed), oom.values);
           std::string problem = apply(starting);
           if (!problem.empty()) std::copy(std::begin(before), std::end(before), oom.values);
           return problem;
         }});
  // A forked child (BGSAVE, AOF rewrite) takes the third value.
  ForkChild::set_child_setup([this] {
    std::string problem =
        apply_oom_score_adj(settings_.oom_score, OomProcessClass::kBackgroundChild);
    if (!problem.empty()) log_message(LogLevel::kWarning, problem);
  });
}

std::string Server::configure(const std::string& config_path,
                              std::span<const std::string> arguments) {
  std::string text;
  if (!config_path.empty()) {
    std::ifstream file(config_path);
    if (!file) {
      return "Fatal error, can't open config file '" + config_path + "': " + strerror(errno);
    }
    std::stringstream buffer;
    buffer << file.rdbuf();
    text = buffer.str();
    char resolved[PATH_MAX];
    config_file_ = realpath(config_path.c_str(), resolved) ? resolved : config_path;
  }
  std::string problem = config_.load(text, arguments);
  if (!problem.empty()) return problem;
  std::string ignored;
  for (const std::string& name : inert_directives_.changed_without_effect(config_)) {
    ignored += (ignored.empty() ? "" : ", ") + name;
  }
  if (!ignored.empty()) {
    log_message(LogLevel::kNotice, "Accepted for compatibility with redis.conf, without effect "
                                   "in keywarden (docs/configuration.md): " + ignored);
  }
  // As Redis at start-up: a score the kernel refuses is logged, not fatal.
  if (std::string oom = apply_oom_score_adj(settings_.oom_score, OomProcessClass::kPrimary);
      !oom.empty()) {
    log_message(LogLevel::kWarning, oom);
  }
  state_.keyspace().set_database_count(settings_.databases);
  return "";
}

std::string Server::open_tcp_listeners(std::vector<std::unique_ptr<Listener>>& out, bool tls) {
  const int64_t port = tls ? tls_port_ : network_.port;
  if (port == 0) return "";
  std::istringstream words(network_.bind);
  std::string address;
  while (words >> address) {
    // A leading '-' marks an address that may be unavailable (no IPv6 here, say).
    bool optional = address.front() == '-';
    if (optional) address.erase(0, 1);
    std::string error;
    int fd = listen_tcp(address, static_cast<int>(port), static_cast<int>(network_.tcp_backlog),
                        &error);
    if (fd < 0) {
      if (optional) continue;
      std::string problem = "Warning: Could not create server TCP listening socket " + address +
                            ":" + std::to_string(port) + ": " + error;
      log_message(LogLevel::kWarning, problem);
      return problem;
    }
    if (!tls) {
      actual_port_ = bound_port(fd);
      replication_->set_listening_port(actual_port_);
    }
    out.push_back(std::make_unique<Listener>(*this, fd, false, "", tls));
  }
  return "";
}

std::string Server::reopen_tcp_listeners(bool tls) {
  // The new sockets open first: if any fails, the old ones are still there and stay.
  std::vector<std::unique_ptr<Listener>> fresh;
  std::string problem = open_tcp_listeners(fresh, tls);
  if (!problem.empty()) {
    log_message(LogLevel::kWarning, problem);
    return problem;
  }
  std::erase_if(listeners_, [tls](const std::unique_ptr<Listener>& listener) {
    return !listener->unix_socket() && listener->tls() == tls;
  });
  for (auto& listener : fresh) listeners_.push_back(std::move(listener));
  return "";
}

std::string Server::listen() {
  // The warning naming the address is logged already; this is Redis's closing line.
  // The users of the aclfile, as Redis's ACLLoadUsersAtStartup: fatal when they cannot load,
  // and the file excludes `user` directives.
  if (!state_.acl().acl_file.empty()) {
    if (config_declares_users_) {
      return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
             "file path is invalid. This setup is very likely to lead to configuration errors "
             "and security holes, please define either an ACL file or declare users directly "
             "in your redis.conf, but not both.";
    }
    if (std::string errors = state_.acl().load_file(); !errors.empty()) {
      return "Aborting Redis startup because of ACL errors: " + errors;
    }
  }
  // TLS first: whoever sees the plain port accept may count on the TLS one being there too.
  if (tls_wanted() && !configure_tls().empty()) {
    return "Failed to configure TLS. Check logs for more info.";
  }
  if (std::string problem = open_tcp_listeners(listeners_, true); !problem.empty()) {
    return "Failed listening on port " + std::to_string(tls_port_) + " (TLS), aborting.";
  }
  if (std::string problem = open_tcp_listeners(listeners_); !problem.empty()) {
    return "Failed listening on port " + std::to_string(network_.port) + " (TCP), aborting.";
  }
  if (!network_.unixsocket.empty()) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, network_.unixsocket.c_str(), sizeof(address.sun_path) - 1);
    unlink(network_.unixsocket.c_str());
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(fd, static_cast<int>(network_.tcp_backlog)) != 0 || !set_nonblocking(fd)) {
      std::string error = strerror(errno);
      if (fd >= 0) close(fd);
      return "Failed opening Unix socket: " + error;
    }
    if (network_.unixsocketperm != 0) {
      chmod(network_.unixsocket.c_str(), static_cast<mode_t>(network_.unixsocketperm));
    }
    listeners_.push_back(std::make_unique<Listener>(*this, fd, true, network_.unixsocket));
  }
  if (listeners_.empty()) return "Configured to not listen anywhere, exiting.";
  return "";
}

void Server::accept_client(int listen_fd, bool unix_socket, bool tls) {
  // Accept what is waiting, a bounded number per event like Redis (MAX_ACCEPTS_PER_CALL).
  for (int round = 0; round < 1000; ++round) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    clients_->accept(fd, address, unix_socket ? std::string_view(network_.unixsocket) : "",
                     network_.protected_mode, tls ? &tls_server_context_ : nullptr,
                     tls_.auth_clients);
  }
}

void Server::before_sleep() {
  // The clients that may run again (a pause ended, a blocked client was served or timed out).
  for (Service* service : services_) service->before_sleep();
  // Replies first, so that none waits behind the expiry slice below. Acknowledged means
  // written (and under appendfsync always, durable): the AOF goes first, so this step stays
  // here between the registry's two halves rather than in a service hook whose order among
  // the others would be implicit.
  aof_->sync_before_replies();
  clients_->send_replies();
  // Active expiry: one slice now when keys are due, and no sleep past the next deadline (no
  // sleep at all while a backlog of due keys remains), so keys go about a millisecond after
  // their deadline and a backlog drains between client requests. One look at the index
  // fronts answers both whether a slice is due and when to wake. While clients are being
  // served the slice is short: a request that arrives during it waits for its end.
  Keyspace& keyspace = state_.keyspace();
  int64_t deadline_ms = keyspace.next_expiry_deadline_ms();
  if (deadline_ms < clock_.wall_ms()) {
    keyspace.active_expire_slice(loop_.last_wait_had_events() ? keyspace.short_slice_budget_us()
                                                              : 0);
    state_.propagator().flush();
    deadline_ms = keyspace.next_expiry_deadline_ms();
    // What the slice sent (`expired` events, invalidations, served blocked clients) leaves
    // now rather than at the next wake, behind the DELs it logged.
    aof_->sync_before_replies();
    clients_->flush_pending_writes();
  }
  if (deadline_ms != INT64_MAX) {
    // A key is due once its deadline has passed: wake a millisecond after it. Deadlines can be
    // anywhere up to INT64_MAX, so the wait is capped (the cron wakes the loop anyway).
    constexpr int64_t kMaxWaitMs = 3'600'000;
    const ClockReading now = clock_.read();
    const int64_t wait_ms =
        deadline_ms < now.wall_ms ? 0 : std::min(deadline_ms - now.wall_ms, kMaxWaitMs) + 1;
    loop_.wake_by(now.monotonic_us + wait_ms * 1000);
  }
}

void Server::process_while_busy() {
  clients_->flush_pending_writes();
  loop_.poll_once(0);
  clients_->flush_pending_writes();
  // SHUTDOWN NOSAVE stops the loop: the script is stopped so that the loop can end.
  if (loop_.stopping()) scripting_->abort();
}


void Server::cron() {
  if (cron_paused_) return;
  ++cron_loops_;
  // An eviction that ran past maxmemory-eviction-tenacity's time limit goes on here.
  state_.eviction().run_pending();
  state_.propagator().flush();
  // Incremental rehashing gets a millisecond per database with a resize in progress.
  for (int i = 0; i < state_.keyspace().database_count(); ++i) {
    EntryTable& table = state_.keyspace().db(i).table();
    if (table.rehashing()) table.rehash_for(std::chrono::microseconds(1000));
  }
  // The client registry's cron comes first (services.cc lists it first): the idle timeout,
  // buffer resizing and output limits, then the persistence services'.
  const int64_t now_ms = clock_.wall_ms();
  for (Service* service : services_) service->cron(now_ms);

  NetworkStats& stats = network_stats_;
  const ClientStats& traffic = clients_->stats();
  const int64_t now_us = monotonic_now_us();
  if (stats.last_ops_sample_us != 0 && now_us > stats.last_ops_sample_us) {
    const auto elapsed_us = static_cast<uint64_t>(now_us - stats.last_ops_sample_us);
    const int slot = stats.ops_sample_index;
    stats.ops_samples[slot] =
        (state_.stats().total_commands_processed - stats.last_ops_count) * 1'000'000 / elapsed_us;
    stats.input_samples[slot] =
        (traffic.net_input_bytes - stats.last_input_bytes) * 1'000'000 / elapsed_us;
    stats.output_samples[slot] =
        (traffic.net_output_bytes - stats.last_output_bytes) * 1'000'000 / elapsed_us;
    stats.ops_sample_index = (slot + 1) % 16;
  }
  stats.last_ops_sample_us = now_us;
  stats.last_ops_count = state_.stats().total_commands_processed;
  stats.last_input_bytes = traffic.net_input_bytes;
  stats.last_output_bytes = traffic.net_output_bytes;
  memory::refresh();
  peak_memory_ = std::max(peak_memory_, used_memory());
}

void Server::run() {
  memory::set_background_purge(jemalloc_bg_thread_);
  startup_memory_ = used_memory();
  apply_hz();
  loop_.set_timer(1'000'000 / std::max(settings_.hz, 1), [this] { cron(); });
  loop_.set_before_sleep([this] { before_sleep(); });
  if (settings_.io_uring && clients_->start_io_uring()) {
    loop_.set_batch_hook(
        [this](std::span<const ReadyEvent> batch) { clients_->read_batch(batch); });
  } else if (settings_.io_threads > 1) {
    clients_->start_io_threads(static_cast<int>(settings_.io_threads));
    if (settings_.io_threads_do_reads) {
      loop_.set_batch_hook(
          [this](std::span<const ReadyEvent> batch) { clients_->read_batch(batch); });
    }
    log_message(LogLevel::kNotice,
                "Threaded I/O enabled: " + std::to_string(settings_.io_threads) + " threads" +
                    (settings_.io_threads_do_reads ? ", reads too" : ", writes only"));
  }
  log_message(LogLevel::kNotice, "Ready to accept connections");
  loop_.run();
  shutting_down_ = true;
  // Send what is pending before closing, as a shutdown mid-pipeline should; the AOF first.
  state_.propagator().flush();
  aof_->shutdown();
  clients_->flush_all();
}

void Server::write_loading_progress(InfoText& info) const {
  const LoadingState& loading = loading_;
  if (state_.loading()) {
    // Progress as Redis reports it: bytes of all the files, and a linear ETA.
    const int64_t elapsed_us = monotonic_now_us() - loading.start_us;
    const double fraction = loading.total_bytes > 0
                                ? static_cast<double>(loading.loaded_bytes) /
                                      static_cast<double>(loading.total_bytes)
                                : 0.0;
    info.field("loading_start_time", loading.start_sec);
    info.field("loading_total_bytes", loading.total_bytes);
    info.field("loading_rdb_used_mem", 0);
    info.field("loading_loaded_bytes", loading.loaded_bytes);
    char percent[32];
    std::snprintf(percent, sizeof(percent), "%.2f%%", fraction * 100);
    info.field("loading_loaded_perc", std::string(percent));
    const int64_t eta = fraction > 0 ? static_cast<int64_t>(
                                           static_cast<double>(elapsed_us) / fraction / 1e6 -
                                           static_cast<double>(elapsed_us) / 1e6)
                                     : 1;
    info.field("loading_eta_seconds", eta);
  }
}

size_t Server::used_memory() const { return memory::used_bytes(); }

}  // namespace keywarden
