// RedLock (see keywarden/multi_lock.h): the Redlock quorum over N independent servers, one
// reentrant Lock per server, attempts sent to every node at once.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <random>
#include <stdexcept>

#include "keywarden/client.h"
#include "keywarden/multi_lock.h"
#include "keywarden/subscriber.h"
#include "lock_service.h"

namespace keywarden {

namespace {

using Clock = std::chrono::steady_clock;
using Milliseconds = std::chrono::milliseconds;

// Drops the lock on a node where this owner may hold it although its handle does not know
// (the acquire's reply was lost): delete it if the owner's field is there, and wake waiters.
// KEYS: lock hash, channel; ARGV: owner.
const Script& cleanup_script() {
  static const Script script(R"(
if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], '0')
  return 1
end
return 0
)");
  return script;
}

std::string address_of(const ClientOptions& options) {
  if (!options.cluster.addresses.empty()) {
    std::string seeds;
    for (const auto& [host, port] : options.cluster.addresses) {
      seeds += (seeds.empty() ? "" : ",") + host + ":" + std::to_string(port);
    }
    return "cluster " + seeds;
  }
  if (!options.unix_socket.empty()) return options.unix_socket;
  return options.host + ":" + std::to_string(options.port);
}

std::string failure_text(const std::string& name, size_t quorum,
                         const std::vector<RedLockError::NodeFailure>& failures) {
  std::string text = "RedLock " + name + ": quorum of " + std::to_string(quorum) + " not reached: ";
  for (size_t i = 0; i < failures.size(); ++i) {
    if (i > 0) text += "; ";
    text += failures[i].node + ": " + failures[i].reason;
  }
  return text;
}

Milliseconds drift_of(Milliseconds lease) { return lease / 100 + Milliseconds(2); }

}  // namespace

RedLockError::RedLockError(const std::string& name, size_t quorum,
                           std::vector<NodeFailure> failures)
    : Error(failure_text(name, quorum, failures)), failures_(std::move(failures)) {}

struct RedLock::Node {
  Node(Client& c, Lock l) : client(c), address(address_of(c.options())), lock(std::move(l)) {}
  Client& client;
  std::string address;
  Lock lock;
  // Made on the first contended wait, to hear releases on this node.
  std::unique_ptr<Subscriber> subscriber;
};

struct RedLock::Shared {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t generation = 0;  // bumped by every release message from any node
  int64_t holds = 0;
  bool watchdog = false;
  Milliseconds lease{0};
  Clock::time_point valid_until{};
  std::vector<bool> granted;  // nodes that granted the current hold
  std::vector<bool> alive;    // of those, the ones not lost since
  bool loss_told = false;
  size_t quorum = 1;
  MemberLostCallback on_lost;
  std::function<void(const std::exception&)> on_error;

  size_t alive_count() const {
    return static_cast<size_t>(std::count(alive.begin(), alive.end(), true));
  }
  void bump() {
    {
      std::lock_guard<std::mutex> guard(mutex);
      ++generation;
    }
    cv.notify_all();
  }
  void report(const std::exception& error) {
    std::function<void(const std::exception&)> callback;
    {
      std::lock_guard<std::mutex> guard(mutex);
      callback = on_error;
    }
    if (!callback) {
      std::fprintf(stderr, "keywarden: red-lock: %s\n", error.what());
      return;
    }
    try {
      callback(error);
    } catch (...) {
    }
  }
};

RedLock::RedLock(const std::vector<Client*>& clients, std::string name)
    : name_(std::move(name)), shared_(std::make_shared<Shared>()) {
  if (clients.empty()) throw std::invalid_argument("RedLock needs at least one client");
  for (Client* client : clients) {
    if (client == nullptr) throw std::invalid_argument("RedLock: null client");
    nodes_.push_back(std::make_unique<Node>(*client, client->get_lock(name_)));
  }
  shared_->quorum = quorum();
  shared_->granted.assign(nodes_.size(), false);
  shared_->alive.assign(nodes_.size(), false);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i]->lock.on_lost([shared = shared_, i,
                             address = nodes_[i]->address](LockLostReason reason) {
      MemberLostCallback callback;
      {
        std::lock_guard<std::mutex> guard(shared->mutex);
        if (!shared->alive[i]) return;
        shared->alive[i] = false;
        if (shared->holds == 0 || shared->loss_told || shared->alive_count() >= shared->quorum) {
          return;
        }
        shared->loss_told = true;
        callback = shared->on_lost;
      }
      if (!callback) return;
      try {
        callback(address, reason);
      } catch (...) {
      }
    });
  }
}

RedLock::RedLock(RedLock&&) noexcept = default;
RedLock& RedLock::operator=(RedLock&&) noexcept = default;
// Each node's Lock releases what it still holds, without throwing.
RedLock::~RedLock() = default;

std::vector<std::string> RedLock::nodes() const {
  std::vector<std::string> out;
  for (const auto& node : nodes_) out.push_back(node->address);
  return out;
}

bool RedLock::acquire(std::optional<Milliseconds> wait, std::optional<Milliseconds> lease) {
  if (lease && lease->count() <= 0) throw std::invalid_argument("lock lease must be positive");
  {
    // A further acquisition by the holder is counted here; it does not renew the lease.
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (shared_->holds > 0) {
      ++shared_->holds;
      return true;
    }
  }
  const bool unbounded = !wait.has_value();
  const Clock::time_point end =
      unbounded ? Clock::time_point::max() : Clock::now() + std::max(Milliseconds(0), *wait);
  Milliseconds effective = lease.value_or(Milliseconds::max());
  if (!lease) {
    for (const auto& node : nodes_) {
      effective = std::min(effective, node->client.options().lock_watchdog_timeout);
    }
  }
  const Milliseconds drift = drift_of(effective);
  const size_t count = nodes_.size();
  const std::string channel = "redisson_lock__channel:" + detail::tagged(name_);
  thread_local std::mt19937 rng(std::random_device{}());

  enum class Outcome { kGranted, kRefused, kFailed };
  for (int round = 0;; ++round) {
    uint64_t seen;
    {
      std::lock_guard<std::mutex> guard(shared_->mutex);
      seen = shared_->generation;
    }
    // All nodes at once, so elapsed is the slowest node's time, not the sum.
    const Clock::time_point start = Clock::now();
    std::vector<std::future<bool>> replies;
    for (const auto& node : nodes_) {
      Lock* member = &node->lock;
      replies.push_back(std::async(std::launch::async, [member, lease] {
        return lease ? member->try_lock(Milliseconds(0), *lease) : member->try_lock();
      }));
    }
    std::vector<Outcome> outcomes(count, Outcome::kFailed);
    std::vector<RedLockError::NodeFailure> failures;
    size_t granted = 0, answered = 0;
    for (size_t i = 0; i < count; ++i) {
      try {
        outcomes[i] = replies[i].get() ? Outcome::kGranted : Outcome::kRefused;
        ++answered;
        if (outcomes[i] == Outcome::kGranted)
          ++granted;
        else
          failures.push_back({nodes_[i]->address, "held by another owner"});
      } catch (const std::exception& error) {
        failures.push_back({nodes_[i]->address, error.what()});
      }
    }
    const Clock::duration elapsed = Clock::now() - start;
    const Clock::duration validity = effective - elapsed - drift;
    if (granted >= quorum() && validity > Clock::duration::zero()) {
      {
        std::lock_guard<std::mutex> guard(shared_->mutex);
        shared_->holds = 1;
        shared_->watchdog = !lease;
        shared_->lease = effective;
        shared_->valid_until = start + effective - drift;
        shared_->loss_told = false;
        for (size_t i = 0; i < count; ++i) {
          shared_->granted[i] = outcomes[i] == Outcome::kGranted;
          // A node whose short lease already ran out does not count.
          shared_->alive[i] = shared_->granted[i] && nodes_[i]->lock.valid();
        }
      }
      // A node whose reply was lost may hold it anyway: it is not counted, so let it go.
      for (size_t i = 0; i < count; ++i) {
        if (outcomes[i] != Outcome::kFailed) continue;
        try {
          nodes_[i]->client.eval_sha(cleanup_script(), {name_, channel}, {nodes_[i]->lock.owner()});
        } catch (const std::exception&) {
          // Down: its lease runs out there by itself.
        }
      }
      return true;
    }
    // Not enough: release everywhere, including where the reply was lost.
    for (size_t i = 0; i < count; ++i) {
      try {
        if (outcomes[i] == Outcome::kGranted) {
          nodes_[i]->lock.unlock();
          if (granted >= quorum()) failures.push_back({nodes_[i]->address, "granted too late"});
        } else if (outcomes[i] == Outcome::kFailed) {
          nodes_[i]->client.eval_sha(cleanup_script(), {name_, channel}, {nodes_[i]->lock.owner()});
        }
      } catch (const std::exception&) {
        // The node's lease ends the hold there by itself.
      }
    }
    // Too few nodes answered at all: contention is not the reason, so waiting cannot help.
    if (answered < quorum()) throw RedLockError(name_, quorum(), std::move(failures));
    if (Clock::now() >= end) return false;

    // Hear releases from the nodes that refused before trying again, so none is missed.
    bool subscribed_now = false;
    // Without a refusing node (granted too late) the next attempt goes at once.
    Milliseconds bound(0);
    bool refused = false;
    for (size_t i = 0; i < count; ++i) {
      if (outcomes[i] != Outcome::kRefused) continue;
      Node& node = *nodes_[i];
      try {
        if (!node.subscriber) {
          node.subscriber = std::make_unique<Subscriber>(node.client.options());
          node.subscriber->subscribe(channel,
                                     [shared = shared_](const Message&) { shared->bump(); });
          subscribed_now = true;
        }
        int64_t left = node.client.command_on_primary("PTTL", name_).integer();
        Milliseconds ends = left == -1 ? effective : Milliseconds(std::max<int64_t>(0, left));
        bound = refused ? std::min(bound, ends) : ends;
        refused = true;
      } catch (const std::exception&) {
        node.subscriber.reset();
        bound = Milliseconds(0);
        refused = true;
      }
    }
    if (subscribed_now) continue;
    // The spec's random delay, so competing RedLocks do not retry in lockstep; it is added
    // to a wait for a release message or the earliest lease end, never a polling interval.
    std::uniform_int_distribution<int> pick(0, 2 + std::min(round, 20));
    Clock::time_point until = std::min(end, Clock::now() + bound + Milliseconds(pick(rng)));
    std::unique_lock<std::mutex> guard(shared_->mutex);
    shared_->cv.wait_until(guard, until, [&] { return shared_->generation != seen; });
  }
}

void RedLock::lock() { acquire(std::nullopt, std::nullopt); }

void RedLock::lock(Milliseconds lease) { acquire(std::nullopt, lease); }

bool RedLock::try_lock() { return acquire(Milliseconds(0), std::nullopt); }

void RedLock::unlock() {
  std::vector<bool> granted;
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    if (shared_->holds == 0) {
      throw NotOwnerError("attempt to unlock red-lock " + name_ + ", not held by this handle");
    }
    if (--shared_->holds > 0) return;
    granted = shared_->granted;
    std::fill(shared_->granted.begin(), shared_->granted.end(), false);
    std::fill(shared_->alive.begin(), shared_->alive.end(), false);
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!granted[i]) continue;
    try {
      // A node lost meanwhile was reported through on_lost; its unlock() acknowledges it.
      nodes_[i]->lock.unlock();
    } catch (const std::exception& error) {
      shared_->report(error);
    }
  }
}

std::chrono::steady_clock::duration RedLock::validity() const {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  if (shared_->holds == 0 || shared_->alive_count() < shared_->quorum) {
    return Clock::duration::zero();
  }
  if (!shared_->watchdog) {
    return std::max(Clock::duration::zero(), shared_->valid_until - Clock::now());
  }
  // Renewed leases: valid while a quorum of nodes still has lease left.
  std::vector<Clock::duration> left;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (shared_->alive[i]) left.push_back(nodes_[i]->lock.remaining());
  }
  std::sort(left.begin(), left.end(), std::greater<>());
  return std::max(Clock::duration::zero(),
                  left[shared_->quorum - 1] - Clock::duration(drift_of(shared_->lease)));
}

bool RedLock::valid() const { return validity() > Clock::duration::zero(); }

void RedLock::on_lost(MemberLostCallback callback) {
  std::lock_guard<std::mutex> guard(shared_->mutex);
  shared_->on_lost = std::move(callback);
}

void RedLock::on_error(std::function<void(const std::exception&)> callback) {
  {
    std::lock_guard<std::mutex> guard(shared_->mutex);
    shared_->on_error = callback;
  }
  for (auto& node : nodes_) node->lock.on_error(callback);
}

}  // namespace keywarden
