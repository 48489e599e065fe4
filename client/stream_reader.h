#ifndef MENTAT_CLIENT_STREAM_READER_H_
#define MENTAT_CLIENT_STREAM_READER_H_

// The reading end of a server stream the client started: its messages as
// raw bytes (the client parses them itself), then its status.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>

#include "google/protobuf/message.h"

namespace mentat::client {

// Not thread-safe: one thread reads a stream, as gRPC's blocking reader
// asks. Read until it returns false, then Finish once (Finish also ends a
// stream read only in part, after its context was cancelled).
class StreamReader {
 public:
  virtual ~StreamReader() = default;
  // The next message; false once the stream has no more.
  virtual bool Read(grpc::ByteBuffer* raw) = 0;
  virtual grpc::Status Finish() = 0;
};

// Starts `method`, a server stream, with `request`. With `poll` above zero
// each wait for the stream (its messages, its end) polls the connection
// that long before the thread sleeps, as a polled unary call does
// (ClientOptions::poll_us); otherwise gRPC's blocking reader waits.
// `context` must outlive the reader.
std::unique_ptr<StreamReader> StartStreamReader(
    grpc::Channel* channel, const char* method, grpc::ClientContext* context,
    const google::protobuf::Message& request, std::chrono::microseconds poll);

}  // namespace mentat::client

#endif  // MENTAT_CLIENT_STREAM_READER_H_
