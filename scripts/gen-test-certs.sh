#!/usr/bin/env bash
# Makes a throw-away certificate authority and the certificates the TLS tests and examples use,
# with the openssl command-line tool, into the directory given (created if missing):
#   ca.crt ca.key        the test CA (self-signed)
#   server.crt server.key  signed by it, for CN/SAN "localhost" and 127.0.0.1 (tls-cert-file)
#   client.crt client.key  signed by it, a client certificate (tls-auth-clients yes)
#   server-pass.key       server.key encrypted with the passphrase "keywarden" (tls-key-file-pass)
#   redis.dh              Diffie-Hellman parameters (tls-dh-params-file)
# Never use these for anything but tests: the keys are unprotected and valid for a year.
# Usage: scripts/gen-test-certs.sh DIR
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir="$1"
mkdir -p "$dir"
cd "$dir"

openssl genrsa -out ca.key 2048 2>/dev/null
openssl req -x509 -new -nodes -sha256 -key ca.key -days 365 \
  -subj "/O=keywarden test/CN=keywarden test CA" -out ca.crt

# One leaf certificate signed by the CA: name, common name, extended key usage.
make_leaf() {
  local name="$1" cn="$2" usage="$3"
  openssl genrsa -out "$name.key" 2048 2>/dev/null
  openssl req -new -sha256 -key "$name.key" -subj "/O=keywarden test/CN=$cn" -out "$name.csr"
  cat >"$name.ext" <<EXT
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = $usage
subjectAltName = DNS:localhost, IP:127.0.0.1
EXT
  openssl x509 -req -sha256 -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
    -days 365 -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

make_leaf server localhost serverAuth,clientAuth
make_leaf client "keywarden test client" clientAuth
openssl pkey -in server.key -aes256 -passout pass:keywarden -out server-pass.key
# DSA-style parameters: generated in a moment (fine for tests, not for production).
openssl dhparam -dsaparam -out redis.dh 2048 2>/dev/null
chmod 600 ./*.key
