#include "commands/tracking.h"

#include <algorithm>
#include <random>

#include "commands/client_session.h"
#include "commands/command_table.h"

namespace keywarden {

namespace {

constexpr std::string_view kInvalidateChannel = "__redis__:invalidate";

// Two prefixes overlap when one starts the other: some key would be announced twice.
bool overlap(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

void add_sorted(std::vector<uint64_t>& ids, uint64_t id) {
  auto at = std::lower_bound(ids.begin(), ids.end(), id);
  if (at == ids.end() || *at != id) ids.insert(at, id);
}

void remove_sorted(std::vector<uint64_t>& ids, uint64_t id) {
  auto at = std::lower_bound(ids.begin(), ids.end(), id);
  if (at != ids.end() && *at == id) ids.erase(at);
}

}  // namespace

std::string KeyTracking::check_enable(const ClientSession& client,
                                      const TrackingRequest& request) const {
  const ClientTracking& mode = client.tracking;
  if (!request.bcast && !request.prefixes.empty()) {
    return "ERR PREFIX option requires BCAST mode to be enabled";
  }
  if (mode.on && mode.bcast != request.bcast) {
    return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
           "and then re-enabling it with a different mode.";
  }
  if (request.bcast && (request.optin || request.optout)) {
    return "ERR OPTIN and OPTOUT are not compatible with BCAST";
  }
  if (request.optin && request.optout) return "ERR You can't specify both OPTIN mode and OPTOUT mode";
  if ((request.optin && mode.optout) || (request.optout && mode.optin)) {
    return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
           "and then re-enabling it with a different mode.";
  }
  if (request.bcast) {
    const std::vector<std::string>& asked = request.prefixes;
    for (size_t i = 0; i < asked.size(); ++i) {
      for (const std::string& existing : mode.prefixes) {
        if (overlap(existing, asked[i])) {
          std::string error = "ERR Prefix '";
          error += asked[i];
          error += "' overlaps with an existing prefix '";
          error += existing;
          error += "'. Prefixes for a single client must not overlap.";
          return error;
        }
      }
      for (size_t j = i + 1; j < asked.size(); ++j) {
        if (overlap(asked[i], asked[j])) {
          std::string error = "ERR Prefix '";
          error += asked[i];
          error += "' overlaps with another provided prefix '";
          error += asked[j];
          error += "'. Prefixes for a single client must not overlap.";
          return error;
        }
      }
    }
  }
  return {};
}

void KeyTracking::enable(ClientSession& client, const TrackingRequest& request) {
  ClientTracking& mode = client.tracking;
  if (!mode.on) add_sorted(tracking_ids_, client.id);
  mode.on = true;
  mode.broken_redirect = false;
  mode.redirect = request.redirect;
  mode.bcast = request.bcast;
  mode.optin = request.optin;
  mode.optout = request.optout;
  mode.noloop = request.noloop;
  if (!request.bcast) return;
  auto subscribe = [&](const std::string& prefix) {
    auto at = std::lower_bound(mode.prefixes.begin(), mode.prefixes.end(), prefix);
    if (at != mode.prefixes.end() && *at == prefix) return;
    mode.prefixes.insert(at, prefix);
    add_sorted(prefixes_[prefix].clients, client.id);
  };
  // BCAST without a prefix listens to every key: the empty prefix.
  if (request.prefixes.empty()) subscribe(std::string());
  for (const std::string& prefix : request.prefixes) subscribe(prefix);
}

void KeyTracking::disable(ClientSession& client) {
  ClientTracking& mode = client.tracking;
  for (const std::string& prefix : mode.prefixes) {
    auto found = prefixes_.find(prefix);
    if (found == prefixes_.end()) continue;
    remove_sorted(found->second.clients, client.id);
    if (found->second.clients.empty()) prefixes_.erase(found);
  }
  remove_sorted(tracking_ids_, client.id);
  // What the client read stays in table_ under its id: skipped when its keys change.
  mode = ClientTracking{};
}

ClientSession* KeyTracking::begin_command(ClientSession& client) {
  ClientSession* previous = current_;
  current_ = &client;
  return previous;
}

void KeyTracking::end_command(ClientSession* previous) {
  if (!pending_.empty()) flush_pending();
  current_ = previous;
}

void KeyTracking::flush_pending() {
  // Only the running client's: a command run inside another (a blocked client served) must
  // not send the outer client's messages into the middle of its reply.
  std::vector<Pending> mine;
  auto others = std::stable_partition(pending_.begin(), pending_.end(),
                                      [&](const Pending& p) { return p.client != current_; });
  mine.assign(std::make_move_iterator(others), std::make_move_iterator(pending_.end()));
  pending_.erase(others, pending_.end());
  if (current_ == nullptr || !current_->tracking.on) return;
  for (const Pending& entry : mine) {
    if (entry.key) {
      const std::string_view name = *entry.key;
      send(*current_, Keys(&name, 1), false);
    } else {
      send(*current_, {}, true);
    }
  }
}

void KeyTracking::remember(const Command& command, std::span<const std::string_view> args) {
  if (current_ == nullptr) return;
  const ClientTracking& mode = current_->tracking;
  if (!mode.on || mode.bcast) return;
  // Only reads are remembered, and not the script runners (EVAL_RO…): the commands their
  // scripts run are remembered one by one. Shard channels are keys only for routing.
  if (!command.has(kReadonly) || command.has(kRunsScripts) || command.has(kPubSub)) return;
  if ((mode.optin && !mode.caching) || (mode.optout && mode.caching)) return;
  for (const KeyReference& key : CommandTable::keys(command, args)) {
    const std::string_view name = args[key.position];
    auto found = table_.find(name);
    if (found == table_.end()) {
      found = table_.emplace(std::string(name), std::vector<uint64_t>()).first;
    }
    std::vector<uint64_t>& ids = found->second;
    const size_t before = ids.size();
    add_sorted(ids, current_->id);
    items_ += ids.size() - before;
  }
}

void KeyTracking::invalidate(std::string_view key) {
  if (!active()) return;
  const uint64_t modifier = current_ != nullptr ? current_->id : 0;
  for (auto& [prefix, state] : prefixes_) {
    if (key.substr(0, prefix.size()) != prefix) continue;
    auto [at, inserted] = state.changed.try_emplace(std::string(key), modifier);
    if (!inserted) at->second = modifier;
  }
  auto found = table_.find(key);
  if (found == table_.end()) return;
  std::vector<uint64_t> ids = std::move(found->second);
  table_.erase(found);
  items_ -= ids.size();
  forget(key, std::move(ids));
}

// Tells each of `ids` that `key` is no longer tracked for it (it changed, or the table is over
// its limit).
void KeyTracking::forget(std::string_view key, std::vector<uint64_t> ids) {
  for (uint64_t id : ids) {
    ClientSession* target = find_client(id);
    // Gone, no longer tracking, or now in BCAST mode (what it read before does not count).
    if (target == nullptr || !target->tracking.on || target->tracking.bcast) continue;
    if (target == current_) {
      if (target->tracking.noloop) continue;
      pending_.push_back({target, std::string(key)});
      continue;
    }
    send(*target, Keys(&key, 1), false);
  }
}

void KeyTracking::invalidate_all() {
  const std::vector<uint64_t> ids = tracking_ids_;
  for (uint64_t id : ids) {
    ClientSession* target = find_client(id);
    if (target == nullptr || !target->tracking.on) continue;
    if (target == current_) {
      pending_.push_back({target, std::nullopt});
    } else {
      send(*target, {}, true);
    }
  }
  table_.clear();
  items_ = 0;
}

void KeyTracking::send(ClientSession& client, Keys keys, bool everything) {
  ClientSession* receiver = &client;
  const bool redirected = client.tracking.redirect != 0;
  if (redirected) {
    receiver = find_client(client.tracking.redirect);
    if (receiver == nullptr) {
      client.tracking.broken_redirect = true;
      // Only a RESP3 client can be told on its own connection.
      ReplyWriter* own = client.subscriber != nullptr ? client.subscriber->pubsub_writer()
                                                      : nullptr;
      if (own != nullptr && own->resp() > 2) {
        own->push_header(2);
        own->bulk("tracking-redir-broken");
        own->integer(static_cast<int64_t>(client.tracking.redirect));
        client.subscriber->pubsub_delivered();
      }
      return;
    }
  }
  Subscriber* endpoint = receiver->subscriber;
  ReplyWriter* writer = endpoint != nullptr ? endpoint->pubsub_writer() : nullptr;
  if (writer == nullptr) return;
  if (writer->resp() > 2) {
    writer->push_header(2);
    writer->bulk("invalidate");
  } else if (redirected && endpoint->subscribed()) {
    // RESP2 has no pushes: a redirect target in subscribed mode gets a pub/sub message.
    writer->array_header(3);
    writer->bulk("message");
    writer->bulk(kInvalidateChannel);
  } else {
    return;  // a RESP2 client without redirection cannot be told anything
  }
  if (everything) {
    writer->null();
  } else {
    writer->array_header(keys.size());
    for (std::string_view key : keys) writer->bulk(key);
  }
  endpoint->pubsub_delivered();
}

void KeyTracking::before_sleep(int64_t max_keys) {
  // The BCAST batches of this turn, one message per prefix and client.
  for (auto& [prefix, state] : prefixes_) {
    if (state.changed.empty()) continue;
    std::map<std::string, uint64_t, std::less<>> changed;
    changed.swap(state.changed);
    std::vector<std::string_view> all;
    all.reserve(changed.size());
    for (const auto& [key, modifier] : changed) all.push_back(key);
    const std::vector<uint64_t> clients = state.clients;
    for (uint64_t id : clients) {
      ClientSession* target = find_client(id);
      if (target == nullptr || !target->tracking.on) continue;
      if (!target->tracking.noloop) {
        send(*target, all, false);
        continue;
      }
      // NOLOOP: without the keys this client changed last.
      std::vector<std::string_view> others;
      for (const auto& [key, modifier] : changed) {
        if (modifier != id) others.push_back(key);
      }
      if (!others.empty()) send(*target, others, false);
    }
  }

  // Over tracking-table-max-keys: forget random keys, telling their readers as if the keys had
  // changed, with an effort that grows while the table stays over the limit.
  if (max_keys <= 0 || table_.size() <= static_cast<uint64_t>(max_keys)) {
    limit_rounds_ = 0;
    return;
  }
  static std::mt19937_64 rng(0x7ac4);
  int effort = 100 * static_cast<int>(std::min<uint32_t>(limit_rounds_ + 1, 1000));
  while (effort-- > 0 && table_.size() > static_cast<uint64_t>(max_keys)) {
    // A random bucket, then the first key from it on.
    const size_t buckets = table_.bucket_count();
    size_t bucket = rng() % buckets;
    size_t tries = 0;
    while (table_.bucket_size(bucket) == 0 && tries++ < buckets) bucket = (bucket + 1) % buckets;
    if (table_.bucket_size(bucket) == 0) break;
    const std::string key = table_.begin(bucket)->first;
    auto found = table_.find(key);
    std::vector<uint64_t> ids = std::move(found->second);
    table_.erase(found);
    items_ -= ids.size();
    forget(key, std::move(ids));
  }
  if (table_.size() > static_cast<uint64_t>(max_keys)) {
    ++limit_rounds_;
  } else {
    limit_rounds_ = 0;
  }
}

}  // namespace keywarden
