// latency_probe: the probe of bench/memory_expiry_benchmark.py in C++, so that the latency it
// reports is the server's and not a Python client's (a Python round trip alone costs a p99 of
// about a millisecond on a loaded 2-core machine). Same protocol as the driver's Python probe
// worker:
//
//   latency_probe PORT OUT_PATH MAX_SECONDS COMMAND [ARG...]
//
// sends COMMAND over one loopback connection, one at a time, until a line arrives on stdin
// (or stdin closes, or MAX_SECONDS pass), after printing "ready". Then it writes to OUT_PATH
// the count (int64), the send times and the latencies (doubles, seconds; send times on
// CLOCK_MONOTONIC, the clock of Python's time.monotonic()).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

double monotonic_seconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::string encode(int argc, char** argv) {
  char header[32];
  int n = std::snprintf(header, sizeof(header), "*%d\r\n", argc);
  std::string out(header, static_cast<size_t>(n));
  for (int i = 0; i < argc; ++i) {
    const size_t length = std::strlen(argv[i]);
    n = std::snprintf(header, sizeof(header), "$%zu\r\n", length);
    out.append(header, static_cast<size_t>(n));
    out.append(argv[i], length);
    out.append("\r\n", 2);
  }
  return out;
}

// Reads one reply that is not an aggregate (+, -, :, or $ bulk); false on a broken connection.
class ReplyReader {
 public:
  explicit ReplyReader(int fd) : fd_(fd) {}

  bool read_one() {
    for (;;) {
      if (size_t used = complete(); used > 0) {
        buffer_.erase(0, used);
        return true;
      }
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  // The bytes of the first reply when it is complete in the buffer, else 0.
  size_t complete() const {
    const size_t line_end = buffer_.find("\r\n");
    if (line_end == std::string::npos) return 0;
    if (buffer_[0] != '$') return line_end + 2;
    const long length = std::strtol(buffer_.c_str() + 1, nullptr, 10);
    if (length < 0) return line_end + 2;  // nil
    const size_t total = line_end + 2 + static_cast<size_t>(length) + 2;
    return buffer_.size() >= total ? total : 0;
  }

  int fd_;
  std::string buffer_;
};

bool stdin_has_line() {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s PORT OUT_PATH MAX_SECONDS COMMAND [ARG...]\n", argv[0]);
    return 64;
  }
  const int port = std::atoi(argv[1]);
  const char* out_path = argv[2];
  const double max_seconds = std::atof(argv[3]);
  const std::string payload = encode(argc - 4, argv + 4);

  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    std::perror("connect");
    return 1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ReplyReader reader(fd);

  std::vector<double> starts, latencies;
  starts.reserve(1 << 20);
  latencies.reserve(1 << 20);
  std::printf("ready\n");
  std::fflush(stdout);
  const double deadline = monotonic_seconds() + max_seconds;
  for (uint64_t i = 1;; ++i) {
    const double sent = monotonic_seconds();
    if (::send(fd, payload.data(), payload.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(payload.size()) ||
        !reader.read_one()) {
      std::fprintf(stderr, "latency_probe: connection lost\n");
      break;
    }
    const double done = monotonic_seconds();
    starts.push_back(sent);
    latencies.push_back(done - sent);
    if (i % 64 == 0 && (done > deadline || stdin_has_line())) break;
  }
  ::close(fd);

  FILE* out = std::fopen(out_path, "wb");
  if (out == nullptr) {
    std::perror(out_path);
    return 1;
  }
  const int64_t count = static_cast<int64_t>(starts.size());
  std::fwrite(&count, sizeof(count), 1, out);
  std::fwrite(starts.data(), sizeof(double), starts.size(), out);
  std::fwrite(latencies.data(), sizeof(double), latencies.size(), out);
  std::fclose(out);
  return 0;
}
