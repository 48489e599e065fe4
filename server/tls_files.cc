#include "tls_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "mentat/base/str_cat.h"

namespace mentat::server {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

[[nodiscard]] absl::StatusOr<std::string> ReadWhole(const std::string& path,
                                                    std::string_view flag) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(
        StrCat(flag, ": cannot read ", path, ": it is a directory"));
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    return absl::InvalidArgumentError(
        StrCat(flag, ": cannot read ", path, ": ",
               error != 0 ? std::strerror(error) : "cannot open it"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(
        StrCat(flag, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  return buffer.str();
}

// OpenSSL's reasons for the last failure, oldest first, and the error
// queue emptied (it is per thread, and gRPC reads it too).
std::string OpenSslReasons() {
  std::string out;
  unsigned long code;
  while ((code = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    const char* reason = ERR_reason_error_string(code);
    out += reason != nullptr ? reason : buf;
  }
  return out.empty() ? std::string("unknown reason") : out;
}

Bio MemoryBio(const std::string& bytes) {
  return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

// Never prompts for a passphrase (OpenSSL's default callback reads the
// terminal): an encrypted key fails to load instead.
int NoPassphrase(char*, int, int, void*) { return -1; }

std::string Asn1TimeText(const ASN1_TIME* t) {
  struct tm tm;
  if (ASN1_TIME_to_tm(t, &tm) != 1) return "an unreadable date";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

[[nodiscard]] absl::StatusOr<TlsFiles> LoadTlsFiles(
    const std::string& cert_path, const std::string& key_path) {
  TlsFiles files;
  auto cert_pem = ReadWhole(cert_path, "--tls-cert");
  if (!cert_pem.ok()) return cert_pem.status();
  auto key_pem = ReadWhole(key_path, "--tls-key");
  if (!key_pem.ok()) return key_pem.status();
  files.cert_pem = *std::move(cert_pem);
  files.key_pem = *std::move(key_pem);
  ERR_clear_error();

  if (files.cert_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos &&
      files.cert_pem.find("-----BEGIN TRUSTED CERTIFICATE-----") ==
          std::string::npos) {
    std::string what =
        "holds no PEM certificate (no \"-----BEGIN "
        "CERTIFICATE-----\" line)";
    if (files.cert_pem.find("PRIVATE KEY-----") != std::string::npos) {
      what +=
          "; it holds a private key: are --tls-cert and --tls-key "
          "swapped?";
    }
    return absl::InvalidArgumentError(
        StrCat("--tls-cert: ", cert_path, " ", what));
  }
  Bio cert_bio = MemoryBio(files.cert_pem);
  Cert cert(PEM_read_bio_X509(cert_bio.get(), nullptr, NoPassphrase, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("--tls-cert: the first certificate in ", cert_path,
               " does not parse: ", OpenSslReasons()));
  }

  if (files.key_pem.find("PRIVATE KEY-----") == std::string::npos) {
    std::string what =
        "holds no PEM private key (no \"-----BEGIN ... "
        "PRIVATE KEY-----\" line)";
    if (files.key_pem.find("-----BEGIN CERTIFICATE-----") !=
        std::string::npos) {
      what +=
          "; it holds a certificate: are --tls-cert and --tls-key "
          "swapped?";
    }
    return absl::InvalidArgumentError(
        StrCat("--tls-key: ", key_path, " ", what));
  }
  if (files.key_pem.find("-----BEGIN ENCRYPTED PRIVATE KEY-----") !=
          std::string::npos ||
      files.key_pem.find("Proc-Type: 4,ENCRYPTED") != std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat("--tls-key: ", key_path,
               " is encrypted with a passphrase, which mentatd cannot "
               "ask for; give it the key decrypted (openssl pkey -in KEY "
               "-out KEY.plain)"));
  }
  Bio key_bio = MemoryBio(files.key_pem);
  Key key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("--tls-key: the private key in ", key_path,
               " does not parse: ", OpenSslReasons()));
  }

  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        StrCat("--tls-key: the key in ", key_path,
               " is not the private key of the certificate in ", cert_path,
               " (--tls-cert): they do not belong together"));
  }

  if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) < 0) {
    files.warnings.push_back(
        StrCat("--tls-cert: the certificate in ", cert_path, " expired on ",
               Asn1TimeText(X509_get0_notAfter(cert.get())),
               "; clients will refuse the connection until it is replaced"));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert.get())) > 0) {
    files.warnings.push_back(StrCat(
        "--tls-cert: the certificate in ", cert_path, " is valid only from ",
        Asn1TimeText(X509_get0_notBefore(cert.get())),
        "; clients will refuse the connection until then"));
  }
  ERR_clear_error();
  return files;
}

}  // namespace mentat::server
