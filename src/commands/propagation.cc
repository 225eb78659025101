#include "commands/propagation.h"

#include <algorithm>

namespace keywarden {

void Propagator::remove_sink(PropagationSink* sink) {
  sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), sink), sinks_.end());
}

void Propagator::add(int db, std::span<const std::string_view> args) {
  if (!active()) return;
  PropagatedCommand command{db, {}};
  command.args.reserve(args.size());
  for (std::string_view arg : args) command.args.emplace_back(arg);
  pending_.push_back(std::move(command));
}

void Propagator::add(int db, std::initializer_list<std::string_view> args) {
  add(db, std::span<const std::string_view>(args.begin(), args.size()));
}

void Propagator::wrap_pending_in_transaction() {
  if (pending_.size() < 2) return;
  // Already one transaction (a command that wrapped its effects, run by one that wraps its
  // own, as LOCK.FENCED runs SPOP … count): MULTI does not nest.
  if (pending_.front().args.size() == 1 && pending_.front().args[0] == "MULTI" &&
      pending_.back().args.size() == 1 && pending_.back().args[0] == "EXEC") {
    return;
  }
  // MULTI and EXEC carry the databases of their neighbours, so that no sink emits a SELECT
  // for them alone.
  const int first_db = pending_.front().db;
  const int last_db = pending_.back().db;
  pending_.insert(pending_.begin(), PropagatedCommand{first_db, {"MULTI"}});
  pending_.push_back(PropagatedCommand{last_db, {"EXEC"}});
}

void Propagator::flush() {
  if (pending_.empty()) return;
  for (PropagationSink* sink : sinks_) sink->write_batch(pending_);
  pending_.clear();
}

}  // namespace keywarden
