#!/usr/bin/env python3
"""Pushed authorization requests (RFC 9126) from requests-oauth2client against a running ZevAuth server.

It builds the client from the server's RFC 8414 metadata (a public client: `client_id` only), pushes an
authorization request (authorization code + PKCE S256, OpenID `scope` and `nonce`) to the
`pushed_authorization_request_endpoint`, opens the authorization endpoint with only `client_id` and the
`request_uri`, drives the hosted sign-in like a scripted browser (as Tests/Interop/authlib_client.py does:
sign-in form with its CSRF token, consent, catching the 303 to the loopback redirect), lets the library check
`state` and RFC 9207 `iss`, exchanges the code (the library validates the ID token against the JWKS), and
checks that the request URI works only once. It prints step names and statuses only, never a token, code,
verifier, password or key.

    python Tests/Interop/par_client.py --dev-json .zevauth/dev.json
"""
import argparse
import json
import urllib.parse

import requests
from requests_oauth2client import OAuth2Client

from pages import Reporter, sign_in

REDIRECT_URI = "http://127.0.0.1:54321/callback"  # matches the demo's loopback callback on any port
PUSHED_START = "authorize with request_uri redirects to the sign-in page"  # the sign-in's first step
report = Reporter("par client")


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--dev-json", required=True)
    options = arguments.parse_args()
    with open(options.dev_json) as file:
        dev = json.load(file)
    issuer = dev["issuer"]
    client_id = dev["development"]["publishableKey"]

    # 1. The client from the metadata alone (the demo's issuer is loopback http: `testing` skips the https rule).
    client = OAuth2Client.from_discovery_endpoint(
        issuer + "/.well-known/oauth-authorization-server", issuer=issuer, client_id=client_id,
        redirect_uri=REDIRECT_URI, testing=True)
    report.expect(client.pushed_authorization_request_endpoint == issuer + "/oauth2/par",
                  "metadata names the PAR endpoint")

    # 2. Push (RFC 9126 §2): the library posts the whole request and reads request_uri and expires_in.
    authorization_request = client.authorization_request(scope="openid email")
    pushed = client.pushed_authorization_request(authorization_request)
    report.expect(pushed.request_uri.startswith("urn:ietf:params:oauth:request_uri:"), "PAR answers a request_uri")
    report.expect(pushed.expires_at is not None, "PAR answers expires_in")
    report.expect(set(urllib.parse.parse_qs(urllib.parse.urlsplit(pushed.uri).query)) == {"client_id", "request_uri"},
                  "the authorization URL carries only client_id and request_uri")

    # 3. The system browser with the short URL, then the app's callback (state and iss checked by the library).
    browser = requests.Session()
    start = browser.get(pushed.uri, allow_redirects=False, timeout=30)
    callback = sign_in(report, browser, issuer, dev["user"], start, PUSHED_START)
    report.expect(callback.startswith(REDIRECT_URI + "?"), "redirect goes to the loopback callback")
    response = authorization_request.validate_callback(callback)
    report.expect(bool(response.code), "the callback carries the pushed state and the issuer (RFC 9207)")

    # 4. The code for tokens; the ID token is validated against the JWKS, the nonce included.
    token = client.authorization_code(response, validate=True)
    report.expect(bool(token.access_token) and bool(token.refresh_token), "token endpoint answers the code")
    report.expect(token.id_token is not None, "the ID token validates")
    session = requests.get(issuer + "/v1/auth/session", timeout=30,
                           headers={"Authorization": "Bearer " + str(token.access_token)})
    report.expect(session.status_code == 200, "the access token opens GET /v1/auth/session", session.status_code)

    # 5. A request_uri works once (RFC 9126 §4): the second use is refused, shown, never redirected.
    again = requests.Session().get(pushed.uri, allow_redirects=False, timeout=30,
                                   headers={"Accept": "application/json"})
    report.expect(again.status_code == 400 and "Location" not in again.headers, "a used request_uri is refused",
                  again.status_code)
    report.expect(again.json().get("error") == "invalid_request_uri", "the refusal is invalid_request_uri")
    print("par client: pushed request, authorization, code exchange and single use passed")


if __name__ == "__main__":
    main()
