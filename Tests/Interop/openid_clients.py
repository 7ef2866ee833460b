#!/usr/bin/env python3
"""OpenID Connect relying parties against a running ZevAuth server, from its discovery document alone.

Three clients, each from `ISSUER/.well-known/openid-configuration` only (docs/protocol.md, "OpenID Connect"):

1. an AppAuth-style check: the discovery fields AppAuth-iOS and AppAuth-Android refuse to work without, then
   a code + PKCE + nonce sign-in whose ID token is checked the way AppAuth checks it (`iss` equal to the
   discovery issuer, `aud` or `azp` the client id, `exp` in the future, `iat` within 600 s, `nonce` equal to
   the one sent; AppAuth does not check the signature);
2. authlib's OpenID client (`authlib.oidc.core.CodeIDToken`): code + PKCE + nonce, the ID token verified
   against the JWKS (signature, iss, aud, exp, iat, nonce, at_hash), userinfo, then a refresh whose new ID
   token is verified the same way;
3. pyoidc (`oic.oic.Client`): provider configuration with the JWKS, code + PKCE + nonce, the ID token as
   pyoidc verifies it (signature against the JWKS, iss, aud, nonce), userinfo, refresh.

Every passed step prints `openid clients: ok   <step>` (the test command counts these lines). A server with
no signing keys yet (no JWKS, and a 503 for the exchange of an OpenID code) prints
`openid clients: SKIPPED <step> (…)` for the steps that need an ID token, and still runs discovery; any
other failure exits 1. Never prints a token, code, verifier, password or key.

    python Tests/Interop/openid_clients.py --dev-json .zevauth/dev.json
"""
import argparse
import base64
import hashlib
import json
import secrets
import sys
import time
import urllib.parse
import warnings

import requests

from pages import hidden_fields

warnings.filterwarnings("ignore", message="authlib.jose module is deprecated")

REDIRECT_URI = "http://127.0.0.1:54321/callback"  # the demo's loopback callback, any port
PREFIX = "openid clients:"


def fail(step, detail=""):
    print(f"{PREFIX} FAILED at {step}: {detail}", file=sys.stderr)
    sys.exit(1)


def expect(condition, step, detail=""):
    if not condition:
        fail(step, detail)
    print(f"{PREFIX} ok   {step}")


def skipped(step, why):
    print(f"{PREFIX} SKIPPED {step} ({why})")


class NoSigningKeys(Exception):
    """The server answered 503 for the exchange of an OpenID code: it has no signing keys yet."""


def sign_in(issuer, authorization_url, user):
    """A fresh system browser: the start, the sign-in form, consent, and the 303 back to the app."""
    browser = requests.Session()
    response = browser.get(authorization_url, allow_redirects=False, timeout=30)
    if response.status_code != 303:
        fail("authorize redirects to the sign-in page", response.status_code)
    page = browser.get(urllib.parse.urljoin(issuer, response.headers["Location"]), timeout=30)
    fields = hidden_fields(page.text)
    fields.update({"email": user["email"], "password": user["password"]})
    response = browser.post(issuer + "/v1/auth/zevid/signin", data=fields, allow_redirects=False, timeout=30)
    if response.status_code != 303:
        fail("sign-in accepted", response.status_code)
    page = browser.get(urllib.parse.urljoin(issuer, response.headers["Location"]), timeout=30)
    fields = hidden_fields(page.text)
    fields["decision"] = "allow"
    response = browser.post(issuer + "/v1/auth/zevid/consent", data=fields, allow_redirects=False, timeout=30)
    callback = response.headers.get("Location", "")
    if response.status_code != 303 or not callback.startswith(REDIRECT_URI + "?"):
        fail("consent redirects to the app", response.status_code)
    return callback


def unverified_claims(id_token):
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def pkce_pair():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


# AppAuth-iOS OIDServiceDiscovery.m and AppAuth-Android AuthorizationServiceDiscovery.java.
APPAUTH_REQUIRED = [
    "issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "response_types_supported",
    "subject_types_supported", "id_token_signing_alg_values_supported",
]


def appauth(issuer, client_id, user):
    response = requests.get(issuer + "/.well-known/openid-configuration", timeout=30)
    expect(response.status_code == 200, "AppAuth: discovery at ISSUER/.well-known/openid-configuration", response.status_code)
    discovery = response.json()
    missing = [field for field in APPAUTH_REQUIRED if field not in discovery]
    expect(not missing, "AppAuth: every field AppAuth requires", missing)
    expect(discovery["issuer"] == issuer, "AppAuth: issuer byte-identical to the one discovered from")
    expect("code" in discovery["response_types_supported"], "AppAuth: response type code")
    parsed = urllib.parse.urlsplit(discovery["issuer"])
    expect(not parsed.query and not parsed.fragment and not discovery["issuer"].endswith("/"),
           "AppAuth-Android: issuer without query, fragment or trailing slash")

    verifier, challenge = pkce_pair()
    nonce, state = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    url = discovery["authorization_endpoint"] + "?" + urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "scope": "openid profile email",
        "state": state, "nonce": nonce, "code_challenge": challenge, "code_challenge_method": "S256"})
    callback = sign_in(issuer, url, user)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))
    expect(query.get("state") == state and query.get("iss") == issuer, "AppAuth: state and iss on the callback")
    token = requests.post(discovery["token_endpoint"], timeout=30, data={
        "grant_type": "authorization_code", "code": query["code"], "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier, "client_id": client_id})
    if token.status_code == 503:
        raise NoSigningKeys()
    expect(token.status_code == 200 and "id_token" in token.json(), "AppAuth: the token response has an id_token",
           token.status_code)
    body = token.json()
    expect(body.get("scope") == "openid profile email", "AppAuth: the granted scope in the token response")
    claims = unverified_claims(body["id_token"])
    now = time.time()
    expect(claims.get("iss") == discovery["issuer"], "AppAuth: iss equals the discovery issuer")
    expect(client_id in ([claims.get("aud")] if isinstance(claims.get("aud"), str) else claims.get("aud", []))
           or claims.get("azp") == client_id, "AppAuth: aud or azp is the client id")
    expect(claims.get("exp", 0) > now, "AppAuth: exp in the future")
    expect(abs(claims.get("iat", 0) - now) <= 600, "AppAuth: iat within 600 s")
    expect(claims.get("nonce") == nonce, "AppAuth: nonce equal to the one sent")
    refreshed = requests.post(discovery["token_endpoint"], timeout=30, data={
        "grant_type": "refresh_token", "refresh_token": body["refresh_token"], "client_id": client_id})
    expect(refreshed.status_code == 200 and refreshed.json().get("refresh_token"), "AppAuth: refresh with the refresh token it got")


def authlib_client(issuer, client_id, user):
    from authlib.integrations.requests_client import OAuth2Session
    from authlib.jose import JsonWebKey, jwt
    from authlib.oidc.core import CodeIDToken

    discovery = requests.get(issuer + "/.well-known/openid-configuration", timeout=30).json()
    expect(discovery["issuer"] == issuer, "authlib: discovery")
    client = OAuth2Session(
        client_id=client_id, redirect_uri=REDIRECT_URI, scope="openid profile email offline_access",
        code_challenge_method="S256", token_endpoint_auth_method="none")
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    callback = sign_in(issuer, url, user)
    try:
        token = client.fetch_token(discovery["token_endpoint"], authorization_response=callback, state=state,
                                   code_verifier=verifier)
    except requests.HTTPError as error:  # authlib raises on a 503
        if error.response is not None and error.response.status_code == 503:
            raise NoSigningKeys()
        raise
    expect("id_token" in token, "authlib: code + PKCE + nonce, an id_token in the token response")
    jwks_response = requests.get(discovery["jwks_uri"], timeout=30)
    if jwks_response.status_code != 200:
        skipped("authlib: ID token verified against the JWKS", f"jwks_uri answers {jwks_response.status_code}")
        keys = None
    else:
        keys = JsonWebKey.import_key_set(jwks_response.json())

    def verify(id_token, access_token, expected_nonce, step):
        if keys is None:
            return unverified_claims(id_token)
        claims = jwt.decode(
            id_token, keys, claims_cls=CodeIDToken,
            claims_options={"iss": {"essential": True, "value": issuer}, "aud": {"essential": True, "value": client_id}},
            claims_params={"nonce": expected_nonce, "client_id": client_id, "access_token": access_token})
        claims.validate(leeway=120)
        expect(True, step)
        return claims

    claims = verify(token["id_token"], token["access_token"], nonce,
                    "authlib: ID token verified against the JWKS (signature, iss, aud, exp, iat, nonce, at_hash)")
    info = client.get(discovery["userinfo_endpoint"])
    expect(info.status_code == 200 and info.json().get("sub") == claims["sub"], "authlib: userinfo with the ID token's sub",
           info.status_code)
    expect(info.json().get("email") == user["email"], "authlib: userinfo carries the email scope's claims")
    refreshed = client.refresh_token(discovery["token_endpoint"], refresh_token=token["refresh_token"])
    expect("id_token" in refreshed, "authlib: refresh answers a new id_token")
    again = verify(refreshed["id_token"], refreshed["access_token"], None, "authlib: the refreshed ID token verifies")
    expect(again["sub"] == claims["sub"] and "nonce" not in again, "authlib: same sub, no nonce after a refresh")


def pyoidc_client(issuer, client_id, user):
    from oic.oic import Client
    from oic.oic.message import RegistrationResponse
    from oic.utils.authn.client import CLIENT_AUTHN_METHOD

    client = Client(client_authn_method=CLIENT_AUTHN_METHOD)
    jwks_status = requests.get(issuer + "/.well-known/jwks.json", timeout=30).status_code
    provider = client.provider_config(issuer, keys=jwks_status == 200)
    expect(provider["issuer"] == issuer, "pyoidc: provider configuration from discovery")
    client.store_registration_info(RegistrationResponse(
        client_id=client_id, redirect_uris=[REDIRECT_URI], token_endpoint_auth_method="none"))
    client.redirect_uris = [REDIRECT_URI]
    pkce, verifier = client.add_code_challenge()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    request = client.construct_AuthorizationRequest(request_args={
        "response_type": "code", "scope": "openid email", "client_id": client_id, "redirect_uri": REDIRECT_URI,
        "state": state, "nonce": nonce, **pkce})
    callback = sign_in(issuer, request.request(client.authorization_endpoint), user)
    from oic.oic.message import AuthorizationResponse
    response = client.parse_response(AuthorizationResponse, info=urllib.parse.urlsplit(callback).query, sformat="urlencoded")
    expect(response["state"] == state, "pyoidc: the authorization response parsed, state matches")
    if jwks_status != 200:
        answer = requests.post(client.token_endpoint, timeout=30, data={
            "grant_type": "authorization_code", "code": response["code"], "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier, "client_id": client_id})
        if answer.status_code == 503:
            raise NoSigningKeys()
        skipped("pyoidc: the ID token verified", f"jwks_uri answers {jwks_status}")
        return
    token = client.do_access_token_request(
        state=state, request_args={"code": response["code"], "redirect_uri": REDIRECT_URI, "code_verifier": verifier,
                                   "client_id": client_id}, authn_method="")
    id_token = token["id_token"]  # verified by pyoidc: signature against the JWKS, iss, aud
    expect(id_token["iss"] == issuer and id_token["aud"] == [client_id],
           "pyoidc: code + PKCE, the ID token verified against the JWKS (signature, iss, aud)")
    expect(id_token["nonce"] == nonce, "pyoidc: nonce equal to the one sent")
    info = client.do_user_info_request(state=state, method="GET")
    expect(info["sub"] == id_token["sub"], "pyoidc: userinfo with the ID token's sub")
    refreshed = client.do_access_token_refresh(state=state, request_args={"client_id": client_id}, authn_method="")
    expect(refreshed.get("access_token") and refreshed.get("id_token"), "pyoidc: refresh answers a new pair and ID token")


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--dev-json", required=True)
    options = arguments.parse_args()
    with open(options.dev_json) as file:
        dev = json.load(file)
    issuer, client_id, user = dev["issuer"], dev["development"]["publishableKey"], dev["user"]
    for name, run in [("AppAuth-style check", appauth), ("authlib", authlib_client), ("pyoidc", pyoidc_client)]:
        try:
            run(issuer, client_id, user)
        except NoSigningKeys:
            skipped(f"{name}: every step after the exchange", "the server has no signing keys yet: 503 for an OpenID code")
    print(f"{PREFIX} AppAuth-style check, authlib and pyoidc finished")


if __name__ == "__main__":
    main()
