// Parsing and printing of notify-keyspace-events (see notifications.h).
#include "commands/notifications.h"

namespace keywarden {

bool parse_notify_flags(std::string_view text, uint32_t* flags) {
  uint32_t parsed = 0;
  for (char c : text) {
    switch (c) {
      case 'A': parsed |= kNotifyAll; break;
      case 'g': parsed |= kNotifyGeneric; break;
      case '$': parsed |= kNotifyString; break;
      case 'l': parsed |= kNotifyList; break;
      case 's': parsed |= kNotifySet; break;
      case 'h': parsed |= kNotifyHash; break;
      case 'z': parsed |= kNotifyZset; break;
      case 'x': parsed |= kNotifyExpired; break;
      case 'e': parsed |= kNotifyEvicted; break;
      case 'K': parsed |= kNotifyKeyspace; break;
      case 'E': parsed |= kNotifyKeyevent; break;
      case 't': parsed |= kNotifyStream; break;
      case 'm': parsed |= kNotifyKeyMiss; break;
      case 'd': parsed |= kNotifyModule; break;
      case 'n': parsed |= kNotifyNew; break;
      default: return false;
    }
  }
  *flags = parsed;
  return true;
}

std::string format_notify_flags(uint32_t flags) {
  std::string text;
  if ((flags & kNotifyAll) == kNotifyAll) {
    text += 'A';
  } else {
    static constexpr struct {
      uint32_t bit;
      char letter;
    } kClasses[] = {{kNotifyGeneric, 'g'}, {kNotifyString, '$'}, {kNotifyList, 'l'},
                    {kNotifySet, 's'},     {kNotifyHash, 'h'},   {kNotifyZset, 'z'},
                    {kNotifyExpired, 'x'}, {kNotifyEvicted, 'e'}, {kNotifyStream, 't'},
                    {kNotifyModule, 'd'},  {kNotifyNew, 'n'}};
    for (const auto& entry : kClasses) {
      if (flags & entry.bit) text += entry.letter;
    }
  }
  if (flags & kNotifyKeyspace) text += 'K';
  if (flags & kNotifyKeyevent) text += 'E';
  if (flags & kNotifyKeyMiss) text += 'm';
  return text;
}

}  // namespace keywarden
