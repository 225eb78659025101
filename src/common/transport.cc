#include "common/transport.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "common/ascii.h"

namespace keywarden {
namespace {

// Passphrase of an encrypted private key: the callback reads the string it is given.
int key_password(char* buffer, int size, int, void* user_data) {
  const auto* pass = static_cast<const std::string*>(user_data);
  if (pass == nullptr || pass->empty() || size <= 0) return 0;
  const int length = std::min(size - 1, static_cast<int>(pass->size()));
  std::memcpy(buffer, pass->data(), static_cast<size_t>(length));
  buffer[length] = '\0';
  return length;
}

// tls-protocols as Redis reads it: any of TLSv1, TLSv1.1, TLSv1.2, TLSv1.3 (any case);
// empty means TLS 1.2 and 1.3. Returns the SSL_OP_NO_* options to set, or -1.
long protocol_options(const std::string& protocols) {
  int mask = 0;  // 1: 1.0, 2: 1.1, 4: 1.2, 8: 1.3
  std::istringstream words(protocols);
  std::string word;
  while (words >> word) {
    if (equals_ignore_case(word, "tlsv1")) mask |= 1;
    else if (equals_ignore_case(word, "tlsv1.1")) mask |= 2;
    else if (equals_ignore_case(word, "tlsv1.2")) mask |= 4;
    else if (equals_ignore_case(word, "tlsv1.3")) mask |= 8;
    else return -1;
  }
  if (mask == 0) mask = 4 | 8;
  long options = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3;
  if (!(mask & 1)) options |= SSL_OP_NO_TLSv1;
  if (!(mask & 2)) options |= SSL_OP_NO_TLSv1_1;
  if (!(mask & 4)) options |= SSL_OP_NO_TLSv1_2;
  if (!(mask & 8)) options |= SSL_OP_NO_TLSv1_3;
  return options;
}

struct ContextDeleter {
  void operator()(SSL_CTX* context) const { SSL_CTX_free(context); }
};

// The part common to every context: protocols, modes, certificate and key, CA, ciphers.
// `password` must outlive the context (it is the settings' own string, copied into the
// context's holder below).
std::string make_context(bool server, long options, const std::string& cert_file,
                         const std::string& key_file, const std::string* password,
                         const std::string& ca_file, const std::string& ca_dir,
                         const std::string& ciphers, const std::string& ciphersuites,
                         TlsContextPtr* out) {
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, ContextDeleter> context(
      SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
  if (!context) return "Failed to create TLS context: " + tls_error_text();
  SSL_CTX* ctx = context.get();
  SSL_CTX_set_options(ctx, static_cast<uint64_t>(options) | SSL_OP_NO_COMPRESSION);
  // OpenSSL 3 refuses client-initiated renegotiation unless allowed: nothing to set.
  // Partial writes, and a retried write may come from a buffer that moved (the reply
  // buffer grows between attempts).
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_default_passwd_cb(ctx, key_password);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(password));
  if (!cert_file.empty() &&
      SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) <= 0) {
    return "Failed to load certificate: " + cert_file + ": " + tls_error_text();
  }
  if (!key_file.empty() &&
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return "Failed to load private key: " + key_file + ": " + tls_error_text();
  }
  if ((!ca_file.empty() || !ca_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, ca_file.empty() ? nullptr : ca_file.c_str(),
                                    ca_dir.empty() ? nullptr : ca_dir.c_str()) <= 0) {
    return "Failed to configure CA certificate(s) file/directory: " + tls_error_text();
  }
  if (!ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, ciphers.c_str())) {
    return "Failed to configure ciphers: " + ciphers;
  }
  if (!ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, ciphersuites.c_str())) {
    return "Failed to configure ciphersuites: " + ciphersuites;
  }
  *out = TlsContextPtr(context.release(), ContextDeleter());
  return "";
}

// Keeps the passphrase a context's callback reads alive as long as the context.
TlsContextPtr hold_password(TlsContextPtr context, std::string password) {
  auto holder = std::make_shared<std::pair<TlsContextPtr, std::string>>(context,
                                                                         std::move(password));
  SSL_CTX_set_default_passwd_cb_userdata(holder->first.get(), &holder->second);
  return TlsContextPtr(holder, holder->first.get());
}

}  // namespace

std::string tls_error_text(const char* fallback) {
  unsigned long code = 0, last = 0;
  while ((code = ERR_get_error()) != 0) last = code;
  if (last == 0) return fallback;
  char text[256];
  ERR_error_string_n(last, text, sizeof(text));
  return text;
}

std::string build_tls_contexts(const TlsSettings& settings, TlsContextPtr* server,
                               TlsContextPtr* client) {
  if (settings.cert_file.empty()) return "No tls-cert-file configured!";
  if (settings.key_file.empty()) return "No tls-key-file configured!";
  if ((settings.auth_clients != TlsSettings::kNo || settings.replication || settings.cluster) &&
      settings.ca_cert_file.empty() && settings.ca_cert_dir.empty()) {
    return "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
           "tls-replication or tls-auth-clients are enabled!";
  }
  const long options = protocol_options(settings.protocols);
  if (options < 0) {
    return "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
           "'TLSv1.2' and 'TLSv1.3'.";
  }
  TlsContextPtr server_context, client_context;
  const std::string server_pass = settings.key_file_pass;
  std::string problem =
      make_context(true, options, settings.cert_file, settings.key_file, &server_pass,
                   settings.ca_cert_file, settings.ca_cert_dir, settings.ciphers,
                   settings.ciphersuites, &server_context);
  if (!problem.empty()) return problem;
  SSL_CTX* ctx = server_context.get();
  // Accepted clients present a certificate unless tls-auth-clients says otherwise (each
  // connection gets its own mode, set when it is accepted).
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  if (settings.prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (settings.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, settings.session_cache_size);
    SSL_CTX_set_timeout(ctx, static_cast<long>(settings.session_cache_timeout));
    static const unsigned char kSessionContext[] = "keywarden";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  if (!settings.dh_params_file.empty()) {
    BIO* file = BIO_new_file(settings.dh_params_file.c_str(), "r");
    if (file == nullptr) {
      return "Failed to load " + settings.dh_params_file + ": " + std::strerror(errno);
    }
    EVP_PKEY* params = PEM_read_bio_Parameters(file, nullptr);
    BIO_free(file);
    if (params == nullptr) {
      return "Failed to load DH params file: " + settings.dh_params_file + ": " +
             tls_error_text();
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, params) <= 0) {
      EVP_PKEY_free(params);
      return "Failed to load DH params file: " + settings.dh_params_file + ": " +
             tls_error_text();
    }
  } else {
    SSL_CTX_set_dh_auto(ctx, 1);
  }
  const bool own_client_cert = !settings.client_cert_file.empty();
  const std::string client_pass =
      own_client_cert ? settings.client_key_file_pass : settings.key_file_pass;
  problem = make_context(
      false, options, own_client_cert ? settings.client_cert_file : settings.cert_file,
      own_client_cert ? settings.client_key_file : settings.key_file, &client_pass,
      settings.ca_cert_file, settings.ca_cert_dir, settings.ciphers, settings.ciphersuites,
      &client_context);
  if (!problem.empty()) return problem;
  SSL_CTX_set_verify(client_context.get(), SSL_VERIFY_PEER, nullptr);
  *server = hold_password(server_context, server_pass);
  *client = hold_password(client_context, client_pass);
  return "";
}

std::string build_tls_client_context(const TlsClientSettings& settings, TlsContextPtr* out) {
  TlsContextPtr context;
  const long options = protocol_options("");
  std::string problem = make_context(false, options, settings.cert_file, settings.key_file,
                                     &settings.key_file_pass, settings.ca_file, settings.ca_dir,
                                     "", "", &context);
  if (!problem.empty()) return problem;
  if (settings.verify_peer) {
    if (settings.ca_file.empty() && settings.ca_dir.empty()) {
      SSL_CTX_set_default_verify_paths(context.get());
    }
    SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(context.get(), SSL_VERIFY_NONE, nullptr);
  }
  *out = hold_password(context, settings.key_file_pass);
  return "";
}

Transport::~Transport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

std::string Transport::start_tls(const TlsContextPtr& context, bool accepting,
                                 const std::string& server_name, bool verify_host,
                                 int verify_mode) {
  ERR_clear_error();
  SSL* ssl = SSL_new(context.get());
  if (ssl == nullptr) return "SSL_new failed: " + tls_error_text();
  if (SSL_set_fd(ssl, fd_) != 1) {
    SSL_free(ssl);
    return "SSL_set_fd failed: " + tls_error_text();
  }
  if (verify_mode >= 0) SSL_set_verify(ssl, verify_mode, nullptr);
  if (accepting) {
    SSL_set_accept_state(ssl);
  } else {
    if (!server_name.empty()) {
      SSL_set_tlsext_host_name(ssl, server_name.c_str());
      if (verify_host && SSL_set1_host(ssl, server_name.c_str()) != 1) {
        SSL_free(ssl);
        return "cannot verify host name " + server_name;
      }
    }
    SSL_set_connect_state(ssl);
  }
  if (ssl_ != nullptr) SSL_free(ssl_);
  ssl_ = ssl;
  context_ = context;
  return "";
}

bool Transport::established() const { return ssl_ == nullptr || SSL_is_init_finished(ssl_); }

ssize_t Transport::handshake() {
  if (ssl_ == nullptr || SSL_is_init_finished(ssl_)) return 1;
  read_wants_write_ = false;
  ERR_clear_error();
  errno = 0;
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) return 1;
  const int ssl_error = SSL_get_error(ssl_, result);
  if (ssl_error == SSL_ERROR_WANT_READ) return kAgain;
  if (ssl_error == SSL_ERROR_WANT_WRITE) {
    read_wants_write_ = true;
    return kAgain;
  }
  const ssize_t failed = fail(result, ssl_error);
  if (failed == 0 && error_.empty()) error_ = "connection closed";
  return kFailed;
}

size_t Transport::pending() const {
  return ssl_ == nullptr ? 0 : static_cast<size_t>(std::max(0, SSL_pending(ssl_)));
}

ssize_t Transport::fail(int result, int ssl_error) {
  error_errno_ = 0;
  switch (ssl_error) {
    case SSL_ERROR_ZERO_RETURN:
      return 0;
    case SSL_ERROR_SYSCALL:
      if (result == 0 || errno == 0) {
        error_ = "connection closed";
        return 0;  // the peer closed without close_notify
      }
      error_ = std::strerror(errno);
      return kFailed;
    default: {
      std::string text = tls_error_text("TLS error");
      if (ssl_error == SSL_ERROR_SSL) {
        const long verify = SSL_get_verify_result(ssl_);
        if (verify != X509_V_OK) {
          text += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
        }
      }
      error_ = text;
      return kFailed;
    }
  }
}

const std::string& Transport::error() const {
  if (error_errno_ != 0) {
    error_ = std::strerror(error_errno_);
    error_errno_ = 0;
  }
  return error_;
}

ssize_t Transport::read(char* into, size_t size) {
  if (ssl_ == nullptr) {
    for (;;) {
      ssize_t count = ::read(fd_, into, size);
      if (count >= 0) return count;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return kAgain;
      error_errno_ = errno;
      return kFailed;
    }
  }
  read_wants_write_ = false;
  ERR_clear_error();
  errno = 0;
  const int count = SSL_read(ssl_, into, static_cast<int>(std::min<size_t>(size, INT32_MAX)));
  if (count > 0) return count;
  const int ssl_error = SSL_get_error(ssl_, count);
  if (ssl_error == SSL_ERROR_WANT_READ) return kAgain;
  if (ssl_error == SSL_ERROR_WANT_WRITE) {
    read_wants_write_ = true;
    return kAgain;
  }
  return fail(count, ssl_error);
}

ssize_t Transport::adopt_result(ssize_t result) {
  if (result >= 0) return result;
  if (result == -EAGAIN || result == -EWOULDBLOCK || result == -EINTR) return kAgain;
  error_errno_ = static_cast<int>(-result);
  return kFailed;
}

ssize_t Transport::write(const char* from, size_t size) {
  if (ssl_ == nullptr) {
    for (;;) {
      ssize_t count = ::send(fd_, from, size, MSG_NOSIGNAL);
      if (count >= 0) return count;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return kAgain;
      error_errno_ = errno;
      return kFailed;
    }
  }
  write_wants_read_ = false;
  if (size == 0) return 0;
  ERR_clear_error();
  errno = 0;
  sigset_t blocked, previous;
  if (guard_sigpipe_) {
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  }
  const int count = SSL_write(ssl_, from, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  if (guard_sigpipe_) {
    const int saved_errno = errno;
    // A SIGPIPE this write raised is pending now: take it before unblocking.
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) && !sigismember(&previous, SIGPIPE)) {
      timespec zero{0, 0};
      sigtimedwait(&blocked, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    errno = saved_errno;
  }
  if (count > 0) return count;
  const int ssl_error = SSL_get_error(ssl_, count);
  if (ssl_error == SSL_ERROR_WANT_WRITE) return kAgain;
  if (ssl_error == SSL_ERROR_WANT_READ) {
    write_wants_read_ = true;
    return kAgain;
  }
  const ssize_t result = fail(count, ssl_error);
  return result == 0 ? kFailed : result;
}

void Transport::shutdown() {
  if (ssl_ == nullptr || !SSL_is_init_finished(ssl_)) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);  // one attempt: the socket is non-blocking and about to close
  ERR_clear_error();
}

}  // namespace keywarden
