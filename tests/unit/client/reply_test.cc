// keywarden::Reply and the error classes on their own, without a server.
#include <gtest/gtest.h>

#include "keywarden/keywarden.h"

namespace keywarden {
namespace {

TEST(ReplyTest, DefaultIsNull) {
  Reply r;
  EXPECT_TRUE(r.is_null());
  EXPECT_EQ(r.to_string(), "(nil)");
}

TEST(ReplyTest, AccessorsCheckTheType) {
  Reply s = Reply::bulk("x");
  EXPECT_EQ(s.str(), "x");
  EXPECT_THROW(s.integer(), ProtocolError);
  EXPECT_THROW(s.elements(), ProtocolError);
  EXPECT_THROW(Reply::integer(1).str(), ProtocolError);
  EXPECT_THROW(Reply::array({})[0], ProtocolError);
  EXPECT_EQ(Reply::integer(4).as_double(), 4.0);
  EXPECT_TRUE(Reply::integer(1).boolean());
  EXPECT_FALSE(Reply::boolean(false).boolean());
}

TEST(ReplyTest, MapAccess) {
  Reply m = Reply::map({Reply::bulk("a"), Reply::integer(1), Reply::simple_string("b"),
                        Reply::bulk("2")});
  ASSERT_EQ(m.map_size(), 2u);
  EXPECT_EQ(m.key(1).str(), "b");
  ASSERT_NE(m.find("a"), nullptr);
  EXPECT_EQ(m.find("a")->integer(), 1);
  EXPECT_EQ(m.find("zz"), nullptr);
  EXPECT_EQ(m.to_string(), "{\"a\": :1, +b: \"2\"}");
}

TEST(ReplyTest, Rendering) {
  EXPECT_EQ(Reply::array({Reply::integer(1), Reply::null()}).to_string(), "[:1, (nil)]");
  EXPECT_EQ(Reply::set({Reply::bulk("a")}).to_string(), "~{\"a\"}");
  EXPECT_EQ(Reply::push({Reply::bulk("a")}).to_string(), ">[\"a\"]");
  EXPECT_EQ(Reply::double_value(1.5).to_string(), ",1.5");
  EXPECT_EQ(Reply::boolean(true).to_string(), "#t");
  EXPECT_EQ(Reply::big_number("123").to_string(), "(123");
  EXPECT_EQ(Reply::verbatim("txt", "hi\n").to_string(), "=txt:\"hi\\n\"");
  EXPECT_EQ(Reply::error("ERR x").to_string(), "-ERR x");
  EXPECT_EQ(Reply::error("WRONGTYPE Operation").error_code(), "WRONGTYPE");
}

TEST(ErrorTest, ServerErrorSplitsCode) {
  ServerError e("WRONGTYPE Operation against a key");
  EXPECT_EQ(e.code(), "WRONGTYPE");
  EXPECT_EQ(e.message(), "Operation against a key");
  EXPECT_STREQ(e.what(), "WRONGTYPE Operation against a key");
  const Error& base = e;
  EXPECT_NE(dynamic_cast<const ServerError*>(&base), nullptr);
}

TEST(ErrorTest, Hierarchy) {
  EXPECT_TRUE((std::is_base_of_v<Error, TransportError>));
  EXPECT_TRUE((std::is_base_of_v<Error, TimeoutError>));
  EXPECT_TRUE((std::is_base_of_v<Error, ServerError>));
  EXPECT_TRUE((std::is_base_of_v<Error, ProtocolError>));
  EXPECT_TRUE((std::is_base_of_v<std::runtime_error, Error>));
}

TEST(ClientOptionsTest, RespMustBeTwoOrThree) {
  ClientOptions o;
  o.resp = 4;
  EXPECT_THROW(Client{o}, Error);
  o.resp = 3;
  EXPECT_NO_THROW(Client{o});  // connects lazily: nothing listening is fine here
}

TEST(ArgumentsTest, NumbersAndStrings) {
  auto args = detail::to_arguments("SET", std::string("k"), std::string_view("v"), 5, -7L, 2u,
                                   1.5);
  EXPECT_EQ(args, (std::vector<std::string>{"SET", "k", "v", "5", "-7", "2", "1.5"}));
}

}  // namespace
}  // namespace keywarden
