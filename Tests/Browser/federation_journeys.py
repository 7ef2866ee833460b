#!/usr/bin/env python3
"""Signing in with Apple in a real browser (docs/federation.md, "Hosted sign-in"): Debian's Chromium against
the demo server, with the Apple-like issuer of Tests/Federation/upstream_op.py as the upstream.

    federation_journeys.py --dev-json DIR/dev.json --op-json FILE --artifacts DIR [--only NAME]

The demo server reaches the provider through its outbound settings (the test command points
ZEVAUTH_OUTBOUND_RESOLVE and ZEVAUTH_OUTBOUND_CA_FILE at it); Chromium reaches it through
--host-resolver-rules, trusting only the provider's own certificate (--ignore-certificate-errors-spki-list
with its key's SHA-256). The journeys configure Apple through the admin API (the services ID, team ID, key
ID and a fresh P-256 `.p8` key, whose public half the provider checks the minted client secret with) and
show it on the demo project's sign-in page:
  - Continue with Apple → Apple's form_post → a new ZevID account → consent → tokens whose ID token's amr
    is ["fed"];
  - an address that has an account: the person must sign in to it and choose Link before anything is linked;
    /account then lists Apple, and Unlink removes it;
  - the provider answers an error: "Signing in with Apple was cancelled.";
  - a callback with a state no flow has: "That sign-in link is not valid. Try again."
Prints "journey NAME: ok" per passing journey; exits 1 when one failed. Nothing here prints a secret.
"""
import base64
import hashlib
import json
import os
import secrets
import time
import urllib.parse
import urllib.request

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from journeys import (
    CHROMEDRIVER,
    CHROMIUM,
    Browser,
    Callback,
    Demo,
    end_journeys,
    id_token_claims,
    journey_arguments,
    run_journeys,
)

APPLE = "https://appleid.apple.com"
SERVICES_ID = "com.zevauth.journeys.signin"
TEAM_ID = "JOURNEY123"
KEY_ID = "JKEY123456"


class FederationBrowser(Browser):
    """A Browser that resolves the provider's hosts to its loopback address and trusts its certificate."""

    def __init__(self, artifacts, op, reach_provider=True):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        # Without `reach_provider` the provider's names do not resolve, so the browser stops at its URL.
        target = op["address"] if reach_provider else "~NOTFOUND"
        rules = ", ".join(f"MAP {host} {target}" for host in ("appleid.apple.com", "accounts.google.com", "op.test"))
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--no-first-run", "--disable-extensions", "--disable-background-networking",
                         "--window-size=1280,900", f"--host-resolver-rules={rules}",
                         f"--ignore-certificate-errors-spki-list={op['spki']}"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(30)
        self.artifacts = artifacts
        self.shots = []

    def requested(self, prefix):
        """The URLs the browser asked for that start with `prefix` since the last call (its network log)."""
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                url = message["params"]["request"]["url"]
                if url.startswith(prefix):
                    urls.append(url)
        return urls

    def wait_for_text(self, sentence, timeout=15):
        """Waits for a page (after the provider's self-submitting form) that says `sentence`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if sentence in self.text():
                    return
            except Exception:
                pass
            time.sleep(0.2)
        raise AssertionError(f"no page said {sentence!r}; the last says {self.text()[:400]!r}")


class FederationDemo(Demo):
    def __init__(self, dev, op):
        super().__init__(dev)
        self.project = dev["projectId"]
        self.op = op

    def admin(self, method, path, body=None):
        return self.call(method, path, body, {"Authorization": f"Bearer {self.operator}", "Content-Type": "application/json"})

    def control(self, path, body):
        request = urllib.request.Request(self.op["control"] + path, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read() or b"{}")

    def configure_apple(self):
        """Apple through the admin API with a fresh key; the provider learns the client and its public key."""
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        fields = {"clientId": SERVICES_ID, "teamId": TEAM_ID, "keyId": KEY_ID, "privateKey": pem}
        status, body = self.admin("GET", "/v1/admin/providers")
        assert status == 200, f"listing providers answered {status}"
        existing = next((p for p in body.get("items", []) if p.get("kind") == "apple"), None)
        if existing:
            status, body = self.admin("PATCH", f"/v1/admin/providers/{existing['id']}", fields)
            assert status == 200, f"updating Apple answered {status}: {body}"
            provider = existing["id"]
        else:
            status, body = self.admin("POST", "/v1/admin/providers", {"kind": "apple", **fields})
            assert status == 201, f"creating Apple answered {status}: {body}"
            provider = body["id"]
        status, body = self.admin("PUT", f"/v1/admin/projects/{self.project}/providers", {"providerIds": [provider]})
        assert status == 200, f"showing Apple on the project answered {status}: {body}"
        self.control("/clients", {"issuer": APPLE, "client_id": SERVICES_ID, "team_id": TEAM_ID, "key_id": KEY_ID,
                                  "public_key_pem": public, "redirect_uris": [self.issuer + "/oauth2/upstream/callback"]})

    def next_apple_user(self, email, name="Grace Hopper"):
        self.control("/next-user", {"issuer": APPLE, "sub": "00" + secrets.token_hex(8), "email": email,
                                    "email_verified": "true", "name": name})


class FederationJourneys:
    def __init__(self, demo, artifacts):
        self.demo = demo
        self.artifacts = artifacts
        self.callback = Callback()
        self.browser = None
        self.configured = False

    def fresh_browser(self, reach_provider=True):
        if self.browser:
            self.browser.quit()
        self.browser = FederationBrowser(self.artifacts, self.demo.op, reach_provider)
        if not self.configured:
            self.demo.configure_apple()
            self.configured = True
        return self.browser

    def finish(self, b, verifier, email, amr):
        """Consent → the app's callback → the exchange's ID token says `amr`."""
        b.wait_for_text("Continue to Demo app?")
        b.expect_text(email)
        b.click("Continue")
        b.expect_text("The app received the sign-in.")
        query = self.callback.received[-1]
        status, body = self.demo.exchange(query["code"][0], verifier, self.callback.uri)
        assert status == 200 and "session" in body, f"the exchange answered {status}"
        claims = id_token_claims(body["session"]["idToken"])
        assert claims.get("amr") == amr, f"amr is {claims.get('amr')}, expected {amr}"
        assert claims.get("email") == email, "the ID token names another address"

    def new_account_with_apple(self):
        b = self.fresh_browser()
        email = f"relay-{secrets.token_hex(5)}@privaterelay.appleid.com"
        self.demo.next_apple_user(email)
        url, verifier = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.expect_text("Sign in with ZevID", "Continue with Apple")
        apple = b.driver.find_element(By.CSS_SELECTOR, "button.upstream-apple")
        assert apple.text.strip() == "Continue with Apple", "Apple's button does not say Continue with Apple"
        assert apple.value_of_css_property("background-color") in ("rgba(0, 0, 0, 1)", "rgb(0, 0, 0)"), "Apple's button is not black"
        logo = apple.find_element(By.TAG_NAME, "img")
        assert b.driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", logo), "no Apple logo"
        email_form = b.driver.find_element(By.CSS_SELECTOR, "form[action='/v1/auth/zevid/signin']")
        assert apple.location["y"] < email_form.location["y"], "Continue with Apple is not above the email form"
        b.expect_reflow()
        b.screenshots("sign-in-with-apple")
        b.expect_clean_console()
        b.click("Continue with Apple")
        self.finish(b, verifier, email, ["fed"])
        b.open(self.demo.issuer + "/account")
        b.expect_text("Your ZevID account", "Grace Hopper", "Linked accounts", "Apple", email, "Unlink Apple")

    def existing_account_links_after_sign_in(self):
        b = self.fresh_browser()
        address, password = self.demo.new_account()
        self.demo.next_apple_user(address, name="Journey Person")
        url, verifier = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.click("Continue with Apple")
        b.wait_for_text("To link your Apple ID, sign in to your ZevID account first.")
        assert b.field("email").get_attribute("value") == address, "the address is not filled in"
        b.screenshots("link-sign-in-first")
        b.field("password").send_keys(password)
        b.click("Sign in")
        if "Not now" in b.text():  # the passkey offer, when the browser could hold one
            b.click("Not now")
        b.expect_text("Link Apple to your ZevID account?")
        b.screenshots("link-confirm")
        b.expect_clean_console()
        b.click("Link")
        self.finish(b, verifier, address, ["pwd"])
        b.open(self.demo.issuer + "/account")
        b.expect_text("Linked accounts", "Unlink Apple", "A sign-in provider was linked")
        b.click("Unlink Apple")
        b.expect_text("The account was unlinked.", "No Apple, Google or other account is linked.")
        b.expect_clean_console()

    def provider_error(self):
        # This browser cannot reach the provider: it stops at the authorization URL, whose state the
        # provider's error answer carries back (as when the person cancels on Apple's page).
        b = self.fresh_browser(reach_provider=False)
        url, _ = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.requested(APPLE)
        b.driver.find_element(By.CSS_SELECTOR, "button.upstream-apple").click()
        deadline = time.monotonic() + 15
        state = None
        while time.monotonic() < deadline and not state:
            for requested in b.requested(APPLE + "/authorize"):
                state = urllib.parse.parse_qs(urllib.parse.urlsplit(requested).query).get("state", [None])[0]
            time.sleep(0.2)
        assert state, "the browser was not sent to Apple"
        b.console_errors()  # the unreachable provider is no fault of the pages
        b.open(self.demo.issuer + "/oauth2/upstream/callback?" + urllib.parse.urlencode({"error": "user_cancelled_authorize", "state": state}))
        b.expect_text("Signing in with Apple was cancelled.", "Try again")
        b.screenshots("apple-cancelled")
        b.expect_clean_console(allowed_statuses=(400,))
        b.click("Try again")
        b.expect_text("Sign in with ZevID", "Continue with Apple")

    def bad_state(self):
        b = self.fresh_browser()
        b.open(self.demo.issuer + "/oauth2/upstream/callback?code=anything&state=" + secrets.token_urlsafe(32))
        b.expect_text("That sign-in link is not valid. Try again.")
        b.expect_clean_console(allowed_statuses=(400,))


def leaf_spki(ca_file):
    """The base64 SHA-256 of the provider's certificate's public key (beside its CA, as upstream_op.py makes it)."""
    with open(os.path.join(os.path.dirname(ca_file), "leaf.pem"), "rb") as f:
        certificate = x509.load_pem_x509_certificate(f.read())
    spki = certificate.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def main():
    args, dev = journey_arguments(("--op-json", {"required": True}))
    with open(args.op_json) as f:
        op = json.load(f)
    op["spki"] = leaf_spki(op["caFile"])
    journeys = FederationJourneys(FederationDemo(dev, op), args.artifacts)
    order = [
        ("continue with Apple makes an account, amr fed", journeys.new_account_with_apple),
        ("an existing address links only after signing in, then unlink", journeys.existing_account_links_after_sign_in),
        ("the provider answers an error", journeys.provider_error),
        ("a callback with a bad state", journeys.bad_state),
    ]
    failed = run_journeys(order, args.only, journeys, args.artifacts,
                          lambda name: f"FAILED-federation-{name.replace(' ', '-').replace(',', '')}.png")
    end_journeys(journeys, failed)


if __name__ == "__main__":
    main()
