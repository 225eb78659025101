// The pure parts of Redis Cluster routing (src/client/cluster.h): which key decides where a
// command goes, how a batch splits into commands, which replies are redirections. The routing
// itself runs against a real cluster in tests/unit/client_cluster/cluster_test.cc.
#include <gtest/gtest.h>

#include "client/cluster.h"
#include "client/connection.h"
#include "keywarden/client.h"
#include "keywarden/errors.h"

namespace keywarden::detail {
namespace {

std::optional<std::string_view> key_of(std::vector<std::string_view> args) {
  return routing_key(args);
}

TEST(ClusterRouting, FirstKeyOfPlainCommands) {
  EXPECT_EQ(key_of({"GET", "a"}), "a");
  EXPECT_EQ(key_of({"set", "b", "1"}), "b");
  EXPECT_EQ(key_of({"MSET", "c", "1", "d", "2"}), "c");
  EXPECT_EQ(key_of({"OBJECT", "ENCODING", "e"}), "e");
  EXPECT_EQ(key_of({"XINFO", "STREAM", "s"}), "s");
}

TEST(ClusterRouting, KeysAfterACount) {
  EXPECT_EQ(key_of({"EVALSHA", "sha", "2", "k1", "k2", "arg"}), "k1");
  EXPECT_EQ(key_of({"eval", "return 1", "0", "arg"}), std::nullopt);
  EXPECT_EQ(key_of({"EVAL", "return 1", "x"}), std::nullopt);  // not a count
  EXPECT_EQ(key_of({"FCALL", "f", "1", "k"}), "k");
  EXPECT_EQ(key_of({"ZUNION", "2", "z1", "z2"}), "z1");
  EXPECT_EQ(key_of({"LMPOP", "1", "l", "LEFT"}), "l");
  EXPECT_EQ(key_of({"BLMPOP", "0", "1", "l", "LEFT"}), "l");
  EXPECT_EQ(key_of({"XREAD", "COUNT", "2", "STREAMS", "s1", "s2", "0", "0"}), "s1");
  EXPECT_EQ(key_of({"XREADGROUP", "GROUP", "g", "c", "streams", "s", ">"}), "s");
}

TEST(ClusterRouting, KeylessCommands) {
  EXPECT_EQ(key_of({"PING"}), std::nullopt);
  EXPECT_EQ(key_of({"PING", "hello"}), std::nullopt);
  EXPECT_EQ(key_of({"PUBLISH", "channel", "m"}), std::nullopt);
  EXPECT_EQ(key_of({"SCRIPT", "LOAD", "return 1"}), std::nullopt);
  EXPECT_EQ(key_of({"WAIT", "1", "100"}), std::nullopt);
  EXPECT_EQ(key_of({"CLUSTER", "SLOTS"}), std::nullopt);
  EXPECT_EQ(key_of({"SPUBLISH", "channel", "m"}), "channel");  // sharded: by the channel's slot
}

TEST(ClusterRouting, SplitsABatchIntoItsCommands) {
  std::string encoded;
  encode_command(encoded, std::vector<std::string_view>{"SET", "k", "v\r\nx"});
  encode_command(encoded, std::vector<std::string_view>{"PING"});
  encode_command(encoded, std::vector<std::string_view>{"GET", ""});
  auto commands = split_encoded(encoded, 3);
  ASSERT_EQ(commands.size(), 3u);
  EXPECT_EQ(commands[0].args, (std::vector<std::string_view>{"SET", "k", "v\r\nx"}));
  EXPECT_EQ(commands[1].args, (std::vector<std::string_view>{"PING"}));
  EXPECT_EQ(commands[2].args, (std::vector<std::string_view>{"GET", ""}));
  EXPECT_EQ(std::string(commands[0].bytes) + std::string(commands[1].bytes) +
                std::string(commands[2].bytes),
            encoded);
  EXPECT_THROW(split_encoded(encoded, 4), ProtocolError);
  EXPECT_THROW(split_encoded("*1\r\n$10\r\nPING\r\n", 1), ProtocolError);
  EXPECT_THROW(split_encoded("PING\r\n", 1), ProtocolError);
}

TEST(ClusterRouting, RedirectErrors) {
  auto error = [](std::string text) {
    RespValue value;
    value.type = RespType::kError;
    value.str = std::move(text);
    return value;
  };
  EXPECT_TRUE(is_redirect_error(error("MOVED 3999 127.0.0.1:6381")));
  EXPECT_TRUE(is_redirect_error(error("ASK 3999 127.0.0.1:6381")));
  EXPECT_TRUE(is_redirect_error(error("TRYAGAIN Multiple keys request during rehashing of slot")));
  EXPECT_TRUE(is_redirect_error(error("CLUSTERDOWN The cluster is down")));
  EXPECT_FALSE(is_redirect_error(error("CROSSSLOT Keys in request don't hash to the same slot")));
  EXPECT_FALSE(is_redirect_error(error("ERR MOVED")));
  RespValue ok;
  ok.type = RespType::kSimpleString;
  ok.str = "MOVED 1 a:1";
  EXPECT_FALSE(is_redirect_error(ok));
}

TEST(ClusterRouting, ClientRejectsClusterWithSentinel) {
  ClientOptions options;
  options.cluster.addresses = {{"127.0.0.1", 1}};
  options.sentinel.addresses = {{"127.0.0.1", 2}};
  EXPECT_THROW(Client client(options), Error);
}

TEST(ClusterRouting, UnreachableClusterIsAClusterError) {
  ClientOptions options;
  options.cluster.addresses = {{"127.0.0.1", 1}};  // nothing listens on port 1
  options.cluster.max_redirects = 2;
  options.connect_timeout = std::chrono::milliseconds(500);
  Client client(options);
  try {
    client.command("GET", "k");
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_EQ(e.code(), "CLUSTERDOWN");
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace keywarden::detail
