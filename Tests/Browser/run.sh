#!/usr/bin/env bash
# The browser journeys (Tests/Browser/journeys.py, the passkey journeys of Tests/Browser/passkey_journeys.py,
# a website's sign-ins by form_post and POST, Tests/Browser/web_client_journeys.py, then the console's,
# Tests/Browser/console_journeys.py) against a running demo server: Debian's Chromium and
# chromedriver (/usr/bin/chromium, /usr/bin/chromedriver; never a downloaded browser or driver), Selenium,
# zxing-cpp (to read the enrolment page's QR code), numpy, Pillow and cryptography (a passkey key of another
# site) from PyPI in the project's venv. The passkey journeys use Chromium's virtual authenticator and need
# the demo server's issuer on localhost (Chromium refuses WebAuthn on an IP-address origin).
#   Tests/Browser/run.sh DEV_JSON [ARTIFACTS_DIR] [MAIL_DIR] [SITE_JSON] [OP_JSON]
# OP_JSON is the ready file of the upstream OpenID provider (Tests/Federation/upstream_op.py) the demo server's
# outbound fetches reach; with it the federation journeys (Tests/Browser/federation_journeys.py) run.
# SITE_JSON is the ready file of the local HTTPS site (Tests/Browser/https_site.py) the demo server's
# outbound fetches reach; without it the console journeys do not run. They skip themselves ("console
# journeys: skipped (no console)") when the server has no console. Prints "journey NAME: ok" per passing
# journey; exits non-zero when one fails. Screenshots (390 px and 1280 px wide) go to ARTIFACTS_DIR, by
# default .build/browser-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../.."
dev_json=$1
artifacts=${2:-.build/browser-artifacts}
mail_dir=${3:-}
site_json=${4:-}
op_json=${5:-}
for binary in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$binary" ] || { echo "browser journeys: $binary is missing (scripts/bootstrap.sh installs it)" >&2; exit 1; }
done
venv=.build/pyvenv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check selenium zxing-cpp numpy pillow cryptography
rm -rf "$artifacts"
mkdir -p "$artifacts"
# Selenium Manager would try to download a driver; the Service names the system one, and this keeps it offline.
export SE_OFFLINE=true
status=0
"$venv/bin/python" Tests/Browser/journeys.py --dev-json "$dev_json" --artifacts "$artifacts" ${mail_dir:+--mail-dir "$mail_dir"} || status=$?
"$venv/bin/python" Tests/Browser/passkey_journeys.py --dev-json "$dev_json" --artifacts "$artifacts" || status=$?
"$venv/bin/python" Tests/Browser/web_client_journeys.py --dev-json "$dev_json" --artifacts "$artifacts" || status=$?
if [ -n "$site_json" ]; then
  "$venv/bin/python" Tests/Browser/console_journeys.py --dev-json "$dev_json" --site-json "$site_json" --artifacts "$artifacts" || status=$?
else
  echo "console journeys: not run (no SITE_JSON: the local HTTPS site is not running)"
fi
if [ -n "$op_json" ]; then
  "$venv/bin/python" Tests/Browser/federation_journeys.py --dev-json "$dev_json" --op-json "$op_json" --artifacts "$artifacts" || status=$?
else
  echo "federation journeys: not run (no OP_JSON: the upstream OpenID provider is not running)"
fi
exit "$status"
