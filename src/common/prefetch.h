// A cache prefetch hint that the optimiser cannot drop. GCC 12 deletes __builtin_prefetch
// calls in some inlined contexts (it removed every one in the hash table's batch hints), so on
// x86-64 the instruction is emitted as volatile inline assembly. A prefetch never faults, so
// any address, even a stale one, is safe.
#pragma once

namespace keywarden {

inline void prefetch_read(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace keywarden
