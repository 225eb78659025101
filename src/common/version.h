// The versions keywarden reports. Clients feature-test on the Redis version (Redisson, for
// one, checks it before using newer commands), so keywarden reports the Redis release whose
// behaviour it reproduces, and its own version beside it in INFO.
#pragma once

#include <string_view>

namespace keywarden {

inline constexpr std::string_view kKeywardenVersion = "0.1.0";
inline constexpr std::string_view kRedisCompatibleVersion = "7.0.15";
inline constexpr int kRedisCompatibleVersionNumber = 0x07000f;

}  // namespace keywarden
