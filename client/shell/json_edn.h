#ifndef MENTAT_CLIENT_SHELL_JSON_EDN_H_
#define MENTAT_CLIENT_SHELL_JSON_EDN_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace mentat::cli {

// Turns JSON documents (NDJSON entity lines) into EDN text with the
// server's JSON mapping (see `Input` in mentat.proto): strings starting with
// ':' are keywords ("::x" is the string ":x"), so {":user/email": "a@b"} is
// the entity map {:user/email "a@b"} and [":user/email", "a@b"] a lookup
// ref; objects with one tag key ({"#inst": ...}, {"#uuid": ...},
// {"#ref": n}, {"#bigint": "..."}, {"#bigdec": "..."}, {"#keyword": ...},
// {"#symbol": ...}, {"#string": ...}, {"#set": [...]}, {"#list": [...]})
// are those values; integers beyond int64 are bigints.
//
// Reuses its parser's buffers between documents; not thread-safe.
class JsonToEdn {
 public:
  JsonToEdn();
  ~JsonToEdn();

  // EDN text of one JSON document. Errors: InvalidArgument naming what is
  // wrong (simdjson's reason, or a bad tag).
  absl::StatusOr<std::string> Convert(std::string_view json);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mentat::cli

#endif  // MENTAT_CLIENT_SHELL_JSON_EDN_H_
