// The replication backlog: the last repl-backlog-size bytes of the replication stream, kept so
// that a replica whose link broke can continue (PSYNC … +CONTINUE) from the offset it reached
// instead of loading a whole new image.
//
// A circular buffer of a fixed capacity. Offsets are those of the stream (ReplicationIds::
// offset): the byte at stream offset o is held when first_offset() <= o < end_offset(), and
// first_offset() is Redis's repl_backlog_first_byte_offset (offset of the first byte held, the
// stream's offsets counting from 1 as Redis counts them). Resizing keeps the newest bytes that
// fit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace keywarden {

class ReplicationBacklog {
 public:
  // An empty backlog of `capacity` bytes (at least 1) whose next byte is stream offset
  // `next_offset` (the primary's current offset + 1).
  ReplicationBacklog(int64_t capacity, int64_t next_offset);

  void append(std::string_view bytes);
  // Changes the capacity, keeping the newest bytes that still fit.
  void resize(int64_t capacity);
  // Forgets everything; the next byte appended is stream offset `next_offset`.
  void reset(int64_t next_offset);

  int64_t capacity() const { return static_cast<int64_t>(buffer_.size()); }
  // Bytes held (repl_backlog_histlen).
  int64_t history_length() const { return length_; }
  // Stream offset of the first byte held (repl_backlog_first_byte_offset).
  int64_t first_offset() const { return next_offset_ - length_; }
  // Stream offset the next byte appended will have.
  int64_t next_offset() const { return next_offset_; }

  // Whether a replica that has everything before `offset` (it wants `offset` next) can be
  // served from here: first_offset() <= offset <= next_offset().
  bool can_continue_from(int64_t offset) const {
    return offset >= first_offset() && offset <= next_offset_;
  }
  // The bytes from stream offset `offset` to the end (can_continue_from must hold), appended
  // to `out`.
  void copy_from(int64_t offset, std::string& out) const;

 private:
  std::string buffer_;
  size_t write_index_ = 0;  // where the next byte goes
  int64_t length_ = 0;
  int64_t next_offset_ = 1;
};

}  // namespace keywarden
