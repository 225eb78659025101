#include "replication/failover.h"

#include "commands/command_table.h"
#include "commands/context.h"
#include "commands/errors.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/number.h"
#include "replication/primary.h"
#include "replication/replica.h"
#include "replication/replication_service.h"

namespace keywarden {
namespace {

void log_notice(const std::string& text) { log_message(LogLevel::kNotice, text); }

}  // namespace

std::string_view Failover::state_name() const {
  switch (state_) {
    case State::kNone:
      return "no-failover";
    case State::kWaitForSync:
      return "waiting-for-sync";
    case State::kInProgress:
      return "failover-in-progress";
  }
  return "unknown";
}

void Failover::command(CommandContext& ctx) {
  if (ctx.args.size() == 2 && equals_ignore_case(ctx.args[1], "abort")) {
    if (state_ == State::kNone) return ctx.error("ERR No failover in progress.");
    abort("Failover manually aborted");
    return ctx.reply.simple_string("OK");
  }
  int64_t timeout_ms = 0;
  int64_t port = 0;
  bool force = false;
  bool has_host = false;
  std::string host;
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    const std::string_view word = ctx.args[i];
    if (equals_ignore_case(word, "timeout") && i + 1 < ctx.args.size() && timeout_ms == 0) {
      if (!parse_int64(ctx.args[i + 1], &timeout_ms)) return ctx.error(errors::kNotInteger);
      if (timeout_ms <= 0) return ctx.error("ERR FAILOVER timeout must be greater than 0");
      ++i;
    } else if (equals_ignore_case(word, "to") && i + 2 < ctx.args.size() && !has_host) {
      if (!parse_int64(ctx.args[i + 2], &port)) return ctx.error(errors::kNotInteger);
      host = ctx.args[i + 1];
      has_host = true;
      i += 2;
    } else if (equals_ignore_case(word, "force") && !force) {
      force = true;
    } else {
      return ctx.error(errors::kSyntax);
    }
  }
  if (state_ != State::kNone) return ctx.error("ERR FAILOVER already in progress.");
  if (service_.is_replica()) {
    return ctx.error("ERR FAILOVER is not valid when server is a replica.");
  }
  const std::vector<ReplicaSummary> replicas = service_.primary().replicas();
  if (replicas.empty()) return ctx.error("ERR FAILOVER requires connected replicas.");
  if (force && (timeout_ms == 0 || !has_host)) {
    return ctx.error(
        "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
  }
  if (has_host) {
    const ReplicaSummary* target = nullptr;
    for (const ReplicaSummary& replica : replicas) {
      if (equals_ignore_case(replica.ip, host) && replica.port == port) target = &replica;
    }
    if (target == nullptr) return ctx.error("ERR FAILOVER target HOST and PORT is not a replica.");
    if (target->state != "online") return ctx.error("ERR FAILOVER target replica is not online.");
    log_notice("FAILOVER requested to " + host + ":" + std::to_string(port) + ".");
  } else {
    log_notice("FAILOVER requested to any replica.");
  }
  target_host_ = host;
  target_port_ = port;
  end_ms_ = timeout_ms != 0 ? ctx.now_ms + timeout_ms : 0;
  force_ = force;
  state_ = State::kWaitForSync;
  service_.state().client_pause().hold_writes_for_failover(true);
  ctx.reply.simple_string("OK");
}

void Failover::update(int64_t now_ms) {
  if (state_ != State::kWaitForSync) return;
  if (end_ms_ != 0 && end_ms_ <= now_ms) {
    if (force_) {
      fail_over_to_target("time out exceeded, failing over.");
    } else {
      abort("Replica never caught up before timeout");
    }
    return;
  }
  const int64_t offset = service_.ids().offset;
  for (const ReplicaSummary& replica : service_.primary().replicas()) {
    const bool is_target = target_host_.empty() || (equals_ignore_case(replica.ip, target_host_) &&
                                                     replica.port == target_port_);
    if (!is_target || replica.state != "online" || replica.offset != offset) continue;
    target_host_ = replica.ip;
    target_port_ = replica.port;
    fail_over_to_target("is synced, failing over.");
    return;
  }
}

void Failover::fail_over_to_target(std::string_view why) {
  const std::string target = target_host_ + ":" + std::to_string(target_port_);
  log_notice((why.starts_with("time") ? "FAILOVER to " : "Failover target ") + target + " " +
             std::string(why));
  state_ = State::kInProgress;
  service_.replica().follow(target_host_, target_port_);
}

void Failover::psync_answered(bool accepted) {
  if (state_ != State::kInProgress) return;
  if (accepted) {
    clear();
  } else {
    abort("Failover target rejected psync request");
  }
}

void Failover::abort(std::string_view reason) {
  if (state_ == State::kNone) return;
  const std::string target = target_host_.empty()
                                 ? std::string("any replica")
                                 : target_host_ + ":" + std::to_string(target_port_);
  log_notice("FAILOVER to " + target + " aborted: " + std::string(reason));
  // Already a replica of the target: a primary again.
  if (state_ == State::kInProgress) service_.replica().promote();
  clear();
}

void Failover::clear() {
  state_ = State::kNone;
  target_host_.clear();
  target_port_ = 0;
  end_ms_ = 0;
  force_ = false;
  service_.state().client_pause().hold_writes_for_failover(false);
}

}  // namespace keywarden

namespace keywarden {
namespace {

void failover_command(CommandContext& ctx) { ctx.service<ReplicationService>().failover().command(ctx); }

constexpr CommandSpec kFailoverCommands[] = {
    {"failover", -1, kAdmin | kNoScript | kStale, 0, 0, 0, kAclAdmin | kAclSlow | kAclDangerous,
     failover_command, "server", "6.2.0",
     "Start a coordinated failover between this server and one of its replicas.", "O(1)"},
};

}  // namespace

void Failover::install(CommandTable& commands) { commands.add(kFailoverCommands); }

}  // namespace keywarden
