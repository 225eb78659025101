// The byte stream under a connection: a plain socket or TLS over it (OpenSSL), behind one
// non-blocking read/write interface, so that the server's connections, the replica's link to
// its primary and the client library share one code path for both.
//
// Reads and writes never block. A TLS stream may need the opposite readiness from the one the
// caller expects: a read may have to write (a handshake step) and a write may have to read.
// The transport records it (read_wants_write(), write_wants_read()) so that the caller
// watches for the right event and retries the same operation when it comes. A handshake is
// not a separate step: the first read or write drives it, so a peer that opens a TLS
// connection and never finishes the handshake costs only its own connection.
//
// OpenSSL may hold decrypted bytes that no longer wait in the socket (SSL_pending): after a
// read the caller drains pending() too, since the event loop would not report them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace keywarden {

// The TLS directives of redis.conf (tls-*), as the server holds them.
struct TlsSettings {
  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;
  std::string client_cert_file;  // for connections this process opens (replication)
  std::string client_key_file;
  std::string client_key_file_pass;
  std::string ca_cert_file;
  std::string ca_cert_dir;
  std::string dh_params_file;
  std::string protocols;  // "TLSv1.2 TLSv1.3"; empty: TLS 1.2 and 1.3
  std::string ciphers;
  std::string ciphersuites;
  enum AuthClients : int { kNo = 0, kYes = 1, kOptional = 2 };
  int auth_clients = kYes;
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20 * 1024;
  int64_t session_cache_timeout = 300;
  bool replication = false;
  bool cluster = false;
};

// What a client (libkeywarden, or a replica) presents and checks.
struct TlsClientSettings {
  std::string ca_file;
  std::string ca_dir;
  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;
  std::string server_name;  // SNI and host name verification; empty: neither
  bool verify_peer = true;
};

// Shared ownership of an SSL_CTX: connections keep the context they were made with alive
// after CONFIG SET replaces it.
using TlsContextPtr = std::shared_ptr<SSL_CTX>;

// The server's contexts: one for accepted connections, one for those it opens. Build returns
// "" or the reason (Redis's log line) and leaves `*server`/`*client` untouched on failure.
std::string build_tls_contexts(const TlsSettings& settings, TlsContextPtr* server,
                               TlsContextPtr* client);
// A client's context.
std::string build_tls_client_context(const TlsClientSettings& settings, TlsContextPtr* out);

// The last OpenSSL error queued on this thread as text (queue emptied), or `fallback`.
std::string tls_error_text(const char* fallback = "unknown error");

class Transport {
 public:
  // Results of read() and write() besides a byte count.
  static constexpr ssize_t kAgain = -1;   // nothing possible now: wait for readiness
  static constexpr ssize_t kFailed = -2;  // the stream is broken: close it

  // A plain stream on `fd` (not owned: the caller closes it).
  explicit Transport(int fd) : fd_(fd) {}
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Turns the stream into TLS, as the accepting side or the connecting one. `server_name`
  // (connecting side) is sent as SNI and, when `verify_host`, checked against the
  // certificate. Returns "" or the reason.
  std::string start_tls(const TlsContextPtr& context, bool accepting,
                        const std::string& server_name = {}, bool verify_host = false,
                        int verify_mode = -1);

  bool tls() const { return ssl_ != nullptr; }
  // >0 bytes read, 0 at the end of the stream, kAgain or kFailed.
  ssize_t read(char* into, size_t size);
  // >0 bytes written, kAgain or kFailed.
  ssize_t write(const char* from, size_t size);
  // The outcome of a read or write of this plain stream made elsewhere (io_uring): `result`
  // is a byte count or -errno; returns what read() or write() would have.
  ssize_t adopt_result(ssize_t result);
  // Decrypted bytes buffered inside OpenSSL, ready for read() without the socket.
  size_t pending() const;
  // The last TLS read could go on only once the socket is writable.
  bool read_wants_write() const { return read_wants_write_; }
  // The last TLS write could go on only once the socket is readable.
  bool write_wants_read() const { return write_wants_read_; }
  // Whether the TLS handshake is over (always true for a plain stream).
  bool established() const;
  // Drives the handshake on its own (a client waiting for it before its first command):
  // 1 when done, kAgain (see read_wants_write()) or kFailed.
  ssize_t handshake();
  // Why the last kFailed happened. A plain stream's failure records only its errno (its text
  // is made here), so that a read or write allocates nothing: the server's I/O threads call
  // them (server/io_threads.h).
  const std::string& error() const;
  // Sends a TLS close_notify (best effort) before the caller closes the socket.
  void shutdown();
  // OpenSSL writes with write(2), which raises SIGPIPE on a socket the peer closed: a library
  // in someone else's process blocks the signal around TLS writes (the server ignores it).
  void set_guard_sigpipe(bool guard) { guard_sigpipe_ = guard; }

 private:
  ssize_t fail(int ssl_result, int ssl_error);

  int fd_;
  SSL* ssl_ = nullptr;
  TlsContextPtr context_;
  bool read_wants_write_ = false;
  bool write_wants_read_ = false;
  bool guard_sigpipe_ = false;
  mutable std::string error_;
  mutable int error_errno_ = 0;  // a plain stream's failure, not yet turned into error_
};

}  // namespace keywarden
