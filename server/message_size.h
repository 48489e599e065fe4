#ifndef MENTAT_SERVER_MESSAGE_SIZE_H_
#define MENTAT_SERVER_MESSAGE_SIZE_H_

#include <cstddef>
#include <string>

#include "mentat/query/edn/edn_value.h"
#include "mentat/server/config.h"
#include "mentat/storage/datom.h"
#include "mentat/storage/value.h"

namespace mentat::server {

// How stream messages are sized. A message of a Query, Datoms, TxRange or
// Subscribe stream ends once it holds about TargetMessageBytes, whatever
// its row or datom count: a row count alone made a message of 1,000 rows
// of large values bigger than the largest message gRPC sends
// (--max-message-bytes), and the stream failed with "Sent message larger
// than max". A single row or datom bigger than the target goes alone; one
// bigger than the largest message fails the stream with RESOURCE_EXHAUSTED
// (TooBigForAMessage) instead of being sent.

// min(256 KiB, max_message_bytes / 4): well under gRPC's default receive
// limit of 4 MiB, so a client with default settings reads every message
// that holds no single value above that; big enough that a message's cost
// is its bytes (1,000 small rows take about 30 KB). It also bounds what a
// query parked on a client that does not read holds: two such messages,
// and the objects of the one being built (several times its encoded size).
size_t TargetMessageBytes(const ServerConfig& config);

// Rough size of the protobuf encoding of a value, a row value or a datom:
// exact for texts, a fixed few bytes for numbers. Cheap (no encoding), for
// deciding where a message ends.
size_t ApproxProtoBytes(const storage::Value& v);
size_t ApproxProtoBytes(const storage::Datom& d);
size_t ApproxProtoBytes(const edn::EdnValue& v);

// The largest item a message may carry alone: max_message_bytes less room
// for the message's other fields.
size_t MaxItemBytes(const ServerConfig& config);

// The message of the RESOURCE_EXHAUSTED a stream ends with when `datom`
// alone is over MaxItemBytes (a value stored before --max-value-bytes
// bounded values, or under a larger --max-message-bytes).
std::string TooBigForAMessage(const storage::Datom& datom,
                              const ServerConfig& config);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_MESSAGE_SIZE_H_
