// oom-score-adj: how willing the Linux OOM killer should be to pick this process, set through
// /proc/self/oom_score_adj per process role, as Redis 7.0 does. The three values of
// oom-score-adj-values are for the primary, a replica and a forked child (BGSAVE, AOF
// rewrite); under "relative" (also spelled "yes") they are added to the score the process had
// before keywarden first changed it, under "absolute" they are the score; either way clamped
// to [-1000, 1000]. Turning the directive back to "no" restores the score from before.
// Lowering a score below what the process started with needs privileges (CAP_SYS_RESOURCE).
#pragma once

#include <string>

namespace keywarden {

enum OomScoreMode : int { kOomScoreNo = 0, kOomScoreRelative = 1, kOomScoreAbsolute = 2 };
enum class OomProcessClass : int { kPrimary = 0, kReplica = 1, kBackgroundChild = 2 };

struct OomScoreSettings {
  int mode = kOomScoreNo;
  int values[3] = {0, 200, 800};
};

// Writes the score for `process_class`; returns "" or what failed (for the log). The score
// the process had before is remembered process-wide on the first change.
std::string apply_oom_score_adj(const OomScoreSettings& settings, OomProcessClass process_class);

}  // namespace keywarden
