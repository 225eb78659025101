// The effects of a write cannot drift apart. Every write command of the table runs in
// representative forms (at least one that changes the keyspace) against a fresh harness, and
// the dataset is compared before and after:
//   - when a key changed, the change was counted (INFO rdb_changes_since_last_save), something
//     reached the propagation path, and a WATCH on that key is invalidated;
//   - something was propagated exactly when a change was counted, save for the commands Redis
//     propagates regardless (FLUSHDB, FLUSHALL, and PUBLISH/SPUBLISH for the read-only side);
//   - no read-only command, whatever its arguments, counts a change or propagates anything.
// A write command added to the table without a form here fails the coverage check, so the
// list grows with the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command_harness.h"
#include "common/fence_keys.h"
#include "common/number.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/stream_value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

using testing::CommandHarness;
using testing::HarnessClient;

// The keys every form starts with, one per type, one with a TTL.
constexpr std::string_view kDataset[] = {
    "SET s 10",
    "SET f 1.5",
    "SET tmp x EX 1000",
    "RPUSH l a b c",
    "SADD st a b c",
    "SADD st2 b c d",
    "ZADD z 1 a 2 b 3 c",
    "ZADD z2 2 b 3 c 4 d",
    "HSET h f 1 g 2",
    "HSET hv f 1 g 2",
    "HPEXPIRE hv 100000 FIELDS 1 g",
    "PFADD hll a b c",
    "XADD x 1-1 a 1",
    "XADD x 2-1 b 2",
    "XADD x 3-1 c 3",
    "XGROUP CREATE x g 0",
    "XREADGROUP GROUP g c COUNT 2 STREAMS x >",
};

// (database, key) -> type, deadline and contents, sets and hashes in sorted order.
using Snapshot = std::map<std::pair<int, std::string>, std::string>;

Snapshot snapshot(CommandHarness& h) {
  Snapshot result;
  Keyspace& keyspace = h.state.keyspace();
  for (int index = 0; index < keyspace.database_count(); ++index) {
    const Database& db = keyspace.db(index);
    db.for_each([&](const Entry* entry) {
      const Value& value = entry->value;
      std::string text = std::to_string(static_cast<int>(value.type())) + "|";
      if (entry->has_expiry()) text += std::to_string(db.deadline_of(entry));
      text += "|";
      std::vector<std::string> items;
      switch (value.type()) {
        case ValueType::kString: {
          char scratch[kInt64BufferSize];
          text += value.string_view(scratch);
          break;
        }
        case ValueType::kList:
          value.as<ListValue>().for_each(
              [&](std::string_view element) { text += std::string(element) + ","; });
          break;
        case ValueType::kSet:
          value.as<SetValue>().for_each(
              [&](std::string_view member) { items.emplace_back(member); });
          break;
        case ValueType::kZSet:
          value.as<ZSetValue>().for_each([&](std::string_view member, double score) {
            text += std::string(member) + "=" + format_double(score) + ",";
          });
          break;
        case ValueType::kHash:
          value.as<HashValue>().for_each([&](std::string_view field, std::string_view data) {
            const int64_t deadline = value.as<HashValue>().field_deadline(field);
            items.push_back(std::string(field) + "=" + std::string(data) +
                            (deadline == kNoFieldDeadline ? "" : "@" + std::to_string(deadline)));
          });
          break;
        case ValueType::kStream: {
          // Entries, counters, groups, their pending entries and consumers: all a write can
          // change (delivery and seen times included).
          const auto& stream = value.as<StreamValue>();
          stream.for_range(StreamId{}, StreamId::max(), false, [&](const StreamEntry& entry) {
            text += entry.id.to_string() + "{";
            for (const auto& [field, data] : entry.fields) {
              text += std::string(field) + "=" + std::string(data) + ",";
            }
            text += "}";
            return true;
          });
          text += "|" + stream.last_id().to_string() + "|" + stream.max_deleted_id().to_string() +
                  "|" + std::to_string(stream.entries_added()) + "|" +
                  std::to_string(stream.length());
          for (const auto& [name, group] : stream.groups()) {
            text += "|" + name + ":" + group.last_id.to_string() + ":" +
                    std::to_string(group.entries_read);
            for (const auto& [id, pending] : group.pending) {
              text += " " + id.to_string() + "@" + pending.consumer + "/" +
                      std::to_string(pending.delivery_time_ms) + "/" +
                      std::to_string(pending.delivery_count);
            }
            for (const auto& [consumer, state] : group.consumers) {
              text += " " + consumer + "/" + std::to_string(state.seen_time_ms) + "/" +
                      std::to_string(state.pending.size());
            }
          }
          break;
        }
      }
      std::sort(items.begin(), items.end());
      for (const std::string& item : items) text += item + ",";
      result[{index, std::string(entry->key())}] = text;
      return true;
    });
  }
  return result;
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> args;
  EXPECT_TRUE(split_arguments(line, args)) << line;
  return args;
}

// What one form did.
struct Outcome {
  std::string command;  // the table's full name of what ran
  bool keyspace_changed = false;
};

// Runs `line` on a fresh dataset and checks the rules above. `forced`: a command Redis
// propagates even when it counted no change.
Outcome check_form(std::string_view line, bool forced = false) {
  SCOPED_TRACE(std::string(line));
  CommandHarness h;
  for (std::string_view setup : kDataset) h.call(setup);
  const std::vector<std::string> args = words(line);
  std::vector<std::string_view> views(args.begin(), args.end());
  const Command* command = h.state.commands().find_for_args(views);
  EXPECT_NE(command, nullptr);
  if (command == nullptr) return {};

  // A watcher per key, in databases 0 and 1: every key there is in either (SWAPDB moves them),
  // and every argument (any of them may name a key the command creates).
  const Snapshot before = snapshot(h);
  std::set<std::string> keys(args.begin() + 1, args.end());
  keys.erase("");
  // Keys a command derives from its arguments: the fencing counters and marks (LOCK.* FENCE).
  for (size_t i = 1; i < args.size(); ++i) {
    keys.insert(fence_counter_key(args[i]));
    keys.insert(fence_marks_key(args[i]));
  }
  for (const auto& [where, contents] : before) keys.insert(where.second);
  std::map<std::pair<int, std::string>, HarnessClient*> watchers;
  for (int db : {0, 1}) {
    for (const std::string& key : keys) {
      HarnessClient& watcher = h.new_client();
      h.call_as(watcher, "SELECT " + std::to_string(db));
      EXPECT_EQ(h.call_as(watcher, "WATCH " + key), "+OK");
      watchers[{db, key}] = &watcher;
    }
  }
  h.take_propagated();
  const uint64_t dirty_before = h.dirty();

  h.call_args(args);

  const Snapshot after = snapshot(h);
  const bool counted = h.dirty() != dirty_before;
  const std::vector<std::string> propagated = h.take_propagated();
  std::set<std::pair<int, std::string>> changed;
  for (const auto& [where, contents] : before) {
    auto it = after.find(where);
    if (it == after.end() || it->second != contents) changed.insert(where);
  }
  for (const auto& [where, contents] : after) {
    if (!before.contains(where)) changed.insert(where);
  }
  if (!changed.empty()) {
    EXPECT_TRUE(counted) << "changed the keyspace without counting the change";
    EXPECT_FALSE(propagated.empty()) << "changed the keyspace without propagating";
  }
  for (const auto& where : changed) {
    auto it = watchers.find(where);
    EXPECT_NE(it, watchers.end()) << "no watcher for " << where.first << ":" << where.second;
    if (it == watchers.end()) continue;
    EXPECT_TRUE(it->second->session.transaction.dirty_cas())
        << "WATCH of " << where.first << ":" << where.second << " not invalidated";
  }
  if (!forced) {
    EXPECT_EQ(!propagated.empty(), counted)
        << "propagated " << propagated.size() << " commands, counted " << counted;
  }
  return {command->full_name, !changed.empty()};
}

// Forms of every write command: at least one changes the keyspace; others change nothing.
constexpr std::string_view kWriteForms[] = {
    "APPEND s x", "APPEND new x",
    "BITFIELD s SET u8 0 1", "BITFIELD s SET u8 0 1 SET u8 0 1", "BITFIELD new INCRBY u4 0 1",
    "BITFIELD s GET u8 0", "BITFIELD s OVERFLOW FAIL INCRBY u8 0 999",
    "BITOP OR d s s2", "BITOP AND s nokey", "BITOP AND d nokey",
    "SETBIT s 0 1", "SETBIT s 0 1", "SETBIT new 9 0",
    "BLMOVE l d LEFT RIGHT 0", "BLMPOP 0 1 l LEFT COUNT 2", "BLPOP nokey l 0", "BRPOP l 0",
    "BRPOPLPUSH l d 0", "BZMPOP 0 1 z MIN", "BZPOPMAX z 0", "BZPOPMIN nokey z 0",
    "COPY s s2", "COPY s s DB 1", "COPY s st REPLACE", "COPY nokey s2",
    "DECR s", "DECRBY s 3", "DECR l",
    "DEL s l nokey", "DEL nokey", "UNLINK s h", "UNLINK nokey",
    "EXPIRE s 100", "EXPIRE s -1", "EXPIRE nokey 100", "EXPIRE tmp 100 NX",
    "EXPIREAT s 1", "EXPIREAT s 99999999999", "PEXPIRE s 100000", "PEXPIREAT s 1",
    "PERSIST tmp", "PERSIST s",
    "FLUSHDB", "FLUSHALL", "FLUSHALL SYNC", "SWAPDB 0 1", "SWAPDB 0 0",
    "GEOADD g 1 1 a", "GEOADD z XX 1 1 x", "GEOADD z 1 1 a", "GEOADD z CH 1 1 a",
    "GEORADIUS z -180 -85 1000 km STORE d", "GEORADIUS z 0 0 1 m STORE z2",
    "GEORADIUS z 0 0 1 m", "GEORADIUSBYMEMBER z a 1000 km STOREDIST d",
    "GEOSEARCHSTORE d z FROMMEMBER a BYRADIUS 1000 km",
    "GEOSEARCHSTORE d nokey FROMMEMBER a BYRADIUS 1 m",
    "GETDEL s", "GETDEL nokey", "GETEX s EX 100", "GETEX tmp PERSIST", "GETEX s PXAT 1",
    "GETEX s", "GETSET s y", "GETSET new y",
    "HDEL h f", "HDEL h f g", "HDEL h nofield", "HINCRBY h f 2", "HINCRBYFLOAT h f 1.5",
    "HMSET h a 1", "HSET h a 1 f 1", "HSETNX h a 1", "HSETNX h f 1",
    "HEXPIRE h 100 FIELDS 1 f", "HEXPIRE h 0 FIELDS 2 f nofield", "HEXPIRE nokey 1 FIELDS 1 f",
    "HPEXPIRE hv 5 NX FIELDS 2 g f", "HEXPIREAT hv 1 FIELDS 2 f g", "HPEXPIREAT hv 1 GT FIELDS 1 f", "HPEXPIREAT h 1800000000000 FIELDS 1 f",
    "HPERSIST hv FIELDS 2 f g", "HPERSIST h FIELDS 1 f",
    "HGETEX h FIELDS 1 f", "HGETEX h EX 10 FIELDS 2 f nofield", "HGETEX h EXAT 1 FIELDS 1 f",
    "HGETEX hv PERSIST FIELDS 1 g", "HGETEX hv PXAT 1 FIELDS 2 f g",
    "HSETEX h FIELDS 1 f 5", "HSETEX h FNX FIELDS 1 f 5", "HSETEX new PX 100 FIELDS 1 a 1",
    "HSETEX hv KEEPTTL FIELDS 1 g 3", "HSETEX hv FXX EXAT 1 FIELDS 1 g 3",
    "HGETDEL h FIELDS 1 f", "HGETDEL h FIELDS 2 f g", "HGETDEL h FIELDS 1 nofield",
    "HINCRBYFLOAT hv g 1.5",
    "INCR s", "INCRBY s 5", "INCRBYFLOAT f 1", "INCR new",
    "LINSERT l BEFORE b x", "LINSERT l BEFORE nothere x",
    "LMOVE l d LEFT RIGHT", "LMOVE l l LEFT RIGHT", "LMPOP 1 l RIGHT COUNT 2",
    "LPOP l", "LPOP l 10", "LPOP l 0", "RPOP l", "LPUSH l x", "LPUSH new x y", "LPUSHX l x",
    "LPUSHX nokey x", "RPUSH l x", "RPUSHX l x", "LREM l 0 a", "LREM l 0 nothere",
    "LSET l 0 x", "LTRIM l 0 0", "LTRIM l 0 -1", "LTRIM l 5 10",
    "MOVE s 1", "MOVE nokey 1",
    "MSET a 1 b 2", "MSETNX a 1 b 2", "MSETNX s 1 a 2",
    "MSETEX 2 a 1 b 2 EX 100", "MSETEX 2 s 1 a 2 NX", "MSETEX 1 s 1 XX KEEPTTL", "MSETEX 1 a 1",
    "DELEX s", "DELEX nokey", "DELEX l", "DELEX s IFEQ 10", "DELEX s IFEQ 11", "DELEX s IFNE 11",
    "DELIFEQ s 10", "DELIFEQ s 9", "DELIFEQ nokey 1",
    "LOCK.ACQUIRE lk o 1000", "LOCK.ACQUIRE h f 1000", "LOCK.ACQUIRE h o 1000",
    "LOCK.ACQUIRE s o 1000", "LOCK.RELEASE h f", "LOCK.RELEASE h nobody", "LOCK.RELEASE nokey o",
    "LOCK.RELEASE h f ALL", "LOCK.ACQUIRE fk o 1000 FENCE", "LOCK.FENCED r 1 SET a v",
    "LOCK.FENCED r 1 INCR nokey2",
    "SET s v IFEQ 10", "SET s v IFEQ 11", "SET new v IFNE x", "SET tmp v IFNE y KEEPTTL",
    "SET s v IFDNE 0000000000000000 PX 5000",
    "PFADD hll d", "PFADD hll a", "PFADD hll", "PFADD new x", "PFADD new", "PFADD s x",
    "PFMERGE hll hll", "PFMERGE d hll nokey", "PFMERGE d nokey", "PFMERGE d s",
    "PFDEBUG TODENSE hll", "PFDEBUG GETREG hll", "PFDEBUG ENCODING hll", "PFDEBUG TODENSE nokey",
    "PSETEX a 100000 v", "SETEX a 100 v", "SETNX a v", "SETNX s v",
    "SET a v", "SET s v GET", "SET a v EX 100", "SET s v NX", "SET s v KEEPTTL XX",
    "SETRANGE s 1 xx", "SETRANGE new 2 xx", "SETRANGE s 1 \"\"",
    "RENAME s s3", "RENAME s s", "RENAMENX s s3", "RENAMENX s f",
    "RPOPLPUSH l l", "RPOPLPUSH l d",
    "SADD st x", "SADD st a", "SREM st a", "SREM st a b c", "SREM st x",
    "SDIFFSTORE d st st2", "SDIFFSTORE st2 st st", "SDIFFSTORE d nokey",
    "SINTERSTORE d st st2", "SUNIONSTORE d st st2",
    "SMOVE st st2 a", "SMOVE st st2 b", "SMOVE st st2 x",
    "SORT l ALPHA STORE d", "SORT l ALPHA", "SORT nokey STORE l",
    "SPOP st", "SPOP st 2", "SPOP st 10", "SPOP st 0", "SPOP nokey",
    "ZADD z 5 x", "ZADD z XX 5 x", "ZADD z 1 a", "ZADD z INCR 1 a", "ZINCRBY z 1 a",
    "ZDIFFSTORE d 2 z z2", "ZINTERSTORE d 2 z z2", "ZUNIONSTORE d 2 z z2",
    "ZINTERSTORE z2 2 z nokey", "ZRANGESTORE d z 0 -1", "ZRANGESTORE z2 z 5 10",
    "ZMPOP 1 z MAX", "ZPOPMAX z", "ZPOPMIN z 2", "ZPOPMIN z 10",
    "ZREM z a", "ZREM z a b c", "ZREM z x",
    "ZREMRANGEBYLEX z [a [b", "ZREMRANGEBYRANK z 0 0", "ZREMRANGEBYSCORE z 1 2",
    "ZREMRANGEBYSCORE z 10 20",
    "XADD x * d 4", "XADD new 5-1 a 1", "XADD nokey NOMKSTREAM * a 1", "XADD x MAXLEN 1 * e 5",
    "XTRIM x MAXLEN 1", "XTRIM x MINID 0", "XTRIM x MAXLEN ~ 1",
    "XDEL x 1-1", "XDEL x 9-9", "XACK x g 1-1", "XACK x g 3-1",
    "XGROUP CREATE x g2 $", "XGROUP CREATE new2 g 0 MKSTREAM", "XGROUP SETID x g 3-1",
    "XGROUP DESTROY x g", "XGROUP DESTROY x nogroup", "XGROUP CREATECONSUMER x g c2",
    "XGROUP CREATECONSUMER x g c", "XGROUP DELCONSUMER x g c",
    "XREADGROUP GROUP g c2 STREAMS x >", "XREADGROUP GROUP g c2 NOACK STREAMS x >",
    "XCLAIM x g c2 0 1-1", "XCLAIM x g c2 0 1-1 JUSTID", "XAUTOCLAIM x g c2 0 0-0",
    "XSETID x 9-9", "XSETID x 3-1 ENTRIESADDED 7 MAXDELETEDID 2-0",
};

// Commands Redis propagates whether or not they changed anything.
bool forced_propagation(std::string_view line) {
  return line == "FLUSHDB" || line == "FLUSHALL";
}

TEST(EffectsTest, EveryWriteCountsPropagatesAndSignalsItsChanges) {
  std::set<std::string> covered;
  for (std::string_view line : kWriteForms) {
    const Outcome outcome = check_form(line, forced_propagation(line));
    if (outcome.keyspace_changed) covered.insert(outcome.command);
  }
  // Every write command of the table has a form that changed the keyspace.
  CommandHarness h;
  for (const auto& [name, command] : h.state.commands().commands()) {
    std::vector<const Command*> leaves;
    if (command->is_container()) {
      for (const auto& [sub_name, sub] : command->subcommands) leaves.push_back(sub.get());
    } else {
      leaves.push_back(command.get());
    }
    for (const Command* leaf : leaves) {
      if (!leaf->has(kWrite)) continue;
      EXPECT_TRUE(covered.contains(leaf->full_name))
          << leaf->full_name << ": no form here changes the keyspace; add one to kWriteForms";
    }
  }
}

TEST(EffectsTest, ReadOnlyCommandsNeitherCountNorPropagate) {
  CommandHarness table;
  std::vector<std::string> names;
  for (const auto& [name, command] : table.state.commands().commands()) {
    if (command->is_container()) {
      for (const auto& [sub_name, sub] : command->subcommands) {
        if (!sub->has(kWrite)) names.push_back(name + " " + sub_name);
      }
    } else if (!command->has(kWrite)) {
      names.push_back(name);
    }
  }
  // Replicas republish what PUBLISH and SPUBLISH publish: Redis propagates them, changing nothing.
  std::erase_if(names, [](const std::string& name) { return name == "publish" || name == "spublish"; });
  ASSERT_GT(names.size(), 50u);
  const std::string_view tails[] = {"",      " s",         " l",          " st",
                                    " z",    " h",         " nokey",      " tmp",
                                    " s 0",  " l 0 -1",    " z 0 -1",     " h f",
                                    " st a", " z a",       " l a",        " st st2",
                                    " 2 z z2", " z 0 -1 WITHSCORES", " s 0 -1", " 0",
                                    " x",    " x - +",     " x g",        " STREAMS x 0"};
  for (const std::string& name : names) {
    for (std::string_view tail : tails) {
      const std::string line = name + std::string(tail);
      SCOPED_TRACE(line);
      CommandHarness h;
      for (std::string_view setup : kDataset) h.call(setup);
      const Snapshot before = snapshot(h);
      h.take_propagated();
      const uint64_t dirty_before = h.dirty();
      h.call_all(line);
      EXPECT_EQ(h.dirty(), dirty_before);
      EXPECT_EQ(h.take_propagated(), std::vector<std::string>{});
      EXPECT_EQ(snapshot(h), before);
    }
  }
}

// FLUSHALL counts the keys it removed, as Redis 7.0 does (not one more), and reaches the
// AOF and replicas even when every database was empty already.
TEST(EffectsTest, FlushallCountsTheKeysRemovedAndAlwaysPropagates) {
  CommandHarness h;
  h.take_propagated();
  uint64_t dirty = h.dirty();
  EXPECT_EQ(h.call("FLUSHALL"), "+OK");
  EXPECT_EQ(h.dirty(), dirty);
  EXPECT_EQ(h.take_propagated(), std::vector<std::string>{"0:FLUSHALL"});
  h.call("MSET a 1 b 2");
  h.call("SELECT 3");
  h.call("SET c 3");
  h.take_propagated();
  dirty = h.dirty();
  EXPECT_EQ(h.call("FLUSHALL ASYNC"), "+OK");
  EXPECT_EQ(h.dirty(), dirty + 3);
  EXPECT_EQ(h.take_propagated(), std::vector<std::string>{"3:FLUSHALL ASYNC"});
}

// Commands nested in EXEC keep their own effects, batched for the EXEC; the EXEC itself is
// not propagated as received.
TEST(EffectsTest, ExecBatchesTheEffectsOfItsCommands) {
  CommandHarness h;
  h.call("MULTI");
  h.call("SET a 1");
  h.call("SET b 2 EX 100");
  h.call("GET a");
  h.call("DEL nokey");
  h.take_propagated();
  h.call("EXEC");
  const std::vector<std::string> lines = h.take_propagated();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "0:MULTI");
  EXPECT_EQ(lines[1], "0:SET a 1");
  EXPECT_TRUE(lines[2].starts_with("0:SET b 2 PXAT ")) << lines[2];
  EXPECT_EQ(lines[3], "0:EXEC");
}

// A served blocked client's command propagates its rewritten effect, after the push.
TEST(EffectsTest, ServedBlockedPopPropagatesItsRewrittenEffect) {
  CommandHarness h;
  HarnessClient& waiter = h.new_client();
  EXPECT_EQ(h.call_as(waiter, "BLPOP q 0"), "(blocked)");
  h.take_propagated();
  h.call("RPUSH q x");
  EXPECT_EQ(h.take_propagated(), (std::vector<std::string>{"0:RPUSH q x", "0:LPOP q"}));
}

}  // namespace
}  // namespace keywarden
