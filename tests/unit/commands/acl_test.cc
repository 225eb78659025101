// ACL users through the real dispatcher: the rule parser and its errors, the descriptions ACL
// LIST prints, the checks (commands, first arguments, key permissions through key
// specifications, channels, selectors), the ACL log and authentication. The differential test
// (tests/compat/test_acl.py) compares the same against redis-server.
#include "command_harness.h"

namespace keywarden::testing {
namespace {

class AclTest : public ::testing::Test {
 protected:
  // Makes `name` with `rules` and runs the harness's session as it.
  void become(std::string_view name, std::vector<std::string_view> rules) {
    ASSERT_EQ(h.state.acl().set_user(name, rules), "");
    h.session.user = h.state.acl().find(name);
  }
  std::string list_line(std::string_view name) {
    std::shared_ptr<AclUser> user = h.state.acl().find(name);
    return user == nullptr ? "" : h.state.acl().describe_user(*user);
  }

  CommandHarness h;
};

TEST_F(AclTest, HashesPasswordsWithSha256) {
  EXPECT_EQ(acl_hash_password("password"),
            "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8");
  EXPECT_EQ(acl_hash_password(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_F(AclTest, DescribesRulesAsRedisDoes) {
  AclStore& acl = h.state.acl();
  EXPECT_EQ(list_line("default"), "on nopass ~* &* +@all");
  ASSERT_EQ(acl.set_user("u", std::vector<std::string_view>{}), "");
  EXPECT_EQ(list_line("u"), "off resetchannels -@all");
  std::vector<std::string_view> rules = {"on", ">pw", "~a*", "%R~b*", "%W~c", "%RW~d", "&ch*",
                                         "+get", "+object|encoding"};
  ASSERT_EQ(acl.set_user("u", rules), "");
  EXPECT_EQ(list_line("u"),
            "on #" + acl_hash_password("pw") +
                " ~a* %R~b* %W~c ~d resetchannels &ch* -@all +get +object|encoding");
  ASSERT_EQ(acl.set_user("v", std::vector<std::string_view>{"+@all", "-select", "+select|0"}),
            "");
  EXPECT_EQ(list_line("v"), "off resetchannels +@all -select +select|0");
  ASSERT_EQ(acl.set_user("w", std::vector<std::string_view>{"+@string", "-get", "+@read"}), "");
  EXPECT_EQ(list_line("w"), "off resetchannels -@all +@read +@string");
  ASSERT_EQ(acl.set_user("x", std::vector<std::string_view>{"reset", "(+get ~a)", "()"}), "");
  EXPECT_EQ(list_line("x"),
            "off sanitize-payload resetchannels -@all (~a resetchannels -@all +get) "
            "(resetchannels -@all)");
}

TEST_F(AclTest, RefusesBadRulesWithoutChangingTheUser) {
  AclStore& acl = h.state.acl();
  auto error = [&](std::vector<std::string_view> rules) { return acl.set_user("u", rules); };
  EXPECT_EQ(error({"on", "+nosuch"}),
            "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in "
            "ACL");
  EXPECT_EQ(acl.find("u"), nullptr);
  EXPECT_EQ(error({"%~a"}), "ERR Error in ACL SETUSER modifier '%~a': Syntax error");
  EXPECT_EQ(error({"~a b"}), "ERR Error in ACL SETUSER modifier '~a b': Syntax error");
  EXPECT_EQ(error({"+object|encoding|x"}),
            "ERR Error in ACL SETUSER modifier '+object|encoding|x': Allowing first-arg of a "
            "subcommand is not supported");
  EXPECT_EQ(error({"#ABC"}),
            "ERR Error in ACL SETUSER modifier '#ABC': The password hash must be exactly 64 "
            "characters and contain only lowercase hexadecimal characters");
  EXPECT_EQ(error({"(~a", "+get)", "(+set"}),
            "ERR Unmatched parenthesis in acl selector starting at '(+set'.");
  EXPECT_EQ(error({"(\"\")"}), "ERR Error in ACL SETUSER modifier '(\"\")': Syntax error");
  EXPECT_EQ(acl.set_user("a b", std::vector<std::string_view>{}),
            "ERR Usernames can't contain spaces or null characters");
  EXPECT_EQ(acl.find("u"), nullptr);
}

TEST_F(AclTest, ChecksCommandsKeysAndChannels) {
  become("alice", {"on", "nopass", "+@all", "-flushall", "-select", "+select|0", "~k*",
                   "%R~r*", "%W~w*", "&news.*"});
  EXPECT_EQ(h.call("SET k1 v"), "+OK");
  EXPECT_EQ(h.call("FLUSHALL"),
            "-NOPERM this user has no permissions to run the 'flushall' command");
  EXPECT_EQ(h.call("SELECT 0"), "+OK");
  EXPECT_EQ(h.call("SELECT 1"),
            "-NOPERM this user has no permissions to run the 'select' command");
  EXPECT_EQ(h.call("GET other"),
            "-NOPERM this user has no permissions to access one of the keys used as arguments");
  EXPECT_EQ(h.call("GET r1"), "(nil)");
  EXPECT_EQ(h.call("SET r1 v"),
            "-NOPERM this user has no permissions to access one of the keys used as arguments");
  EXPECT_EQ(h.call("SET w1 v"), "+OK");
  // Movable keys are found through the key specifications too.
  EXPECT_EQ(h.call("ZUNIONSTORE k9 2 k1 other"),
            "-NOPERM this user has no permissions to access one of the keys used as arguments");
  EXPECT_EQ(h.call("PUBLISH news.x m"), ":0");
  EXPECT_EQ(h.call("PUBLISH sports m"),
            "-NOPERM this user has no permissions to access one of the channels used as "
            "arguments");
  // Inside MULTI the denial aborts the transaction.
  EXPECT_EQ(h.call("MULTI"), "+OK");
  EXPECT_EQ(h.call("FLUSHALL"),
            "-NOPERM this user has no permissions to run the 'flushall' command");
  EXPECT_EQ(h.call("EXEC"),
            "-EXECABORT Transaction discarded because of previous errors.");

  const auto& log = h.state.acl().log_entries();
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0].context, "multi");
  EXPECT_EQ(log[0].object, "flushall");
  EXPECT_EQ(log[1].reason, AclDenial::kChannel);
  EXPECT_EQ(log[1].object, "sports");
  EXPECT_EQ(log[2].reason, AclDenial::kKey);
  EXPECT_EQ(log[2].object, "other");
  EXPECT_EQ(log[2].username, "alice");
}

TEST_F(AclTest, SelectorsWidenWhatTheRootAllows) {
  become("sel", {"on", "nopass", "+get", "~a", "(+set ~b)"});
  EXPECT_EQ(h.call("GET a"), "(nil)");
  EXPECT_EQ(h.call("SET b 1"), "+OK");
  EXPECT_EQ(h.call("SET a 1"),
            "-NOPERM this user has no permissions to access one of the keys used as arguments");
  EXPECT_EQ(h.call("DEL a"), "-NOPERM this user has no permissions to run the 'del' command");
}

TEST_F(AclTest, AuthenticatesAndLogsFailures) {
  h.session.user = h.state.acl().default_user();
  ASSERT_EQ(h.state.acl().set_user("bob", std::vector<std::string_view>{"on", ">pw", "+@all"}),
            "");
  EXPECT_EQ(h.call("AUTH bob nope"),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(h.call("AUTH bob pw"), "+OK");
  EXPECT_EQ(h.call("ACL WHOAMI"), "\"bob\"");
  ASSERT_EQ(h.state.acl().set_user("bob", std::vector<std::string_view>{"off"}), "");
  EXPECT_EQ(h.call("AUTH bob pw"),
            "-WRONGPASS invalid username-password pair or user is disabled.");
  const auto& log = h.state.acl().log_entries();
  ASSERT_EQ(log.size(), 1u);  // the two failures merged into one entry
  EXPECT_EQ(log[0].count, 2u);
  EXPECT_EQ(log[0].reason, AclDenial::kAuth);
  EXPECT_EQ(log[0].object, "AUTH");
  EXPECT_EQ(h.call("ACL DELUSER bob default"), "-ERR The 'default' user cannot be removed");
  EXPECT_EQ(h.call("ACL DELUSER bob nosuch"), ":1");
}

TEST_F(AclTest, DryRun) {
  ASSERT_EQ(h.state.acl().set_user("d", std::vector<std::string_view>{"+get", "~a"}), "");
  EXPECT_EQ(h.call("ACL DRYRUN d GET a"), "+OK");
  EXPECT_EQ(h.call("ACL DRYRUN d GET b"), "\"This user has no permissions to access the 'b' key\"");
  EXPECT_EQ(h.call("ACL DRYRUN d SET a 1"),
            "\"This user has no permissions to run the 'set' command\"");
  EXPECT_EQ(h.call("ACL DRYRUN nobody GET a"), "-ERR User 'nobody' not found");
  EXPECT_EQ(h.call("ACL DRYRUN d GET"), "-ERR wrong number of arguments for 'get' command");
}

}  // namespace
}  // namespace keywarden::testing
