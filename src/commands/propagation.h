// The one path every write takes towards the AOF and replicas. Commands hand over their
// effect with relative times already made absolute (SET … EX 10 becomes SET … PXAT <ms>,
// EXPIRE becomes PEXPIREAT), and deletions no command asked for (expiry, eviction) arrive as
// DEL. The effects of one command execution, including the DELs of keys it found expired, are
// delivered to the sinks together, in order, when the execution ends.
//
// Building the argument vectors costs allocations, so nothing is built while no sink listens.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

struct PropagatedCommand {
  int db;
  std::vector<std::string> args;
};

class PropagationSink {
 public:
  virtual ~PropagationSink() = default;
  // One command execution's effects, in order.
  virtual void write_batch(std::span<const PropagatedCommand> batch) = 0;
};

class Propagator {
 public:
  bool active() const { return !sinks_.empty(); }
  void add_sink(PropagationSink* sink) { sinks_.push_back(sink); }
  void remove_sink(PropagationSink* sink);

  void add(int db, std::span<const std::string_view> args);
  void add(int db, std::initializer_list<std::string_view> args);
  // Effects added since the last flush; a script that asked for no replication drops its
  // commands' effects with drop_pending_from(count taken before the command).
  size_t pending_count() const { return pending_.size(); }
  void drop_pending_from(size_t count) {
    if (count < pending_.size()) pending_.resize(count);
  }
  // Delivers what was added since the last flush.
  void flush();
  // Wraps what was added since the last flush in MULTI … EXEC when it is more than one
  // command, so that the AOF and replicas apply it atomically (Redis 7.0's execution units).
  void wrap_pending_in_transaction();

 private:
  std::vector<PropagationSink*> sinks_;
  std::vector<PropagatedCommand> pending_;
};

}  // namespace keywarden
