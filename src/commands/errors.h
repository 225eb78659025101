// Every error text the server sends, in one place, worded byte for byte as Redis 7.0 words
// them (without the leading '-' and the trailing CRLF, which the reply writer adds). Texts that
// embed an argument are built by the functions at the end.
#pragma once

#include <string>
#include <string_view>

namespace keywarden::errors {

inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kIncrFloatNaNOrInf = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
// IFDEQ/IFDNE's digest (Redis 8.4).
inline constexpr std::string_view kDigestLength = "ERR must be exactly 16 hexadecimal characters";
// MSETEX's numkeys (Redis 8.4).
inline constexpr std::string_view kMsetexNumkeys = "ERR invalid numkeys value";
inline constexpr std::string_view kMsetexPairs = "ERR wrong number of key-value pairs";
inline constexpr std::string_view kOffsetOutOfRange = "ERR offset is out of range";
// Bitmaps (SETBIT, GETBIT, BITPOS, BITOP, BITFIELD).
inline constexpr std::string_view kBitOffsetInvalid = "ERR bit offset is not an integer or out of range";
inline constexpr std::string_view kBitValueInvalid = "ERR bit is not an integer or out of range";
inline constexpr std::string_view kBitArgumentInvalid = "ERR The bit argument must be 1 or 0.";
inline constexpr std::string_view kBitopNotSingleKey =
    "ERR BITOP NOT must be called with a single source key.";
inline constexpr std::string_view kBitfieldTypeInvalid =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 "
    "is.";
inline constexpr std::string_view kBitfieldOverflowInvalid = "ERR Invalid OVERFLOW type specified";
inline constexpr std::string_view kBitfieldReadOnly =
    "ERR BITFIELD_RO only supports the GET subcommand";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kInvalidDbIndex = "ERR invalid DB index";
inline constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
// ACL denials (dispatcher), and the same inside a script's redis.call.
inline constexpr std::string_view kNoPermKeys =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
inline constexpr std::string_view kNoPermChannels =
    "NOPERM this user has no permissions to access one of the channels used as arguments";
inline constexpr std::string_view kScriptNoPermCommand =
    "The user executing the script can't run this command or subcommand";
inline constexpr std::string_view kScriptNoPermKeys =
    "The user executing the script can't access at least one of the keys mentioned in the "
    "command arguments";
inline constexpr std::string_view kScriptNoPermChannels =
    "The user executing the script can't publish to the channel mentioned in the command";
inline constexpr std::string_view kAuthNotConfigured =
    "ERR AUTH <password> called without any password configured for the default user. Are you "
    "sure your configuration is correct?";
inline constexpr std::string_view kNxXxGtLtConflict =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
inline constexpr std::string_view kGtLtNxConflict =
    "ERR GT, LT, and/or NX options at the same time are not compatible";
inline constexpr std::string_view kMaxClients = "ERR max number of clients reached";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kLoading = "LOADING Redis is loading the dataset in memory";
inline constexpr std::string_view kNoReplicas = "NOREPLICAS Not enough good replicas to write.";
inline constexpr std::string_view kReadOnlyReplica =
    "READONLY You can't write against a read only replica.";
inline constexpr std::string_view kMasterDown =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
inline constexpr std::string_view kReplicaKeyspace = "ERR Replica can't interact with the keyspace";
// Followed by strerror() of the failed write.
inline constexpr std::string_view kMisconfAofPrefix = "MISCONF Errors writing to the AOF file: ";
inline constexpr std::string_view kDebugDisabled =
    "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you "
    "can run it from a local connection, otherwise you need to set this option in the "
    "configuration file, and then restart the server.";
inline constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr std::string_view kNoProtoVersion = "NOPROTO unsupported protocol version";
inline constexpr std::string_view kCursor = "ERR invalid cursor";
inline constexpr std::string_view kTimeoutNotFloat = "ERR timeout is not a float or out of range";

// --- String family (add string-command texts here) ---
inline constexpr std::string_view kDecrementOverflow = "ERR decrement would overflow";
inline constexpr std::string_view kLcsNotStrings =
    "ERR The specified keys must contain string values";
inline constexpr std::string_view kLcsLenAndIdx =
    "ERR If you want both the length and indexes, please just use IDX.";
inline constexpr std::string_view kLcsStringTooLong = "ERR String too long for LCS";
inline constexpr std::string_view kLcsOverProtoMaxBulkLen =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
inline constexpr std::string_view kLcsAllocationFailed =
    "ERR Insufficient memory, failed allocating transient memory for LCS";

// --- Keyspace and expiry families (add their texts here) ---
// getIntFromObjectOrReply's range error (MOVE's database index).
inline constexpr std::string_view kIntOutOfRange =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
inline constexpr std::string_view kInvalidFirstDbIndex = "ERR invalid first DB index";
inline constexpr std::string_view kInvalidSecondDbIndex = "ERR invalid second DB index";
inline constexpr std::string_view kGtLtConflict =
    "ERR GT and LT options at the same time are not compatible";
// Followed by the option as given (up to its first NUL byte).
inline constexpr std::string_view kUnsupportedOptionPrefix = "ERR Unsupported option ";
inline constexpr std::string_view kLfuNotSelected =
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
    "when switching between policies at runtime LRU and LFU data will take some time to adjust.";
inline constexpr std::string_view kLfuSelected =
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
    "switching between policies at runtime LRU and LFU data will take some time to adjust.";

// --- Hash family (add hash-command texts here) ---
inline constexpr std::string_view kHashValueNotInteger = "ERR hash value is not an integer";
inline constexpr std::string_view kHashValueNotFloat = "ERR hash value is not a float";
inline constexpr std::string_view kNaNOrInfinity = "ERR value is NaN or Infinity";
inline constexpr std::string_view kValueOutOfRange = "ERR value is out of range";
// getRangeLongFromObjectOrReply over -LONG_MAX..LONG_MAX (HRANDFIELD's count).
inline constexpr std::string_view kCountOutOfRange =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";

// --- List family (add list-command texts here) ---
// getPositiveLongFromObjectOrReply without a message (LPOP/RPOP's count), non-integers included.
inline constexpr std::string_view kListMustBePositive =
    "ERR value is out of range, must be positive";
inline constexpr std::string_view kListIndexOutOfRange = "ERR index out of range";
inline constexpr std::string_view kListRankZero =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list";
inline constexpr std::string_view kListCountNegative = "ERR COUNT can't be negative";
inline constexpr std::string_view kListMaxlenNegative = "ERR MAXLEN can't be negative";
// LMPOP/BLMPOP: numkeys and COUNT (non-integers included).
inline constexpr std::string_view kListNumkeysNotPositive = "ERR numkeys should be greater than 0";
inline constexpr std::string_view kListCountNotPositive = "ERR count should be greater than 0";

// --- Set family (add set-command texts here) ---
// getPositiveLongFromObjectOrReply without a message (SPOP's count), non-integers included.
inline constexpr std::string_view kSetMustBePositive = "ERR value is out of range, must be positive";
// SINTERCARD's numkeys (non-integers included) and LIMIT.
inline constexpr std::string_view kSetNumkeysNotPositive = "ERR numkeys should be greater than 0";
inline constexpr std::string_view kSetTooManyNumkeys =
    "ERR Number of keys can't be greater than number of args";
inline constexpr std::string_view kSetLimitNegative = "ERR LIMIT can't be negative";

// --- Sorted set family (add sorted-set-command texts here) ---
inline constexpr std::string_view kZAddXxAndNx =
    "ERR XX and NX options at the same time are not compatible";
inline constexpr std::string_view kZAddIncrOnePair =
    "ERR INCR option supports a single increment-element pair";
inline constexpr std::string_view kZScoreNaN = "ERR resulting score is not a number (NaN)";
inline constexpr std::string_view kZMinMaxNotFloat = "ERR min or max is not a float";
inline constexpr std::string_view kZMinMaxNotLex = "ERR min or max not valid string range item";
inline constexpr std::string_view kZLimitNeedsByScoreOrByLex =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
inline constexpr std::string_view kZWithScoresAndByLex =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
// getPositiveLongFromObjectOrReply without a message (ZPOPMIN/ZPOPMAX count).
inline constexpr std::string_view kZMustBePositive = "ERR value is out of range, must be positive";
inline constexpr std::string_view kZNumkeysNotPositive = "ERR numkeys should be greater than 0";
inline constexpr std::string_view kZCountNotPositive = "ERR count should be greater than 0";
inline constexpr std::string_view kZWeightNotFloat = "ERR weight value is not a float";
inline constexpr std::string_view kZLimitNegative = "ERR LIMIT can't be negative";
// "ERR at least 1 input key is needed for '<command>' command".
inline constexpr std::string_view kZNoInputKeyPrefix = "ERR at least 1 input key is needed for '";
inline constexpr std::string_view kZNoInputKeySuffix = "' command";

// --- HyperLogLog (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) ---
inline constexpr std::string_view kNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kCorruptHll = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr std::string_view kPfdebugNoKey = "ERR The specified key does not exist";
inline constexpr std::string_view kHllNotSparse = "ERR HLL encoding is not sparse";

// --- SORT and SORT_RO (add their texts here) ---
inline constexpr std::string_view kSortScoreNotDouble =
    "ERR One or more scores can't be converted into double";

// --- Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH ---
inline constexpr std::string_view kMultiNested = "ERR MULTI calls can not be nested";
inline constexpr std::string_view kExecWithoutMulti = "ERR EXEC without MULTI";
inline constexpr std::string_view kDiscardWithoutMulti = "ERR DISCARD without MULTI";
inline constexpr std::string_view kWatchInsideMulti = "ERR WATCH inside MULTI is not allowed";
inline constexpr std::string_view kNotAllowedInMulti =
    "ERR Command not allowed inside a transaction";
inline constexpr std::string_view kExecAbort =
    "EXECABORT Transaction discarded because of previous errors.";
// Followed by the refusal of the EXEC itself (its text without a leading "ERR ").
inline constexpr std::string_view kExecAbortBecause =
    "EXECABORT Transaction discarded because of: ";

// --- Pub/sub: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, (S)PUBLISH, PUBSUB ---
inline constexpr std::string_view kSsubscribeDenyBlocking =
    "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client";
// A session with no connection behind it (not reachable from a network client).
inline constexpr std::string_view kPubSubNoSubscriber = "ERR this client cannot subscribe";
// RESP2 subscribed mode: "ERR Can't execute '<full name>': only …".
inline constexpr std::string_view kSubscribedModePrefix = "ERR Can't execute '";
inline constexpr std::string_view kSubscribedModeSuffix =
    "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
    "context";

// --- Server families: CONFIG, INFO, CLIENT, DEBUG, SLOWLOG… (add their texts here) ---
// CLIENT.
inline constexpr std::string_view kInvalidClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";
inline constexpr std::string_view kInvalidClientId = "ERR Invalid client ID";
inline constexpr std::string_view kNoSuchClient = "ERR No such client";
inline constexpr std::string_view kClientIdNotPositive = "ERR client-id should be greater than 0";
inline constexpr std::string_view kTimeoutNotInteger =
    "ERR timeout is not an integer or out of range";
inline constexpr std::string_view kTimeoutNegative = "ERR timeout is negative";
inline constexpr std::string_view kClientPauseMode = "ERR CLIENT PAUSE mode must be WRITE or ALL";
inline constexpr std::string_view kClientUnblockReason =
    "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
inline constexpr std::string_view kUnblockedByClient =
    "UNBLOCKED client unblocked via CLIENT UNBLOCK";
// COMMAND GETKEYS / GETKEYSANDFLAGS.
inline constexpr std::string_view kInvalidCommandSpecified = "ERR Invalid command specified";
inline constexpr std::string_view kCommandHasNoKeys = "ERR The command has no key arguments";
inline constexpr std::string_view kInvalidCommandArgumentCount =
    "ERR Invalid number of arguments specified for command";
inline constexpr std::string_view kInvalidCommandArguments =
    "ERR Invalid arguments specified for command";
// SHUTDOWN, SLOWLOG, FUNCTION FLUSH.
inline constexpr std::string_view kNoShutdownInProgress = "ERR No shutdown in progress.";
inline constexpr std::string_view kShutdownFailed = "ERR Errors trying to SHUTDOWN. Check logs.";
inline constexpr std::string_view kSlowlogCount =
    "ERR count should be greater than or equal to -1";
inline constexpr std::string_view kFunctionFlushMode =
    "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
// MEMORY PURGE when jemalloc refuses.
inline constexpr std::string_view kPurgeFailed = "ERR Error purging dirty pages";

// --- Hash-field expiration (Redis 8.4's wording, typos included) ---
inline constexpr std::string_view kFieldsMissing =
    "ERR Mandatory argument FIELDS is missing or not at the right position";
inline constexpr std::string_view kNumFieldsNotPositive =
    "ERR Parameter `numFields` should be greater than 0";
inline constexpr std::string_view kNumberOfFieldsNotPositive =
    "ERR Number of fields must be a positive integer";
inline constexpr std::string_view kNumFieldsMismatch =
    "ERR The `numfields` parameter must match the number of arguments";
inline constexpr std::string_view kExpireTimeNegative = "ERR invalid expire time, must be >= 0";
inline constexpr std::string_view kInvalidNumberOfFields = "ERR invalid number of fields";
inline constexpr std::string_view kMissingExpireTime = "ERR missing expire time";
inline constexpr std::string_view kFnxFxxConflict =
    "ERR Only one of FXX or FNX arguments can be specified";
inline constexpr std::string_view kHashExpirationConflict =
    "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";

// "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
std::string unknown_command(std::string_view name, const std::string_view* args, size_t count);
// "ERR unknown subcommand 'x'. Try CONFIG HELP."
std::string unknown_subcommand(std::string_view container, std::string_view subcommand);
// "ERR unknown subcommand or wrong number of arguments for 'x'. Try CLIENT HELP.": a known
// subcommand with an argument count it does not take (or, for some containers, any unknown one).
std::string subcommand_syntax(std::string_view container, std::string_view subcommand);
// "ERR wrong number of arguments for 'get' command"
std::string wrong_arity(std::string_view full_name);
// "NOPERM this user has no permissions to run the '<full name>' command".
std::string no_permission_to_run(std::string_view full_name);
// "ERR invalid expire time in 'set' command"
std::string invalid_expire_time(std::string_view command);
// "ERR unknown argument: foo" (HSETEX)
std::string unknown_argument(std::string_view argument);

// --- Persistence (DUMP/RESTORE, SAVE/BGSAVE) ---
inline constexpr std::string_view kBusyKey = "BUSYKEY Target key name already exists.";
inline constexpr std::string_view kMigrateKeysNeedEmptyKey =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
inline constexpr std::string_view kMigrateConnect =
    "IOERR error or timeout connecting to the client";
inline constexpr std::string_view kMigrateWriting =
    "IOERR error or timeout writing to target instance";
inline constexpr std::string_view kMigrateReading =
    "IOERR error or timeout reading to target instance";
inline constexpr std::string_view kMigrateTargetError = "ERR Target instance replied with error: ";
inline constexpr std::string_view kInvalidTtl = "ERR Invalid TTL value, must be >= 0";
inline constexpr std::string_view kInvalidIdletime = "ERR Invalid IDLETIME value, must be >= 0";
inline constexpr std::string_view kInvalidFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255";
inline constexpr std::string_view kDumpPayload = "ERR DUMP payload version or checksum are wrong";
inline constexpr std::string_view kBadDataFormat = "ERR Bad data format";
inline constexpr std::string_view kBgsaveInProgress = "ERR Background save already in progress";
inline constexpr std::string_view kBgsaveAofInProgress =
    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in "
    "order to schedule a BGSAVE whenever possible.";

// Native locks (lock_commands.cc): our own texts, Redis has no such commands.
inline constexpr std::string_view kLockLease =
    "ERR lease must be a positive integer (milliseconds)";
inline constexpr std::string_view kLockLeaseTooLong =
    "ERR invalid expire time in 'lock.acquire' command";
inline constexpr std::string_view kLockBindInScript = "ERR BIND is not allowed from scripts";
inline constexpr std::string_view kLockFenceToken = "ERR fencing token is not an integer";
inline constexpr std::string_view kLockFencedNested = "ERR LOCK.FENCED cannot run LOCK.FENCED";
inline constexpr std::string_view kLockFencedBlocking =
    "ERR LOCK.FENCED cannot run a blocking command";
inline constexpr std::string_view kLockFencedNotAllowed =
    "ERR LOCK.FENCED cannot run admin, scripting, transaction or pub/sub commands";
inline constexpr std::string_view kLockFencedNotWrite =
    "ERR LOCK.FENCED runs only write commands that take keys";
// "FENCED token 3 is below 5, the highest token already used for this resource"
std::string fenced_refusal(int64_t token, int64_t highest);

}  // namespace keywarden::errors
