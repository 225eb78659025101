// Pub/sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, SSUBSCRIBE,
// SUNSUBSCRIBE, SPUBLISH and PUBSUB CHANNELS | NUMSUB | NUMPAT | SHARDCHANNELS | SHARDNUMSUB |
// HELP, over the hub in ServerState. Each (un)subscription is confirmed by its own
// three-element reply, a push frame in RESP3, carrying the client's count after it. The
// subscribed-mode restriction of RESP2 clients is the dispatcher's (dispatcher.cc).
#include <cctype>
#include <string>
#include <vector>

#include "commands/context.h"
#include "commands/errors.h"
#include "commands/families.h"
#include "common/ascii.h"
#include "common/glob.h"

namespace keywarden {
namespace {

enum class Kind { kChannel, kPattern, kShard };

std::string_view subscribe_word(Kind kind) {
  switch (kind) {
    case Kind::kChannel:
      return "subscribe";
    case Kind::kPattern:
      return "psubscribe";
    case Kind::kShard:
      return "ssubscribe";
  }
  return {};
}

std::string_view unsubscribe_word(Kind kind) {
  switch (kind) {
    case Kind::kChannel:
      return "unsubscribe";
    case Kind::kPattern:
      return "punsubscribe";
    case Kind::kShard:
      return "sunsubscribe";
  }
  return {};
}

// The count a confirmation carries: shard channels are counted apart from the others.
int64_t confirmation_count(const Subscriber& subscriber, Kind kind) {
  if (kind == Kind::kShard) return static_cast<int64_t>(subscriber.shard_channels().size());
  return static_cast<int64_t>(subscriber.subscription_count());
}

// Where a confirmation goes. Redis 7.0 sends confirmations, like the messages themselves,
// even to a client whose replies are off (CLIENT REPLY OFF, or SKIP for this command), in RESP2
// as in RESP3: a client that subscribes with replies off would otherwise wait forever for the
// confirmation it counts on. They then take the message path, which the connection delivers
// whatever the reply mode, instead of the reply it drops.
ReplyWriter& confirmation_writer(CommandContext& ctx) {
  if (ctx.session.reply_mode == ReplyMode::kOn) return ctx.reply;
  ReplyWriter* messages = ctx.session.subscriber->pubsub_writer();
  return messages != nullptr ? *messages : ctx.reply;
}

// A (un)subscription confirmation; a null name for an UNSUBSCRIBE of everything when there
// was nothing to leave.
void confirm(CommandContext& ctx, std::string_view word, const std::string_view* name, Kind kind) {
  ReplyWriter& out = confirmation_writer(ctx);
  out.push_header(3);
  out.bulk(word);
  if (name != nullptr) {
    out.bulk(*name);
  } else {
    out.null();
  }
  out.integer(confirmation_count(*ctx.session.subscriber, kind));
}

// The client as a subscriber; replies an error and returns null for one that cannot subscribe
// (no connection behind it).
Subscriber* subscriber_of(CommandContext& ctx) {
  Subscriber* subscriber = ctx.session.subscriber;
  if (subscriber == nullptr) ctx.error(errors::kPubSubNoSubscriber);
  return subscriber;
}

void subscribe_generic(CommandContext& ctx, Kind kind) {
  Subscriber* subscriber = subscriber_of(ctx);
  if (subscriber == nullptr) return;
  PubSub& hub = ctx.server.pubsub();
  for (size_t i = 1; i < ctx.args.size(); ++i) {
    const std::string_view name = ctx.args[i];
    switch (kind) {
      case Kind::kChannel:
        hub.subscribe(subscriber, name);
        break;
      case Kind::kPattern:
        hub.psubscribe(subscriber, name);
        break;
      case Kind::kShard:
        hub.ssubscribe(subscriber, name);
        break;
    }
    confirm(ctx, subscribe_word(kind), &name, kind);
  }
}

void unsubscribe_one(PubSub& hub, Subscriber* subscriber, std::string_view name, Kind kind) {
  switch (kind) {
    case Kind::kChannel:
      hub.unsubscribe(subscriber, name);
      break;
    case Kind::kPattern:
      hub.punsubscribe(subscriber, name);
      break;
    case Kind::kShard:
      hub.sunsubscribe(subscriber, name);
      break;
  }
}

void unsubscribe_generic(CommandContext& ctx, Kind kind) {
  Subscriber* subscriber = subscriber_of(ctx);
  if (subscriber == nullptr) return;
  PubSub& hub = ctx.server.pubsub();
  const std::string_view word = unsubscribe_word(kind);
  if (ctx.args.size() > 1) {
    for (size_t i = 1; i < ctx.args.size(); ++i) {
      unsubscribe_one(hub, subscriber, ctx.args[i], kind);
      confirm(ctx, word, &ctx.args[i], kind);
    }
    return;
  }
  // Everything of this kind, in subscription order (Redis walks a hash table, whose order
  // no client can rely on), with one confirmation each; one with a null name when none.
  const std::vector<std::string>& own = kind == Kind::kChannel   ? subscriber->channels()
                                        : kind == Kind::kPattern ? subscriber->patterns()
                                                                 : subscriber->shard_channels();
  if (own.empty()) return confirm(ctx, word, nullptr, kind);
  const std::vector<std::string> names = own;  // the hub edits `own` as we go
  for (const std::string& name : names) {
    unsubscribe_one(hub, subscriber, name, kind);
    const std::string_view view = name;
    confirm(ctx, word, &view, kind);
  }
}

void subscribe_command(CommandContext& ctx) { subscribe_generic(ctx, Kind::kChannel); }
void psubscribe_command(CommandContext& ctx) { subscribe_generic(ctx, Kind::kPattern); }

void ssubscribe_command(CommandContext& ctx) {
  // Unlike SUBSCRIBE, which Redis keeps allowing inside MULTI for old clients' sake.
  if (ctx.session.transaction.in_multi()) return ctx.error(errors::kSsubscribeDenyBlocking);
  subscribe_generic(ctx, Kind::kShard);
}

void unsubscribe_command(CommandContext& ctx) { unsubscribe_generic(ctx, Kind::kChannel); }
void punsubscribe_command(CommandContext& ctx) { unsubscribe_generic(ctx, Kind::kPattern); }
void sunsubscribe_command(CommandContext& ctx) { unsubscribe_generic(ctx, Kind::kShard); }

void publish_command(CommandContext& ctx) {
  const size_t receivers = ctx.server.pubsub().publish(ctx.args[1], ctx.args[2]);
  // Replicas republish it to their own subscribers.
  ctx.propagate_as_received();
  ctx.reply.integer(static_cast<int64_t>(receivers));
}

void spublish_command(CommandContext& ctx) {
  const size_t receivers = ctx.server.pubsub().spublish(ctx.args[1], ctx.args[2]);
  ctx.propagate_as_received();
  ctx.reply.integer(static_cast<int64_t>(receivers));
}

// PUBSUB CHANNELS / SHARDCHANNELS [pattern].
void reply_channel_list(CommandContext& ctx, bool shard) {
  if (ctx.args.size() > 3) {
    return ctx.error(errors::subcommand_syntax(ctx.args[0], ctx.args[1]));
  }
  const bool filtered = ctx.args.size() == 3;
  const std::string_view pattern = filtered ? ctx.args[2] : std::string_view();
  std::vector<std::string_view> names;
  auto collect = [&](std::string_view name) {
    if (!filtered || glob_match(pattern, name)) names.push_back(name);
  };
  if (shard) {
    ctx.server.pubsub().for_each_shard_channel(collect);
  } else {
    ctx.server.pubsub().for_each_channel(collect);
  }
  ctx.reply.array_header(names.size());
  for (std::string_view name : names) ctx.reply.bulk(name);
}

void pubsub_channels_command(CommandContext& ctx) { reply_channel_list(ctx, false); }
void pubsub_shardchannels_command(CommandContext& ctx) { reply_channel_list(ctx, true); }

// PUBSUB NUMSUB / SHARDNUMSUB [channel …]: flat name, count pairs, also in RESP3.
void reply_subscriber_counts(CommandContext& ctx, bool shard) {
  const PubSub& hub = ctx.server.pubsub();
  ctx.reply.array_header((ctx.args.size() - 2) * 2);
  for (size_t i = 2; i < ctx.args.size(); ++i) {
    ctx.reply.bulk(ctx.args[i]);
    const size_t count =
        shard ? hub.shard_subscriber_count(ctx.args[i]) : hub.subscriber_count(ctx.args[i]);
    ctx.reply.integer(static_cast<int64_t>(count));
  }
}

void pubsub_numsub_command(CommandContext& ctx) { reply_subscriber_counts(ctx, false); }
void pubsub_shardnumsub_command(CommandContext& ctx) { reply_subscriber_counts(ctx, true); }

void pubsub_numpat_command(CommandContext& ctx) {
  ctx.reply.integer(static_cast<int64_t>(ctx.server.pubsub().pattern_count()));
}

void pubsub_help_command(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: "
      "'*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply_status_lines(kLines);
}

constexpr uint32_t kSubscribeFlags = kPubSub | kNoScript | kLoading | kStale;
// may-replicate (not shown by COMMAND in 7.0): CLIENT PAUSE WRITE holds PUBLISH back, and a
// read-only script may not call it.
constexpr uint32_t kPublishFlags = kPubSub | kLoading | kStale | kFast | kMayReplicate;
constexpr uint32_t kIntrospectionFlags = kPubSub | kLoading | kStale;

constexpr CommandSpec kPubSubSubcommands[] = {
    {"channels", -2, kIntrospectionFlags, 0, 0, 0, 0, pubsub_channels_command, "pubsub", "2.8.0",
     "List active channels",
     "O(N) where N is the number of active channels, and assuming constant time pattern "
     "matching (relatively short channels and patterns)"},
    {"help", 2, kLoading | kStale, 0, 0, 0, 0, pubsub_help_command, "pubsub", "6.2.0",
     "Show helpful text about the different subcommands", "O(1)"},
    {"numpat", 2, kIntrospectionFlags, 0, 0, 0, 0, pubsub_numpat_command, "pubsub", "2.8.0",
     "Get the count of unique patterns pattern subscriptions", "O(1)"},
    {"numsub", -2, kIntrospectionFlags, 0, 0, 0, 0, pubsub_numsub_command, "pubsub", "2.8.0",
     "Get the count of subscribers for channels",
     "O(N) for the NUMSUB subcommand, where N is the number of requested channels"},
    {"shardchannels", -2, kIntrospectionFlags, 0, 0, 0, 0, pubsub_shardchannels_command, "pubsub",
     "7.0.0", "List active shard channels",
     "O(N) where N is the number of active shard channels, and assuming constant time pattern "
     "matching (relatively short shard channels)."},
    {"shardnumsub", -2, kIntrospectionFlags, 0, 0, 0, 0, pubsub_shardnumsub_command, "pubsub",
     "7.0.0", "Get the count of subscribers for shard channels",
     "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels"},
};

constexpr CommandSpec kPubSubCommands[] = {
    {"subscribe", -2, kSubscribeFlags | kSubscribedContext, 0, 0, 0, 0, subscribe_command,
     "pubsub", "2.0.0", "Listen for messages published to the given channels",
     "O(N) where N is the number of channels to subscribe to."},
    {"unsubscribe", -1, kSubscribeFlags | kSubscribedContext, 0, 0, 0, 0, unsubscribe_command,
     "pubsub", "2.0.0", "Stop listening for messages posted to the given channels",
     "O(N) where N is the number of clients already subscribed to a channel."},
    {"psubscribe", -2, kSubscribeFlags | kSubscribedContext, 0, 0, 0, 0, psubscribe_command,
     "pubsub", "2.0.0", "Listen for messages published to channels matching the given patterns",
     "O(N) where N is the number of patterns the client is already subscribed to."},
    {"punsubscribe", -1, kSubscribeFlags | kSubscribedContext, 0, 0, 0, 0, punsubscribe_command,
     "pubsub", "2.0.0",
     "Stop listening for messages posted to channels matching the given patterns",
     "O(N+M) where N is the number of patterns the client is already subscribed and M is the "
     "number of total patterns subscribed in the system (by any client)."},
    {"publish", 3, kPublishFlags, 0, 0, 0, 0, publish_command, "pubsub", "2.0.0",
     "Post a message to a channel",
     "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the "
     "total number of subscribed patterns (by any client)."},
    {"ssubscribe", -2, kSubscribeFlags | kSubscribedContext, 1, -1, 1, 0, ssubscribe_command,
     "pubsub", "7.0.0", "Listen for messages published to the given shard channels",
     "O(N) where N is the number of shard channels to subscribe to."},
    {"sunsubscribe", -1, kSubscribeFlags | kSubscribedContext, 1, -1, 1, 0, sunsubscribe_command,
     "pubsub", "7.0.0", "Stop listening for messages posted to the given shard channels",
     "O(N) where N is the number of clients already subscribed to a shard channel."},
    {"spublish", 3, kPublishFlags, 1, 1, 1, 0, spublish_command, "pubsub", "7.0.0",
     "Post a message to a shard channel",
     "O(N) where N is the number of clients subscribed to the receiving shard channel."},
    {"pubsub", -2, 0, 0, 0, 0, 0, nullptr, "pubsub", "2.8.0", "A container for Pub/Sub commands",
     "Depends on subcommand.", kPubSubSubcommands},
};

}  // namespace

void register_pubsub_commands(CommandTable& table) { table.add(kPubSubCommands); }

}  // namespace keywarden
