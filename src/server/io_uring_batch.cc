#include "server/io_uring_batch.h"

#include <liburing.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.h"

namespace keywarden {

const unsigned UringBatch::kPreferredFlags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SUBMIT_ALL |
                                             IORING_SETUP_SINGLE_ISSUER |
                                             IORING_SETUP_DEFER_TASKRUN;

std::unique_ptr<UringBatch> UringBatch::create(unsigned entries, std::string* reason,
                                               std::optional<unsigned> requested) {
  unsigned flags = requested.value_or(kPreferredFlags);
  auto ring = std::make_unique<io_uring>();
  for (;;) {
    io_uring_params params{};
    params.flags = flags;
    const int result = io_uring_queue_init_params(entries, ring.get(), &params);
    if (result == 0) break;
    // An older kernel refuses flags it does not know with EINVAL: retry without the highest.
    if (result == -EINVAL && flags != 0) {
      flags &= ~(1u << (31 - __builtin_clz(flags)));
      continue;
    }
    if (reason != nullptr) *reason = std::strerror(-result);
    return nullptr;
  }
  std::unique_ptr<UringBatch> batch(new UringBatch());
  batch->ring_ = std::move(ring);
  batch->entries_ = entries;
  batch->setup_flags_ = flags;
  return batch;
}

UringBatch::~UringBatch() {
  if (ring_) io_uring_queue_exit(ring_.get());
}

void UringBatch::run(size_t count, Prepare prepare, Complete complete, void* context) {
  io_uring* ring = ring_.get();
  for (size_t first = 0; first < count; first += entries_) {
    const size_t last = std::min(count, first + entries_);
    for (size_t index = first; index < last; ++index) {
      Operation operation;
      prepare(context, index, operation);
      io_uring_sqe* sqe = io_uring_get_sqe(ring);  // never null: at most entries_ queued
      if (operation.kind == Kind::kRecv) {
        io_uring_prep_recv(sqe, operation.fd, operation.data, operation.size, MSG_DONTWAIT);
      } else {
        io_uring_prep_send(sqe, operation.fd, operation.data, operation.size,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      io_uring_sqe_set_data64(sqe, index);
    }
    const unsigned wanted = static_cast<unsigned>(last - first);
    submit_all(wanted);
    // Every operation completes within the call: the sockets are non-blocking and the
    // operations carry MSG_DONTWAIT, so none waits for data or room.
    for (unsigned seen = 0; seen < wanted;) {
      io_uring_cqe* cqe = nullptr;
      const int result = io_uring_wait_cqe(ring, &cqe);
      if (result == -EINTR) continue;
      if (result < 0) fatal("waiting for completions", result);
      complete(context, static_cast<size_t>(io_uring_cqe_get_data64(cqe)), cqe->res);
      io_uring_cqe_seen(ring, cqe);
      ++seen;
    }
  }
}

void UringBatch::submit_all(unsigned wanted) {
  io_uring* ring = ring_.get();
  // One system call submits them all and collects their completions. A kernel that stops at
  // an operation it refuses (without SUBMIT_ALL) leaves the rest queued: submit again. The
  // queued operations point into connections' buffers, so they cannot be dropped: a ring that
  // keeps refusing them is the end of the server.
  unsigned submitted = 0;
  for (int attempt = 0; submitted < wanted; ++attempt) {
    const int result =
        submitted == 0 ? io_uring_submit_and_wait(ring, wanted) : io_uring_submit(ring);
    if (result > 0) {
      submitted += static_cast<unsigned>(result);
    } else if (result < 0 && result != -EINTR && result != -EAGAIN && result != -EBUSY) {
      fatal("submitting", result);
    } else if (attempt > 1000) {
      fatal("submitting", -EAGAIN);
    }
  }
}

void UringBatch::fatal(const char* what, int result) {
  log_message(LogLevel::kWarning,
              std::string("io_uring failed ") + what + ": " + std::strerror(-result));
  std::abort();
}

std::string describe_uring_flags(unsigned flags) {
  std::string text;
  auto add = [&text](const char* name) {
    if (!text.empty()) text += ' ';
    text += name;
  };
  if (flags & IORING_SETUP_SUBMIT_ALL) add("submit-all");
  if (flags & IORING_SETUP_COOP_TASKRUN) add("coop-taskrun");
  if (flags & IORING_SETUP_SINGLE_ISSUER) add("single-issuer");
  if (flags & IORING_SETUP_DEFER_TASKRUN) add("defer-taskrun");
  return text.empty() ? "none" : text;
}

}  // namespace keywarden
