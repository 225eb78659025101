// The client's TLS options (ClientOptions::tls) against a real keywarden-server and a stock
// redis-server listening on a tls-port with tls-auth-clients yes: commands, pipelines and a
// Subscriber over TLS with a client certificate; refusals without one, with the wrong CA and
// with the wrong server name. Certificates come from scripts/gen-test-certs.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "keywarden/keywarden.h"
#include "keywarden/subscriber.h"
#include "test_servers.h"

namespace keywarden {
namespace {

using testing::ServerKind;
using testing::ServerProcess;
using namespace std::chrono_literals;

// Two sets of test certificates (two unrelated CAs), made once for the suite — not for the
// whole binary: the lock tests start this binary again as worker processes, which must not
// wait for certificates.
class Certificates {
 public:
  static void make() {
    char pattern[] = "/tmp/kw-tls-unit-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::filesystem::path script =
        std::filesystem::path(KEYWARDEN_SOURCE_ROOT) / "scripts" / "gen-test-certs.sh";
    for (const char* set : {"main", "other"}) {
      const std::string command =
          script.string() + " " + dir_ + "/" + set + " >/dev/null 2>&1";
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
  }
  static void remove() { std::filesystem::remove_all(dir_); }
  static std::string path(const std::string& set, const std::string& file) {
    return dir_ + "/" + set + "/" + file;
  }

 private:
  static inline std::string dir_;
};

class TlsTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  static void SetUpTestSuite() { Certificates::make(); }
  static void TearDownTestSuite() { Certificates::remove(); }
  void SetUp() override {
    tls_port_ = testing::free_port();
    server_ = std::make_unique<ServerProcess>(
        GetParam(), std::vector<std::string>{
                        "--tls-port", std::to_string(tls_port_), "--tls-cert-file",
                        Certificates::path("main", "server.crt"), "--tls-key-file",
                        Certificates::path("main", "server.key"), "--tls-ca-cert-file",
                        Certificates::path("main", "ca.crt"), "--tls-auth-clients", "yes"});
    // ServerProcess waits for the plain port; redis-server opens its TLS port just after.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!testing::port_accepts(tls_port_) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
  }
  ClientOptions options(bool with_cert = true) const {
    ClientOptions o;
    o.port = tls_port_;
    o.tls.enabled = true;
    o.tls.ca_file = Certificates::path("main", "ca.crt");
    if (with_cert) {
      o.tls.cert_file = Certificates::path("main", "client.crt");
      o.tls.key_file = Certificates::path("main", "client.key");
    }
    o.connect_timeout = 3000ms;
    o.command_timeout = 3000ms;
    o.reconnect_backoff_min = 10ms;
    o.reconnect_backoff_max = 50ms;
    return o;
  }
  int tls_port_ = 0;
  std::unique_ptr<ServerProcess> server_;
};

TEST_P(TlsTest, CommandsAndPipelinesWithClientCertificate) {
  Client client(options());
  EXPECT_EQ(client.command("SET", "tls:key", "value").str(), "OK");
  EXPECT_EQ(client.command("GET", "tls:key").str(), "value");
  // A reply of many TLS records, and a pipeline of many commands.
  const std::string big(200000, 'x');
  EXPECT_EQ(client.command("SET", "tls:big", big).str(), "OK");
  EXPECT_EQ(client.command("GET", "tls:big").str(), big);
  auto pipeline = client.pipeline();
  for (int i = 0; i < 500; ++i) pipeline.add("INCR", "tls:counter");
  auto replies = pipeline.exec();
  ASSERT_EQ(replies.size(), 500u);
  EXPECT_EQ(replies.back().integer(), 500);
}

TEST_P(TlsTest, EncryptedKeyWithPassword) {
  ClientOptions o = options();
  o.tls.cert_file = Certificates::path("main", "server.crt");  // also a client certificate
  o.tls.key_file = Certificates::path("main", "server-pass.key");
  o.tls.key_password = "keywarden";
  Client client(o);
  EXPECT_EQ(client.command("PING").str(), "PONG");
  o.tls.key_password = "wrong";
  Client refused(o);
  EXPECT_THROW(refused.command("PING"), TransportError);
}

TEST_P(TlsTest, RefusedWithoutClientCertificate) {
  Client client(options(/*with_cert=*/false));
  EXPECT_THROW(client.command("PING"), TransportError);
}

TEST_P(TlsTest, ServerCertificateFromAnotherCaIsRefused) {
  ClientOptions o = options();
  o.tls.ca_file = Certificates::path("other", "ca.crt");
  Client client(o);
  EXPECT_THROW(client.command("PING"), TransportError);
  // Without verification the same connection goes through.
  o.tls.verify_peer = false;
  Client unverified(o);
  EXPECT_EQ(unverified.command("PING").str(), "PONG");
}

TEST_P(TlsTest, ServerNameIsVerified) {
  ClientOptions o = options();
  o.tls.server_name = "localhost";  // in the certificate's names
  Client client(o);
  EXPECT_EQ(client.command("PING").str(), "PONG");
  o.tls.server_name = "not-this-server.example";
  Client wrong(o);
  EXPECT_THROW(wrong.command("PING"), TransportError);
}

TEST_P(TlsTest, PlainClientOnTlsPortFails) {
  ClientOptions o = options();
  o.tls.enabled = false;
  Client client(o);
  EXPECT_THROW(client.command("PING"), Error);
}

TEST_P(TlsTest, SubscriberOverTls) {
  Client client(options());
  Subscriber subscriber(options());
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::string> payloads;
  subscriber.subscribe("tls-news", [&](const Message& message) {
    std::lock_guard<std::mutex> guard(mutex);
    payloads.push_back(message.payload);
    cv.notify_all();
  });
  EXPECT_EQ(client.command("PUBLISH", "tls-news", "one").integer(), 1);
  EXPECT_EQ(client.command("PUBLISH", "tls-news", "two").integer(), 1);
  std::unique_lock<std::mutex> lock(mutex);
  ASSERT_TRUE(cv.wait_for(lock, 3s, [&] { return payloads.size() >= 2; }));
  EXPECT_EQ(payloads[0], "one");
  EXPECT_EQ(payloads[1], "two");
}

TEST_P(TlsTest, ReconnectsAfterServerRestart) {
  Client client(options());
  EXPECT_EQ(client.command("SET", "k", "1").str(), "OK");
  server_->stop();
  server_->start();
  bool reconnected = false;
  for (int attempt = 0; attempt < 100 && !reconnected; ++attempt) {
    try {
      reconnected = client.command("PING").str() == "PONG";
    } catch (const Error&) {
      std::this_thread::sleep_for(20ms);
    }
  }
  EXPECT_TRUE(reconnected);
}

INSTANTIATE_TEST_SUITE_P(Servers, TlsTest,
                         ::testing::Values(ServerKind::kKeywarden, ServerKind::kRedis),
                         [](const ::testing::TestParamInfo<ServerKind>& info) {
                           return std::string(testing::server_name(info.param));
                         });

}  // namespace
}  // namespace keywarden
