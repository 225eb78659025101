// The tls-* directives of the server (Redis 7.0's set and semantics): the values live in the
// Server's TlsSettings; the files are loaded into fresh OpenSSL contexts at start-up when a
// tls-port (or tls-replication) asks for TLS, and again after every CONFIG SET of a tls-*
// directive. A context that fails to build leaves the running one in place: CONFIG SET
// answers "Unable to update TLS configuration. Check server logs." and restores the values.
// Connections keep the context they were accepted with.
#include <string>

#include "common/log.h"
#include "server/server.h"

namespace keywarden {

std::string Server::configure_tls() {
  TlsContextPtr server_context, client_context;
  std::string problem = build_tls_contexts(tls_, &server_context, &client_context);
  if (!problem.empty()) {
    log_message(LogLevel::kWarning, problem);
    return problem;
  }
  tls_server_context_ = std::move(server_context);
  tls_client_context_ = std::move(client_context);
  replication_->set_tls_client_context(tls_.replication ? tls_client_context_ : nullptr);
  replication_->set_tls_port(tls_port_);
  return "";
}

void Server::register_tls_config() {
  ConfigRegistry& c = config_;
  constexpr const char* kGroup = "tls";
  // Applied once per CONFIG SET, after every value of the command is in place (a certificate
  // and its key change together).
  auto apply = [this]() -> std::string {
    if (!tls_wanted()) {
      replication_->set_tls_client_context(nullptr);
      return "";
    }
    if (!configure_tls().empty()) return "Unable to update TLS configuration. Check server logs.";
    return "";
  };
  auto with_apply = [&](const char* name) {
    ConfigDirective* directive = c.find(name);
    directive->apply_group = kGroup;
    directive->apply = apply;
  };
  c.add_integer("tls-port", &tls_port_, 0, 65535);
  // tls-port has its own apply: TLS configured if it was not yet, then the listeners.
  c.find("tls-port")->apply_group = "tls-port";
  c.find("tls-port")->apply = [this]() -> std::string {
    if (tls_port_ != 0 && !tls_server_context_ && !configure_tls().empty()) {
      return "Unable to update TLS configuration. Check server logs.";
    }
    if (!reopen_tcp_listeners(true).empty()) {
      return "Unable to listen on this port. Check server logs.";
    }
    replication_->set_tls_port(tls_port_);
    return "";
  };
  struct StringRow {
    const char* name;
    std::string* target;
    uint32_t flags;
  };
  const StringRow strings[] = {
      {"tls-cert-file", &tls_.cert_file, 0},
      {"tls-key-file", &tls_.key_file, 0},
      {"tls-key-file-pass", &tls_.key_file_pass, kConfigSensitive},
      {"tls-client-cert-file", &tls_.client_cert_file, 0},
      {"tls-client-key-file", &tls_.client_key_file, 0},
      {"tls-client-key-file-pass", &tls_.client_key_file_pass, kConfigSensitive},
      {"tls-dh-params-file", &tls_.dh_params_file, 0},
      {"tls-ca-cert-file", &tls_.ca_cert_file, 0},
      {"tls-ca-cert-dir", &tls_.ca_cert_dir, 0},
      {"tls-protocols", &tls_.protocols, 0},
      {"tls-ciphers", &tls_.ciphers, 0},
      {"tls-ciphersuites", &tls_.ciphersuites, 0},
  };
  for (const StringRow& row : strings) {
    c.add_string(row.name, row.target, row.flags);
    with_apply(row.name);
  }
  // Read for each connection as it is accepted: no reload needed.
  c.add_enum("tls-auth-clients", &tls_.auth_clients,
             {{"no", TlsSettings::kNo}, {"yes", TlsSettings::kYes},
              {"optional", TlsSettings::kOptional}});
  c.add_bool("tls-prefer-server-ciphers", &tls_.prefer_server_ciphers);
  with_apply("tls-prefer-server-ciphers");
  c.add_bool("tls-session-caching", &tls_.session_caching);
  with_apply("tls-session-caching");
  c.add_integer("tls-session-cache-size", &tls_.session_cache_size, 0, INT32_MAX);
  with_apply("tls-session-cache-size");
  c.add_integer("tls-session-cache-timeout", &tls_.session_cache_timeout, 0, INT32_MAX);
  with_apply("tls-session-cache-timeout");
  c.add_bool("tls-replication", &tls_.replication);
  with_apply("tls-replication");
}

}  // namespace keywarden
