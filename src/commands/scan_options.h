// The options of the SCAN family (SCAN, HSCAN, and the SSCAN/ZSCAN to come): COUNT n,
// MATCH pattern and, for SCAN only, TYPE name, read in any order with Redis 7.0's errors. Shared
// here because no family file includes another.
#pragma once

#include <cstdint>
#include <string_view>

#include "commands/arg_parser.h"
#include "commands/context.h"
#include "commands/errors.h"

namespace keywarden {

struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;  // false for no MATCH and for MATCH *, which matches everything
  std::string_view type_name;
  bool use_type = false;
};

// Reads the options from ctx.args[first] on. On a bad option replies the error and returns
// false.
inline bool parse_scan_options(CommandContext& ctx, size_t first, bool allow_type,
                               ScanOptions* options) {
  for (size_t i = first; i < ctx.args.size(); i += 2) {
    const std::string_view option = ctx.args[i];
    const bool has_value = i + 1 < ctx.args.size();
    if (equals_ignore_case(option, "COUNT") && has_value) {
      if (!parse_int64(ctx.args[i + 1], &options->count)) {
        ctx.error(errors::kNotInteger);
        return false;
      }
      if (options->count < 1) {
        ctx.error(errors::kSyntax);
        return false;
      }
    } else if (equals_ignore_case(option, "MATCH") && has_value) {
      options->pattern = ctx.args[i + 1];
      options->use_pattern = options->pattern != "*";
    } else if (allow_type && equals_ignore_case(option, "TYPE") && has_value) {
      options->type_name = ctx.args[i + 1];
      options->use_type = true;
    } else {
      ctx.error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

}  // namespace keywarden
