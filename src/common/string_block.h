// A string's bytes in one malloc'd block behind a 16-byte header (size, capacity): the layout
// of the keyspace's long strings (types/value.h). Because the layout is shared, a buffer filled
// elsewhere can become a stored string without a copy: a connection reads a big request
// argument straight into a StringBlock, and SET adopts that block as the key's value, as Redis
// turns its query buffer into the argument object for bulks of 32 KiB or more
// (PROTO_MBULK_BIG_ARG) and setKey stores that object.
//
// Invariants: size <= capacity; the block is released with std::free (realloc may move it).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <span>
#include <string_view>
#include <utility>

namespace keywarden {

struct StringBlockHeader {
  size_t size;
  size_t capacity;

  char* data() { return reinterpret_cast<char*>(this + 1); }
  const char* data() const { return reinterpret_cast<const char*>(this + 1); }

  // malloc/realloc rather than new/delete, so that growing a big string (APPEND, SETRANGE
  // past the end) can extend its block in place when the allocator has room behind it.
  static StringBlockHeader* create(size_t capacity) {
    void* memory = std::malloc(sizeof(StringBlockHeader) + capacity);
    if (memory == nullptr) throw std::bad_alloc();
    return new (memory) StringBlockHeader{0, capacity};
  }
  // Keeps the contents (up to the new capacity, which must hold `size`).
  static StringBlockHeader* resize(StringBlockHeader* block, size_t capacity) {
    void* memory = std::realloc(block, sizeof(StringBlockHeader) + capacity);
    if (memory == nullptr) throw std::bad_alloc();
    auto* resized = static_cast<StringBlockHeader*>(memory);
    resized->capacity = capacity;
    return resized;
  }
  static void destroy(StringBlockHeader* block) { std::free(block); }
};

static_assert(sizeof(StringBlockHeader) == 16);

// Owns one StringBlockHeader block (or nothing).
class StringBlock {
 public:
  StringBlock() = default;
  static StringBlock allocate(size_t capacity) {
    return StringBlock(StringBlockHeader::create(capacity));
  }
  StringBlock(StringBlock&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  StringBlock& operator=(StringBlock&& other) noexcept {
    if (this != &other) {
      reset();
      block_ = std::exchange(other.block_, nullptr);
    }
    return *this;
  }
  StringBlock(const StringBlock&) = delete;
  StringBlock& operator=(const StringBlock&) = delete;
  ~StringBlock() { reset(); }

  explicit operator bool() const { return block_ != nullptr; }
  char* data() { return block_->data(); }
  size_t size() const { return block_ ? block_->size : 0; }
  size_t capacity() const { return block_ ? block_->capacity : 0; }
  void set_size(size_t size) { block_->size = size; }
  // Reallocates to `capacity` bytes (at least size()), keeping the contents.
  void resize(size_t capacity) { block_ = StringBlockHeader::resize(block_, capacity); }
  std::string_view view() const {
    return block_ ? std::string_view(block_->data(), block_->size) : std::string_view();
  }
  // Bytes the block occupies, header included (0 when empty).
  size_t allocated_bytes() const { return block_ ? sizeof(StringBlockHeader) + block_->capacity : 0; }

  // Gives the block up to the caller, who frees it with StringBlockHeader::destroy.
  StringBlockHeader* release() { return std::exchange(block_, nullptr); }
  void reset() {
    if (block_ != nullptr) StringBlockHeader::destroy(std::exchange(block_, nullptr));
  }

 private:
  explicit StringBlock(StringBlockHeader* block) : block_(block) {}
  StringBlockHeader* block_ = nullptr;
};

// A request argument whose bytes live in a block the caller owns (a big bulk read straight from
// the socket): args[index] views block's bytes. A command may take the block
// (CommandContext::take_argument) and keep it, which leaves `block` empty; args[index] then
// still views the same bytes, owned by whoever took them, until the command ends.
struct OwnedArgument {
  size_t index;
  StringBlock block;
};

using OwnedArguments = std::span<OwnedArgument>;

}  // namespace keywarden
