// Client, Pipeline and Script (see keywarden/client.h).
#include "keywarden/client.h"

#include <charconv>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "client/cluster.h"
#include "client/connection.h"
#include "client/connection_pool.h"
#include "client/reply_convert.h"
#include "client/sentinel_watch.h"
#include "common/ascii.h"
#include "common/sha1.h"

namespace keywarden {

namespace detail {

std::string format_double_argument(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

}  // namespace detail

Pipeline& Pipeline::add(std::initializer_list<std::string_view> args) {
  detail::encode_command(encoded_, std::vector<std::string_view>(args));
  ++count_;
  return *this;
}

Pipeline& Pipeline::add(const std::vector<std::string>& args) {
  detail::encode_command(encoded_, args);
  ++count_;
  return *this;
}

std::vector<Reply> Pipeline::exec() {
  std::string encoded = std::move(encoded_);
  size_t count = count_;
  encoded_.clear();
  count_ = 0;
  if (count == 0) return {};
  return client_->round_trip(encoded, count);
}

Script::Script(std::string source) : source_(std::move(source)), sha_(sha1_hex(source_)) {}

Client::Client(ClientOptions options) : options_(std::move(options)) {
  if (options_.resp != 2 && options_.resp != 3) {
    throw Error("ClientOptions::resp must be 2 or 3, not " + std::to_string(options_.resp));
  }
  if (!options_.cluster.addresses.empty()) {
    if (!options_.sentinel.addresses.empty()) {
      throw Error("ClientOptions: cluster and sentinel cannot both be set");
    }
    cluster_ = std::make_unique<detail::ClusterRouter>(options_);
  } else {
    if (!options_.sentinel.addresses.empty()) {
      sentinel_watch_ = std::make_unique<detail::SentinelWatch>(options_, nullptr,
                                                                /*report_switches=*/true);
    }
    pool_ = std::make_unique<detail::ConnectionPool>(options_, sentinel_epoch());
    if (sentinel_watch_ &&
        options_.sentinel.read_from == SentinelOptions::ReadFrom::kReplicaPreferred) {
      replica_pool_ = std::make_unique<detail::ConnectionPool>(options_, sentinel_epoch(),
                                                               /*replicas=*/true);
    }
  }
}

const std::atomic<uint64_t>* Client::sentinel_epoch() const {
  return sentinel_watch_ ? &sentinel_watch_->epoch() : nullptr;
}

Client::~Client() = default;

std::vector<Reply> Client::round_trip(const std::string& encoded, size_t count,
                                      bool on_replica) {
  std::vector<RespValue> values;
  if (cluster_) {
    values = cluster_->round_trip(encoded, count);
  } else {
    auto lease = (on_replica && replica_pool_ ? replica_pool_ : pool_)->borrow();
    values = lease->round_trip(encoded, count);
  }
  std::vector<Reply> replies;
  replies.reserve(values.size());
  for (RespValue& value : values) replies.push_back(detail::to_reply(std::move(value)));
  return replies;
}

namespace {

// The commands SentinelOptions::ReadFrom::kReplicaPreferred sends to a replica: reads of keys
// and their values that a replica answers as its primary would (once replication caught up).
// Deliberately short and explicit; anything else goes to the primary.
bool is_replica_read(std::string_view name) {
  static constexpr std::string_view kReads[] = {
      "GET",      "MGET",      "STRLEN",        "GETRANGE",  "EXISTS",    "TYPE",
      "TTL",      "PTTL",      "EXPIRETIME",    "PEXPIRETIME", "HGET",    "HMGET",
      "HGETALL",  "HEXISTS",   "HLEN",          "HKEYS",     "HVALS",     "HSTRLEN",
      "LRANGE",   "LLEN",      "LINDEX",        "SMEMBERS",  "SISMEMBER", "SMISMEMBER",
      "SCARD",    "ZRANGE",    "ZRANGEBYSCORE", "ZREVRANGE", "ZSCORE",    "ZMSCORE",
      "ZCARD",    "ZRANK",     "ZREVRANK",      "ZCOUNT",    "SCAN",      "HSCAN",
      "SSCAN",    "ZSCAN",     "DBSIZE",
  };
  for (std::string_view read : kReads) {
    if (equals_ignore_case(read, name)) return true;
  }
  return false;
}

}  // namespace

Reply Client::run_command(const std::string& encoded, std::string_view name,
                          bool may_use_replica) {
  const bool on_replica = may_use_replica && replica_pool_ && is_replica_read(name);
  Reply reply = std::move(round_trip(encoded, 1, on_replica).front());
  if (reply.is_error()) throw_error_reply(reply, name);
  return reply;
}

Reply Client::command(std::initializer_list<std::string_view> args) {
  std::string encoded;
  detail::encode_command(encoded, std::vector<std::string_view>(args));
  return run_command(encoded, args.size() > 0 ? *args.begin() : "", true);
}

Reply Client::command(const std::vector<std::string>& args) {
  std::string encoded;
  detail::encode_command(encoded, args);
  return run_command(encoded, args.empty() ? "" : std::string_view(args.front()), true);
}

Reply Client::command_on_primary(const std::vector<std::string>& args) {
  std::string encoded;
  detail::encode_command(encoded, args);
  return run_command(encoded, args.empty() ? "" : std::string_view(args.front()), false);
}

void Client::throw_error_reply(const Reply& reply, std::string_view command) const {
  const std::string& text = reply.str();
  if (cluster_) {
    const std::string code = reply.error_code();
    const std::string what = command.empty() ? "" : " (" + std::string(command) + ")";
    if (code == "CROSSSLOT") {
      throw ClusterError(text + what +
                         ": the keys of one command, script or transaction must share a slot on "
                         "a Redis Cluster; give them a common {hash tag}, e.g. {user1}:a and "
                         "{user1}:b");
    }
    if (code == "MOVED" || code == "ASK" || code == "TRYAGAIN" || code == "CLUSTERDOWN") {
      throw ClusterError(text + what + ": still the answer after " +
                         std::to_string(options_.cluster.max_redirects) +
                         " retries (ClusterOptions::max_redirects)");
    }
  }
  throw ServerError(text);
}

std::vector<Reply> Client::transaction(const std::function<void(Pipeline&)>& body) {
  Pipeline queued(*this);
  body(queued);
  std::string encoded;
  detail::encode_command(encoded, std::vector<std::string_view>{"MULTI"});
  encoded += queued.encoded_;
  detail::encode_command(encoded, std::vector<std::string_view>{"EXEC"});
  std::vector<Reply> replies = round_trip(encoded, queued.count_ + 2);
  if (replies.front().is_error()) throw_error_reply(replies.front(), "MULTI");
  Reply& exec = replies.back();
  if (exec.is_error()) {
    // EXECABORT: a queued command was refused; on a cluster, say why when it was the slot.
    for (size_t i = 1; cluster_ && i + 1 < replies.size(); ++i) {
      const std::string code = replies[i].is_error() ? replies[i].error_code() : "";
      if (code == "CROSSSLOT" || code == "MOVED" || code == "ASK" || code == "TRYAGAIN" ||
          code == "CLUSTERDOWN") {
        throw_error_reply(replies[i], "MULTI");
      }
    }
    throw ServerError(exec.str());
  }
  // A null EXEC means a WATCHed key changed: nothing ran.
  if (exec.is_null()) return {};
  return exec.elements();
}

namespace {

std::string encode_evalsha(const Script& script, const std::vector<std::string>& keys,
                           const std::vector<std::string>& args) {
  std::vector<std::string> command_args{"EVALSHA", script.sha(), std::to_string(keys.size())};
  command_args.insert(command_args.end(), keys.begin(), keys.end());
  command_args.insert(command_args.end(), args.begin(), args.end());
  std::string encoded;
  detail::encode_command(encoded, command_args);
  return encoded;
}

// SCRIPT LOAD before a script the server did not know, in the same round trip: on a Redis
// Cluster both then go to the node that owns the script's keys.
std::string with_script_load(const Script& script, const std::string& encoded) {
  std::string out;
  detail::encode_command(out, std::vector<std::string_view>{"SCRIPT", "LOAD", script.source()});
  return out + encoded;
}

}  // namespace

Reply Client::eval_sha(const Script& script, const std::vector<std::string>& keys,
                       const std::vector<std::string>& args) {
  const std::string encoded = encode_evalsha(script, keys, args);
  Reply reply = std::move(round_trip(encoded, 1).front());
  if (reply.is_error() && reply.error_code() == "NOSCRIPT") {
    std::vector<Reply> replies = round_trip(with_script_load(script, encoded), 2);
    if (replies[0].is_error()) throw_error_reply(replies[0], "SCRIPT");
    reply = std::move(replies[1]);
  }
  if (reply.is_error()) throw_error_reply(reply, "EVALSHA");
  return reply;
}

std::pair<Reply, int64_t> Client::eval_sha_and_wait(const Script& script,
                                                    const std::vector<std::string>& keys,
                                                    const std::vector<std::string>& args,
                                                    int replicas,
                                                    std::chrono::milliseconds timeout) {
  std::string encoded = encode_evalsha(script, keys, args);
  detail::encode_command(encoded, std::vector<std::string>{"WAIT", std::to_string(replicas),
                                                           std::to_string(timeout.count())});
  std::vector<Reply> replies = round_trip(encoded, 2);
  if (replies[0].is_error() && replies[0].error_code() == "NOSCRIPT") {
    replies = round_trip(with_script_load(script, encoded), 3);
    if (replies[0].is_error()) throw_error_reply(replies[0], "SCRIPT");
    replies.erase(replies.begin());
  }
  for (const Reply& reply : replies) {
    if (reply.is_error()) throw_error_reply(reply, "EVALSHA");
  }
  return {std::move(replies[0]), replies[1].integer()};
}

}  // namespace keywarden
