// AofLog against a real dispatcher and a manual clock: the bytes written for a batch (SELECT
// on database change, #TS annotations), a round trip of writes through the file into a fresh
// keyspace, and the rewrite serializer's output loading to the same data.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <thread>

#include "commands/dispatcher.h"
#include "commands/families.h"
#include "commands/server_state.h"
#include "common/clock.h"
#include "persistence/aof.h"
#include "persistence/aof_rewrite.h"
#include "resp/reply_writer.h"

namespace keywarden {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

std::string resp(std::initializer_list<std::string_view> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n";
    out += arg;
    out += "\r\n";
  }
  return out;
}

// One server's command side: state, dispatcher and a client session.
struct Node {
  explicit Node(const Clock& clock) : state(clock, 16), dispatcher(state) {
    register_data_commands(state.commands());
    session.authenticated = true;
  }
  std::string run(std::initializer_list<std::string_view> args) {
    std::vector<std::string_view> argv(args);
    std::string out;
    ReplyWriter writer(&out);
    dispatcher.execute(session, argv, writer);
    return out;
  }
  ServerState state;
  Dispatcher dispatcher;
  ClientSession session;
};

class AofLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kw-aof-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    settings_.dirname = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  AofSettings settings_;
  ManualClock clock_;
};

TEST_F(AofLogTest, WritesSelectOnDatabaseChangeAndTimestamps) {
  settings_.timestamp_enabled = true;
  AofLog log(settings_, clock_);
  ASSERT_EQ(log.open_for_append(), "");
  EXPECT_EQ(read_file(dir_ / "appendonly.aof.manifest"),
            "file appendonly.aof.1.incr.aof seq 1 type i\n");
  std::vector<PropagatedCommand> batch = {
      {0, {"SET", "a", "1"}}, {0, {"SET", "b", "2"}}, {2, {"DEL", "a"}}};
  log.write_batch(batch);
  clock_.advance_ms(1000);
  std::vector<PropagatedCommand> later = {{2, {"INCR", "n"}}};
  log.write_batch(later);
  log.flush(true);
  const std::string seconds = std::to_string(clock_.wall_ms() / 1000);
  const std::string earlier = std::to_string(clock_.wall_ms() / 1000 - 1);
  EXPECT_EQ(read_file(dir_ / "appendonly.aof.1.incr.aof"),
            "#TS:" + earlier + "\r\n" + resp({"SELECT", "0"}) + resp({"SET", "a", "1"}) +
                resp({"SET", "b", "2"}) + resp({"SELECT", "2"}) + resp({"DEL", "a"}) +
                "#TS:" + seconds + "\r\n" + resp({"INCR", "n"}));
  EXPECT_EQ(log.current_size(),
            static_cast<int64_t>(fs::file_size(dir_ / "appendonly.aof.1.incr.aof")));
}

TEST_F(AofLogTest, WritesReplayIntoAFreshKeyspace) {
  settings_.fsync = kAppendFsyncAlways;
  {
    Node primary(clock_);
    AofLog log(settings_, clock_);
    ASSERT_EQ(log.open_for_append(), "");
    primary.state.propagator().add_sink(&log);
    primary.run({"SET", "s", "v", "EX", "100"});
    primary.run({"HSET", "h", "f", "1"});
    primary.run({"RPUSH", "l", "a", "b"});
    primary.run({"SELECT", "4"});
    primary.run({"MULTI"});
    primary.run({"INCR", "n"});
    primary.run({"INCR", "n"});
    primary.run({"EXEC"});
    log.flush(false);
    primary.state.propagator().remove_sink(&log);
  }
  Node replica(clock_);
  AofLog log(settings_, clock_);
  AofLoadResult loaded = log.load(replica.dispatcher);
  ASSERT_EQ(loaded.error, "");
  EXPECT_TRUE(loaded.existed);
  EXPECT_EQ(replica.run({"GET", "s"}), "$1\r\nv\r\n");
  EXPECT_EQ(replica.run({"PTTL", "s"}), ":100000\r\n");
  EXPECT_EQ(replica.run({"HGET", "h", "f"}), "$1\r\n1\r\n");
  EXPECT_EQ(replica.run({"LRANGE", "l", "0", "-1"}), "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  replica.run({"SELECT", "4"});
  EXPECT_EQ(replica.run({"GET", "n"}), "$1\r\n2\r\n");
}

// replay_aof_data on bytes in memory (what AofLog::load runs per file, and the aof_load fuzz
// target runs on its input): where a bad file stops and where a truncation would cut it.
TEST(AofReplayTest, ReportsWhereEachKindOfBadTailStops) {
  ManualClock clock;
  const std::string set_a = resp({"SET", "a", "1"});
  std::unique_ptr<Node> node;  // a fresh server per replay
  auto replay = [&](const std::string& bytes) {
    node = std::make_unique<Node>(clock);
    uint64_t commands = 0;
    return replay_aof_data(node->dispatcher, bytes, "appendonly.aof.1.incr.aof", false, &commands);
  };
  AofReplay whole = replay("#TS:1700000000\r\n" + set_a + resp({"INCR", "n"}));
  EXPECT_EQ(whole.status, AofReplay::kOk);
  EXPECT_EQ(node->run({"GET", "n"}), "$1\r\n1\r\n");

  // A command cut short: the tail goes, what came before stays.
  AofReplay cut = replay(set_a + "*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$10\r\nabc");
  EXPECT_EQ(cut.status, AofReplay::kShortRead);
  EXPECT_EQ(cut.valid_up_to, set_a.size());
  EXPECT_EQ(node->run({"GET", "a"}), "$1\r\n1\r\n");

  // A MULTI left open: the cut is before the MULTI, and its commands did not run.
  AofReplay open = replay(set_a + resp({"MULTI"}) + resp({"SET", "b", "2"}));
  EXPECT_EQ(open.status, AofReplay::kShortRead);
  EXPECT_EQ(open.valid_up_to, set_a.size());
  EXPECT_EQ(node->run({"EXISTS", "b"}), ":0\r\n");

  // Not RESP at all, or a command the server does not know: the load fails.
  EXPECT_EQ(replay(set_a + "SET b 2\r\n").status, AofReplay::kFailed);
  EXPECT_EQ(replay(resp({"NOSUCHCOMMAND", "x"})).status, AofReplay::kFailed);
  // A huge announced count or length is a short read, not an allocation.
  EXPECT_EQ(replay("*2147483647\r\n$3\r\nGET\r\n").status, AofReplay::kShortRead);
  EXPECT_EQ(replay("*1\r\n$9223372036854775807\r\n").status, AofReplay::kShortRead);
}

TEST_F(AofLogTest, RewrittenBaseLoadsTheSameData) {
  Node primary(clock_);
  primary.run({"SET", "s", "v", "PX", "5000"});
  primary.run({"SET", "gone", "v", "PX", "10"});
  primary.run({"ZADD", "z", "1.5", "a", "-inf", "b"});
  primary.run({"SADD", "set", "1", "2", "x"});
  std::vector<std::string> fields;
  for (int i = 0; i < 150; ++i) {
    fields.push_back("f" + std::to_string(i));
    fields.push_back(std::to_string(i));
  }
  std::vector<std::string_view> hset = {"HSET", "h"};
  for (const std::string& field : fields) hset.push_back(field);
  std::string ignored;
  ReplyWriter writer(&ignored);
  primary.dispatcher.execute(primary.session, hset, writer);
  clock_.advance_ms(20);

  AofLog log(settings_, clock_);
  ASSERT_EQ(log.prepare_directory(), "");
  const std::string temp = log.path_of("temp-rewrite.aof");
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write_keyspace_as_commands(primary.state.keyspace(), fd, clock_.wall_ms(), false), "");
  close(fd);
  // HMSET in batches of 64 pairs, as Redis's rewrite.
  EXPECT_NE(read_file(temp).find(resp({"SELECT", "0"})), std::string::npos);
  EXPECT_EQ(read_file(temp).find("gone"), std::string::npos);
  ASSERT_EQ(log.install_rewritten_base(temp, false), "");
  EXPECT_EQ(read_file(dir_ / "appendonly.aof.manifest"),
            "file appendonly.aof.1.base.aof seq 1 type b\n");

  Node replica(clock_);
  AofLog loader(settings_, clock_);
  ASSERT_EQ(loader.load(replica.dispatcher).error, "");
  EXPECT_EQ(replica.run({"PTTL", "s"}), ":4980\r\n");
  EXPECT_EQ(replica.run({"EXISTS", "gone"}), ":0\r\n");
  EXPECT_EQ(replica.run({"ZSCORE", "z", "b"}), "$4\r\n-inf\r\n");
  EXPECT_EQ(replica.run({"SCARD", "set"}), ":3\r\n");
  EXPECT_EQ(replica.run({"HLEN", "h"}), ":150\r\n");
  EXPECT_EQ(replica.run({"HGET", "h", "f149"}), "$3\r\n149\r\n");
}

// Redis's rule for a slow disk under everysec: while the background fsync runs, the buffer waits
// (replies still go out), for at most two seconds; then it is written anyway and counted.
TEST_F(AofLogTest, EverysecPostponesWritesBehindASlowFsyncForTwoSeconds) {
  AofLog log(settings_, clock_);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  log.fsyncer().set_sync_function([released](int) {
    released.wait();
    return 0;
  });
  ASSERT_EQ(log.open_for_append(), "");
  const fs::path incr = dir_ / "appendonly.aof.1.incr.aof";
  clock_.advance_ms(1000);
  std::vector<PropagatedCommand> first = {{0, {"SET", "a", "1"}}};
  log.write_batch(first);
  log.flush(false);  // written, and a (stuck) fsync queued
  EXPECT_EQ(log.pending_fsync(), 1);
  const auto written = fs::file_size(incr);

  std::vector<PropagatedCommand> second = {{0, {"SET", "b", "2"}}};
  log.write_batch(second);
  log.flush(false);
  EXPECT_EQ(fs::file_size(incr), written);  // postponed
  clock_.advance_ms(1000);
  log.cron();
  EXPECT_EQ(fs::file_size(incr), written);  // still within two seconds
  EXPECT_EQ(log.delayed_fsync(), 0u);
  clock_.advance_ms(1000);
  log.cron();
  EXPECT_GT(fs::file_size(incr), written);  // written anyway
  EXPECT_EQ(log.delayed_fsync(), 1u);
  EXPECT_FALSE(log.has_pending());

  release.set_value();
  for (int i = 0; i < 1000 && log.pending_fsync() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(log.pending_fsync(), 0);
}

// The server refuses writes (-MISCONF) while the AOF cannot be written: the log tells its
// listener when a write fails and when that stops, here by closing (a write that succeeds
// again tells it too). The file is /dev/full, where every write fails with ENOSPC.
TEST_F(AofLogTest, WriteErrorsAreReportedOnceUntilTheyEnd) {
  settings_.fsync = kAppendFsyncNo;
  fs::create_directories(dir_);
  fs::create_symlink("/dev/full", dir_ / "appendonly.aof.1.incr.aof");
  AofLog log(settings_, clock_);
  std::vector<int> reported;
  log.set_write_error_listener([&](int error) { reported.push_back(error); });
  ASSERT_EQ(log.open_for_append(), "");
  EXPECT_TRUE(reported.empty());
  std::vector<PropagatedCommand> batch = {{0, {"SET", "a", "1"}}};
  log.write_batch(batch);
  log.flush(false);
  EXPECT_EQ(reported, std::vector<int>{ENOSPC});
  EXPECT_FALSE(log.last_write_ok());
  log.cron();  // retried, failing the same way: nothing new to report
  EXPECT_EQ(reported, std::vector<int>{ENOSPC});
  log.close();
  EXPECT_EQ(reported, (std::vector<int>{ENOSPC, 0}));
}

}  // namespace
}  // namespace keywarden
