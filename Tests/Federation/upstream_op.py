#!/usr/bin/env python3
"""A real OpenID provider on loopback HTTPS, the upstream of the federation tests (docs/federation.md, "Tests").

    upstream_op.py --dir DIR --ready-file FILE

Built on authlib's server side (authlib.oauth2.rfc6749 AuthorizationCodeGrant, rfc7636 CodeChallenge,
authlib.oidc.core OpenIDCode) under Flask. It serves three issuers on one TLS listener, chosen by the Host:

  https://appleid.apple.com   Apple-like: response_mode=form_post, scope "name email", the client secret must
                              be an ES256 JWT (kid = the key ID, iss = the team ID, sub = the services ID,
                              aud = https://appleid.apple.com) signed by the client's registered public key and
                              sent in the body (client_secret_post); `email_verified` and `is_private_email`
                              are the strings "true"/"false"; RS256 ID tokens.
  https://accounts.google.com Google-like: client_secret_basic only, boolean `email_verified`, RS256.
  https://op.test             a plain OpenID provider: client_secret_basic or client_secret_post, ES256.

Each issuer has discovery at /.well-known/openid-configuration, its key set at /keys (an RSA key and a
P-256 key, `Cache-Control: public, max-age=3600`), /authorize and /token.

At start it makes a throwaway CA and a certificate for the three hosts in DIR with the `openssl` command and
listens on port 443 of the first free address of 127.0.0.11…127.0.0.60 (the issuers' URLs have no port).
A second, plain-HTTP listener on 127.0.0.1 (an ephemeral port) is for the tests only:

  POST /clients   {"issuer", "client_id", "client_secret"?, "redirect_uris", "team_id"?, "key_id"?,
                   "public_key_pem"?}  registers a client (Apple-like: the team ID, key ID and public key
                   its client secret is checked with).
  POST /next-user {"issuer", "sub", "email"?, "email_verified"?, "name"?, "private_email"?}  whom /authorize
                   signs in next (it asks no one).
  POST /mint      {"issuer", "claims", "alg"?: RS256|ES256|none|HS256-public, "kid"?, "key"?: rsa|ec,
                   "tamper"?: bool}  an ID token with exactly these claims, signed by the issuer's key
                   (or not at all, or HMAC keyed with the RSA public key, or with one signature byte changed).
  POST /rotate    {"issuer"}  adds a fresh RSA key to the issuer's key set; answers {"kid"}.
  GET  /stats     {"jwks_fetches": {issuer: n}, "token_requests": {issuer: n}}

When both listen it writes FILE, one JSON object: {"address", "caFile", "control", "resolve"} with `resolve`
the ZEVAUTH_OUTBOUND_RESOLVE value sending the three hosts there. It stops within half a second on SIGTERM
or SIGINT, or once its parent process is gone (docs/architecture.md, "Tests": no process left behind), and
appends its PID to $ZEVAUTH_TEST_PIDS_FILE when that is set.
"""
import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import secrets
import signal
import socket
import ssl
import subprocess
import threading
import time
from urllib.parse import urlencode, urlsplit

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.models import ClientMixin
from authlib.oidc.core import AuthorizationCodeMixin
from authlib.oauth2.rfc6749.errors import InvalidClientError
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from flask import Flask, Response, jsonify, request
from werkzeug.serving import make_server

APPLE = "https://appleid.apple.com"
GOOGLE = "https://accounts.google.com"
PLAIN = "https://op.test"
ISSUERS = (APPLE, GOOGLE, PLAIN)
HOSTS = [urlsplit(issuer).hostname for issuer in ISSUERS]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def integer_bytes(number, length=None):
    return number.to_bytes(length or (number.bit_length() + 7) // 8, "big")


class IssuerKeys:
    """An issuer's signing keys: RSA ones (the newest signs) and one P-256 key."""

    def __init__(self, name):
        self.name = name
        self.rsa = [("%s-rsa-1" % name, rsa.generate_private_key(public_exponent=65537, key_size=2048))]
        self.ec = ("%s-ec-1" % name, ec.generate_private_key(ec.SECP256R1()))
        self.lock = threading.Lock()

    def rotate(self):
        with self.lock:
            kid = "%s-rsa-%d" % (self.name, len(self.rsa) + 1)
            self.rsa.append((kid, rsa.generate_private_key(public_exponent=65537, key_size=2048)))
            return kid

    def jwks(self):
        with self.lock:
            keys = []
            for kid, key in self.rsa:
                numbers = key.public_key().public_numbers()
                keys.append({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                             "n": b64url(integer_bytes(numbers.n)), "e": b64url(integer_bytes(numbers.e))})
            kid, key = self.ec
            numbers = key.public_key().public_numbers()
            keys.append({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
                         "x": b64url(integer_bytes(numbers.x, 32)), "y": b64url(integer_bytes(numbers.y, 32))})
            return {"keys": keys}

    def current_rsa(self):
        with self.lock:
            return self.rsa[-1]

    def sign(self, header, claims, key="rsa", alg=None, tamper=False):
        """A compact JWS of `claims`, `header` merged into the default header."""
        alg = alg or ("ES256" if key == "ec" else "RS256")
        kid, private = self.ec if key == "ec" else self.current_rsa()
        full = {"alg": alg, "kid": kid}
        full.update(header)
        full = {name: value for name, value in full.items() if value is not None}
        signing_input = (b64url(json.dumps(full).encode()) + "." + b64url(json.dumps(claims).encode())).encode()
        if alg == "none":
            signature = b""
        elif alg == "HS256-public" or alg == "HS256":
            # The algorithm-confusion attack: HMAC keyed with the bytes of the RSA public key's PEM.
            full["alg"] = "HS256"
            signing_input = (b64url(json.dumps(full).encode()) + "." + b64url(json.dumps(claims).encode())).encode()
            pem = self.current_rsa()[1].public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            signature = hmac.new(pem, signing_input, hashlib.sha256).digest()
        elif alg == "ES256":
            r, s = decode_dss_signature(self.ec[1].sign(signing_input, ec.ECDSA(hashes.SHA256())))
            signature = integer_bytes(r, 32) + integer_bytes(s, 32)
        else:
            signature = private.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        if tamper and signature:
            signature = bytes([signature[0] ^ 0x01]) + signature[1:]
        return signing_input.decode() + "." + b64url(signature)


class Client(ClientMixin):
    def __init__(self, issuer, data):
        self.issuer = issuer
        self.client_id = data["client_id"]
        self.client_secret = data.get("client_secret")
        self.redirect_uris = data.get("redirect_uris", [])
        self.team_id = data.get("team_id")
        self.key_id = data.get("key_id")
        self.public_key = (serialization.load_pem_public_key(data["public_key_pem"].encode())
                           if data.get("public_key_pem") else None)

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope):
        return scope

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret):
        return self.client_secret is not None and hmac.compare_digest(self.client_secret, client_secret)

    def check_endpoint_auth_method(self, method, endpoint):
        if self.issuer == APPLE:
            return method == "apple_client_secret_jwt"
        if self.issuer == GOOGLE:
            return method == "client_secret_basic"
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type == "authorization_code"


class Code(AuthorizationCodeMixin):
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return self.auth_time

    def get_acr(self):
        return None

    def get_amr(self):
        return None


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.keys = {issuer: IssuerKeys(urlsplit(issuer).hostname.split(".")[0]) for issuer in ISSUERS}
        self.clients = {}
        self.codes = {}
        self.next_user = {issuer: {"sub": "upstream-user-1", "email": "person@example.com", "email_verified": True}
                          for issuer in ISSUERS}
        self.jwks_fetches = {issuer: 0 for issuer in ISSUERS}
        self.token_requests = {issuer: 0 for issuer in ISSUERS}


STATE = State()


def current_issuer():
    host = (request.host or "").split(":")[0].lower()
    for issuer in ISSUERS:
        if urlsplit(issuer).hostname == host:
            return issuer
    return None


def query_client(client_id):
    with STATE.lock:
        return STATE.clients.get((current_issuer(), client_id))


def user_claims(issuer, user):
    claims = {"sub": user["sub"]}
    if user.get("email"):
        claims["email"] = user["email"]
        verified = bool(user.get("email_verified", True))
        if issuer == APPLE:
            # Apple writes its booleans as strings (Apple, "Authenticating users with Sign in with Apple").
            claims["email_verified"] = "true" if verified else "false"
            claims["is_private_email"] = "true" if user.get("private_email") else "false"
        else:
            claims["email_verified"] = verified
    if user.get("name") and issuer != APPLE:
        claims["name"] = user["name"]
    return claims


def authenticate_apple_client(query, oauth_request):
    """Apple's client authentication: client_id and an ES256 JWT client_secret in the body."""
    data = oauth_request.payload.data if hasattr(oauth_request, "payload") else oauth_request.form
    client = query(data.get("client_id"))
    secret = data.get("client_secret")
    if client is None or client.public_key is None or not secret:
        raise InvalidClientError()
    try:
        header_b64, claims_b64, signature_b64 = secret.split(".")
        header = json.loads(b64url_decode(header_b64))
        claims = json.loads(b64url_decode(claims_b64))
        signature = b64url_decode(signature_b64)
        if header.get("alg") != "ES256" or header.get("kid") != client.key_id or len(signature) != 64:
            raise InvalidClientError()
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        client.public_key.verify(der, (header_b64 + "." + claims_b64).encode(), ec.ECDSA(hashes.SHA256()))
    except (ValueError, InvalidSignature, json.JSONDecodeError):
        raise InvalidClientError()
    now = time.time()
    if (claims.get("iss") != client.team_id or claims.get("sub") != client.client_id or claims.get("aud") != APPLE
            or not isinstance(claims.get("exp"), int) or claims["exp"] <= now
            or not isinstance(claims.get("iat"), int) or claims["exp"] - claims["iat"] > 15777000):
        raise InvalidClientError()
    return client


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "apple_client_secret_jwt"]

    def save_authorization_code(self, code, oauth_request):
        data = oauth_request.payload.data
        scope = oauth_request.payload.scope or ""
        if current_issuer() == APPLE and "openid" not in scope.split():
            # Apple answers with an ID token for "name email" alone.
            scope = ("openid " + scope).strip()
        with STATE.lock:
            STATE.codes[code] = Code(
                code=code, client_id=oauth_request.client.get_client_id(), redirect_uri=oauth_request.payload.redirect_uri,
                scope=scope, nonce=data.get("nonce"), auth_time=int(time.time()), user=oauth_request.user,
                code_challenge=data.get("code_challenge"), code_challenge_method=data.get("code_challenge_method"),
                issuer=current_issuer())

    def query_authorization_code(self, code, client):
        with STATE.lock:
            found = STATE.codes.get(code)
        if found and found.client_id == client.get_client_id() and found.issuer == current_issuer():
            return found
        return None

    def delete_authorization_code(self, authorization_code):
        with STATE.lock:
            STATE.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class OpenIDCodeExtension(OpenIDCode):
    def exists_nonce(self, nonce, oauth_request):
        return False

    def resolve_client_private_key(self, client):
        from joserfc.jwk import RSAKey
        kid, key = STATE.keys[client.issuer].current_rsa()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        return RSAKey.import_key(pem, {"kid": kid})

    def get_client_algorithm(self, client):
        return "RS256"

    def get_client_claims(self, client):
        return {"iss": client.issuer, "aud": [client.get_client_id()], "exp": int(time.time()) + 600}

    def get_encode_header(self, client):
        return {"alg": "RS256", "kid": STATE.keys[client.issuer].current_rsa()[0]}

    def generate_user_info(self, user, scope):
        return UserInfo(user_claims(current_issuer(), user))


def make_app():
    app = Flask("upstream_op")
    server = AuthorizationServer(app, query_client=query_client, save_token=lambda token, oauth_request: None)
    server.register_client_auth_method("apple_client_secret_jwt", authenticate_apple_client)
    server.register_grant(CodeGrant, [CodeChallenge(required=True), OpenIDCodeExtension(require_nonce=True)])

    @app.get("/.well-known/openid-configuration")
    def discovery():
        issuer = current_issuer()
        if issuer is None:
            return Response(status=404)
        methods = {APPLE: ["client_secret_post"], GOOGLE: ["client_secret_basic"]}.get(
            issuer, ["client_secret_basic", "client_secret_post"])
        return jsonify({
            "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
            "jwks_uri": issuer + "/keys", "response_types_supported": ["code"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"], "token_endpoint_auth_methods_supported": methods,
            "response_modes_supported": ["query", "form_post"] if issuer == APPLE else ["query"],
            "code_challenge_methods_supported": ["S256"]})

    @app.get("/keys")
    def keys():
        issuer = current_issuer()
        with STATE.lock:
            STATE.jwks_fetches[issuer] += 1
        response = jsonify(STATE.keys[issuer].jwks())
        response.headers["Cache-Control"] = "public, max-age=3600"
        return response

    @app.route("/authorize", methods=["GET", "POST"])
    def authorize():
        issuer = current_issuer()
        with STATE.lock:
            user = dict(STATE.next_user[issuer])
        answer = server.create_authorization_response(grant_user=user)
        location = answer.headers.get("Location")
        mode = request.values.get("response_mode")
        if issuer == APPLE and mode == "form_post" and location and answer.status_code in (302, 303):
            # Apple's form_post (OAuth 2.0 Form Post Response Mode): the answer is a self-submitting form.
            target = urlsplit(location)
            fields = dict(pair.split("=", 1) for pair in target.query.split("&") if "=" in pair)
            from urllib.parse import unquote_plus
            inputs = "".join('<input type="hidden" name="%s" value="%s">' % (name, unquote_plus(value).replace('"', "&quot;"))
                             for name, value in fields.items())
            if user.get("name"):
                first, _, last = user["name"].partition(" ")
                inputs += "<input type=\"hidden\" name=\"user\" value='%s'>" % json.dumps(
                    {"name": {"firstName": first, "lastName": last}, "email": user.get("email")}).replace("'", "&#39;")
            action = location.split("?", 1)[0]
            page = ('<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="%s">%s'
                    '<noscript><button>Continue</button></noscript></form></body></html>') % (action, inputs)
            return Response(page, status=200, mimetype="text/html")
        return answer

    @app.post("/token")
    def token():
        issuer = current_issuer()
        with STATE.lock:
            STATE.token_requests[issuer] += 1
        return server.create_token_response()

    return app


def control_handler():
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/stats":
                with STATE.lock:
                    return self.answer(200, {"jwks_fetches": STATE.jwks_fetches, "token_requests": STATE.token_requests})
            self.answer(404, {})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            issuer = body.get("issuer")
            if issuer not in ISSUERS:
                return self.answer(400, {"error": "issuer must be one of %s" % ", ".join(ISSUERS)})
            if self.path == "/clients":
                with STATE.lock:
                    STATE.clients[(issuer, body["client_id"])] = Client(issuer, body)
                return self.answer(200, {})
            if self.path == "/next-user":
                with STATE.lock:
                    STATE.next_user[issuer] = body
                return self.answer(200, {})
            if self.path == "/mint":
                header = {"kid": body["kid"]} if "kid" in body else {}
                token = STATE.keys[issuer].sign(header, body.get("claims", {}), key=body.get("key", "rsa"),
                                                alg=body.get("alg"), tamper=bool(body.get("tamper")))
                return self.answer(200, {"token": token})
            if self.path == "/rotate":
                return self.answer(200, {"kid": STATE.keys[issuer].rotate()})
            self.answer(404, {})

    return Handler


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certificates(directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "leaf.ext"), "w") as handle:
        handle.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                     % ",".join("DNS:" + host for host in HOSTS))
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=ZevAuth upstream OP CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=directory)
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=" + HOSTS[0], cwd=directory)
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext", cwd=directory)
    return tuple(os.path.join(directory, name) for name in ("ca.pem", "leaf.pem", "leaf.key"))


def free_loopback_address():
    for last in range(11, 61):
        address = "127.0.0.%d" % last
        probe = socket.socket()
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, 443))
            return address
        except OSError:
            continue
        finally:
            probe.close()
    raise SystemExit("no free loopback address has port 443 free")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--ready-file", required=True)
    args = parser.parse_args()

    # A child inherits its parent's blocked signals (the Swift test process blocks some): unblock them.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = os.getppid()
    pids = os.environ.get("ZEVAUTH_TEST_PIDS_FILE")
    if pids:
        with open(pids, "a") as handle:
            handle.write("%d - upstream_op.py\n" % os.getpid())

    ca, certificate, key = make_certificates(os.path.join(args.dir, "ca"))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate, key)
    address = free_loopback_address()
    web = make_server(address, 443, make_app(), threaded=True, ssl_context=context)
    control = http.server.ThreadingHTTPServer(("127.0.0.1", 0), control_handler())
    for served in (web, control):
        threading.Thread(target=served.serve_forever, daemon=True).start()

    ready = {"address": address, "caFile": ca, "control": "http://127.0.0.1:%d" % control.server_address[1],
             "resolve": ";".join("%s:443:%s" % (host, address) for host in HOSTS)}
    with open(args.ready_file + ".tmp", "w") as handle:
        json.dump(ready, handle)
    os.rename(args.ready_file + ".tmp", args.ready_file)
    while not stop.wait(0.5):
        if os.getppid() != parent:
            break
    web.shutdown()
    control.shutdown()


if __name__ == "__main__":
    main()
