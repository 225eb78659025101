#include "common/fence_keys.h"

#include <cstdint>
#include <vector>

#include "common/key_slot.h"

namespace keywarden {

std::string tagged_lock_name(std::string_view name) {
  const size_t open = name.find('{');
  if (open != std::string_view::npos) {
    const size_t close = name.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) return std::string(name);
  }
  std::string tagged;
  tagged.reserve(name.size() + 2);
  tagged += '{';
  tagged += name;
  tagged += '}';
  return tagged;
}

const std::string& slot_tag(int slot) {
  // Found once by counting in base 36 until every slot has one (about 180,000 CRCs of at most
  // four characters, a few milliseconds).
  static const std::vector<std::string> tags = [] {
    std::vector<std::string> found(kClusterSlots);
    int missing = kClusterSlots;
    for (uint64_t n = 0; missing > 0; ++n) {
      std::string numeral;
      uint64_t rest = n;
      do {
        numeral.insert(numeral.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[rest % 36]);
        rest /= 36;
      } while (rest != 0);
      std::string& tag = found[static_cast<size_t>(key_slot(numeral))];
      if (tag.empty()) {
        tag = std::move(numeral);
        --missing;
      }
    }
    return found;
  }();
  return tags[static_cast<size_t>(slot)];
}

namespace {

std::string slot_key(std::string_view prefix, std::string_view name) {
  const std::string& tag = slot_tag(key_slot(tagged_lock_name(name)));
  std::string key;
  key.reserve(prefix.size() + tag.size() + 2);
  key += prefix;
  key += '{';
  key += tag;
  key += '}';
  return key;
}

}  // namespace

std::string fence_counter_key(std::string_view name) {
  return slot_key("keywarden:fence:", name);
}

std::string legacy_fence_counter_key(std::string_view name) {
  return "redisson_lock_token:" + tagged_lock_name(name);
}

std::string fence_marks_key(std::string_view resource) {
  return slot_key("keywarden:fence-marks:", resource);
}

}  // namespace keywarden
