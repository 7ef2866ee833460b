#!/usr/bin/env python3
"""A sign-in against a running ZevAuth server with nothing but Python's standard library.

It plays both halves of a native app's sign-in: the system browser (start, the hosted sign-in form with
its CSRF token, consent, catching the redirect to the loopback callback without following it) and the
app (the exchange with the code verifier, then GET /v1/auth/session). It never prints a token, code,
verifier or password.

    python3 docs/examples/outside-client.py --dev-json .zevauth/dev.json
"""
import argparse
import base64
import hashlib
import html.parser
import http.client
import json
import secrets
import sys
import urllib.parse


class Browser:
    """One HTTP connection per request, a cookie jar, and no redirect following."""

    def __init__(self, base):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port = parts.hostname, parts.port or 80
        self.cookies = {}

    def request(self, method, target, body=None, headers=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        all_headers = dict(headers or {})
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, target, body=body, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        connection.close()
        return response.status, response.headers, data


class HiddenFields(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "input" and attributes.get("type") == "hidden":
            self.fields[attributes["name"]] = attributes.get("value", "")


def hidden_fields(page):
    parser = HiddenFields()
    parser.feed(page.decode())
    return parser.fields


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev-json", default=".zevauth/dev.json")
    parser.add_argument("--redirect-uri", default="http://127.0.0.1:54321/callback")
    args = parser.parse_args()
    with open(args.dev_json) as f:
        dev = json.load(f)
    issuer, key = dev["issuer"], dev["development"]["publishableKey"]

    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = "outside client: a b&c=d+e%f#g ✓"
    browser = Browser(issuer)
    query = urllib.parse.urlencode({
        "client_id": key, "redirect_uri": args.redirect_uri, "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256",
    }, quote_via=urllib.parse.quote)
    status, headers, _ = browser.request("GET", "/v1/auth/zevid/start?" + query)
    assert status == 303, f"start answered {status}"
    next_page = headers["Location"]
    if next_page.startswith("/v1/auth/zevid/signin"):
        status, _, page = browser.request("GET", next_page)
        assert status == 200, f"sign-in page answered {status}"
        form = hidden_fields(page)
        form.update(email=dev["user"]["email"], password=dev["user"]["password"])
        status, headers, _ = browser.request("POST", "/v1/auth/zevid/signin", urllib.parse.urlencode(form),
                                             {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 303, f"sign-in answered {status}"
        next_page = headers["Location"]
    status, _, page = browser.request("GET", next_page)
    assert status == 200, f"consent page answered {status}"
    form = hidden_fields(page)
    form["decision"] = "allow"
    status, headers, _ = browser.request("POST", "/v1/auth/zevid/consent", urllib.parse.urlencode(form),
                                         {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303, f"consent answered {status}"
    location = headers["Location"]
    assert location.startswith(args.redirect_uri + "?"), "redirected somewhere else"
    returned = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    assert returned["state"] == state, "state did not come back unchanged"
    assert returned["iss"] == issuer, "iss is missing or wrong"

    status, _, body = browser.request("POST", "/v1/auth/handoff/exchange", json.dumps({
        "code": returned["code"], "codeVerifier": verifier, "redirectUri": args.redirect_uri,
    }), {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    assert status == 200, f"exchange answered {status}: {body[:200]!r}"
    session = json.loads(body)
    status, _, body = browser.request("GET", "/v1/auth/session",
                                      headers={"Authorization": "Bearer " + session["session"]["accessToken"]})
    assert status == 200, f"session answered {status}"
    print(f"signed in as {json.loads(body)['user']['email']}; session expires {session['session']['expiresAt']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
