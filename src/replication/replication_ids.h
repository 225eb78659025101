// The replication history a server carries (PSYNC2): its current replication ID and offset,
// and the ID it had before its last promotion with the offset up to which that history is
// shared, so that former siblings can continue from a promoted replica.
#pragma once

#include <cstdint>
#include <string>

namespace keywarden {

// 40 random hex digits, as Redis draws its run ids and replication ids.
std::string random_replication_id();

struct ReplicationIds {
  std::string replid = random_replication_id();
  std::string replid2 = std::string(40, '0');
  // Bytes of replication stream produced (primary) or applied (replica) in replid's history.
  int64_t offset = 0;
  // Offsets up to which replid2's history is shared with replid's (-1: none).
  int64_t second_offset = -1;

  // A promotion or a new primary: the current history becomes the second one (valid up to
  // offset + 1, the next byte expected), and a new ID starts (Redis's shiftReplicationId).
  void shift() {
    replid2 = replid;
    second_offset = offset + 1;
    replid = random_replication_id();
  }
  // A fresh history with no predecessor (DEBUG CHANGE-REPL-ID, a full resync as primary with
  // no replicas left).
  void reset() {
    replid = random_replication_id();
    replid2 = std::string(40, '0');
    second_offset = -1;
  }
};

}  // namespace keywarden
