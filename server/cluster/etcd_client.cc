#include "cluster/etcd_client.h"

#include <simdjson.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "mentat/base/str_cat.h"

namespace mentat::server::cluster {

namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// JSON string escaping for the few texts we send that are not base64.
std::string Quoted(const std::string& s) { return StrCat("\"", s, "\""); }

// etcd's gateway writes 64-bit numbers as strings ("revision":"12") and
// omits fields that are zero.
int64_t Int(simdjson::dom::element obj, const char* field) {
  simdjson::dom::element v;
  if (obj[field].get(v) != simdjson::SUCCESS) return 0;
  std::string_view text;
  if (v.get_string().get(text) == simdjson::SUCCESS) {
    int64_t n = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return 0;
      n = n * 10 + (c - '0');
    }
    return n;
  }
  int64_t n = 0;
  if (v.get_int64().get(n) == simdjson::SUCCESS) return n;
  uint64_t u = 0;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) {
    return static_cast<int64_t>(u);
  }
  return 0;
}

absl::StatusOr<EtcdKeyValue> ReadKv(simdjson::dom::element kv) {
  EtcdKeyValue out;
  std::string_view text;
  if (kv["key"].get_string().get(text) == simdjson::SUCCESS) {
    auto key = Base64Decode(std::string(text));
    if (!key.ok()) return key.status();
    out.key = *std::move(key);
  }
  if (kv["value"].get_string().get(text) == simdjson::SUCCESS) {
    auto value = Base64Decode(std::string(text));
    if (!value.ok()) return value.status();
    out.value = *std::move(value);
  }
  out.create_revision = Int(kv, "create_revision");
  out.mod_revision = Int(kv, "mod_revision");
  out.lease = Int(kv, "lease");
  return out;
}

absl::StatusOr<std::vector<EtcdKeyValue>> ReadKvs(
    simdjson::dom::element range) {
  std::vector<EtcdKeyValue> out;
  simdjson::dom::array kvs;
  if (range["kvs"].get_array().get(kvs) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element kv : kvs) {
    auto one = ReadKv(kv);
    if (!one.ok()) return one.status();
    out.push_back(*std::move(one));
  }
  return out;
}

// The end of the range of keys that start with `prefix` (etcd's
// range_end): the prefix with its last byte below 0xff incremented.
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    unsigned char last = static_cast<unsigned char>(prefix.back());
    if (last < 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

// Splits "host:port" (the last colon; "[::1]:2379" keeps its brackets
// off).
bool SplitHostPort(const std::string& endpoint, std::string* host,
                   std::string* port) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      colon + 1 == endpoint.size()) {
    return false;
  }
  *host = endpoint.substr(0, colon);
  *port = endpoint.substr(colon + 1);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  for (char c : *port) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::string Base64Encode(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

absl::StatusOr<std::string> Base64Decode(const std::string& text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') break;
    const char* p = std::char_traits<char>::find(kAlphabet, 64, c);
    if (p == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("etcd sent text that is not base64 (byte ", i, ")"));
    }
    acc = (acc << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

EtcdClient::EtcdClient(std::vector<std::string> endpoints,
                       std::chrono::milliseconds timeout)
    : endpoints_(std::move(endpoints)), timeout_(timeout) {}

absl::StatusOr<std::vector<std::string>> EtcdClient::ParseEndpoints(
    const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string one = list.substr(start, comma - start);
    if (one.starts_with("http://")) one = one.substr(7);
    std::string host, port;
    if (!SplitHostPort(one, &host, &port)) {
      return absl::InvalidArgumentError(
          StrCat("--etcd: '", one, "' is not HOST:PORT (in '", list, "')"));
    }
    out.push_back(one);
    start = comma + 1;
  }
  return out;
}

absl::StatusOr<std::string> EtcdClient::CallOne(const std::string& endpoint,
                                                const std::string& path,
                                                const std::string& body) const {
  std::string host, port;
  if (!SplitHostPort(endpoint, &host, &port)) {
    return absl::InvalidArgumentError(
        StrCat("etcd endpoint '", endpoint, "' is not HOST:PORT"));
  }
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  tcp::resolver resolver(io);
  auto addresses = resolver.resolve(host, port, ec);
  if (ec) {
    return absl::UnavailableError(
        StrCat(endpoint, ": cannot resolve: ", ec.message()));
  }
  stream.expires_after(timeout_);
  // The sync calls of a tcp_stream ignore its timer: the async ones, run
  // on this call's own io_context, honour it.
  const char* stage = "connecting";
  auto fail = [&](beast::error_code e) {
    return absl::UnavailableError(
        StrCat(endpoint, path, ": ", stage, ": ",
               e == beast::error::timeout
                   ? StrCat("no answer within ", timeout_.count(), " ms")
                   : e.message()));
  };
  stream.async_connect(
      addresses, [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
  io.run();
  if (ec) return fail(ec);
  http::request<http::string_body> request(http::verb::post, path, 11);
  request.set(http::field::host, endpoint);
  request.set(http::field::content_type, "application/json");
  request.body() = body;
  request.prepare_payload();
  stage = "sending";
  io.restart();
  http::async_write(stream, request,
                    [&](beast::error_code e, size_t) { ec = e; });
  io.run();
  if (ec) return fail(ec);
  stage = "reading the answer";
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  io.restart();
  http::async_read(stream, buffer, response,
                   [&](beast::error_code e, size_t) { ec = e; });
  io.run();
  if (ec) return fail(ec);
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  std::string answer = std::move(response.body());
  // etcd answers errors as JSON with a non-200 status; anything else
  // (a proxy's page, another server) is not etcd.
  if (answer.empty() || answer.front() != '{') {
    return absl::UnavailableError(
        StrCat(endpoint, path, ": HTTP ", response.result_int(),
               " without etcd's JSON (is this etcd's client port?)"));
  }
  return answer;
}

absl::StatusOr<std::string> EtcdClient::Call(const std::string& path,
                                             const std::string& body) {
  size_t first;
  {
    absl::MutexLock lock(&mu_);
    first = preferred_;
  }
  std::string failures;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t index = (first + i) % endpoints_.size();
    auto answer = CallOne(endpoints_[index], path, body);
    if (!answer.ok()) {
      if (answer.status().code() != absl::StatusCode::kUnavailable) {
        return answer.status();
      }
      if (!failures.empty()) failures += "; ";
      StrAppend(&failures, answer.status().message());
      continue;
    }
    if (index != first) {
      absl::MutexLock lock(&mu_);
      preferred_ = index;
    }
    // etcd's own error: {"error": "...", "code": N} (gRPC codes).
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
      return absl::UnavailableError(
          StrCat(endpoints_[index], path,
                 ": the answer is not JSON: ", answer->substr(0, 200)));
    }
    std::string_view error;
    if (root["error"].get_string().get(error) == simdjson::SUCCESS) {
      const int64_t code = Int(root, "code");
      std::string message =
          StrCat("etcd at ", endpoints_[index], path, " answered: ", error);
      if (code == 5) return absl::NotFoundError(message);
      if (code == 3) return absl::InvalidArgumentError(message);
      if (code == 14 || code == 4) return absl::UnavailableError(message);
      return absl::FailedPreconditionError(message);
    }
    return answer;
  }
  return absl::UnavailableError(
      StrCat("no etcd endpoint answered ", path, ": ", failures));
}

absl::StatusOr<EtcdClient::Lease> EtcdClient::GrantLease(int64_t ttl_seconds) {
  auto answer = Call("/v3/lease/grant", StrCat("{\"TTL\":", ttl_seconds, "}"));
  if (!answer.ok()) return answer.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
    return absl::UnavailableError(StrCat("etcd's answer is not JSON"));
  }
  Lease lease;
  lease.id = Int(root, "ID");
  lease.ttl_seconds = Int(root, "TTL");
  if (lease.id == 0) {
    return absl::UnavailableError(
        StrCat("etcd granted no lease: ", answer->substr(0, 200)));
  }
  return lease;
}

absl::StatusOr<int64_t> EtcdClient::KeepAlive(int64_t lease) {
  auto answer = Call("/v3/lease/keepalive",
                     StrCat("{\"ID\":", Quoted(StrCat(lease)), "}"));
  if (!answer.ok()) return answer.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
    return absl::UnavailableError(StrCat("etcd's answer is not JSON"));
  }
  simdjson::dom::element result;
  if (root["result"].get(result) != simdjson::SUCCESS) result = root;
  // An expired lease comes back without a TTL (zero is omitted).
  const int64_t ttl = Int(result, "TTL");
  if (ttl <= 0) {
    return absl::NotFoundError(StrCat(
        "etcd lease ", lease, " has expired (keepalive answered TTL 0)"));
  }
  return ttl;
}

absl::Status EtcdClient::RevokeLease(int64_t lease) {
  auto answer =
      Call("/v3/lease/revoke", StrCat("{\"ID\":", Quoted(StrCat(lease)), "}"));
  if (!answer.ok() && answer.status().code() != absl::StatusCode::kNotFound) {
    return answer.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<EtcdKeyValue>> EtcdClient::Get(
    const std::string& key) {
  auto answer =
      Call("/v3/kv/range", StrCat("{\"key\":", Quoted(Base64Encode(key)), "}"));
  if (!answer.ok()) return answer.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
    return absl::UnavailableError(StrCat("etcd's answer is not JSON"));
  }
  auto kvs = ReadKvs(root);
  if (!kvs.ok()) return kvs.status();
  if (kvs->empty()) return std::optional<EtcdKeyValue>();
  return std::optional<EtcdKeyValue>(std::move(kvs->front()));
}

absl::StatusOr<std::vector<EtcdKeyValue>> EtcdClient::GetPrefix(
    const std::string& prefix) {
  auto answer = Call(
      "/v3/kv/range",
      StrCat("{\"key\":", Quoted(Base64Encode(prefix)),
             ",\"range_end\":", Quoted(Base64Encode(PrefixEnd(prefix))), "}"));
  if (!answer.ok()) return answer.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
    return absl::UnavailableError(StrCat("etcd's answer is not JSON"));
  }
  return ReadKvs(root);
}

absl::Status EtcdClient::Put(const std::string& key, const std::string& value,
                             int64_t lease) {
  std::string body = StrCat("{\"key\":", Quoted(Base64Encode(key)),
                            ",\"value\":", Quoted(Base64Encode(value)));
  if (lease != 0) StrAppend(&body, ",\"lease\":", Quoted(StrCat(lease)));
  body += "}";
  return Call("/v3/kv/put", body).status();
}

absl::StatusOr<EtcdCreateResult> EtcdClient::CreateIfAbsent(
    const std::string& key, const std::string& value, int64_t lease) {
  const std::string k = Quoted(Base64Encode(key));
  std::string put =
      StrCat("{\"key\":", k, ",\"value\":", Quoted(Base64Encode(value)));
  if (lease != 0) StrAppend(&put, ",\"lease\":", Quoted(StrCat(lease)));
  put += "}";
  // Either way the txn reads the key back: the creator learns its
  // create_revision (its term) in the same round trip.
  const std::string body = StrCat(
      "{\"compare\":[{\"key\":", k,
      ",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":\"0\"}],"
      "\"success\":[{\"request_put\":",
      put, "},{\"request_range\":{\"key\":", k,
      "}}],"
      "\"failure\":[{\"request_range\":{\"key\":",
      k, "}}]}");
  auto answer = Call("/v3/kv/txn", body);
  if (!answer.ok()) return answer.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
    return absl::UnavailableError(StrCat("etcd's answer is not JSON"));
  }
  EtcdCreateResult result;
  bool succeeded = false;
  if (root["succeeded"].get_bool().get(succeeded) != simdjson::SUCCESS) {
    succeeded = false;  // omitted when false
  }
  result.created = succeeded;
  simdjson::dom::array responses;
  if (root["responses"].get_array().get(responses) == simdjson::SUCCESS) {
    for (simdjson::dom::element r : responses) {
      simdjson::dom::element range;
      if (r["response_range"].get(range) != simdjson::SUCCESS) continue;
      auto kvs = ReadKvs(range);
      if (!kvs.ok()) return kvs.status();
      if (!kvs->empty()) result.kv = kvs->front();
    }
  }
  return result;
}

absl::StatusOr<bool> EtcdClient::DeleteIfCreatedAt(const std::string& key,
                                                   int64_t create_revision) {
  const std::string k = Quoted(Base64Encode(key));
  const std::string body =
      StrCat("{\"compare\":[{\"key\":", k,
             ",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":",
             Quoted(StrCat(create_revision)),
             "}],\"success\":[{\"request_delete_range\":{\"key\":", k, "}}]}");
  auto answer = Call("/v3/kv/txn", body);
  if (!answer.ok()) return answer.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*answer).get(root) != simdjson::SUCCESS) {
    return absl::UnavailableError(StrCat("etcd's answer is not JSON"));
  }
  bool succeeded = false;
  if (root["succeeded"].get_bool().get(succeeded) != simdjson::SUCCESS) {
    succeeded = false;
  }
  return succeeded;
}

}  // namespace mentat::server::cluster
