#!/usr/bin/env python3
"""authlib as a confidential OpenID client (a web client) against a running ZevAuth server.

For each web client the demo seeds in dev.json ("webClients": client_secret_basic, client_secret_post and
private_key_jwt), it discovers the endpoints at /.well-known/openid-configuration, builds the authorization
URL with authlib (code + PKCE S256, scope "openid email", a nonce), drives the hosted sign-in like a
scripted browser (the consent page names the client; a second sign-in of the same client is answered
without it: consent is remembered), exchanges the code authenticating the client with its registered
method, checks the ID token's signature against the JWKS and its claims (iss, aud = the client, nonce),
refreshes (the client authenticates again), and checks that a wrong secret or a replayed assertion is
401 invalid_client. It prints step names and statuses only, never a token, code, secret or key.

    python Tests/Interop/web_client.py --dev-json .zevauth/dev.json
"""
import argparse
import json
import sys
import time
import urllib.parse

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import PrivateKeyJWT, private_key_jwt_sign
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from pages import hidden_fields

TAG = "web client"


def fail(step, detail):
    print(f"{TAG}: FAILED at {step}: {detail}", file=sys.stderr)
    sys.exit(1)


def expect(condition, step, detail=""):
    if not condition:
        fail(step, detail)
    print(f"{TAG}: ok   {step}")


def session_for(client, metadata):
    """An authlib session authenticating as `client` with its registered method."""
    method = client["tokenEndpointAuthMethod"]
    redirect = client["redirectUris"][0]
    if method == "private_key_jwt":
        session = OAuth2Session(
            client_id=client["clientId"], client_secret=ECKey.import_key(client["privateKeyPem"]), redirect_uri=redirect,
            scope="openid email", code_challenge_method="S256", token_endpoint_auth_method="private_key_jwt")
        session.register_client_auth_method(
            PrivateKeyJWT(metadata["token_endpoint"], alg="ES256", headers={"kid": client["keyId"]}))
        return session
    return OAuth2Session(
        client_id=client["clientId"], client_secret=client["clientSecret"], redirect_uri=redirect, scope="openid email",
        code_challenge_method="S256", token_endpoint_auth_method=method)


def sign_in(browser, dev, issuer, authorization_url, redirect, method, expect_consent):
    """The browser's part: start, sign in when asked, consent when asked; the 303 back to the site."""
    response = browser.get(authorization_url, allow_redirects=False, timeout=30)
    expect(response.status_code == 303, f"{method}: authorize redirects", response.status_code)
    for _ in range(4):
        location = urllib.parse.urljoin(issuer, response.headers["Location"])
        if location.startswith(redirect):
            return location
        page = browser.get(location, allow_redirects=False, timeout=30)
        if page.status_code == 303:
            response = page
            continue
        fields = hidden_fields(page.text)
        if "/v1/auth/zevid/signin" in location:
            fields.update({"email": dev["user"]["email"], "password": dev["user"]["password"]})
            response = browser.post(issuer + "/v1/auth/zevid/signin", data=fields, allow_redirects=False, timeout=30)
            expect(response.status_code == 303, f"{method}: sign-in accepted", response.status_code)
        else:
            expect(expect_consent, f"{method}: consent asked only the first time")
            expect(page.status_code == 200 and "Demo website" in page.text, f"{method}: consent names the client")
            fields["decision"] = "allow"
            response = browser.post(issuer + "/v1/auth/zevid/consent", data=fields, allow_redirects=False, timeout=30)
            expect(response.status_code == 303, f"{method}: consent redirects to the site", response.status_code)
    fail(f"{method}: sign-in", "did not reach the redirect URI")


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--dev-json", required=True)
    options = arguments.parse_args()
    with open(options.dev_json) as file:
        dev = json.load(file)
    issuer = dev["issuer"]
    clients = dev.get("webClients") or []
    expect(sorted(c["tokenEndpointAuthMethod"] for c in clients)
           == ["client_secret_basic", "client_secret_post", "private_key_jwt"], "dev.json has one web client per method")

    metadata = requests.get(issuer + "/.well-known/openid-configuration", timeout=30).json()
    for method in ["client_secret_basic", "client_secret_post", "private_key_jwt"]:
        expect(method in metadata["token_endpoint_auth_methods_supported"], f"discovery lists {method}")
    expect(set(metadata["token_endpoint_auth_signing_alg_values_supported"]) >= {"RS256", "ES256"},
           "discovery lists the assertion algorithms")
    jwks = KeySet.import_key_set(requests.get(metadata["jwks_uri"], timeout=30).json())

    browser = requests.Session()
    for client in clients:
        method = client["tokenEndpointAuthMethod"]
        redirect = client["redirectUris"][0]
        for attempt in (1, 2):
            session = session_for(client, metadata)
            verifier = generate_token(64)
            nonce = generate_token(20)
            url, state = session.create_authorization_url(
                metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
            callback = sign_in(browser, dev, issuer, url, redirect, method, expect_consent=attempt == 1)
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))
            expect(query.get("state") == state and query.get("iss") == issuer, f"{method}: state and iss come back")
            token = session.fetch_token(metadata["token_endpoint"], authorization_response=callback, state=state,
                                        code_verifier=verifier)
            expect(token.get("access_token") and token.get("refresh_token") and token.get("id_token"),
                   f"{method}: the code is exchanged with client authentication")
            claims = jwt.decode(token["id_token"], jwks, algorithms=["RS256", "ES256"]).claims
            jwt.JWTClaimsRegistry(exp={"essential": True}).validate(claims)
            expect(claims["iss"] == issuer and claims["aud"] == client["clientId"] and claims["nonce"] == nonce,
                   f"{method}: the ID token verifies and names the client (attempt {attempt})")

        refreshed = session.refresh_token(metadata["token_endpoint"], refresh_token=token["refresh_token"])
        expect(refreshed.get("access_token") and refreshed.get("refresh_token") != token["refresh_token"],
               f"{method}: refresh authenticates the client and rotates")

        # A refresh without the client's credentials, or with wrong ones, is invalid_client.
        form = {"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"], "client_id": client["clientId"]}
        if method == "client_secret_basic":
            wrong = requests.post(metadata["token_endpoint"], data=form, auth=(client["clientId"], "zcs_wrong"), timeout=30)
            expect(wrong.status_code == 401 and wrong.headers.get("WWW-Authenticate", "").startswith("Basic"),
                   f"{method}: a wrong secret is 401 with the Basic challenge", wrong.status_code)
        elif method == "client_secret_post":
            wrong = requests.post(metadata["token_endpoint"], data=dict(form, client_secret="zcs_wrong"), timeout=30)
            expect(wrong.status_code == 401, f"{method}: a wrong secret is 401", wrong.status_code)
        else:
            key = ECKey.import_key(client["privateKeyPem"])
            assertion = private_key_jwt_sign(
                key, client["clientId"], metadata["token_endpoint"], alg="ES256", header={"kid": client["keyId"]},
                claims={"jti": generate_token(24), "exp": int(time.time()) + 120})
            assertion = assertion.decode() if isinstance(assertion, bytes) else assertion
            first = requests.post(metadata["token_endpoint"], timeout=30, data=dict(
                form, client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                client_assertion=assertion))
            expect(first.status_code == 200, f"{method}: a hand-made assertion authenticates", first.status_code)
            replay = requests.post(metadata["token_endpoint"], timeout=30, data=dict(
                form, refresh_token=first.json()["refresh_token"],
                client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion=assertion))
            expect(replay.status_code == 401 and replay.json().get("error") == "invalid_client",
                   f"{method}: a replayed assertion (same jti) is 401 invalid_client", replay.status_code)
        unauthenticated = requests.post(metadata["token_endpoint"], data=form, timeout=30)
        expect(unauthenticated.status_code == 401, f"{method}: no client authentication is 401", unauthenticated.status_code)
    print(f"{TAG}: authlib signed in, exchanged and refreshed with client_secret_basic, client_secret_post and private_key_jwt")


if __name__ == "__main__":
    main()
