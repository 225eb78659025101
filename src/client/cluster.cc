// ClusterRouter: slot map, per-node pools, routing and redirections (see cluster.h).
#include "client/cluster.h"

#include <algorithm>
#include <charconv>
#include <random>
#include <thread>

#include "common/key_slot.h"
#include "keywarden/errors.h"

namespace keywarden::detail {

namespace {

using Clock = std::chrono::steady_clock;

bool name_is(std::string_view name, std::string_view upper) {
  if (name.size() != upper.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

bool name_in(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::any_of(names.begin(), names.end(),
                     [&](std::string_view upper) { return name_is(name, upper); });
}

std::optional<long long> parse_count(std::string_view text) {
  long long value = 0;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// The key at `numkeys_at + 1` when the count at `numkeys_at` is positive.
std::optional<std::string_view> key_after_count(const std::vector<std::string_view>& args,
                                                size_t numkeys_at) {
  if (args.size() <= numkeys_at + 1) return std::nullopt;
  auto count = parse_count(args[numkeys_at]);
  if (!count || *count <= 0) return std::nullopt;
  return args[numkeys_at + 1];
}

// Commands that must share a connection with the rest of their batch.
bool binds_batch(std::string_view name) {
  return name_in(name, {"MULTI", "EXEC", "DISCARD", "WAIT", "WAITAOF", "SCRIPT", "WATCH", "UNWATCH",
                        "ASKING"});
}

// "MOVED 3999 127.0.0.1:6381" -> slot, host, port.
struct Redirect {
  std::string kind;
  int slot = -1;
  std::string host;
  int port = 0;
};

Redirect parse_redirect(const std::string& text) {
  Redirect out;
  size_t space = text.find(' ');
  out.kind = text.substr(0, space);
  if (out.kind != "MOVED" && out.kind != "ASK") return out;
  if (space == std::string::npos) return out;
  size_t second = text.find(' ', space + 1);
  if (second == std::string::npos) return out;
  out.slot = static_cast<int>(
      parse_count(std::string_view(text).substr(space + 1, second - space - 1)).value_or(-1));
  std::string address = text.substr(second + 1);
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return out;
  out.host = address.substr(0, colon);
  out.port = static_cast<int>(parse_count(std::string_view(address).substr(colon + 1)).value_or(0));
  return out;
}

const std::string kAsking = "*1\r\n$6\r\nASKING\r\n";

}  // namespace

std::vector<EncodedCommand> split_encoded(std::string_view encoded, size_t count) {
  std::vector<EncodedCommand> out;
  out.reserve(count);
  size_t at = 0;
  // Reads "<prefix><number>\r\n" at `at`.
  auto number = [&](char prefix) -> size_t {
    if (at >= encoded.size() || encoded[at] != prefix) throw ProtocolError("malformed batch");
    size_t end = encoded.find("\r\n", at);
    if (end == std::string_view::npos) throw ProtocolError("malformed batch");
    auto value = parse_count(encoded.substr(at + 1, end - at - 1));
    if (!value || *value < 0) throw ProtocolError("malformed batch");
    at = end + 2;
    return static_cast<size_t>(*value);
  };
  for (size_t i = 0; i < count; ++i) {
    const size_t start = at;
    EncodedCommand command;
    const size_t arity = number('*');
    for (size_t j = 0; j < arity; ++j) {
      const size_t length = number('$');
      if (at + length + 2 > encoded.size()) throw ProtocolError("malformed batch");
      command.args.push_back(encoded.substr(at, length));
      at += length + 2;
    }
    command.bytes = encoded.substr(start, at - start);
    out.push_back(std::move(command));
  }
  return out;
}

std::optional<std::string_view> routing_key(const std::vector<std::string_view>& args) {
  if (args.size() < 2) return std::nullopt;
  const std::string_view name = args[0];
  if (name_in(
          name,
          {"PING",       "ECHO",        "INFO",         "SCRIPT",  "WAIT",         "WAITAOF",
           "MULTI",      "EXEC",        "DISCARD",      "UNWATCH", "CLUSTER",      "ASKING",
           "READONLY",   "READWRITE",   "PUBLISH",      "PUBSUB",  "CLIENT",       "HELLO",
           "AUTH",       "SELECT",      "FUNCTION",     "COMMAND", "CONFIG",       "DBSIZE",
           "TIME",       "FLUSHALL",    "FLUSHDB",      "KEYS",    "SCAN",         "RANDOMKEY",
           "ROLE",       "LASTSAVE",    "SAVE",         "BGSAVE",  "BGREWRITEAOF", "DEBUG",
           "SLOWLOG",    "LATENCY",     "ACL",          "QUIT",    "RESET",        "SUBSCRIBE",
           "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SWAPDB",  "MONITOR",      "SHUTDOWN",
           "FAILOVER",   "REPLICAOF",   "SLAVEOF",      "LOLWUT",  "MODULE",       "SENTINEL"})) {
    return std::nullopt;
  }
  if (name_in(name, {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"})) {
    return key_after_count(args, 2);
  }
  if (name_in(name, {"ZUNION", "ZINTER", "ZDIFF", "SINTERCARD", "ZINTERCARD", "LMPOP", "ZMPOP"})) {
    return key_after_count(args, 1);
  }
  if (name_in(name, {"BLMPOP", "BZMPOP"})) return key_after_count(args, 2);
  if (name_in(name, {"XREAD", "XREADGROUP"})) {
    for (size_t i = 1; i + 1 < args.size(); ++i) {
      if (name_is(args[i], "STREAMS")) return args[i + 1];
    }
    return std::nullopt;
  }
  if (name_in(name, {"OBJECT", "MEMORY", "XINFO", "XGROUP"})) {
    if (args.size() < 3) return std::nullopt;
    return args[2];
  }
  return args[1];
}

bool is_redirect_error(const RespValue& reply) {
  if (!reply.is_error()) return false;
  const std::string& text = reply.str;
  return text.starts_with("MOVED ") || text.starts_with("ASK ") || text.starts_with("TRYAGAIN") ||
         text.starts_with("CLUSTERDOWN");
}

ClusterRouter::ClusterRouter(const ClientOptions& options)
    : options_(options), slots_(kClusterSlots, nullptr) {
  if (options_.cluster.max_redirects < 0) {
    throw Error("ClusterOptions::max_redirects must not be negative");
  }
}

ClusterRouter::~ClusterRouter() = default;

ClusterRouter::Node& ClusterRouter::node(const std::string& host, int port) {
  std::string address = host + ":" + std::to_string(port);
  std::lock_guard guard(mutex_);
  auto& slot = nodes_[address];
  if (!slot) {
    slot = std::make_unique<Node>();
    slot->address = address;
    slot->options = options_;
    slot->options.host = host;
    slot->options.port = port;
    slot->options.cluster = {};
    slot->options.sentinel = {};
    slot->options.unix_socket.clear();
    slot->options.database = 0;
    // A node that went away is asked again soon: the retries' backoff spaces the attempts.
    slot->options.reconnect_backoff_min = std::chrono::milliseconds(1);
    slot->options.reconnect_backoff_max = options_.cluster.retry_backoff_max;
    slot->pool = std::make_unique<ConnectionPool>(slot->options);
  }
  return *slot;
}

bool ClusterRouter::refresh() {
  std::lock_guard refresh_guard(refresh_mutex_);
  std::vector<std::pair<std::string, int>> candidates;
  {
    std::lock_guard guard(mutex_);
    // The primaries of the current map first, then the other nodes met, then the seeds.
    std::vector<Node*> seen;
    for (Node* owner : slots_) {
      if (owner != nullptr && std::find(seen.begin(), seen.end(), owner) == seen.end()) {
        seen.push_back(owner);
      }
    }
    for (auto& [address, node] : nodes_) {
      if (std::find(seen.begin(), seen.end(), node.get()) == seen.end()) seen.push_back(node.get());
    }
    for (Node* known : seen) candidates.emplace_back(known->options.host, known->options.port);
  }
  for (const auto& seed : options_.cluster.addresses) candidates.push_back(seed);

  std::string encoded;
  encode_command(encoded, std::vector<std::string_view>{"CLUSTER", "SLOTS"});
  std::string failures;
  for (const auto& [host, port] : candidates) {
    Node& asked = node(host, port);
    try {
      RespValue reply;
      {
        auto lease = asked.pool->borrow();
        reply = std::move(lease->round_trip(encoded, 1).at(0));
      }
      if (reply.is_error() || reply.type != RespType::kArray || reply.elements.empty()) {
        failures += "; " + asked.address + ": " + (reply.is_error() ? reply.str : "no slots");
        continue;
      }
      std::vector<Node*> map(kClusterSlots, nullptr);
      for (const RespValue& range : reply.elements) {
        if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
        const int64_t first = range.elements[0].integer, last = range.elements[1].integer;
        const RespValue& primary = range.elements[2];
        // An empty host means "the address you asked me on" (CLUSTER SLOTS with no announced
        // hostname); "?" an unknown endpoint.
        std::string primary_host = primary.elements[0].str;
        if (primary_host.empty() || primary_host == "?") primary_host = host;
        Node& owner = node(primary_host, static_cast<int>(primary.elements[1].integer));
        for (int64_t slot = std::max<int64_t>(first, 0);
             slot <= std::min<int64_t>(last, kClusterSlots - 1); ++slot) {
          map[slot] = &owner;
        }
      }
      std::lock_guard guard(mutex_);
      slots_ = std::move(map);
      have_map_ = true;
      last_refresh_ = Clock::now();
      return true;
    } catch (const Error& e) {
      failures += "; " + asked.address + ": " + e.what();
    }
  }
  std::lock_guard guard(mutex_);
  last_failure_ = "no cluster node answered CLUSTER SLOTS" + failures;
  last_refresh_ = Clock::now();
  return false;
}

void ClusterRouter::refresh_soon() {
  {
    std::lock_guard guard(mutex_);
    if (Clock::now() - last_refresh_ < std::chrono::milliseconds(100)) return;
  }
  refresh();
}

ClusterRouter::Node& ClusterRouter::owner(int slot) {
  for (int pass = 0; pass < 2; ++pass) {
    {
      std::lock_guard guard(mutex_);
      if (have_map_) {
        if (slot >= 0) {
          if (slots_[slot] != nullptr) return *slots_[slot];
        } else {
          // Keyless commands go to a primary picked at random, so that they spread.
          thread_local std::mt19937 random(std::random_device{}());
          const int start = static_cast<int>(random() % kClusterSlots);
          for (int i = 0; i < kClusterSlots; ++i) {
            Node* candidate = slots_[(start + i) % kClusterSlots];
            if (candidate != nullptr) return *candidate;
          }
        }
      }
    }
    if (pass == 0) refresh();
  }
  std::lock_guard guard(mutex_);
  if (!have_map_) throw ClusterError("CLUSTERDOWN " + last_failure_);
  throw ClusterError("CLUSTERDOWN Hash slot " + std::to_string(slot) +
                     " is not served by any node of the cluster");
}

std::chrono::milliseconds ClusterRouter::backoff(int attempt) const {
  auto wait = options_.cluster.retry_backoff_min;
  for (int i = 0; i < attempt && wait < options_.cluster.retry_backoff_max; ++i) wait *= 2;
  return std::min(wait, options_.cluster.retry_backoff_max);
}

std::vector<RespValue> ClusterRouter::send_unit(std::string_view encoded, size_t count, int slot) {
  Node* asked = nullptr;  // after ASK: the node to try once, with ASKING
  std::string with_asking;
  const int limit = options_.cluster.max_redirects;
  for (int attempt = 0;; ++attempt) {
    Node* target;
    try {
      target = asked != nullptr ? asked : &owner(slot);
    } catch (const ClusterError&) {
      if (attempt >= limit) throw;
      std::this_thread::sleep_for(backoff(attempt));
      continue;
    }
    const bool asking = asked != nullptr;
    asked = nullptr;
    std::string_view bytes = encoded;
    // After ASK: ASKING before each command, since it holds for the next command only (a
    // script's SCRIPT LOAD and EVALSHA both need it); inside MULTI once, before MULTI.
    std::vector<bool> inserted;  // per reply: an ASKING's
    if (asking) {
      with_asking.clear();
      bool in_multi = false;
      for (const EncodedCommand& command : split_encoded(encoded, count)) {
        if (!in_multi) {
          with_asking.append(kAsking);
          inserted.push_back(true);
        }
        with_asking.append(command.bytes);
        inserted.push_back(false);
        if (!command.args.empty()) {
          if (name_is(command.args[0], "MULTI")) in_multi = true;
          if (name_is(command.args[0], "EXEC") || name_is(command.args[0], "DISCARD")) {
            in_multi = false;
          }
        }
      }
      bytes = with_asking;
    }
    std::vector<RespValue> replies;
    {
      auto lease = target->pool->borrow();
      try {
        lease->ensure_connected();
      } catch (const Error& e) {
        // Nothing was sent: the node may be gone (a failover is promoting its replica).
        if (attempt >= limit) {
          throw ClusterError("CLUSTERDOWN cannot reach " + target->address + " for slot " +
                             std::to_string(slot) + " after " + std::to_string(attempt + 1) +
                             " attempts: " + e.what());
        }
        std::this_thread::sleep_for(backoff(attempt));
        refresh_soon();
        continue;
      }
      replies = lease->round_trip(bytes, asking ? inserted.size() : count);
    }
    if (asking) {
      std::vector<RespValue> own;
      own.reserve(count);
      for (size_t i = 0; i < replies.size(); ++i) {
        if (!inserted[i]) own.push_back(std::move(replies[i]));
      }
      replies = std::move(own);
    }
    auto redirected = std::find_if(replies.begin(), replies.end(), is_redirect_error);
    if (redirected == replies.end() || attempt >= limit) return replies;
    const Redirect redirect = parse_redirect(redirected->str);
    if (redirect.kind == "MOVED" && redirect.port > 0) {
      Node& moved_to = node(redirect.host, redirect.port);
      {
        std::lock_guard guard(mutex_);
        if (redirect.slot >= 0 && redirect.slot < kClusterSlots) slots_[redirect.slot] = &moved_to;
      }
      // Nodes that disagree for a moment (a slot handed over, a failover) may send a command
      // back and forth: from the third redirection on, wait a little between them.
      if (attempt >= 2) std::this_thread::sleep_for(backoff(attempt - 2));
      refresh_soon();
    } else if (redirect.kind == "ASK" && redirect.port > 0) {
      asked = &node(redirect.host, redirect.port);
    } else {
      // TRYAGAIN (a multi-key command during a migration), CLUSTERDOWN (a failover under way).
      std::this_thread::sleep_for(backoff(attempt));
      if (redirect.kind == "CLUSTERDOWN") refresh_soon();
    }
  }
}

std::vector<RespValue> ClusterRouter::round_trip(std::string_view encoded, size_t count) {
  std::vector<EncodedCommand> commands = split_encoded(encoded, count);
  std::vector<int> slots(commands.size(), -1);
  bool together = false;
  int first_slot = -1;
  size_t first_index = 0;
  for (size_t i = 0; i < commands.size(); ++i) {
    if (commands[i].args.empty()) continue;
    if (binds_batch(commands[i].args[0])) together = true;
    if (auto key = routing_key(commands[i].args)) {
      slots[i] = key_slot(*key);
      if (first_slot < 0) {
        first_slot = slots[i];
        first_index = i;
      }
    }
  }
  if (together) {
    // A transaction whose keys live in several slots cannot run: its parts would be redirected
    // to different nodes forever. Say so at once, as Redis does for one node's slots.
    for (size_t i = 0; i < commands.size(); ++i) {
      if (slots[i] >= 0 && slots[i] != first_slot) {
        throw ClusterError(
            "CROSSSLOT Keys in request don't hash to the same slot (a transaction, or a batch "
            "with WAIT or SCRIPT, runs on one node: '" +
            std::string(*routing_key(commands[first_index].args)) + "' is in slot " +
            std::to_string(first_slot) + ", '" + std::string(*routing_key(commands[i].args)) +
            "' in slot " + std::to_string(slots[i]) + "); give the keys a common {hash tag}");
      }
    }
  }
  if (together || commands.size() == 1) return send_unit(encoded, count, first_slot);

  // A pipeline: keyless commands ride with the first keyed one. One part per node.
  for (int& slot : slots) {
    if (slot < 0) slot = first_slot;
  }
  std::vector<RespValue> replies(commands.size());
  std::vector<bool> retry(commands.size(), false);
  std::map<Node*, std::vector<size_t>> parts;
  for (size_t i = 0; i < commands.size(); ++i) {
    try {
      parts[&owner(slots[i])].push_back(i);
    } catch (const ClusterError&) {
      retry[i] = true;
    }
  }
  for (auto& [target, members] : parts) {
    std::string part;
    for (size_t i : members) part.append(commands[i].bytes);
    std::vector<RespValue> answers;
    {
      auto lease = target->pool->borrow();
      try {
        lease->ensure_connected();
      } catch (const Error&) {
        for (size_t i : members) retry[i] = true;
        continue;
      }
      answers = lease->round_trip(part, members.size());
    }
    for (size_t k = 0; k < members.size(); ++k) {
      if (is_redirect_error(answers[k])) retry[members[k]] = true;
      replies[members[k]] = std::move(answers[k]);
    }
  }
  // Redirected (or not yet sent) commands go again one by one, in order.
  for (size_t i = 0; i < commands.size(); ++i) {
    if (retry[i]) replies[i] = std::move(send_unit(commands[i].bytes, 1, slots[i]).at(0));
  }
  return replies;
}

}  // namespace keywarden::detail
