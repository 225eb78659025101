#include "replication/backlog.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace keywarden {

ReplicationBacklog::ReplicationBacklog(int64_t capacity, int64_t next_offset)
    : capacity_(static_cast<size_t>(std::max<int64_t>(capacity, 1))),
      blocks_((capacity_ + kBlockBytes - 1) / kBlockBytes),
      next_offset_(next_offset) {}

size_t ReplicationBacklog::block_size(size_t block) const {
  return std::min(kBlockBytes, capacity_ - block * kBlockBytes);
}

size_t ReplicationBacklog::allocated_bytes() const {
  size_t total = 0;
  for (size_t block = 0; block < blocks_.size(); ++block) {
    if (blocks_[block]) total += block_size(block);
  }
  return total;
}

void ReplicationBacklog::write_at(size_t index, std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t block = index / kBlockBytes;
    const size_t within = index % kBlockBytes;
    const size_t run = std::min(bytes.size(), block_size(block) - within);
    // Not value-initialized: a block's pages are touched only as the stream writes them.
    if (!blocks_[block]) blocks_[block].reset(new char[block_size(block)]);
    std::memcpy(blocks_[block].get() + within, bytes.data(), run);
    bytes.remove_prefix(run);
    index += run;
  }
}

void ReplicationBacklog::read_at(size_t index, size_t count, std::string& out) const {
  while (count > 0) {
    const size_t block = index / kBlockBytes;
    const size_t within = index % kBlockBytes;
    const size_t run = std::min(count, block_size(block) - within);
    out.append(blocks_[block].get() + within, run);
    count -= run;
    index += run;
  }
}

void ReplicationBacklog::append(std::string_view bytes) {
  next_offset_ += static_cast<int64_t>(bytes.size());
  if (bytes.size() >= capacity_) {
    // Only the newest `capacity_` bytes survive.
    bytes.remove_prefix(bytes.size() - capacity_);
    write_at(0, bytes);
    write_index_ = 0;
    length_ = static_cast<int64_t>(capacity_);
    return;
  }
  const size_t first = std::min(bytes.size(), capacity_ - write_index_);
  write_at(write_index_, bytes.substr(0, first));
  write_at(0, bytes.substr(first));
  write_index_ = (write_index_ + bytes.size()) % capacity_;
  length_ = std::min<int64_t>(length_ + static_cast<int64_t>(bytes.size()),
                              static_cast<int64_t>(capacity_));
}

void ReplicationBacklog::copy_from(int64_t offset, std::string& out) const {
  assert(can_continue_from(offset));
  size_t count = static_cast<size_t>(next_offset_ - offset);
  // The byte at `offset` sits `count` bytes behind the write index.
  const size_t start = (write_index_ + capacity_ - count % capacity_) % capacity_;
  const size_t first = std::min(count, capacity_ - start);
  read_at(start, first, out);
  read_at(0, count - first, out);
}

void ReplicationBacklog::resize(int64_t capacity) {
  capacity = std::max<int64_t>(capacity, 1);
  if (capacity == this->capacity()) return;
  std::string kept;
  const int64_t keep = std::min(length_, capacity);
  copy_from(next_offset_ - keep, kept);
  capacity_ = static_cast<size_t>(capacity);
  blocks_.clear();
  blocks_.resize((capacity_ + kBlockBytes - 1) / kBlockBytes);
  write_at(0, kept);
  write_index_ = kept.size() % capacity_;
  length_ = keep;
}

void ReplicationBacklog::reset(int64_t next_offset) {
  next_offset_ = next_offset;
  length_ = 0;
  write_index_ = 0;
}

}  // namespace keywarden
