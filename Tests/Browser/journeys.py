#!/usr/bin/env python3
"""A person's journeys through the hosted pages in a real browser: Debian's Chromium, headless, driven by
Selenium through Debian's chromedriver (never a downloaded browser or driver), against a running demo
server (`zevauth dev`).

    journeys.py --dev-json DIR/dev.json --artifacts DIR [--mail-dir DIR] [--only NAME]

Each journey checks what the person sees (text), the focus order (Tab through the form), that the focus
is visible, that the page reflows at 320 px, and that the browser logged no console error and no CSP
violation; it saves screenshots at 390 px and 1280 px wide under --artifacts. Prints one line per
journey, "journey NAME: ok" or "journey NAME: FAILED …", and exits 1 when any failed.

Later journeys that need an emailed code read it with `latest_code(mail_dir, address)`: the test command
runs Tests/Mail/smtp_sink.py, which writes each message to MAIL_DIR/NNNNNN.eml, and passes
ZEVAUTH_SMTP_URL to the demo server. Nothing here prints a password, code, secret or token.
"""
import argparse
import base64
import email
import email.policy
import glob
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import secrets
import struct
import sys
import threading
import time
import traceback
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WIDTHS = (390, 1280)


# MARK: Mail


def latest_code(mail_dir, to_address):
    """The 6-digit code of the newest message in MAIL_DIR whose envelope goes to `to_address`, or None.

    Messages are MAIL_DIR/NNNNNN.eml as Tests/Mail/smtp_sink.py writes them, the first line
    `X-Envelope-To: …`; the code is the first run of exactly six digits in the text body."""
    for path in sorted(glob.glob(os.path.join(mail_dir, "*.eml")), reverse=True):
        with open(path, "rb") as f:
            raw = f.read()
        first, _, rest = raw.partition(b"\r\n")
        recipients = first.decode(errors="replace").partition(":")[2].lower()
        if to_address.lower() not in [r.strip() for r in recipients.split(",")]:
            continue
        message = email.message_from_bytes(rest, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain", "html"))
        text = body.get_content() if body is not None else ""
        found = re.search(r"(?<!\d)(\d{6})(?!\d)", text)
        return found.group(1) if found else None
    return None


def wait_for_code(mail_dir, to_address, timeout=15):
    """`latest_code`, waiting up to `timeout` seconds for the message to arrive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = latest_code(mail_dir, to_address)
        if code:
            return code
        time.sleep(0.2)
    raise AssertionError(f"no code arrived for the journey's address within {timeout} s")


# MARK: TOTP (RFC 6238, SHA-1, 6 digits, 30 s)


def totp(secret_base32, step):
    key = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    number = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return "%06d" % (number % 1_000_000)


def current_step():
    return int(time.time()) // 30


# MARK: The app's side: a loopback callback and the exchange


class Callback:
    """A loopback HTTP server that plays the app's redirect URI: it records the query it was sent."""

    def __init__(self):
        received = self.received = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                target = urllib.parse.urlsplit(self.path)
                if target.path != "/callback":  # the browser also asks for /favicon.ico
                    self.send_error(404)
                    return
                received.append(urllib.parse.parse_qs(target.query))
                body = b"<!doctype html><html lang=en><title>App</title><p>The app received the sign-in.</p></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.uri = f"http://127.0.0.1:{self.port}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


class Demo:
    """The demo server of dev.json: start URLs with PKCE, the exchange, the operator API."""

    def __init__(self, dev):
        self.issuer = dev["issuer"]
        self.key = dev["development"]["publishableKey"]
        self.operator = dev["operatorToken"]
        parts = urllib.parse.urlsplit(self.issuer)
        self.host, self.port = parts.hostname, parts.port or 80

    def start_url(self, redirect_uri, pkce=True, client_id=None):
        """A start URL as an app opens it (docs/examples/outside-client.py): S256 PKCE, a state."""
        verifier = secrets.token_urlsafe(32)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {"client_id": client_id or self.key, "redirect_uri": redirect_uri, "state": "journey state"}
        if pkce:
            query.update({"code_challenge": challenge, "code_challenge_method": "S256"})
        return self.issuer + "/v1/auth/zevid/start?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote), verifier

    def openid_start_url(self, redirect_uri):
        """An OpenID start URL (scope "openid email", a nonce, S256 PKCE, a state), so the exchange also answers
        an ID token; returns it with the PKCE verifier."""
        verifier = secrets.token_urlsafe(32)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {"client_id": self.key, "redirect_uri": redirect_uri, "state": "journey state", "scope": "openid email",
                 "nonce": secrets.token_urlsafe(16), "code_challenge": challenge, "code_challenge_method": "S256"}
        return self.issuer + "/v1/auth/zevid/start?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote), verifier

    def call(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, json.loads(data) if data else {}

    def exchange(self, code, verifier, redirect_uri):
        return self.call(
            "POST", "/v1/auth/handoff/exchange", {"code": code, "codeVerifier": verifier, "redirectUri": redirect_uri},
            {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"})

    def new_account(self):
        """A fresh account through the operator API, so the journeys change no other client's account."""
        address = f"journey-{secrets.token_hex(6)}@example.com"
        password = secrets.token_urlsafe(18)
        status, body = self.call(
            "POST", "/v1/admin/users", {"email": address, "password": password, "name": "Journey Person"},
            {"Authorization": f"Bearer {self.operator}", "Content-Type": "application/json"})
        assert status == 201, f"creating the journey's account answered {status}"
        return address, password


# MARK: The browser


class Browser:
    """One headless Chromium, its console log, and the checks every page gets."""

    def __init__(self, artifacts):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                         "--no-first-run", "--disable-extensions", "--disable-background-networking",
                         "--window-size=1280,900"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(30)
        self.artifacts = artifacts
        self.shots = []

    def quit(self):
        self.driver.quit()

    def open(self, url):
        self.driver.get(url)

    def text(self):
        return self.driver.find_element(By.TAG_NAME, "body").text

    def expect_text(self, *sentences):
        shown = self.text()
        for sentence in sentences:
            assert sentence in shown, f"the page does not say {sentence!r}; it says {shown[:400]!r}"

    def console_errors(self, allowed_statuses=()):
        """The console's errors since the last call (CSP violations are among them), less a failed load of
        the current page whose status the journey expects (Chromium logs a 4xx document as an error)."""
        problems = []
        for entry in self.driver.get_log("browser"):
            if entry.get("level") != "SEVERE":
                continue
            message = entry.get("message", "")
            if "favicon.ico" in message:
                continue  # the server has no icon; Chromium asks for one anyway
            if any(f"status of {status}" in message for status in allowed_statuses):
                continue
            problems.append(message)
        return problems

    def expect_clean_console(self, allowed_statuses=()):
        problems = self.console_errors(allowed_statuses)
        assert not problems, f"console errors: {problems}"

    def emulate(self, width, height=900):
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})

    def expect_reflow(self):
        """No horizontal scrolling at 320 CSS pixels (WCAG 2.2 SC 1.4.10)."""
        self.emulate(320)
        overflow = self.driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        assert overflow <= 0, f"the page scrolls sideways by {overflow} px at 320 px"

    def screenshots(self, name):
        """Saves the page at 390 px and 1280 px wide: ARTIFACTS/NAME-390.png, NAME-1280.png."""
        for width in WIDTHS:
            self.emulate(width)
            height = self.driver.execute_script("return Math.max(document.documentElement.scrollHeight, 600)")
            self.emulate(width, min(height, 4000))
            path = os.path.join(self.artifacts, f"{name}-{width}.png")
            self.driver.save_screenshot(path)
            self.shots.append(path)
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def focused(self):
        element = self.driver.switch_to.active_element
        return element

    def describe(self, element):
        if element.tag_name in ("button", "a", "summary"):
            return element.text.strip()
        return element.get_attribute("id") or element.get_attribute("name") or element.tag_name

    def expect_tab_order(self, expected):
        """Tabs from the top of the page and checks the focused elements' ids or texts, in order, and that
        each one shows a focus ring of at least 2 px (WCAG 2.2 SC 2.4.7, 2.4.11)."""
        self.driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
        body = self.driver.find_element(By.TAG_NAME, "body")
        self.driver.execute_script("document.body.setAttribute('tabindex', '-1'); document.body.focus()")
        seen = []
        for _ in expected:
            self.driver.switch_to.active_element.send_keys(Keys.TAB)
            element = self.focused()
            seen.append(self.describe(element))
            outline = self.driver.execute_script(
                "const s = getComputedStyle(arguments[0]); return [s.outlineStyle, parseFloat(s.outlineWidth)]", element)
            assert outline[0] != "none" and outline[1] >= 2, f"no visible focus on {seen[-1]!r}: {outline}"
        self.driver.execute_script("document.body.removeAttribute('tabindex')")
        del body
        assert seen == list(expected), f"focus order {seen}, expected {list(expected)}"

    def field(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    @staticmethod
    def replaced(old):
        """Whether the document `old` belonged to has gone. Chromium answers a node of a replaced document
        either as stale or as "does not belong to the document", depending on how far the swap has got."""
        try:
            old.is_enabled()
            return False
        except WebDriverException:
            return True

    def click(self, text):
        """Clicks the button or link that says `text` and waits for the next page to load."""
        target = old = None
        for _ in range(3):  # a document still being replaced answers with stale nodes: look again
            try:
                old = self.driver.find_element(By.TAG_NAME, "html")
                target = next((element for element in self.driver.find_elements(By.CSS_SELECTOR, "button, a")
                               if element.text.strip() == text), None)
                break
            except WebDriverException:
                time.sleep(0.3)
        if target is None:
            raise AssertionError(f"no button or link says {text!r}")
        target.click()
        WebDriverWait(self.driver, 15).until(lambda driver: self.replaced(old))
        WebDriverWait(self.driver, 15).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete")


# MARK: Journeys


class Journeys:
    def __init__(self, demo, artifacts, mail_dir):
        self.demo = demo
        self.artifacts = artifacts
        self.mail_dir = mail_dir
        self.callback = Callback()
        self.account = None  # (address, password) of the journeys' own account
        self.secret = None  # its TOTP secret once enrolled
        self.recovery_codes = []
        self.enrolled_step = None
        self.browser = None

    def fresh_browser(self):
        if self.browser:
            self.browser.quit()
        self.browser = Browser(self.artifacts)
        return self.browser

    def sign_in(self, b):
        """Start → the sign-in page, typed as a person types it. Returns the code verifier."""
        url, verifier = self.demo.start_url(self.callback.uri)
        b.open(url)
        b.expect_text("Sign in with ZevID", "to continue to Demo app", "No ZevID account?")
        b.field("email").send_keys(self.account[0])
        b.field("password").send_keys(self.account[1])
        b.click("Sign in")
        return verifier

    def sign_in_and_consent(self):
        b = self.fresh_browser()
        self.account = self.demo.new_account()
        url, verifier = self.demo.start_url(self.callback.uri)
        b.open(url)
        b.expect_text("Sign in with ZevID", "to continue to Demo app")
        # Chromium has WebAuthn, so the passkey script shows its button (docs/passkeys.md).
        b.expect_tab_order(["email", "password", "Sign in", "Sign in with a passkey", "Forgot password?", "Create one"])
        b.expect_reflow()
        b.screenshots("sign-in")
        b.expect_clean_console()
        # A wrong password: the message, and both fields marked and tied to it.
        b.field("email").send_keys(self.account[0])
        b.field("password").send_keys("not the password")
        b.click("Sign in")
        b.expect_text("The email or password is incorrect.")
        for name in ("email", "password"):
            element = b.field(name)
            assert element.get_attribute("aria-invalid") == "true", f"{name} not marked invalid"
            assert "form-error" in element.get_attribute("aria-describedby"), f"{name} not tied to the error"
        b.screenshots("sign-in-error")
        b.expect_clean_console(allowed_statuses=(401,))
        b.field("password").send_keys(self.account[1])
        b.click("Sign in")
        b.expect_text("Continue to Demo app?", "will be able to sign you in as", self.account[0])
        b.expect_tab_order(["Continue", "Cancel"])
        b.expect_reflow()
        b.screenshots("consent")
        b.expect_clean_console()
        b.click("Continue")
        b.expect_text("The app received the sign-in.")
        query = self.callback.received[-1]
        assert query.get("state") == ["journey state"], "the state did not come back unchanged"
        assert query.get("iss") == [self.demo.issuer], "no iss in the redirect"
        status, body = self.demo.exchange(query["code"][0], verifier, self.callback.uri)
        assert status == 200 and "session" in body, f"the exchange answered {status}"

    def need_mail(self):
        assert self.mail_dir, "the email journeys need --mail-dir (the folder Tests/Mail/smtp_sink.py writes to)"

    def expect_consent_then_callback(self, b, verifier, address):
        """Consent names the account; Continue reaches the app's callback with a code the exchange takes."""
        b.expect_text("Continue to Demo app?", "will be able to sign you in as", address)
        b.click("Continue")
        b.expect_text("The app received the sign-in.")
        query = self.callback.received[-1]
        assert query.get("state") == ["journey state"], "the state did not come back unchanged"
        status, body = self.demo.exchange(query["code"][0], verifier, self.callback.uri)
        assert status == 200 and "session" in body, f"the exchange answered {status}"

    def sign_up_with_code(self):
        """A pending app sign-in → "Create one" → name, email, password → the emailed code → consent, with no
        second password → the app's callback (docs/protocol.md, "Sign-up")."""
        self.need_mail()
        b = self.fresh_browser()
        address = f"journey-signup-{secrets.token_hex(6)}@example.com"
        password = secrets.token_urlsafe(18)
        url, verifier = self.demo.start_url(self.callback.uri)
        b.open(url)
        b.click("Create one")
        b.expect_text("Create your ZevID account", "At least 10 characters.")
        b.expect_tab_order(["name", "email", "password", "Create account"])
        b.expect_reflow()
        b.screenshots("sign-up")
        b.expect_clean_console()
        b.field("name").send_keys("Journey Newcomer")
        b.field("email").send_keys(address)
        b.field("password").send_keys(password)
        b.click("Create account")
        b.expect_text("Check your email", "we sent a 6-digit code", "valid for 10 minutes")
        b.expect_tab_order(["code", "Continue", "Send a new code"])
        b.expect_reflow()
        b.screenshots("sign-up-code")
        b.expect_clean_console()
        b.field("code").send_keys(wait_for_code(self.mail_dir, address))
        b.click("Continue")
        shown = b.text()
        assert "Password" not in shown, "the sign-up asks for the password a second time"
        b.expect_tab_order(["Continue", "Cancel"])
        b.screenshots("sign-up-consent")
        b.expect_clean_console()
        self.expect_consent_then_callback(b, verifier, address)
        b.screenshots("sign-up-callback")

    def wrong_code_tries_left(self):
        """A wrong emailed code says how many tries are left, marks the input and ties it to the message."""
        self.need_mail()
        b = self.fresh_browser()
        address = f"journey-tries-{secrets.token_hex(6)}@example.com"
        b.open(self.demo.issuer + "/account/signup")
        b.field("name").send_keys("Journey Typo")
        b.field("email").send_keys(address)
        b.field("password").send_keys(secrets.token_urlsafe(18))
        b.click("Create account")
        code = wait_for_code(self.mail_dir, address)
        wrong = "000000" if code != "000000" else "111111"
        for left in ("4 tries", "3 tries"):
            b.field("code").send_keys(wrong)
            b.click("Continue")
            b.expect_text(f"That code is not right. You have {left} left.")
            element = b.field("code")
            assert element.get_attribute("aria-invalid") == "true", "the code is not marked invalid"
            assert "form-error" in element.get_attribute("aria-describedby"), "the code is not tied to the message"
            b.expect_clean_console(allowed_statuses=(400,))
        b.expect_tab_order(["code", "Continue", "Send a new code"])
        b.expect_reflow()
        b.screenshots("code-wrong")
        b.expect_clean_console(allowed_statuses=(400,))

    def password_reset(self):
        """"Forgot password?" from a pending sign-in → the email → the code → a new password → signed in and
        on to consent; then the old password no longer works and the new one does."""
        self.need_mail()
        b = self.fresh_browser()
        address, old_password = self.demo.new_account()
        new_password = secrets.token_urlsafe(18)
        url, verifier = self.demo.start_url(self.callback.uri)
        b.open(url)
        b.click("Forgot password?")
        b.expect_text("Reset your password", "Enter the email address of your ZevID account.")
        b.expect_tab_order(["email", "Send a code", "Back to sign-in"])
        b.expect_reflow()
        b.screenshots("reset-email")
        b.expect_clean_console()
        b.field("email").send_keys(address)
        b.click("Send a code")
        b.expect_text("Check your email", "we sent a 6-digit code")
        b.screenshots("reset-code")
        b.expect_clean_console()
        b.field("code").send_keys(wait_for_code(self.mail_dir, address))
        b.click("Continue")
        b.expect_text("Choose a new password", "At least 10 characters.", "will be signed out")
        b.expect_tab_order(["new_password", "Save the new password"])
        b.expect_reflow()
        b.screenshots("reset-new-password")
        b.expect_clean_console()
        b.field("new_password").send_keys(new_password)
        b.click("Save the new password")
        b.screenshots("reset-signed-in")
        self.expect_consent_then_callback(b, verifier, address)
        b.expect_clean_console()
        # The old password no longer works; the new one does.
        b = self.fresh_browser()
        url, verifier = self.demo.start_url(self.callback.uri)
        b.open(url)
        b.field("email").send_keys(address)
        b.field("password").send_keys(old_password)
        b.click("Sign in")
        b.expect_text("The email or password is incorrect.")
        b.screenshots("reset-old-password-refused")
        b.expect_clean_console(allowed_statuses=(401,))
        b.field("password").send_keys(new_password)
        b.click("Sign in")
        self.expect_consent_then_callback(b, verifier, address)
        b.expect_clean_console()

    def account_pages(self):
        b = self.browser
        b.open(self.demo.issuer + "/account")
        b.expect_text("Your ZevID account", "Journey Person", self.account[0], "Connected apps", "Demo app",
                      "Two-step verification is off.", "Change password", "Close your account")
        b.expect_reflow()
        b.screenshots("account")
        b.expect_clean_console()

    def mfa_enrolment(self):
        b = self.browser
        b.click("Set up two-step verification")
        b.expect_text("Set up two-step verification", "Scan this QR code with your authenticator app.",
                      "Open your authenticator app", "Time-based, 6 digits, every 30 seconds.")
        key = b.driver.find_element(By.CSS_SELECTOR, "code.secret").text
        assert re.fullmatch(r"[A-Z2-7]{4}( [A-Z2-7]{4})*", key), "the key is not shown in groups of four"
        self.secret = key.replace(" ", "")
        link = b.driver.find_element(By.PARTIAL_LINK_TEXT, "Open your authenticator app").get_attribute("href")
        assert link.startswith("otpauth://totp/") and f"secret={self.secret}" in link, "the otpauth link is not the key's"
        # The QR code decodes, as an authenticator's camera reads it, to the very same otpauth:// URI.
        qr = b.driver.find_element(By.CSS_SELECTOR, "svg.qr")
        assert qr.get_attribute("aria-label"), "the QR code has no accessible name"
        decoded = decode_qr_png(qr.screenshot_as_png)
        assert decoded == link, "the QR code does not decode to the otpauth link"
        b.expect_reflow()
        b.screenshots("totp-enrolment")
        b.expect_clean_console()
        # A wrong code first: marked and tied to its message.
        b.field("code").send_keys("000000")
        b.click("Turn on")
        b.expect_text("That code is not right.")
        assert b.field("code").get_attribute("aria-invalid") == "true"
        b.expect_clean_console(allowed_statuses=(400,))
        self.enrolled_step = current_step()
        b.field("code").send_keys(totp(self.secret, self.enrolled_step))
        b.click("Turn on")
        b.expect_text("Two-step verification is on", "Keep these recovery codes somewhere safe.")
        self.recovery_codes = [item.text for item in b.driver.find_elements(By.CSS_SELECTOR, "ul.codes li")]
        assert len(self.recovery_codes) == 10, "ten recovery codes are not shown"
        b.screenshots("recovery-codes")
        b.expect_clean_console()
        b.click("Done")
        b.expect_text("Two-step verification is on. Recovery codes left: 10.")

    def mfa_challenge(self):
        b = self.fresh_browser()
        self.sign_in(b)
        b.expect_text("Two-step verification", "Code from your authenticator app", "Lost your phone?")
        b.expect_tab_order(["code", "Verify"])
        b.screenshots("mfa")
        b.expect_clean_console()
        # A used step is never accepted again (RFC 6238 §5.2): wait for the next one when needed.
        while current_step() <= self.enrolled_step:
            time.sleep(0.5)
        b.field("code").send_keys(totp(self.secret, current_step()))
        b.click("Verify")
        b.expect_text("Continue to Demo app?")
        b.click("Continue")
        b.expect_text("The app received the sign-in.")
        b.expect_clean_console()

    def return_to_app(self):
        b = self.fresh_browser()
        url, _ = self.demo.start_url("com.example.zevauth.demo:/callback", pkce=False)
        b.open(url)
        b.expect_text("This app's sign-in link is not set up correctly.", "Return to Demo app to try again.",
                      "Return to the app")
        href = b.driver.find_element(By.LINK_TEXT, "Return to the app").get_attribute("href")
        assert href.startswith("com.example.zevauth.demo:/callback?error=pkce_required"), "the button does not return the error"
        b.expect_tab_order(["Return to the app"])
        b.expect_reflow()
        b.screenshots("return-to-app")
        b.expect_clean_console()

    def error_page(self):
        b = self.browser
        url, _ = self.demo.start_url(self.callback.uri, client_id="pk_test_unknown")
        b.open(url)
        b.expect_text("This app's sign-in link is not set up correctly.", "Go back to the app and try again.",
                      "Details for the app's developer")
        shown = b.text()
        for word in ("client_id", "redirect_uri", "invalid_client"):
            assert word not in shown, f"the person is shown {word!r} before opening the details"
        b.expect_tab_order(["Details for the app's developer"])
        b.expect_reflow()
        b.screenshots("error")
        b.driver.find_element(By.TAG_NAME, "summary").click()
        b.expect_text("Error code: invalid_client", "client_id")
        b.screenshots("error-details")
        b.expect_clean_console(allowed_statuses=(400,))

    def close_account(self):
        """Signs in to the account area with a recovery code, then closes the account: a wrong code first,
        then the password and another recovery code."""
        b = self.fresh_browser()
        b.open(self.demo.issuer + "/account/signin")
        b.field("email").send_keys(self.account[0])
        b.field("password").send_keys(self.account[1])
        b.click("Sign in")
        b.field("code").send_keys(self.recovery_codes[0])
        b.click("Verify")
        b.expect_text("Your ZevID account", "Close your account", "Recovery codes left: 9.")
        b.field("close-password").send_keys(self.account[1])
        b.field("close-code").send_keys("000000")
        b.click("Close my account")
        b.expect_text("That code is not right.", "Close your account")
        assert b.field("close-code").get_attribute("aria-invalid") == "true", "the code is not marked invalid"
        b.expect_clean_console(allowed_statuses=(401,))
        b.field("close-password").send_keys(self.account[1])
        b.field("close-code").send_keys(self.recovery_codes[1])
        b.click("Close my account")
        b.expect_text("Your account is closed", "every app and browser is signed out")
        b.screenshots("account-closed")
        b.expect_clean_console()
        b.open(self.demo.issuer + "/account")
        b.expect_text("Your ZevID account", "No ZevID account?")


def id_token_claims(token):
    """The payload of a compact JWS, decoded (its signature is the conformance suite's to check)."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def decode_qr_png(png):
    """The text of the QR code in a PNG, read by zxing-cpp (PyPI), or None."""
    import io

    import numpy
    import zxingcpp
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    results = zxingcpp.read_barcodes(numpy.array(image))
    return results[0].text if results else None


def run_journeys(order, only, journeys, artifacts, failure_name):
    """Runs each (name, journey) of `order` (those named in `only`, when given), printing "journey NAME: ok"
    or "journey NAME: FAILED …" with a screenshot named `failure_name(name)`; one journey's failure is
    reported and the others still run. Returns how many failed."""
    failed = 0
    for name, journey in order:
        if only and name not in only:
            continue
        began = time.monotonic()
        try:
            journey()
            print(f"journey {name}: ok ({time.monotonic() - began:.1f} s)", flush=True)
        except Exception as error:
            failed += 1
            print(f"journey {name}: FAILED {type(error).__name__}: {error}", flush=True)
            traceback.print_exc(file=sys.stderr)
            if journeys.browser:
                path = os.path.join(artifacts, failure_name(name))
                try:
                    journeys.browser.driver.save_screenshot(path)
                    print(f"  screenshot of the failure: {path}", flush=True)
                except Exception:
                    pass
    return failed


def end_journeys(journeys, failed):
    """Quits the journeys' browser (when one is open), closes their app callback, and exits with status 1 when
    `failed` (run_journeys's count) is not 0, else 0."""
    if journeys.browser:
        journeys.browser.quit()
    journeys.callback.close()
    sys.exit(1 if failed else 0)


def journey_arguments(*extra):
    """Parses a journey script's command line: --dev-json (the demo's dev.json), --artifacts (made if missing),
    --only (repeatable), plus each `extra` (flag, keyword arguments of add_argument). Returns the parsed
    arguments and the dev.json document."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev-json", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--only", action="append")
    for flag, options in extra:
        parser.add_argument(flag, **options)
    args = parser.parse_args()
    os.makedirs(args.artifacts, exist_ok=True)
    with open(args.dev_json) as f:
        return args, json.load(f)


def main():
    args, dev = journey_arguments(("--mail-dir", {"default": os.environ.get("ZEVAUTH_TEST_MAIL_DIR", "")}))
    demo = Demo(dev)
    journeys = Journeys(demo, args.artifacts, args.mail_dir)
    order = [
        ("sign-in and consent", journeys.sign_in_and_consent),
        ("account pages", journeys.account_pages),
        ("MFA enrolment with the QR code", journeys.mfa_enrolment),
        ("MFA challenge", journeys.mfa_challenge),
        ("return to the app", journeys.return_to_app),
        ("error page", journeys.error_page),
        ("closing the account", journeys.close_account),
        ("sign-up with the emailed code", journeys.sign_up_with_code),
        ("a wrong code says how many tries are left", journeys.wrong_code_tries_left),
        ("password reset", journeys.password_reset),
    ]
    failed = run_journeys(order, args.only, journeys, args.artifacts, lambda name: f"FAILED-{name.replace(' ', '-')}.png")
    if journeys.browser:
        shots = sorted(set(glob.glob(os.path.join(args.artifacts, "*.png"))))
        print(f"screenshots: {len(shots)} in {args.artifacts}", flush=True)
        journeys.browser.quit()
    journeys.callback.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
