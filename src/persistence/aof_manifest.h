// The AOF manifest: which files make up the append-only log in `appenddirname`, in Redis 7's
// multi-part layout and its exact text format, one line per file:
//
//   file appendonly.aof.2.base.rdb seq 2 type b
//   file appendonly.aof.1.incr.aof seq 1 type h
//   file appendonly.aof.3.incr.aof seq 3 type i
//
// There is at most one base file (a snapshot written by the last rewrite, in RDB or AOF
// format), then history files (superseded by a rewrite, deleted once it is safe), then the
// incremental files in replay order (sequence numbers strictly increasing). A manifest is a
// plain value: the writer copies it, changes the copy, persists it with temp + rename, and only
// then makes the copy current, so a crash at any point leaves a manifest that describes files
// that exist.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace keywarden {

enum class AofFileType : char { kBase = 'b', kHistory = 'h', kIncremental = 'i' };

struct AofFileInfo {
  std::string name;
  int64_t seq = 0;
  AofFileType type = AofFileType::kIncremental;
};

struct AofManifest {
  bool has_base = false;
  AofFileInfo base;
  std::vector<AofFileInfo> history;
  std::vector<AofFileInfo> incremental;
  int64_t base_seq = 0;         // the highest base sequence number handed out
  int64_t incremental_seq = 0;  // the highest incremental sequence number handed out

  bool empty() const { return !has_base && incremental.empty(); }
  // The manifest's text, base first, then history, then incremental files.
  std::string to_text() const;
  // Parses a manifest's text; returns "" or Redis's reason ("Invalid AOF manifest file format",
  // "Found a non-monotonic sequence number", …) with `bad_line` set to the offending line.
  static std::string parse(std::string_view text, AofManifest* out, std::string* bad_line);

  // The next base file's name (`<filename>.<seq>.base.rdb` or `.aof`), the current base moved
  // to history.
  const std::string& start_new_base(std::string_view filename, bool rdb_format);
  // Appends a new incremental file (`<filename>.<seq>.incr.aof`) and returns its name.
  const std::string& add_incremental(std::string_view filename);
  // After a rewrite: every incremental file but the last `keep` becomes history.
  void retire_incremental(size_t keep);
};

// File names in the AOF directory, as Redis 7 names them.
std::string manifest_file_name(std::string_view filename);
std::string temp_manifest_file_name(std::string_view filename);

}  // namespace keywarden
