// SORT and SORT_RO over lists, sets and sorted sets, as Redis 7.0 answers them.
//
// The steps, in Redis's order: parse the options (a syntax error or a bad LIMIT stops before
// the key is looked up); check the key's type; pick the elements; weigh them (numerically by
// default, each element or its BY key read as a double with strtod's rules; ALPHA compares
// bytes); sort; answer the LIMIT window, with each GET pattern resolved per element; or, with
// STORE, replace the destination with a list of the results (deleting it when there are none).
//
// "BY <pattern without *>" means "do not sort": lists and sorted sets then keep their own
// order (reversed by DESC) and sets their storage order. A set sorted that way for STORE is
// sorted ALPHA instead, so that what is stored does not depend on the server's hashing, which
// is the rule Redis applies to keep replicas identical. Like Redis, SORT turns a listpack
// sorted set into a skiplist.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/number.h"
#include "types/hash_value.h"
#include "types/list_value.h"
#include "types/set_value.h"
#include "types/value.h"
#include "types/zset_value.h"

namespace keywarden {
namespace {

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  bool dont_sort = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::string_view by;  // empty: sort by the elements themselves
  bool has_by = false;
  std::vector<std::string_view> gets;
  std::string_view store;
  bool has_store = false;
};

// Reads the options from argument 2 on; false after replying with the error.
bool parse_options(CommandContext& ctx, bool read_only, SortOptions* options) {
  const auto& args = ctx.args;
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t left = args.size() - i - 1;
    std::string_view word = args[i];
    if (equals_ignore_case(word, "asc")) {
      options->desc = false;
    } else if (equals_ignore_case(word, "desc")) {
      options->desc = true;
    } else if (equals_ignore_case(word, "alpha")) {
      options->alpha = true;
    } else if (equals_ignore_case(word, "limit") && left >= 2) {
      if (!parse_int64(args[i + 1], &options->limit_start) ||
          !parse_int64(args[i + 2], &options->limit_count)) {
        ctx.error(errors::kNotInteger);
        return false;
      }
      i += 2;
    } else if (!read_only && equals_ignore_case(word, "store") && left >= 1) {
      options->store = args[++i];
      options->has_store = true;
    } else if (equals_ignore_case(word, "by") && left >= 1) {
      options->by = args[++i];
      options->has_by = true;
      // A constant pattern weighs every element the same: nothing to sort.
      options->dont_sort = options->by.find('*') == std::string_view::npos;
    } else if (equals_ignore_case(word, "get") && left >= 1) {
      options->gets.push_back(args[++i]);
    } else {
      ctx.error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

// The value a BY or GET pattern names for `element`: "#" is the element itself; otherwise the
// first '*' is replaced by the element, and a "->field" suffix after it reads that field of a
// hash. Null when the pattern has no '*', or the key is missing or of the wrong type.
bool lookup_pattern(CommandContext& ctx, std::string_view pattern, std::string_view element,
                    std::string* out) {
  if (pattern == "#") {
    out->assign(element);
    return true;
  }
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return false;
  std::string_view field;
  std::string_view suffix = pattern.substr(star + 1);
  const size_t arrow = suffix.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < suffix.size()) {
    field = suffix.substr(arrow + 2);
    suffix = suffix.substr(0, arrow);
  }
  std::string key;
  key.reserve(pattern.size() + element.size());
  key.append(pattern.substr(0, star)).append(element).append(suffix);
  const Entry* entry = ctx.lookup_read(key);
  if (entry == nullptr) return false;
  if (!field.empty()) {
    if (entry->value.type() != ValueType::kHash) return false;
    const std::optional<std::string_view> value = entry->value.as<HashValue>().find(field);
    if (!value.has_value()) return false;
    out->assign(*value);
    return true;
  }
  if (entry->value.type() != ValueType::kString) return false;
  char scratch[kInt64BufferSize];
  out->assign(entry->value.string_view(scratch));
  return true;
}

// strtod's reading of a weight, as Redis applies it: the whole text must be consumed (an empty
// text is 0), no overflow, no NaN.
bool parse_weight(const std::string& text, double* weight) {
  errno = 0;
  char* end = nullptr;
  *weight = std::strtod(text.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*weight);
}

struct Item {
  std::string element;
  double score = 0;
  std::string by_value;
  bool has_by_value = false;
};

void sort_generic(CommandContext& ctx, bool read_only) {
  SortOptions options;
  if (!parse_options(ctx, read_only, &options)) return;

  Entry* entry = ctx.lookup_read(ctx.args[1]);
  ValueType type = ValueType::kList;  // a missing key sorts as an empty list
  if (entry != nullptr) {
    type = entry->value.type();
    if (type != ValueType::kList && type != ValueType::kSet && type != ValueType::kZSet) {
      return ctx.error(errors::kWrongType);
    }
  }
  if (options.dont_sort && type == ValueType::kSet && options.has_store) {
    options.dont_sort = false;
    options.alpha = true;
    options.has_by = false;
  }
  if (type == ValueType::kZSet) {
    entry->value.as<ZSetValue>().convert_to_skiplist();
  }

  // The LIMIT window over the elements, as Redis clamps it.
  const int64_t size = entry == nullptr ? 0 : static_cast<int64_t>(entry->value.aggregate_size());
  int64_t start = std::min(std::max<int64_t>(options.limit_start, 0), size);
  const int64_t count = std::min(std::max<int64_t>(options.limit_count, -1), size);
  int64_t end = count < 0 ? size - 1 : start + count - 1;
  if (start >= size) {
    start = size - 1;
    end = size - 2;
  }
  if (end >= size) end = size - 1;

  std::vector<Item> items;
  const bool ordered_type = type == ValueType::kList || type == ValueType::kZSet;
  if (entry != nullptr && options.dont_sort && ordered_type) {
    // Only the window, read in the collection's own order (backwards for DESC).
    if (end >= start) {
      items.reserve(end - start + 1);
      auto take = [&](std::string_view element) { items.push_back({std::string(element)}); };
      if (type == ValueType::kList) {
        const ListValue& list = entry->value.as<ListValue>();
        // The window counted from the tail for DESC: indexes size-1-end .. size-1-start.
        if (options.desc) {
          list.for_range(size - 1 - end, size - 1 - start, true, take);
        } else {
          list.for_range(start, end, false, take);
        }
      } else {
        const ZSetValue& zset = entry->value.as<ZSetValue>();
        ZSetValue::Cursor cursor = zset.at_rank(options.desc ? size - 1 - start : start);
        for (int64_t i = start; i <= end && cursor.valid(); ++i) {
          take(cursor.member());
          if (options.desc) {
            cursor.prev();
          } else {
            cursor.next();
          }
        }
      }
    }
    end -= start;
    start = 0;
  } else if (entry != nullptr) {
    items.reserve(size);
    auto take = [&](std::string_view element) { items.push_back({std::string(element)}); };
    if (type == ValueType::kList) {
      entry->value.as<ListValue>().for_each(take);
    } else if (type == ValueType::kSet) {
      entry->value.as<SetValue>().for_each(take);
    } else {
      entry->value.as<ZSetValue>().for_each([&](std::string_view member, double) { take(member); });
    }
  }

  bool conversion_error = false;
  if (!options.dont_sort) {
    for (Item& item : items) {
      const std::string* weight_text = &item.element;
      if (options.has_by) {
        if (!lookup_pattern(ctx, options.by, item.element, &item.by_value)) continue;
        item.has_by_value = true;
        weight_text = &item.by_value;
      }
      if (!options.alpha && !parse_weight(*weight_text, &item.score)) conversion_error = true;
    }
    const bool desc = options.desc;
    auto compare = [&](const Item& a, const Item& b) {
      int order;
      if (!options.alpha) {
        order = a.score < b.score ? -1 : a.score > b.score ? 1 : a.element.compare(b.element);
      } else if (options.has_by) {
        // Elements whose BY key is missing sort first.
        if (!a.has_by_value || !b.has_by_value) {
          order = a.has_by_value == b.has_by_value ? 0 : a.has_by_value ? 1 : -1;
        } else {
          order = a.by_value.compare(b.by_value);
        }
      } else {
        order = a.element.compare(b.element);
      }
      return desc ? order > 0 : order < 0;
    };
    std::stable_sort(items.begin(), items.end(), compare);
  }

  const int64_t window = end - start + 1;
  const size_t per_element = options.gets.empty() ? 1 : options.gets.size();
  const int64_t output_length = window * static_cast<int64_t>(per_element);
  if (conversion_error) return ctx.error(errors::kSortScoreNotDouble);

  std::string value;
  if (!options.has_store) {
    ctx.reply.array_header(output_length);
    for (int64_t i = start; i <= end; ++i) {
      const std::string& element = items[i].element;
      if (options.gets.empty()) ctx.reply.bulk(element);
      for (std::string_view pattern : options.gets) {
        if (lookup_pattern(ctx, pattern, element, &value)) {
          ctx.reply.bulk(value);
        } else {
          ctx.reply.null();
        }
      }
    }
    return;
  }

  Database& db = ctx.db();
  Entry* destination = ctx.lookup_write(options.store);
  if (output_length > 0) {
    auto list = std::make_unique<ListValue>(ctx.server.settings().list_max_listpack_size);
    for (int64_t i = start; i <= end; ++i) {
      const std::string& element = items[i].element;
      if (options.gets.empty()) list->push_back(element);
      for (std::string_view pattern : options.gets) {
        // A missing GET value is stored as an empty string.
        if (!lookup_pattern(ctx, pattern, element, &value)) value.clear();
        list->push_back(value);
      }
    }
    Value stored = Value::make_aggregate(ValueType::kList, std::move(list));
    if (destination != nullptr) {
      destination = db.overwrite(destination, std::move(stored), false,
                                 ctx.server.settings().lazyfree_lazy_server_del);
    } else {
      db.add(options.store, std::move(stored));
      ctx.created(options.store);
    }
    ctx.changed(options.store, kNotifyList, "sortstore", static_cast<uint64_t>(output_length));
  } else if (destination != nullptr) {
    db.remove(destination, ctx.server.settings().lazyfree_lazy_server_del);
    ctx.changed(options.store, kNotifyGeneric, "del");
  }
  ctx.reply.integer(output_length);
}

// COMMAND GETKEYS: the key sorted and, for SORT, the STORE destination (BY and GET name keys
// only through the elements, which no key finder can know).
template <bool kReadOnly>
std::vector<int> sort_keys(std::span<const std::string_view> args) {
  std::vector<int> positions{1};
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t left = args.size() - i - 1;
    if (equals_ignore_case(args[i], "limit") && left >= 2) {
      i += 2;
    } else if ((equals_ignore_case(args[i], "by") || equals_ignore_case(args[i], "get")) &&
               left >= 1) {
      ++i;
    } else if (!kReadOnly && equals_ignore_case(args[i], "store") && left >= 1) {
      // The last STORE wins, as in the command itself.
      if (positions.size() == 2) positions.pop_back();
      positions.push_back(static_cast<int>(++i));
    }
  }
  return positions;
}

void sort_command(CommandContext& ctx) { sort_generic(ctx, false); }
void sort_ro_command(CommandContext& ctx) { sort_generic(ctx, true); }

constexpr CommandSpec kSortCommands[] = {
    {"sort", -2, kWrite | kDenyOom | kMovableKeys, 1, 1, 1,
     kAclWrite | kAclSet | kAclSortedSet | kAclList | kAclSlow | kAclDangerous, sort_command,
     "generic", "1.0.0", "Sort the elements in a list, set or sorted set",
     "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
     "number of returned elements. When the elements are not sorted, complexity is O(N).", {},
     sort_keys<false>},
    {"sort_ro", -2, kReadonly | kMovableKeys, 1, 1, 1,
     kAclRead | kAclSet | kAclSortedSet | kAclList | kAclSlow | kAclDangerous, sort_ro_command,
     "generic", "7.0.0",
     "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
     "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
     "number of returned elements. When the elements are not sorted, complexity is O(N).", {},
     sort_keys<true>},
};

}  // namespace

void register_sort_commands(CommandTable& table) { table.add(kSortCommands); }

}  // namespace keywarden
