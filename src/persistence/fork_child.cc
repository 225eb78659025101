// ForkChild: fork, reap and kill of the single background child; see fork_child.h.
#include "persistence/fork_child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "common/log.h"
#include "storage/keyspace.h"

namespace keywarden {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void set_resize_allowed(Keyspace* keyspace, bool allowed) {
  if (keyspace == nullptr) return;
  for (int i = 0; i < keyspace->database_count(); ++i) {
    keyspace->db(i).table().set_resize_allowed(allowed);
  }
}

}  // namespace

void ForkChild::attach(Keyspace* keyspace) { keyspace_ = keyspace; }

ForkChild::Started ForkChild::start(Kind kind, std::function<int()> body) {
  Started result;
  if (active()) {
    result.error = EEXIST;
    return result;
  }
  const int64_t started = wall_ms();
  const auto fork_began = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = errno;
    return result;
  }
  if (pid == 0) {
    in_child_ = true;
    set_log_role('C');
    // The parent's handlers (graceful shutdown on SIGTERM/SIGINT) make no sense here: a signal
    // must simply end the child.
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGUSR1, SIG_DFL);
    if (child_setup_) child_setup_();
    int code = body ? body() : 0;
    ::_exit(code);
  }
  latest_fork_usec_ = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - fork_began)
                          .count();
  ++total_forks_;
  pid_ = pid;
  kind_ = kind;
  start_ms_ = started;
  set_resize_allowed(keyspace_, false);
  result.pid = pid;
  return result;
}

void ForkChild::finished() {
  pid_ = -1;
  kind_ = Kind::kNone;
  start_ms_ = 0;
  set_resize_allowed(keyspace_, true);
}

std::optional<ForkChild::Exit> ForkChild::poll() {
  if (!active()) return std::nullopt;
  int status = 0;
  const pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
  if (reaped == 0) return std::nullopt;
  Exit exit;
  exit.kind = kind_;
  exit.pid = pid_;
  exit.duration_ms = wall_ms() - start_ms_;
  if (reaped < 0) {
    // Someone else reaped it (or it never existed for us): count it as a failure.
    exit.exit_code = -1;
  } else if (WIFEXITED(status)) {
    exit.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  }
  finished();
  return exit;
}

void ForkChild::kill_child() {
  if (!active()) return;
  ::kill(pid_, SIGUSR1);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  finished();
}

}  // namespace keywarden
