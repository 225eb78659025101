// What a hostile replication primary can send a keywarden replica: each input is the byte
// stream a primary writes after the replica connected (the handshake replies, +FULLRESYNC or
// +CONTINUE, the RDB payload with `$<len>` or `$EOF:<mark>` framing, then the command stream
// with REPLCONF GETACK), fed to the real ReplicaSide (replication/replica.h) over a real
// loopback TCP connection, so the bytes go through on_readable() exactly as a server's do.
//
// Each input gets a whole fresh world: a FuzzServer (the command layer with every data family,
// persistence and scripting commands, SAVE/BGSAVE neutered, a manual clock), an event loop and
// a ReplicationService on top. The harness owns a listening socket on 127.0.0.1; the replica
// follows it (REPLICAOF), the harness accepts the connection, lets the non-blocking connect
// complete (the replica sends PING), then writes the input in chunks, running the loop after
// each so that the replica reads it in pieces, and drains what the replica writes back. It
// stops when the input is written or the replica dropped the link. Loopback TCP hands a write
// to the peer's receive queue before write() returns, so each chunk is a read of its own and
// a crash reproduces from its input file alone.
//
// Input: one settings byte, one split byte, with settings bit 3 two bytes more, then the
// stream.
// - settings bit 0: masterauth is set (the handshake has an AUTH step); bit 1:
//   replica-announce-ip is set (a REPLCONF ip-address step); bit 2: repl-diskless-load
//   on-empty-db rather than swapdb. Both keep the payload in memory (the dataset is empty when
//   the transfer starts), so no input writes a file.
// - settings bit 3: the first write is as long as the next two bytes say (big-endian). An
//   EOF-marked payload ends where a read ends with its mark (the primary sends the stream only
//   after the replica's first ACK), so a stream after the mark needs a write of its own.
// - split byte 0: the stream (after any first write) in one write; n > 0: writes of 1 to 2n
//   bytes, the lengths from a pseudo-random sequence seeded with n (so mutating the stream
//   does not move the splits).
// Between chunks the clock advances a second and the replication cron runs (REPLCONF ACK,
// timeouts) while the link is still there.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string_view>

#include "commands/config_registry.h"
#include "commands/info_text.h"
#include "common/event_loop.h"
#include "fuzz_input.h"
#include "fuzz_server.h"
#include "replication/replica.h"
#include "replication/replication_service.h"

using keywarden::ConfigRegistry;
using keywarden::EventLoop;
using keywarden::InfoSections;
using keywarden::ReplicaSide;
using keywarden::ReplicationService;
using keywarden::ServiceSetup;
using keywarden::fuzzing::Choices;
using keywarden::fuzzing::FuzzInput;
using keywarden::fuzzing::FuzzServer;
using keywarden::fuzzing::invariant_failed;

namespace {

constexpr std::string_view kReplicaId = "feedfacefeedfacefeedfacefeedfacefeedface";

// The replica's primary: a socket listening on 127.0.0.1 at a port the kernel picks, for the
// whole process.
struct Listener {
  int fd = -1;
  int port = 0;

  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(fd, 16) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      invariant_failed("cannot listen on 127.0.0.1");
    }
    port = ntohs(address.sin_port);
  }
};

// One input's server: the command layer, the loop, replication installed as the server does.
struct World {
  FuzzServer server{0};
  EventLoop loop;
  ConfigRegistry config;
  InfoSections info;
  ReplicationService replication{server.state, server.dispatcher, loop, server.rdb};

  World() {
    ServiceSetup setup{server.state.commands(), config, info};
    replication.install(setup);
  }
};

bool link_gone(const ReplicaSide& replica) {
  return replica.state() == ReplicaSide::LinkState::kConnect ||
         replica.state() == ReplicaSide::LinkState::kNone;
}

// Reads and drops whatever the replica wrote (PING, REPLCONF, PSYNC, ACKs), so that its
// output never blocks on a full socket buffer.
void drain(int fd) {
  char buffer[4096];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

// Runs the loop until it has nothing more to hand over (a few rounds: a read may make the
// replica write, which is local and immediate too).
void run_loop(World& world, int primary_fd) {
  for (int round = 0; round < 4; ++round) {
    world.loop.poll_once(0);
    drain(primary_fd);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  keywarden::fuzzing::silence_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Listener& listener = *new Listener();  // lives until exit
  FuzzInput input(data, size);
  const uint8_t settings = input.byte();
  const uint8_t split = input.byte();
  size_t first_write = 0;
  if ((settings & 8) != 0) {
    first_write = size_t{input.byte()} << 8;
    first_write |= input.byte();
  }
  const std::string_view stream = input.rest();

  auto world = std::make_unique<World>();
  keywarden::ReplicationSettings& replication = world->replication.settings();
  if ((settings & 1) != 0) replication.masterauth = "secret";
  if ((settings & 2) != 0) replication.announce_ip = "10.0.0.1";
  replication.diskless_load =
      (settings & 4) != 0 ? keywarden::kDisklessLoadOnEmptyDb : keywarden::kDisklessLoadSwapDb;
  // The history the replica offers (its own, as a former primary) has a fixed ID, so that a
  // stream naming it (PSYNC <id> <offset> FAILOVER) is reachable and inputs reproduce.
  world->replication.ids().replid = kReplicaId;
  ReplicaSide& replica = world->replication.replica();
  replica.follow("127.0.0.1", listener.port);
  if (link_gone(replica)) invariant_failed("the replica could not connect to the harness");
  const int primary_fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (primary_fd < 0) invariant_failed("accept failed");
  // Every chunk leaves at once (Nagle would hold a small write back until the replica's
  // delayed ACK, merging chunks at the whim of timers).
  int one = 1;
  ::setsockopt(primary_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // The non-blocking connect completes: the replica sends PING and waits for the reply.
  run_loop(*world, primary_fd);
  if (replica.state() != ReplicaSide::LinkState::kReceivePing) {
    invariant_failed("the replica did not start its handshake");
  }

  Choices lengths(split);
  size_t at = 0;
  while (at < stream.size() && !link_gone(replica)) {
    size_t length = at == 0 && first_write != 0 ? first_write
                    : split == 0                    ? stream.size() - at
                                                    : 1 + lengths.below(2 * size_t{split});
    if (length > stream.size() - at) length = stream.size() - at;
    std::string_view chunk = stream.substr(at, length);
    while (!chunk.empty() && !link_gone(replica)) {
      const ssize_t written = ::write(primary_fd, chunk.data(), chunk.size());
      if (written > 0) {
        chunk.remove_prefix(static_cast<size_t>(written));
      } else if (written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        break;  // the replica closed the link
      }
      run_loop(*world, primary_fd);
    }
    at += length;
    if (!link_gone(replica)) {
      world->server.clock.advance_ms(1000);
      world->replication.cron(world->server.clock.wall_ms());
      world->replication.before_sleep();
      run_loop(*world, primary_fd);
    }
  }
  ::close(primary_fd);
  // The replica sees the primary go away (a read of 0 bytes), as when a primary dies.
  run_loop(*world, -1);
  return 0;
}
