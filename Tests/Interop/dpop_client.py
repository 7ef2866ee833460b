#!/usr/bin/env python3
"""DPoP (RFC 9449) from requests-oauth2client against a running ZevAuth server (docs/dpop.md).

The client comes from the server's RFC 8414 metadata (a public client: `client_id` only). It pushes an
authorization request (RFC 9126) with `dpop=True`, so the library generates an ES256 key and sends its
thumbprint as `dpop_jkt`, binding the code; drives the hosted sign-in like a scripted browser; exchanges the
code with a DPoP proof of that key (the answer must be `token_type: DPoP`); calls userinfo with the
library's DPoP auth (`Authorization: DPoP` plus a proof with `ath`), sees the same token refused as a bearer
token, refreshes with a proof (the library signs it with the token's key) and calls userinfo again with the
new token; then, with the environment requiring DPoP, sees the library retry an exchange once with the
server's nonce (`use_dpop_nonce`, `DPoP-Nonce`). It prints step names and statuses only, never a token, code, verifier, password or key.

    python Tests/Interop/dpop_client.py --dev-json .zevauth/dev.json
"""
import argparse
import json

import requests
from requests_oauth2client import DPoPToken, OAuth2Client

from pages import Reporter, sign_in

REDIRECT_URI = "http://127.0.0.1:54321/callback"  # matches the demo's loopback callback on any port
PUSHED_START = "authorize with request_uri redirects to the sign-in page"  # the sign-in's first step
report = Reporter("dpop client")


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--dev-json", required=True)
    options = arguments.parse_args()
    with open(options.dev_json) as file:
        dev = json.load(file)
    issuer = dev["issuer"]
    client_id = dev["development"]["publishableKey"]

    # 1. The client from the metadata (the demo's issuer is loopback http: `testing` skips the https rule).
    client = OAuth2Client.from_discovery_endpoint(
        issuer + "/.well-known/oauth-authorization-server", issuer=issuer, client_id=client_id,
        redirect_uri=REDIRECT_URI, testing=True)
    metadata = requests.get(issuer + "/.well-known/oauth-authorization-server", timeout=30).json()
    report.expect("ES256" in metadata.get("dpop_signing_alg_values_supported", []),
                  "metadata lists the DPoP algorithms")

    # 2. Push a request bound to a new DPoP key (`dpop_jkt`, RFC 9449 §10).
    authorization_request = client.authorization_request(scope="openid email", dpop=True)
    report.expect(authorization_request.dpop_key is not None, "the library made a DPoP key for the request")
    pushed = client.pushed_authorization_request(authorization_request)
    report.expect(pushed.request_uri.startswith("urn:ietf:params:oauth:request_uri:"), "PAR answers a request_uri")

    # 3. The hosted sign-in, then the callback (state and iss checked by the library).
    browser = requests.Session()
    start = browser.get(pushed.uri, allow_redirects=False, timeout=30)
    callback = sign_in(report, browser, issuer, dev["user"], start, PUSHED_START, check_pages=False)
    response = authorization_request.validate_callback(callback)
    report.expect(bool(response.code), "the callback carries the pushed state and the issuer (RFC 9207)")

    # 4. The code for a DPoP-bound pair, proved with the request's key. `validate=False`: requests-oauth2client
    # 1.8's ID token validation rebuilds a DPoPToken without its key and fails (a bug of the library); the
    # ID token itself is validated by Tests/Interop/par_client.py.
    token = client.authorization_code(response, validate=False)
    report.expect(isinstance(token, DPoPToken) and token.token_type == "DPoP",
                  "the token endpoint answers token_type DPoP", type(token).__name__)
    report.expect(token.dpop_key.dpop_jkt == authorization_request.dpop_key.dpop_jkt,
                  "the pair is bound to the request's key")

    # 5. Userinfo with Authorization: DPoP and a proof carrying ath; as a bearer token it is refused.
    info = requests.get(issuer + "/oauth2/userinfo", auth=token, timeout=30)
    report.expect(info.status_code == 200 and bool(info.json().get("sub")),
                  "userinfo answers with a DPoP proof", info.status_code)
    bearer = requests.get(issuer + "/oauth2/userinfo", timeout=30,
                          headers={"Authorization": "Bearer " + str(token.access_token)})
    report.expect(bearer.status_code == 401 and bearer.headers.get("WWW-Authenticate", "").startswith("DPoP "),
                  "the bound token as a bearer token is refused with a DPoP challenge", bearer.status_code)

    # 6. Refresh with a proof of the same key: a new bound pair that works at userinfo.
    refreshed = client.refresh_token(token)
    report.expect(isinstance(refreshed, DPoPToken) and refreshed.token_type == "DPoP",
                  "the refresh answers token_type DPoP")
    again = requests.get(issuer + "/oauth2/userinfo", auth=refreshed, timeout=30)
    report.expect(again.status_code == 200, "userinfo answers the refreshed token", again.status_code)

    # 7. An environment that requires DPoP asks for a server nonce: the library's first proof has none, the
    # server answers use_dpop_nonce with DPoP-Nonce, and the library retries once with it. The setting is
    # put back afterwards, whatever happens, for the clients that run next.
    admin = {"Authorization": "Bearer " + dev["development"]["secretKey"]}
    changed = requests.patch(issuer + "/v1/admin/settings", json={"requireDPoP": True}, headers=admin, timeout=30)
    report.expect(changed.status_code == 200 and changed.json().get("requireDPoP") is True,
                  "the environment requires DPoP", changed.status_code)
    try:
        nonce_request = client.authorization_request(scope="openid", dpop=True)
        pushed = client.pushed_authorization_request(nonce_request)
        browser = requests.Session()
        start = browser.get(pushed.uri, allow_redirects=False, timeout=30)
        callback = sign_in(report, browser, issuer, dev["user"], start, PUSHED_START, check_pages=False)
        nonce_token = client.authorization_code(nonce_request.validate_callback(callback), validate=False)
        report.expect(nonce_token.token_type == "DPoP" and nonce_request.dpop_key.as_nonce is not None,
                      "the exchange succeeds after the library retried with the server's nonce")
    finally:
        requests.patch(issuer + "/v1/admin/settings", json={"requireDPoP": False}, headers=admin, timeout=30)
    print("dpop client: bound request, DPoP code exchange, userinfo, refresh and the nonce retry passed")


if __name__ == "__main__":
    main()
