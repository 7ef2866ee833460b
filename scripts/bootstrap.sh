#!/usr/bin/env bash
# Installs the Debian packages ZevAuth builds, runs and tests with, when any is missing.
# Safe to run again: it asks apt only when something is not installed.
set -euo pipefail

packages=(
  pkg-config
  libmicrohttpd-dev     # HTTP server
  libpq-dev             # PostgreSQL client library
  libssl-dev            # OpenSSL libcrypto: SHA-256, HMAC, CSPRNG
  libargon2-dev         # Argon2id password hashing
  libcurl4-openssl-dev  # outbound HTTPS (association checks)
  libidn2-dev           # IDNA (UTS #46) for the domains of account email addresses
  libqrencode-dev       # QR codes of the TOTP enrolment page
  libcbor-dev           # CBOR (RFC 8949) of passkey attestation objects and COSE keys
  chromium              # tests: the browser journeys (Tests/Browser)
  chromium-driver       # tests: chromedriver for Selenium, at /usr/bin/chromedriver
  postgresql-15         # the throwaway and development database server
  curl
  openssl               # tests: the throwaway CA for the local HTTPS server (FetchTests, Tests/Browser/https_site.py)
  python3               # tests: the local HTTPS server (FetchTests) and the outside client
  python3-venv          # the virtual environment for the authlib interoperability client
  # The fault test (tests/fault/run.sh) and the soak (bench/soak/run.sh); neither runs in scripts/test.
  patroni               # fault test: PostgreSQL failover manager (pulls python3-psycopg2 and python3-etcd)
  etcd-server           # fault test: Patroni's leader key
  haproxy               # fault test: the load balancer with /readyz checks, and the TCP frontend to the primary
  pgbouncer             # fault test: the transaction-mode pooler variant
  wrk                   # soak: the HTTP load
  python3-cryptography  # tests: verify_signatures.py checks the server's RS256/ES256 signatures independently
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The Debian package starts a system cluster on 5432; ZevAuth never uses it, so leave it as the system wants.
