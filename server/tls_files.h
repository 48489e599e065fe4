#ifndef MENTAT_SERVER_TLS_FILES_H_
#define MENTAT_SERVER_TLS_FILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mentat::server {

// The TLS certificate chain and private key mentatd serves with, read and
// checked before gRPC sees them. gRPC's own check fails late and vaguely
// (the server does not start, and it does not say which file is wrong),
// so mentatd checks what an operator gets wrong, with OpenSSL: that each
// file is readable, holds PEM, that the first certificate and the key
// parse, and that the key is the certificate's.
struct TlsFiles {
  std::string cert_pem;  // the --tls-cert file's bytes
  std::string key_pem;   // the --tls-key file's bytes
  // Problems that do not stop the server (a certificate past its end date
  // or before its start date): clients will refuse it, but the operator
  // may be about to replace it. The caller logs them.
  std::vector<std::string> warnings;
};

// Reads and checks `cert_path` (a PEM certificate chain, leaf first) and
// `key_path` (a PEM private key, unencrypted). InvalidArgument naming the
// flag, the file and what is wrong: unreadable (with the system's reason),
// no PEM certificate or key in it, a certificate or key that does not
// parse (with OpenSSL's reason), an encrypted key, or a key that is not
// the certificate's. Thread-safe.
[[nodiscard]] absl::StatusOr<TlsFiles> LoadTlsFiles(
    const std::string& cert_path, const std::string& key_path);

}  // namespace mentat::server

#endif  // MENTAT_SERVER_TLS_FILES_H_
