#!/usr/bin/env python3
"""A standard OAuth client (authlib) against a running ZevAuth server, using only its RFC 8414 metadata.

It discovers the endpoints at /.well-known/oauth-authorization-server, builds the authorization URL with
authlib (authorization code + PKCE S256, a public client: token_endpoint_auth_method "none"), drives the
hosted sign-in like a scripted browser (sign-in form with its CSRF token, consent, catching the 303 to the
loopback redirect without following it), checks `state` and RFC 9207 `iss`, exchanges the code at the token
endpoint, refreshes (rotation: the earlier refresh token is then refused), introspects with the secret
key, and revokes (RFC 7009). It prints step names and statuses only, never a token, code, verifier,
password or key.

    python Tests/Interop/authlib_client.py --dev-json .zevauth/dev.json
"""
import argparse
import json
import urllib.parse

import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session

from pages import Reporter, sign_in

REDIRECT_URI = "http://127.0.0.1:54321/callback"  # matches the demo's loopback callback on any port
report = Reporter("authlib client")


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--dev-json", required=True)
    options = arguments.parse_args()
    with open(options.dev_json) as file:
        dev = json.load(file)
    issuer = dev["issuer"]
    client_id = dev["development"]["publishableKey"]
    secret_key = dev["development"]["secretKey"]

    # 1. Discovery (RFC 8414).
    metadata_response = requests.get(issuer + "/.well-known/oauth-authorization-server", timeout=30)
    report.expect(metadata_response.status_code == 200, "metadata", metadata_response.status_code)
    metadata = metadata_response.json()
    report.expect(metadata["issuer"] == issuer, "metadata issuer")
    report.expect("S256" in metadata["code_challenge_methods_supported"], "metadata S256")
    report.expect("none" in metadata["token_endpoint_auth_methods_supported"], "metadata public client")

    client = OAuth2Session(
        client_id=client_id, redirect_uri=REDIRECT_URI, code_challenge_method="S256",
        token_endpoint_auth_method="none", revocation_endpoint_auth_method="none")
    verifier = generate_token(64)
    authorization_url, state = client.create_authorization_url(
        metadata["authorization_endpoint"], code_verifier=verifier)

    # 2. The system browser: start, sign in, consent, and the 303 back to the app.
    browser = requests.Session()
    start = browser.get(authorization_url, allow_redirects=False, timeout=30)
    callback = sign_in(report, browser, issuer, dev["user"], start)
    report.expect(callback.startswith(REDIRECT_URI + "?"), "redirect goes to the loopback callback")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))
    report.expect(query.get("state") == state, "state comes back unchanged")
    report.expect(query.get("iss") == issuer, "iss names the issuer (RFC 9207)")

    # 3. The app: the code for tokens at the token endpoint (authlib checks state against the response).
    token = client.fetch_token(metadata["token_endpoint"], authorization_response=callback, state=state,
                               code_verifier=verifier)
    report.expect(token.get("token_type") == "Bearer" and token.get("access_token") and token.get("refresh_token"),
                  "token endpoint answers RFC 6749 §5.1")
    session = requests.get(issuer + "/v1/auth/session", timeout=30,
                           headers={"Authorization": "Bearer " + token["access_token"]})
    report.expect(session.status_code == 200, "the access token opens GET /v1/auth/session", session.status_code)

    # 4. Refresh with rotation.
    first_refresh_token = token["refresh_token"]
    refreshed = client.refresh_token(metadata["token_endpoint"], refresh_token=first_refresh_token)
    report.expect(refreshed.get("refresh_token") and refreshed["refresh_token"] != first_refresh_token,
                  "refresh rotates the refresh token")
    session = requests.get(issuer + "/v1/auth/session", timeout=30,
                           headers={"Authorization": "Bearer " + refreshed["access_token"]})
    report.expect(session.status_code == 200, "the refreshed access token works", session.status_code)

    # 5. A resource server checks the access token (RFC 7662).
    introspection = requests.post(metadata["introspection_endpoint"], data={"token": refreshed["access_token"]},
                                  headers={"Authorization": "Bearer " + secret_key}, timeout=30)
    report.expect(introspection.status_code == 200 and introspection.json().get("active") is True,
                  "introspection: active", introspection.status_code)

    # 6. Sign out (RFC 7009), then nothing works.
    revoked = client.revoke_token(metadata["revocation_endpoint"], token=refreshed["refresh_token"],
                                  token_type_hint="refresh_token")
    report.expect(revoked.status_code == 200, "revocation answers 200", revoked.status_code)
    try:
        client.refresh_token(metadata["token_endpoint"], refresh_token=refreshed["refresh_token"])
        report.fail("refresh after revocation", "a revoked session refreshed")
    except OAuthError as error:
        report.expect(error.error == "invalid_grant", "refresh after revocation is invalid_grant", error.error)
    introspection = requests.post(metadata["introspection_endpoint"], data={"token": refreshed["access_token"]},
                                  headers={"Authorization": "Bearer " + secret_key}, timeout=30)
    report.expect(introspection.json() == {"active": False}, "introspection after revocation: inactive")
    print("authlib client: discovery, authorization code + PKCE, refresh, introspection and revocation passed")


if __name__ == "__main__":
    main()
