// CLIENT ID | SETNAME | GETNAME | LIST | INFO | KILL | REPLY | NO-EVICT | PAUSE | UNPAUSE |
// TRACKING | CACHING | GETREDIR | TRACKINGINFO | UNBLOCK | HELP, as Redis 7.0.15 answers them,
// plus SETINFO and NO-TOUCH as Redis 7.2 added them (7.0 answers "unknown subcommand"; clients
// that send SETINFO on connect, like redis-py 5, ignore that, so answering them instead breaks
// nobody). CLIENT LIST and INFO keep 7.0's field set. The tracking itself is
// commands/tracking.h.
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/number.h"
#include "replication/replica.h"
#include "replication/replication_service.h"
#include "server/client_registry.h"
#include "server/server_families.h"

namespace keywarden {
namespace {

enum class ClientType { kNormal, kReplica, kMaster, kPubSub };

// TYPE names of CLIENT LIST and CLIENT KILL; "slave" is the old name of "replica".
bool parse_client_type(std::string_view name, ClientType* type) {
  if (equals_ignore_case(name, "normal")) {
    *type = ClientType::kNormal;
  } else if (equals_ignore_case(name, "replica") || equals_ignore_case(name, "slave")) {
    *type = ClientType::kReplica;
  } else if (equals_ignore_case(name, "master")) {
    *type = ClientType::kMaster;
  } else if (equals_ignore_case(name, "pubsub")) {
    *type = ClientType::kPubSub;
  } else {
    return false;
  }
  return true;
}

std::string unknown_client_type(std::string_view name) {
  return "ERR Unknown client type '" + std::string(name) + "'";
}

// A replica (after SYNC/PSYNC) and the link from this server's primary have their own types; a
// subscribed client is a pub/sub one (in either protocol); every other connection is normal,
// a MONITOR client included, as in Redis.
ClientType client_type(const Connection& connection) {
  const ClientSession& session = connection.session();
  if (session.replica) return ClientType::kReplica;
  if (session.primary_link) return ClientType::kMaster;
  return session.subscribed() ? ClientType::kPubSub : ClientType::kNormal;
}

// One CLIENT LIST line (without its newline), with Redis 7.0.15's fields in its order.
//
// keywarden keeps a connection's pending replies in one buffer; the first 16 KiB of it show
// as obl (Redis's static reply buffer) and the rest as omem, in oll blocks of 16 KiB (Redis's
// reply list). rbs is the buffer's capacity and rbp its recent peak.
//
// `running` is the command the client runs now (CLIENT LIST/INFO by itself), with its
// arguments; null from outside any command.
void append_client_info_at(std::string& out, const Connection& connection, int64_t now_ms,
                           const Command* running, std::span<const std::string_view> args) {
  const ClientSession& session = connection.session();
  const bool self = running != nullptr;

  std::string flags;
  if (connection.monitor()) {
    flags += 'O';
  } else if (session.replica) {
    flags += 'S';
  }
  if (session.primary_link) flags += 'M';
  if (session.subscribed()) flags += 'P';
  if (session.transaction.in_multi()) flags += 'x';
  if (session.blocked.blocked() || connection.held_by_pause()) flags += 'b';
  if (session.tracking.on) flags += 't';
  if (session.tracking.broken_redirect) flags += 'R';
  if (session.tracking.bcast) flags += 'B';
  if (session.transaction.dirty_cas()) flags += 'd';
  if (session.close_after_reply) flags += 'c';
  if (connection.close_asap()) flags += 'A';
  if (connection.unix_socket()) flags += 'U';
  if (session.no_evict) flags += 'e';
  if (session.no_touch) flags += 'T';
  if (flags.empty()) flags = "N";

  // Arguments stay in memory only while their command runs: the caller's own.
  size_t argv_memory = 0;
  if (self) {
    for (std::string_view arg : args) argv_memory += arg.size();
  }
  const size_t query_used = connection.query_buffer_size();
  const size_t query_capacity = std::max(connection.query_buffer_capacity(), query_used);
  const size_t pending = connection.output_size();
  const size_t multi_memory = session.transaction.memory_overhead();
  const size_t total_memory = connection.memory_usage() + argv_memory;

  std::string events;
  if (connection.watched_events() & EventLoop::kReadable) events += 'r';
  if (connection.watched_events() & EventLoop::kWritable) events += 'w';

  // The command the client sent last: for the caller, the one running now, which inside
  // EXEC is the EXEC (the dispatcher records it before running it).
  std::string_view command = "NULL";
  if (self && session.last_command == nullptr) {
    command = running->full_name;
  } else if (session.last_command != nullptr) {
    command = session.last_command->full_name;
  }

  const int64_t now_sec = now_ms / 1000;
  out += "id=" + std::to_string(connection.id());
  out += " addr=" + connection.peer();
  out += " laddr=" + connection.local();
  out += " fd=" + std::to_string(connection.fd());
  out += " name=" + session.name;
  out += " age=" + std::to_string(now_sec - connection.created_ms() / 1000);
  out += " idle=" + std::to_string(self ? 0 : now_sec - connection.last_interaction_ms() / 1000);
  out += " flags=" + flags;
  out += " db=" + std::to_string(session.db);
  const Subscriber& subscriptions = connection;
  out += " sub=" + std::to_string(subscriptions.channels().size());
  out += " psub=" + std::to_string(subscriptions.patterns().size());
  out += " ssub=" + std::to_string(subscriptions.shard_channels().size());
  out += " multi=";
  out += session.transaction.in_multi() ? std::to_string(session.transaction.queued_count())
                                        : "-1";
  out += " qbuf=" + std::to_string(query_used);
  out += " qbuf-free=" + std::to_string(query_capacity - query_used);
  out += " argv-mem=" + std::to_string(argv_memory);
  out += " multi-mem=" + std::to_string(multi_memory);
  out += " rbs=" + std::to_string(connection.output_capacity());
  out += " rbp=" + std::to_string(std::max(connection.output_peak(), pending));
  const size_t overflow = connection.output_memory();
  constexpr size_t kReplyBlock = 16 * 1024;
  out += " obl=" + std::to_string(pending - overflow);
  out += " oll=" + std::to_string((overflow + kReplyBlock - 1) / kReplyBlock);
  out += " omem=" + std::to_string(overflow);
  out += " tot-mem=" + std::to_string(total_memory);
  out += " events=" + events;
  out += " cmd=";
  out += command;
  out += " user=";
  out += session.user != nullptr ? std::string_view(session.user->name) : "(superuser)";
  // redir: the client tracking messages go to, 0 for itself, -1 when not tracking.
  out += " redir=";
  out += std::to_string(session.tracking.on ? static_cast<int64_t>(session.tracking.redirect) : -1);
  out += " resp=";
  out += std::to_string(session.resp);
}

void append_client_info(std::string& out, const Connection& connection,
                        const CommandContext& ctx) {
  if (connection.id() == ctx.session.id) {
    append_client_info_at(out, connection, ctx.now_ms, &ctx.command, ctx.args);
  } else {
    append_client_info_at(out, connection, ctx.now_ms, nullptr, {});
  }
}

void client_id_command(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(ctx.session.id));
}

// Client names may not hold spaces or control characters, so CLIENT LIST stays parseable.
bool valid_client_name(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

void client_setname_command(CommandContext& ctx) {
  if (!valid_client_name(ctx.args[2])) return ctx.error(errors::kInvalidClientName);
  ctx.session.name.assign(ctx.args[2]);
  ctx.reply.simple_string("OK");
}

void client_getname_command(CommandContext& ctx) {
  if (ctx.session.name.empty()) return ctx.reply.null();
  ctx.reply.bulk(ctx.session.name);
}

void client_list_command(CommandContext& ctx) {
  ClientRegistry& clients = ctx.service<ClientRegistry>();
  const size_t argc = ctx.args.size();
  std::string text;
  if (argc > 3 && equals_ignore_case(ctx.args[2], "id")) {
    // Every ID is checked before anything is listed; unknown IDs are left out.
    std::vector<int64_t> ids;
    for (size_t i = 3; i < argc; ++i) {
      int64_t id;
      if (!parse_int64(ctx.args[i], &id)) return ctx.error(errors::kInvalidClientId);
      ids.push_back(id);
    }
    for (int64_t id : ids) {
      Connection* connection = id > 0 ? clients.connection(static_cast<uint64_t>(id)) : nullptr;
      if (connection == nullptr || connection->closed()) continue;
      append_client_info(text, *connection, ctx);
      text += '\n';
    }
    return ctx.reply.verbatim(text);
  }
  bool filter_type = false;
  ClientType type = ClientType::kNormal;
  if (argc == 4 && equals_ignore_case(ctx.args[2], "type")) {
    if (!parse_client_type(ctx.args[3], &type)) return ctx.error(unknown_client_type(ctx.args[3]));
    filter_type = true;
  } else if (argc != 2) {
    return ctx.error(errors::kSyntax);
  }
  for (const auto& [id, connection] : clients.connections()) {
    if (connection->closed()) continue;
    if (filter_type && client_type(*connection) != type) continue;
    append_client_info(text, *connection, ctx);
    text += '\n';
  }
  ctx.reply.verbatim(text);
}

void client_info_command(CommandContext& ctx) {
  Connection* self = ctx.service<ClientRegistry>().connection(ctx.session.id);
  std::string text;
  if (self != nullptr) append_client_info(text, *self, ctx);
  text += '\n';
  ctx.reply.verbatim(text);
}

// CLIENT KILL <addr> (the old form: kills even the caller, errors when nothing matched) or
// CLIENT KILL <filter> <value> ... (every filter must match; replies with the number killed).
void client_kill_command(CommandContext& ctx) {
  ClientRegistry& clients = ctx.service<ClientRegistry>();
  const size_t argc = ctx.args.size();
  const bool old_form = argc == 3;
  std::string_view address, local_address;
  bool has_address = false, has_local_address = false, has_type = false;
  ClientType type = ClientType::kNormal;
  int64_t id = 0;
  bool skip_me = true;
  std::shared_ptr<AclUser> user;  // USER filter

  if (old_form) {
    address = ctx.args[2];
    has_address = true;
    skip_me = false;
  } else {
    for (size_t i = 2; i < argc; i += 2) {
      std::string_view option = ctx.args[i];
      if (i + 1 >= argc) return ctx.error(errors::kSyntax);
      std::string_view value = ctx.args[i + 1];
      if (equals_ignore_case(option, "id")) {
        if (!parse_int64(value, &id) || id < 1) return ctx.error(errors::kClientIdNotPositive);
      } else if (equals_ignore_case(option, "type")) {
        if (!parse_client_type(value, &type)) return ctx.error(unknown_client_type(value));
        has_type = true;
      } else if (equals_ignore_case(option, "addr")) {
        address = value;
        has_address = true;
      } else if (equals_ignore_case(option, "laddr")) {
        local_address = value;
        has_local_address = true;
      } else if (equals_ignore_case(option, "user")) {
        user = ctx.server.acl().find(value);
        if (user == nullptr) return ctx.error("ERR No such user '" + std::string(value) + "'");
      } else if (equals_ignore_case(option, "skipme")) {
        if (equals_ignore_case(value, "yes")) {
          skip_me = true;
        } else if (equals_ignore_case(value, "no")) {
          skip_me = false;
        } else {
          return ctx.error(errors::kSyntax);
        }
      } else {
        return ctx.error(errors::kSyntax);
      }
    }
  }

  int64_t killed = 0;
  bool kill_self = false;
  for (const auto& [connection_id, connection] : clients.connections()) {
    if (connection->closed()) continue;
    if (has_address && connection->peer() != address) continue;
    if (has_local_address && connection->local() != local_address) continue;
    if (has_type && client_type(*connection) != type) continue;
    if (id != 0 && connection->id() != static_cast<uint64_t>(id)) continue;
    if (user != nullptr && connection->session().user != user) continue;
    const bool self = connection->id() == ctx.session.id;
    if (self && skip_me) continue;
    // Another client goes at once; the caller only once its reply is out.
    if (self) {
      kill_self = true;
    } else {
      connection->close();
    }
    ++killed;
  }
  // The link to this server's primary is not a registered connection: TYPE master reaches it
  // through the replication service (it reconnects and offers a partial resync).
  if (has_type && type == ClientType::kMaster && !has_address && !has_local_address && id == 0) {
    ReplicationService* replication = ctx.server.services().find<ReplicationService>();
    if (replication != nullptr && replication->replica().kill_link()) ++killed;
  }
  if (old_form) {
    if (killed == 0) return ctx.error(errors::kNoSuchClient);
    ctx.reply.simple_string("OK");
  } else {
    ctx.reply.integer(killed);
  }
  if (kill_self) ctx.session.close_after_reply = true;
}

// The connection applies the reply mode to each command's output (see Connection::execute_one).
void client_reply_command(CommandContext& ctx) {
  std::string_view mode = ctx.args[2];
  if (equals_ignore_case(mode, "on")) {
    ctx.session.reply_mode = ReplyMode::kOn;
    ctx.reply.simple_string("OK");
  } else if (equals_ignore_case(mode, "off")) {
    ctx.session.reply_mode = ReplyMode::kOff;
  } else if (equals_ignore_case(mode, "skip")) {
    if (ctx.session.reply_mode != ReplyMode::kOff) ctx.session.reply_mode = ReplyMode::kSkipNext;
  } else {
    ctx.error(errors::kSyntax);
  }
}

void client_no_evict_command(CommandContext& ctx) {
  std::string_view mode = ctx.args[2];
  if (equals_ignore_case(mode, "on")) {
    ctx.session.no_evict = true;
  } else if (equals_ignore_case(mode, "off")) {
    ctx.session.no_evict = false;
  } else {
    return ctx.error(errors::kSyntax);
  }
  ctx.reply.simple_string("OK");
}

void client_no_touch_command(CommandContext& ctx) {
  std::string_view mode = ctx.args[2];
  if (equals_ignore_case(mode, "on")) {
    ctx.session.no_touch = true;
  } else if (equals_ignore_case(mode, "off")) {
    ctx.session.no_touch = false;
  } else {
    return ctx.error(errors::kSyntax);
  }
  ctx.reply.simple_string("OK");
}

// CLIENT SETINFO LIB-NAME <name> | LIB-VER <version> (Redis 7.2).
void client_setinfo_command(CommandContext& ctx) {
  std::string_view attribute = ctx.args[2];
  std::string_view value = ctx.args[3];
  std::string* target;
  std::string_view label;
  if (equals_ignore_case(attribute, "lib-name")) {
    target = &ctx.session.library_name;
    label = "lib-name";
  } else if (equals_ignore_case(attribute, "lib-ver")) {
    target = &ctx.session.library_version;
    label = "lib-ver";
  } else {
    return ctx.error("ERR Unrecognized option '" + std::string(attribute) + "'");
  }
  // Like client names, so that CLIENT LIST stays parseable.
  for (char c : value) {
    if (c < '!' || c > '~') {
      return ctx.error("ERR " + std::string(label) +
                       " cannot contain spaces, newlines or special characters.");
    }
  }
  target->assign(value);
  ctx.reply.simple_string("OK");
}

// CLIENT PAUSE <milliseconds> [WRITE|ALL]. The mode is checked before the timeout, as in Redis.
void client_pause_command(CommandContext& ctx) {
  if (ctx.args.size() > 4) return reply_subcommand_syntax_error(ctx);
  bool write_only = false;
  if (ctx.args.size() == 4) {
    if (equals_ignore_case(ctx.args[3], "write")) {
      write_only = true;
    } else if (!equals_ignore_case(ctx.args[3], "all")) {
      return ctx.error(errors::kClientPauseMode);
    }
  }
  int64_t timeout;
  if (!parse_int64(ctx.args[2], &timeout)) return ctx.error(errors::kTimeoutNotInteger);
  if (timeout < 0) return ctx.error(errors::kTimeoutNegative);
  // Redis adds the timeout to the current time without an overflow check: a huge timeout
  // wraps to a deadline in the past, which pauses nothing. We wrap the same way.
  const int64_t deadline =
      timeout == 0 ? 0
                   : static_cast<int64_t>(static_cast<uint64_t>(timeout) +
                                          static_cast<uint64_t>(ctx.now_ms));
  ctx.server.client_pause().pause(deadline, write_only, ctx.server.clock().wall_ms());
  ctx.reply.simple_string("OK");
}

void client_unpause_command(CommandContext& ctx) {
  ctx.server.client_pause().unpause();
  ctx.reply.simple_string("OK");
}

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN] [OPTOUT] [NOLOOP]: every
// option is parsed (and REDIRECT's client looked up) before ON or OFF is judged, as in Redis.
void client_tracking_command(CommandContext& ctx) {
  KeyTracking& tracking = ctx.server.tracking();
  TrackingRequest request;
  bool redirect_given = false;
  for (size_t i = 3; i < ctx.args.size(); ++i) {
    const std::string_view option = ctx.args[i];
    const bool has_value = i + 1 < ctx.args.size();
    if (equals_ignore_case(option, "redirect") && has_value) {
      ++i;
      if (redirect_given) {
        return ctx.error("ERR A client can only redirect to a single other client");
      }
      int64_t id;
      if (!parse_int64(ctx.args[i], &id)) return ctx.error(errors::kNotInteger);
      if (tracking.find_client(static_cast<uint64_t>(id)) == nullptr) {
        return ctx.error("ERR The client ID you want redirect to does not exist");
      }
      redirect_given = id != 0;
      request.redirect = static_cast<uint64_t>(id);
    } else if (equals_ignore_case(option, "bcast")) {
      request.bcast = true;
    } else if (equals_ignore_case(option, "optin")) {
      request.optin = true;
    } else if (equals_ignore_case(option, "optout")) {
      request.optout = true;
    } else if (equals_ignore_case(option, "noloop")) {
      request.noloop = true;
    } else if (equals_ignore_case(option, "prefix") && has_value) {
      request.prefixes.emplace_back(ctx.args[++i]);
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (equals_ignore_case(ctx.args[2], "on")) {
    if (std::string refusal = tracking.check_enable(ctx.session, request); !refusal.empty()) {
      return ctx.error(refusal);
    }
    tracking.enable(ctx.session, request);
  } else if (equals_ignore_case(ctx.args[2], "off")) {
    tracking.disable(ctx.session);
  } else {
    return ctx.error(errors::kSyntax);
  }
  ctx.reply.simple_string("OK");
}

// CLIENT CACHING YES|NO: whether the next command's keys are tracked, against the OPTIN or
// OPTOUT default.
void client_caching_command(CommandContext& ctx) {
  ClientTracking& mode = ctx.session.tracking;
  if (!mode.on) {
    return ctx.error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
        "or OPTOUT mode enabled");
  }
  if (equals_ignore_case(ctx.args[2], "yes")) {
    if (!mode.optin) {
      return ctx.error(
          "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    }
  } else if (equals_ignore_case(ctx.args[2], "no")) {
    if (!mode.optout) {
      return ctx.error(
          "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    }
  } else {
    return ctx.error(errors::kSyntax);
  }
  mode.caching = true;
  ctx.reply.simple_string("OK");
}

// -1: not tracking; 0: messages go to the client itself.
void client_getredir_command(CommandContext& ctx) {
  const ClientTracking& mode = ctx.session.tracking;
  ctx.reply.integer(mode.on ? static_cast<int64_t>(mode.redirect) : -1);
}

void client_trackinginfo_command(CommandContext& ctx) {
  const ClientTracking& mode = ctx.session.tracking;
  std::vector<std::string_view> flags{mode.on ? "on" : "off"};
  if (mode.bcast) flags.push_back("bcast");
  if (mode.optin) {
    flags.push_back("optin");
    if (mode.caching) flags.push_back("caching-yes");
  }
  if (mode.optout) {
    flags.push_back("optout");
    if (mode.caching) flags.push_back("caching-no");
  }
  if (mode.noloop) flags.push_back("noloop");
  if (mode.broken_redirect) flags.push_back("broken_redirect");
  ctx.reply.map_header(3);
  ctx.reply.bulk("flags");
  ctx.reply.set_header(flags.size());
  for (std::string_view flag : flags) ctx.reply.bulk(flag);
  ctx.reply.bulk("redirect");
  ctx.reply.integer(mode.on ? static_cast<int64_t>(mode.redirect) : -1);
  ctx.reply.bulk("prefixes");
  ctx.reply.array_header(mode.prefixes.size());
  for (const std::string& prefix : mode.prefixes) ctx.reply.bulk(prefix);
}

// CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: ends the wait of a client blocked on keys, with its
// command's timeout reply (the default) or with an UNBLOCKED error; 0 when that client is not
// blocked.
void client_unblock_command(CommandContext& ctx) {
  if (ctx.args.size() > 4) return reply_subcommand_syntax_error(ctx);
  const bool with_error = ctx.args.size() == 4 && equals_ignore_case(ctx.args[3], "error");
  if (ctx.args.size() == 4 && !with_error && !equals_ignore_case(ctx.args[3], "timeout")) {
    return ctx.error(errors::kClientUnblockReason);
  }
  int64_t id;
  if (!parse_int64(ctx.args[2], &id)) return ctx.error(errors::kNotInteger);
  Connection* target = ctx.service<ClientRegistry>().connection(static_cast<uint64_t>(id));
  if (target == nullptr || target->closed() || !target->session().blocked.blocked()) {
    ctx.reply.integer(0);
    return;
  }
  target->end_blocked(with_error ? errors::kUnblockedByClient : std::string_view{});
  ctx.reply.integer(1);
}

void client_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kClientFlags = kNoScript | kLoading | kStale;
constexpr uint32_t kClientAdminFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kClientSubcommands[] = {
    {"id", 2, kClientFlags, 0, 0, 0, kAclConnection, client_id_command, "connection", "5.0.0",
     "Returns the client ID for the current connection", "O(1)"},
    {"setname", 3, kClientFlags, 0, 0, 0, kAclConnection, client_setname_command, "connection",
     "2.6.9", "Set the current connection name", "O(1)"},
    {"getname", 2, kClientFlags, 0, 0, 0, kAclConnection, client_getname_command, "connection",
     "2.6.9", "Get the current connection name", "O(1)"},
    {"list", -2, kClientAdminFlags, 0, 0, 0, kAclConnection, client_list_command, "connection",
     "2.4.0", "Get the list of client connections",
     "O(N) where N is the number of client connections"},
    {"info", 2, kClientFlags, 0, 0, 0, kAclConnection, client_info_command, "connection", "6.2.0",
     "Returns information about the current client connection.", "O(1)"},
    {"kill", -3, kClientAdminFlags, 0, 0, 0, kAclConnection, client_kill_command, "connection",
     "2.4.0", "Kill the connection of a client",
     "O(N) where N is the number of client connections"},
    {"reply", 3, kClientFlags, 0, 0, 0, kAclConnection, client_reply_command, "connection",
     "3.2.0", "Instruct the server whether to reply to commands", "O(1)"},
    {"no-evict", 3, kClientAdminFlags, 0, 0, 0, kAclConnection, client_no_evict_command,
     "connection", "7.0.0", "Set client eviction mode for the current connection", "O(1)"},
    {"no-touch", 3, kClientFlags, 0, 0, 0, kAclConnection, client_no_touch_command,
     "connection", "7.2.0",
     "Controls whether commands sent by the client affect the LRU/LFU of accessed keys", "O(1)"},
    {"setinfo", 4, kClientFlags, 0, 0, 0, kAclConnection, client_setinfo_command, "connection",
     "7.2.0", "Sets information specific to the client or connection.", "O(1)"},
    {"pause", -3, kClientAdminFlags, 0, 0, 0, kAclConnection, client_pause_command,
     "connection", "2.9.50", "Stop processing commands from clients for some time", "O(1)"},
    {"unpause", 2, kClientAdminFlags, 0, 0, 0, kAclConnection, client_unpause_command,
     "connection", "6.2.0", "Resume processing of clients that were paused",
     "O(N) Where N is the number of paused clients"},
    {"tracking", -3, kClientFlags, 0, 0, 0, kAclConnection, client_tracking_command,
     "connection", "6.0.0", "Enable or disable server assisted client side caching support",
     "O(1). Some options may introduce additional complexity."},
    {"caching", 3, kClientFlags, 0, 0, 0, kAclConnection, client_caching_command, "connection",
     "6.0.0", "Instruct the server about tracking or not keys in the next request", "O(1)"},
    {"getredir", 2, kClientFlags, 0, 0, 0, kAclConnection, client_getredir_command,
     "connection", "6.0.0", "Get tracking notifications redirection client ID if any", "O(1)"},
    {"trackinginfo", 2, kClientFlags, 0, 0, 0, kAclConnection, client_trackinginfo_command,
     "connection", "6.2.0",
     "Return information about server assisted client side caching for the current connection",
     "O(1)"},
    {"unblock", -3, kClientAdminFlags, 0, 0, 0, kAclConnection, client_unblock_command,
     "connection", "5.0.0",
     "Unblock a client blocked in a blocking command from a different connection",
     "O(log N) where N is the number of client connections"},
    {"help", 2, kLoading | kStale, 0, 0, 0, kAclConnection, client_help_command, "connection",
     "5.0.0", "Show helpful text about the different subcommands", "O(1)"},
};

constexpr CommandSpec kClientCommands[] = {
    {"client", -2, 0, 0, 0, 0, 0, nullptr, "connection", "2.4.0",
     "A container for client connection commands", "Depends on subcommand.",
     kClientSubcommands},
};

}  // namespace

std::string client_info_line(const Connection& connection, int64_t now_ms,
                             const Command* running) {
  std::string line;
  append_client_info_at(line, connection, now_ms, running, {});
  return line;
}

void register_client_commands(CommandTable& table) { table.add(kClientCommands); }

}  // namespace keywarden
