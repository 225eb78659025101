#include "replication/backlog.h"

#include <algorithm>
#include <cassert>

namespace keywarden {

ReplicationBacklog::ReplicationBacklog(int64_t capacity, int64_t next_offset)
    : buffer_(static_cast<size_t>(std::max<int64_t>(capacity, 1)), '\0'),
      next_offset_(next_offset) {}

void ReplicationBacklog::append(std::string_view bytes) {
  const size_t size = buffer_.size();
  next_offset_ += static_cast<int64_t>(bytes.size());
  if (bytes.size() >= size) {
    // Only the newest `size` bytes survive.
    bytes.remove_prefix(bytes.size() - size);
    buffer_.assign(bytes);
    write_index_ = 0;
    length_ = static_cast<int64_t>(size);
    return;
  }
  const size_t first = std::min(bytes.size(), size - write_index_);
  buffer_.replace(write_index_, first, bytes.data(), first);
  if (first < bytes.size()) buffer_.replace(0, bytes.size() - first, bytes.data() + first,
                                            bytes.size() - first);
  write_index_ = (write_index_ + bytes.size()) % size;
  length_ = std::min<int64_t>(length_ + static_cast<int64_t>(bytes.size()),
                              static_cast<int64_t>(size));
}

void ReplicationBacklog::copy_from(int64_t offset, std::string& out) const {
  assert(can_continue_from(offset));
  const size_t size = buffer_.size();
  size_t count = static_cast<size_t>(next_offset_ - offset);
  // The byte at `offset` sits `count` bytes behind the write index.
  size_t start = (write_index_ + size - count % size) % size;
  while (count > 0) {
    const size_t run = std::min(count, size - start);
    out.append(buffer_, start, run);
    count -= run;
    start = 0;
  }
}

void ReplicationBacklog::resize(int64_t capacity) {
  capacity = std::max<int64_t>(capacity, 1);
  if (capacity == this->capacity()) return;
  std::string kept;
  const int64_t keep = std::min(length_, capacity);
  copy_from(next_offset_ - keep, kept);
  buffer_.assign(static_cast<size_t>(capacity), '\0');
  buffer_.replace(0, kept.size(), kept);
  write_index_ = kept.size() % buffer_.size();
  length_ = keep;
}

void ReplicationBacklog::reset(int64_t next_offset) {
  next_offset_ = next_offset;
  length_ = 0;
  write_index_ = 0;
}

}  // namespace keywarden
