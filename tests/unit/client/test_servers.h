// Real servers for the client tests: a keywarden-server or a stock redis-server on a free
// loopback port, started by the test and always stopped (the destructor kills and reaps it,
// and the child asks the kernel to kill it should the test process die first).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace keywarden::testing {

enum class ServerKind { kKeywarden, kRedis };

inline const char* server_name(ServerKind kind) {
  return kind == ServerKind::kKeywarden ? "keywarden" : "redis";
}

inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t size = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  ::close(fd);
  return ntohs(address.sin_port);
}

inline bool port_accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

// A server opens its TCP port before its Unix socket, so a test connecting through the socket
// waits for it: a stale file left by an earlier server refuses connections meanwhile.
inline bool wait_unix_socket_accepts(const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof(address.sun_path) - 1);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class ServerProcess {
 public:
  ServerProcess(ServerKind kind, std::vector<std::string> extra = {}, int port = 0)
      : kind_(kind), extra_(std::move(extra)), port_(port == 0 ? free_port() : port) {
    start();
  }
  // Any other program listening on `port` (a redis-sentinel): `argv` is its whole command line.
  ServerProcess(std::vector<std::string> argv, int port)
      : kind_(ServerKind::kRedis), argv_(std::move(argv)), port_(port) {
    start();
  }
  ~ServerProcess() { stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  ServerKind kind() const { return kind_; }

  void start() {
    std::vector<std::string> args = argv_;
    if (args.empty()) {
      args.push_back(kind_ == ServerKind::kKeywarden ? KEYWARDEN_SERVER_BINARY
                                                     : "/usr/bin/redis-server");
      args.insert(args.end(), {"--port", std::to_string(port_), "--bind", "127.0.0.1", "--save",
                               "", "--appendonly", "no", "--loglevel", "warning"});
      args.insert(args.end(), extra_.begin(), extra_.end());
    }
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      // The servers' start-up banners would drown the test output.
      int null_fd = ::open("/dev/null", O_WRONLY);
      if (null_fd >= 0) ::dup2(null_fd, STDOUT_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!port_accepts(port_)) {
      int status;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error(std::string(server_name(kind_)) + " server exited at start");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        stop();
        throw std::runtime_error(std::string(server_name(kind_)) + " server did not start");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // SIGSTOP / SIGCONT: a frozen server keeps its sockets open but answers nothing.
  void freeze() {
    if (pid_ > 0) ::kill(pid_, SIGSTOP);
  }
  void thaw() {
    if (pid_ > 0) ::kill(pid_, SIGCONT);
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  ServerKind kind_;
  std::vector<std::string> extra_;
  std::vector<std::string> argv_;
  int port_;
  pid_t pid_ = -1;
};

// A primary and its replica of one kind, each working in a directory of its own under a fresh
// temporary one (a full sync writes an RDB file, which a node started in the test's directory
// would load in a later test); the primary syncs without Redis's 5 s diskless delay. The whole
// directory goes with the pair.
class ReplicatedPair {
 public:
  explicit ReplicatedPair(ServerKind kind, const std::string& prefix = "kw-pair") {
    std::string pattern = "/tmp/";  // appended piecewise: GCC 12 warns (-Wrestrict) on a + b + c
    pattern += prefix;
    pattern += "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    directory_ = pattern;
    ::mkdir((directory_ + "/primary").c_str(), 0700);
    ::mkdir((directory_ + "/replica").c_str(), 0700);
    primary_ = std::make_unique<ServerProcess>(
        kind, std::vector<std::string>{"--dir", directory_ + "/primary",
                                       "--repl-diskless-sync-delay", "0"});
    replica_ = std::make_unique<ServerProcess>(
        kind, std::vector<std::string>{"--dir", directory_ + "/replica", "--replicaof",
                                       "127.0.0.1", std::to_string(primary_->port())});
  }
  ~ReplicatedPair() {
    replica_->thaw();
    replica_.reset();
    primary_.reset();
    std::system(("rm -rf " + directory_).c_str());
  }
  ReplicatedPair(const ReplicatedPair&) = delete;
  ReplicatedPair& operator=(const ReplicatedPair&) = delete;

  ServerProcess& primary() { return *primary_; }
  ServerProcess& replica() { return *replica_; }
  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
  std::unique_ptr<ServerProcess> primary_;
  std::unique_ptr<ServerProcess> replica_;
};

}  // namespace keywarden::testing
