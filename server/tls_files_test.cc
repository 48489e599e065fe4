// Bad TLS files and listen addresses: the start fails with a message that
// names the file (or address) and what is wrong with it, never "cannot
// listen on ... (address in use, or malformed?)" for a key that does not
// match its certificate.

#include "tls_files.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace mentat::server::testing {
namespace {

// A fresh EC P-256 key (fast to make) as PEM.
std::string NewKeyPem(EVP_PKEY** key) {
  *key = EVP_EC_gen("P-256");
  REQUIRE(*key != nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  REQUIRE(PEM_write_bio_PrivateKey(bio, *key, nullptr, nullptr, 0, nullptr,
                                   nullptr) == 1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  return pem;
}

// A self-signed certificate for `key`, valid from `from_days` to `to_days`
// (days from now; negative: in the past), as PEM.
std::string CertPem(EVP_PKEY* key, long from_days, long to_days) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert), to_days * 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  REQUIRE(X509_sign(cert, key, EVP_sha256()) > 0);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  X509_free(cert);
  return pem;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The start's failure (OK when it started).
[[nodiscard]] absl::Status StartWith(
    const std::string& data, const std::string& cert, const std::string& key,
    const std::string& listen = "127.0.0.1:0") {
  ServerConfig c = TestConfig(data);
  c.http = "";
  c.listen = listen;
  c.tls_cert = cert;
  c.tls_key = key;
  auto server = MentatServer::Start(c);
  return server.status();
}

TEST_CASE("server: bad TLS files and listen addresses are named") {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::string d = dir.path();
  EVP_PKEY* key_a = nullptr;
  EVP_PKEY* key_b = nullptr;
  Write(d + "/a.key", NewKeyPem(&key_a));
  Write(d + "/b.key", NewKeyPem(&key_b));
  Write(d + "/a.crt", CertPem(key_a, 0, 30));
  Write(d + "/expired.crt", CertPem(key_a, -60, -30));
  Write(d + "/junk.pem", "not a pem file\n");
  Write(d + "/bad.crt",
        "-----BEGIN CERTIFICATE-----\nAAAAnot*base64\n-----END "
        "CERTIFICATE-----\n");
  Write(d + "/enc.key",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED "
        "PRIVATE KEY-----\n");

  {
    auto ok = LoadTlsFiles(d + "/a.crt", d + "/a.key");
    REQUIRE_MESSAGE(ok.ok(), ok.status().ToString());
    CHECK(ok->warnings.empty());
  }
  struct Case {
    std::string what, cert, key, expect;
  };
  const std::vector<Case> cases = {
      {"a key that is not the certificate's", "a.crt", "b.key",
       "--tls-key: the key in " + d +
           "/b.key is not the private key of "
           "the certificate in " +
           d + "/a.crt"},
      {"a missing certificate", "none.crt", "a.key",
       "--tls-cert: cannot read " + d +
           "/none.crt: No such file or "
           "directory"},
      {"a missing key", "a.crt", "none.key",
       "--tls-key: cannot read " + d +
           "/none.key: No such file or "
           "directory"},
      {"a certificate file without PEM", "junk.pem", "a.key",
       "--tls-cert: " + d + "/junk.pem holds no PEM certificate"},
      {"the files swapped", "a.key", "a.crt",
       "are --tls-cert and --tls-key "
       "swapped?"},
      {"a key file without PEM", "a.crt", "junk.pem",
       "--tls-key: " + d + "/junk.pem holds no PEM private key"},
      {"a certificate that does not parse", "bad.crt", "a.key",
       "--tls-cert: the first certificate in " + d +
           "/bad.crt does not "
           "parse: "},
      {"an encrypted key", "a.crt", "enc.key",
       "is encrypted with a "
       "passphrase"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const absl::Status s =
        StartWith(d + "/data", d + "/" + c.cert, d + "/" + c.key);
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK_MESSAGE(s.message().find(c.expect) != std::string::npos, s);
    CHECK(s.message().find("address in use") == std::string::npos);
    MESSAGE(c.what, " -> ", s.ToString());
  }

  // An expired certificate starts, with a warning.
  {
    auto expired = LoadTlsFiles(d + "/expired.crt", d + "/a.key");
    REQUIRE_MESSAGE(expired.ok(), expired.status().ToString());
    REQUIRE(expired->warnings.size() == 1);
    CHECK(expired->warnings[0].find("expired on ") != std::string::npos);
    MESSAGE("an expired certificate -> warning: ", expired->warnings[0]);
    TestServer t([&](ServerConfig* c) {
      c->tls_cert = d + "/expired.crt";
      c->tls_key = d + "/a.key";
    });
  }

  // "address in use" only when it is.
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(taken, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(taken, 1) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string address =
      "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  absl::Status s = StartWith(d + "/data", "", "", address);
  CHECK(s.code() == absl::StatusCode::kUnavailable);
  CHECK_MESSAGE(s.message().find("cannot listen on " + address +
                                 ": address in use") != std::string::npos,
                s);
  MESSAGE("a port in use -> ", s.ToString());
  ::close(taken);
  s = StartWith(d + "/data", "", "", "127.0.0.1");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_MESSAGE(
      s.message().find("--listen: expected HOST:PORT or "
                       "unix:PATH, got \"127.0.0.1\"") != std::string::npos,
      s);
  s = StartWith(d + "/data", "", "", "192.0.2.1:0");  // TEST-NET-1
  CHECK(s.code() == absl::StatusCode::kUnavailable);
  CHECK_MESSAGE(s.message().find("address not available") != std::string::npos,
                s);
  MESSAGE("an address of no interface -> ", s.ToString());
  EVP_PKEY_free(key_a);
  EVP_PKEY_free(key_b);
}

}  // namespace
}  // namespace mentat::server::testing
