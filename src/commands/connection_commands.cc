// Connection commands: PING, ECHO, SELECT, QUIT, RESET, AUTH, HELLO.
#include <string>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "common/version.h"

namespace keywarden {
namespace {

void ping_command(CommandContext& ctx) {
  if (ctx.args.size() > 2) return ctx.error(errors::wrong_arity("ping"));
  // A subscribed RESP2 client reads replies the way it reads messages: as arrays.
  if (ctx.session.resp == 2 && ctx.session.subscribed()) {
    ctx.reply.array_header(2);
    ctx.reply.bulk("pong");
    return ctx.reply.bulk(ctx.args.size() == 2 ? ctx.args[1] : std::string_view());
  }
  if (ctx.args.size() == 2) return ctx.reply.bulk(ctx.args[1]);
  ctx.reply.simple_string("PONG");
}

void echo_command(CommandContext& ctx) { ctx.reply.bulk(ctx.args[1]); }

void select_command(CommandContext& ctx) {
  int64_t index;
  if (!parse_int64(ctx.args[1], &index) || index < INT32_MIN || index > INT32_MAX) {
    return ctx.error(errors::kNotInteger);
  }
  if (index < 0 || index >= ctx.server.keyspace().database_count()) {
    return ctx.error(errors::kDbIndexOutOfRange);
  }
  ctx.session.db = static_cast<int>(index);
  ctx.reply.simple_string("OK");
}

void quit_command(CommandContext& ctx) {
  ctx.session.close_after_reply = true;
  ctx.reply.simple_string("OK");
}

void reset_command(CommandContext& ctx) {
  ClientSession& session = ctx.session;
  session.transaction.discard();  // leaves MULTI and unwatches, as Redis's RESET does
  if (session.subscriber != nullptr) ctx.server.pubsub().unsubscribe_all(session.subscriber);
  ctx.server.tracking().disable(session);
  session.db = 0;
  session.resp = 2;
  ctx.reply.set_resp(2);
  session.reply_mode = ReplyMode::kOn;
  session.no_evict = false;
  session.no_touch = false;
  session.name.clear();
  // Back to the default user: authenticated only when it needs no password.
  if (session.user != nullptr) session.user = ctx.server.acl().default_user();
  session.authenticated = ctx.server.acl().default_user_open();
  ctx.reply.simple_string("RESET");
}

// Logs the client in as `username` when `password` opens it (Redis's ACLAuthenticateUser);
// otherwise records the failure in the ACL log. The server's own sessions keep running
// unrestricted.
bool authenticate(CommandContext& ctx, std::string_view username, std::string_view password) {
  AclStore& acl = ctx.server.acl();
  std::shared_ptr<AclUser> user = acl.authenticate(username, password);
  if (user == nullptr) {
    acl.log(ctx.session, &ctx.command, AclDenial::kAuth, ctx.session.transaction.in_multi() ? "multi" : "toplevel",
            ctx.args[0], username, ctx.now_ms);
    return false;
  }
  ctx.session.authenticated = true;
  if (ctx.session.user != nullptr) ctx.session.user = std::move(user);
  return true;
}

void auth_command(CommandContext& ctx) {
  if (ctx.args.size() > 3) return ctx.error(errors::kSyntax);
  if (ctx.args.size() == 2 && ctx.server.acl().default_user()->nopass()) {
    return ctx.error(errors::kAuthNotConfigured);
  }
  std::string_view username = ctx.args.size() == 3 ? ctx.args[1] : "default";
  if (!authenticate(ctx, username, ctx.args.back())) return ctx.error(errors::kWrongPass);
  ctx.reply.simple_string("OK");
}

// Client names may not hold spaces or control characters, so CLIENT LIST stays parseable.
bool valid_client_name(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

void hello_command(CommandContext& ctx) {
  int64_t version = ctx.session.resp;
  size_t next = 1;
  if (ctx.args.size() >= 2) {
    if (!parse_int64(ctx.args[1], &version)) {
      return ctx.error("ERR Protocol version is not an integer or out of range");
    }
    next = 2;
    if (version < 2 || version > 3) return ctx.error(errors::kNoProtoVersion);
  }
  std::string_view username, password, name;
  bool has_auth = false, has_name = false;
  for (size_t i = next; i < ctx.args.size(); ++i) {
    size_t more = ctx.args.size() - i - 1;
    if (equals_ignore_case(ctx.args[i], "AUTH") && more >= 2) {
      has_auth = true;
      username = ctx.args[i + 1];
      password = ctx.args[i + 2];
      i += 2;
    } else if (equals_ignore_case(ctx.args[i], "SETNAME") && more >= 1) {
      has_name = true;
      name = ctx.args[i + 1];
      i += 1;
    } else {
      return ctx.error("ERR Syntax error in HELLO option '" + std::string(ctx.args[i]) + "'");
    }
  }
  if (has_auth && !authenticate(ctx, username, password)) return ctx.error(errors::kWrongPass);
  if (!ctx.session.authenticated && !ctx.server.acl().default_user_open()) {
    return ctx.error("NOAUTH HELLO must be called with the client already authenticated, "
                     "otherwise the HELLO AUTH <user> <pass> option can be used to authenticate "
                     "the client and select the RESP protocol version at the same time");
  }
  if (has_name) {
    if (!valid_client_name(name)) {
      return ctx.error("ERR Client names cannot contain spaces, newlines or special characters.");
    }
    ctx.session.name.assign(name);
  }
  ctx.session.resp = static_cast<int>(version);
  ctx.reply.set_resp(ctx.session.resp);

  ReplyWriter& reply = ctx.reply;
  reply.map_header(7);
  reply.bulk("server");
  reply.bulk("redis");
  reply.bulk("version");
  reply.bulk(kRedisCompatibleVersion);
  reply.bulk("proto");
  reply.integer(version);
  reply.bulk("id");
  reply.integer(static_cast<int64_t>(ctx.session.id));
  reply.bulk("mode");
  reply.bulk("standalone");
  reply.bulk("role");
  reply.bulk("master");
  reply.bulk("modules");
  reply.array_header(0);
}

constexpr uint32_t kConnectionFlags = kNoScript | kLoading | kStale | kFast;

constexpr CommandSpec kConnectionCommands[] = {
    {"ping", -1, kFast | kSubscribedContext | kRefusedOnDiskError, 0, 0, 0, kAclConnection,
     ping_command, "connection", "1.0.0", "Ping the server", "O(1)"},
    {"echo", 2, kLoading | kStale | kFast, 0, 0, 0, kAclConnection, echo_command, "connection",
     "1.0.0", "Echo the given string", "O(1)"},
    {"select", 2, kLoading | kStale | kFast, 0, 0, 0, kAclConnection, select_command,
     "connection", "1.0.0", "Change the selected database for the current connection", "O(1)"},
    {"quit", -1, kAllowBusy | kNoAuth | kConnectionFlags | kRunsInMulti | kEndsMulti |
                      kSubscribedContext, 0, 0, 0, kAclConnection, quit_command,
     "connection", "1.0.0", "Close the connection", "O(1)"},
    {"reset", 1,
     kNoAuth | kConnectionFlags | kAllowBusy | kRunsInMulti | kEndsMulti | kSubscribedContext, 0,
     0, 0, kAclConnection, reset_command,
     "connection", "6.2.0", "Reset the connection", "O(1)"},
    {"auth", -2, kNoAuth | kConnectionFlags | kAllowBusy, 0, 0, 0, kAclConnection, auth_command,
     "connection", "1.0.0", "Authenticate to the server",
     "O(N) where N is the number of passwords defined for the user"},
    {"hello", -1, kNoAuth | kConnectionFlags | kAllowBusy, 0, 0, 0, kAclConnection,
     hello_command, "connection", "6.0.0", "Handshake with Redis", "O(1)"},
};

}  // namespace

void register_connection_commands(CommandTable& table) { table.add(kConnectionCommands); }

}  // namespace keywarden
