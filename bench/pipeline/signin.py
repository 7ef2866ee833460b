#!/usr/bin/env python3
"""Full password sign-ins over HTTP, each in a new browser (docs/performance.md, "Pipeline benchmark").

One sign-in: GET /v1/auth/zevid/start → GET the sign-in page → POST the password (Argon2id) → GET the consent
page → POST allow → the 303 back to the app with a code → POST /v1/auth/handoff/exchange. `--concurrent N`
runs N sign-ins at once, the i-th with account `signin<i>@example.com` (password from --password).
Prints `RESULT signins=N failures=F seconds=S`; exits non-zero when one failed.

  python3 signin.py --port P --verifier V --challenge C --password PW --concurrent 8 [--first 1]
"""
import argparse
import http.client
import json
import re
import sys
import threading
import time
import urllib.parse


class Browser:
    def __init__(self, port):
        self.port = port
        self.cookies = {}

    def send(self, method, target, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                cookie_value = rest.split(";", 1)[0]
                if re.search(r"(?i);\s*max-age=0\b", value):
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = cookie_value
        connection.close()
        return response.status, response.getheader("Location"), text

    def form(self, target, fields):
        return self.send(
            "POST", target, urllib.parse.urlencode(fields), {"Content-Type": "application/x-www-form-urlencoded"}
        )


def hidden(name, page):
    match = re.search(rf'name="{name}" value="([^"]*)"', page)
    if not match:
        raise RuntimeError(f"no hidden field {name} on the page")
    return match.group(1)


def sign_in(port, email, password, verifier, challenge, state):
    browser = Browser(port)
    query = urllib.parse.urlencode(
        {
            "client_id": "pk_test_bench",
            "redirect_uri": "http://127.0.0.1:5000/cb",
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
    )
    status, location, _ = browser.send("GET", f"/v1/auth/zevid/start?{query}")
    if status != 303 or not location.startswith("/v1/auth/zevid/signin"):
        raise RuntimeError(f"start answered {status}")
    status, _, page = browser.send("GET", location)
    if status != 200:
        raise RuntimeError(f"sign-in page answered {status}")
    fields = {"request": hidden("request", page), "csrf": hidden("csrf", page), "email": email, "password": password}
    status, location, _ = browser.form("/v1/auth/zevid/signin", fields)
    if status != 303 or not location.startswith("/v1/auth/zevid/consent"):
        raise RuntimeError(f"password post answered {status}")
    status, _, page = browser.send("GET", location)
    if status != 200:
        raise RuntimeError(f"consent page answered {status}")
    fields = {"request": hidden("request", page), "csrf": hidden("csrf", page), "decision": "allow"}
    status, location, _ = browser.form("/v1/auth/zevid/consent", fields)
    if status != 303 or not location or "code=" not in location:
        raise RuntimeError(f"consent post answered {status}")
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["code"][0]
    body = json.dumps({"code": code, "codeVerifier": verifier, "redirectUri": "http://127.0.0.1:5000/cb"})
    status, _, _ = browser.send(
        "POST",
        "/v1/auth/handoff/exchange",
        body,
        {"Authorization": "Bearer pk_test_bench", "Content-Type": "application/json"},
    )
    if status != 200:
        raise RuntimeError(f"exchange answered {status}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--verifier", required=True)
    parser.add_argument("--challenge", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--concurrent", type=int, default=1)
    parser.add_argument("--first", type=int, default=1)
    args = parser.parse_args()
    failures = []

    def one(i):
        try:
            sign_in(args.port, f"signin{i}@example.com", args.password, args.verifier, args.challenge, f"s{i}")
        except Exception as error:  # reported below, never raised out of the thread
            failures.append(f"sign-in {i}: {error}")

    began = time.monotonic()
    threads = [threading.Thread(target=one, args=(args.first + k,)) for k in range(args.concurrent)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"RESULT signins={args.concurrent} failures={len(failures)} seconds={time.monotonic() - began:.2f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
