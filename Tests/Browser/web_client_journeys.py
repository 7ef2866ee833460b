#!/usr/bin/env python3
"""A website signing people in through the authorization endpoint, in a real browser (docs/protocol.md, "Web
clients", "Form post" and "The authorization endpoint by POST"): Debian's Chromium against the demo server.

    web_client_journeys.py --dev-json DIR/dev.json --artifacts DIR [--only NAME]

The journeys register their own web client (client_secret_post, a loopback redirect URI served here) with the
development secret key, then:
  - form_post: /oauth2/authorize with response_mode=form_post → sign-in → consent naming the website → the
    server's page posts code, state and iss to the website by its own same-origin script (no console error,
    no CSP violation) → the code and the client's secret at /oauth2/token give an ID token for the website
    with the nonce sent;
  - POST: the website's page submits the authorization request as a form POST (from another site the
    SameSite=Lax session cookie does not come along, so the person signs in again); consent was remembered,
    so no consent page: back with a code, which the token endpoint takes;
  - prompt=none, by form_post, with the remembered consent: the code comes back silently.
The client is deleted at the end. Prints "journey NAME: ok" per passing journey; exits 1 when one failed.
Nothing here prints a secret, code or token.
"""
import base64
import hashlib
import html
import http.server
import json
import secrets
import threading
import urllib.parse
import urllib.request

from selenium.webdriver.support.ui import WebDriverWait

from journeys import Browser, Demo, end_journeys, id_token_claims, journey_arguments, run_journeys


class Website:
    """A loopback HTTP server that plays the website: it serves a page that POSTs an authorization request,
    and records what comes back to /callback, by GET (query) or POST (form_post)."""

    def __init__(self):
        received = self.received = []
        pages = self.pages = {}

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self, status, body):
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def received_page(self, method, fields):
                received.append((method, fields))
                self.answer(200, b"<!doctype html><html lang=en><title>Website</title><p>The website received the sign-in.</p></html>")

            def do_GET(self):
                target = urllib.parse.urlsplit(self.path)
                if target.path == "/callback":
                    self.received_page("GET", urllib.parse.parse_qs(target.query))
                elif target.path in pages:
                    self.answer(200, pages[target.path])
                else:  # the browser also asks for /favicon.ico
                    self.send_error(404)

            def do_POST(self):
                target = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                if target.path != "/callback":
                    self.send_error(404)
                    return
                self.received_page("POST", urllib.parse.parse_qs(body))

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.callback = self.origin + "/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def post_page(self, action, fields):
        """Serves a page whose form POSTs `fields` to `action` when the button is pressed; returns its URL."""
        inputs = "".join(
            f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">' for name, value in fields.items())
        path = f"/start-{secrets.token_hex(4)}"
        self.pages[path] = (
            '<!doctype html><html lang=en><title>Website</title>'
            f'<form method="post" action="{html.escape(action)}">{inputs}<button type="submit" id="go">Sign in</button></form></html>'
        ).encode()
        return self.origin + path

    def close(self):
        self.server.shutdown()


class WebClientJourneys:
    def __init__(self, demo, dev, artifacts):
        self.demo = demo
        self.secret_key = dev["development"]["secretKey"]
        self.artifacts = artifacts
        self.browser = None
        self.callback = self.website = Website()
        self.account = demo.new_account()
        status, body = self.admin("POST", "/v1/admin/clients", {
            "name": "Journey Website", "redirectUris": [self.website.callback],
            "tokenEndpointAuthMethod": "client_secret_post"})
        assert status == 201, f"registering the journeys' web client answered {status}"
        self.client_id = body["clientId"]
        self.client_secret = body["clientSecret"]

    def admin(self, method, path, body=None):
        return self.demo.call(method, path, body, {"Authorization": f"Bearer {self.secret_key}", "Content-Type": "application/json"})

    def authorization(self, **extra):
        """The parameters of an OpenID authorization request for the journeys' client, with S256 PKCE and a
        nonce; returns them with the verifier."""
        verifier = secrets.token_urlsafe(32)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        fields = {"response_type": "code", "client_id": self.client_id, "redirect_uri": self.website.callback,
                  "scope": "openid email", "state": "website state", "nonce": secrets.token_urlsafe(12),
                  "code_challenge": challenge, "code_challenge_method": "S256"}
        fields.update(extra)
        return fields, verifier

    def token(self, code, verifier):
        """The code at /oauth2/token with client_secret_post: (status, body)."""
        form = urllib.parse.urlencode({
            "grant_type": "authorization_code", "code": code, "redirect_uri": self.website.callback,
            "code_verifier": verifier, "client_id": self.client_id, "client_secret": self.client_secret}).encode()
        request = urllib.request.Request(self.demo.issuer + "/oauth2/token", data=form, method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def expect_code(self, method, fields, verifier):
        """The website's last callback came by `method` with a code, the state and iss, and the token endpoint
        takes the code for an ID token of this client with the request's nonce."""
        got_method, query = self.website.received[-1]
        assert got_method == method, f"the website was reached by {got_method}, not {method}"
        assert query.get("state") == ["website state"], "the state did not come back unchanged"
        assert query.get("iss") == [self.demo.issuer], "no iss in the answer"
        status, body = self.token(query["code"][0], verifier)
        assert status == 200 and "id_token" in body, f"the token endpoint answered {status} {body.get('error')}"
        claims = id_token_claims(body["id_token"])
        assert claims["aud"] == self.client_id, "the ID token is not for the website"
        assert claims["nonce"] == fields["nonce"], "the ID token's nonce is not the one sent"

    def wait_for_website(self, b, count):
        WebDriverWait(b.driver, 15).until(lambda _: len(self.website.received) >= count)
        b.expect_text("The website received the sign-in.")

    def form_post(self):
        b = self.browser = Browser(self.artifacts)
        fields, verifier = self.authorization(response_mode="form_post")
        b.open(self.demo.issuer + "/oauth2/authorize?" + urllib.parse.urlencode(fields, quote_via=urllib.parse.quote))
        b.expect_text("Sign in with ZevID")
        b.field("email").send_keys(self.account[0])
        b.field("password").send_keys(self.account[1])
        b.click("Sign in")
        b.expect_text("Continue to Journey Website?", "will be able to sign you in as", self.account[0])
        b.expect_clean_console()
        before = len(self.website.received)
        b.click("Continue")
        self.wait_for_website(b, before + 1)
        self.expect_code("POST", fields, verifier)
        # The form_post page submitted itself by its script, under the strict CSP: nothing in the console.
        b.expect_clean_console()

    def post_request(self):
        b = self.browser
        fields, verifier = self.authorization()
        before = len(self.website.received)
        b.open(self.website.post_page(self.demo.issuer + "/oauth2/authorize", fields))
        b.click("Sign in")
        # A POST from another site carries no SameSite=Lax cookie, so the ZevID session is not seen there and
        # the person signs in again (the test command's issuer is `localhost`, the website `127.0.0.1`); from
        # the same site it is. Either way consent is remembered for this website and scope: no consent page.
        if "Sign in with ZevID" in b.text():
            b.field("email").send_keys(self.account[0])
            b.field("password").send_keys(self.account[1])
            b.click("Sign in")
        self.wait_for_website(b, before + 1)
        self.expect_code("GET", fields, verifier)

    def silent_form_post(self):
        b = self.browser
        fields, verifier = self.authorization(response_mode="form_post", prompt="none")
        before = len(self.website.received)
        b.open(self.demo.issuer + "/oauth2/authorize?" + urllib.parse.urlencode(fields, quote_via=urllib.parse.quote))
        self.wait_for_website(b, before + 1)
        self.expect_code("POST", fields, verifier)
        b.screenshots("web-client-silent")

    def close(self):
        status, _ = self.admin("DELETE", f"/v1/admin/clients/{self.client_id}")
        assert status in (200, 204), f"deleting the journeys' web client answered {status}"


def main():
    args, dev = journey_arguments()
    journeys = WebClientJourneys(Demo(dev), dev, args.artifacts)
    order = [
        ("web client: form_post", journeys.form_post),
        ("web client: the authorization request by POST", journeys.post_request),
        ("web client: silent prompt=none by form_post", journeys.silent_form_post),
    ]
    failed = run_journeys(order, args.only, journeys, args.artifacts, lambda name: f"FAILED-{name.replace(' ', '-').replace(':', '')}.png")
    journeys.close()
    end_journeys(journeys, failed)


if __name__ == "__main__":
    main()
