#include "server/oom_score.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace keywarden {
namespace {

constexpr const char* kScorePath = "/proc/self/oom_score_adj";

// Whether keywarden changed the score, and the score from before it did (restored by "no").
bool adjusted = false;
int base_score = 0;

}  // namespace

std::string apply_oom_score_adj(const OomScoreSettings& settings, OomProcessClass process_class) {
  int score;
  if (settings.mode != kOomScoreNo) {
    if (!adjusted) {
      const int fd = ::open(kScorePath, O_RDONLY);
      char text[64] = {};
      if (fd < 0 || ::read(fd, text, sizeof(text) - 1) < 0) {
        const std::string reason = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return "Unable to read oom_score_adj: " + reason;
      }
      ::close(fd);
      base_score = std::atoi(text);
      adjusted = true;
    }
    score = settings.values[static_cast<int>(process_class)];
    if (settings.mode == kOomScoreRelative) score += base_score;
    score = std::clamp(score, -1000, 1000);
  } else if (adjusted) {
    adjusted = false;
    score = base_score;
  } else {
    return "";
  }
  const std::string text = std::to_string(score) + "\n";
  const int fd = ::open(kScorePath, O_WRONLY);
  if (fd < 0 || ::write(fd, text.data(), text.size()) < 0) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return "Unable to write oom_score_adj: " + reason;
  }
  ::close(fd);
  return "";
}

}  // namespace keywarden
