#!/usr/bin/env python3
"""Passkey journeys in a real browser (docs/passkeys.md, "Testing in a browser"): Debian's Chromium driven
by Selenium with the Browser class of journeys.py, and Chromium's own virtual authenticator (the CDP WebAuthn
domain, reached through Selenium's `execute_cdp_cmd`) standing in for the person's device, against a running
demo server.

    passkey_journeys.py --dev-json DIR/dev.json --artifacts DIR [--only NAME]

  - the sign-in page offers "Sign in with a passkey", marks the email field `autocomplete="username webauthn"`
    and starts a conditional (autofill) request;
  - a password sign-in on a device that can hold a passkey offers one; "Not now" goes on to consent and the
    next password sign-in does not offer again;
  - a person signs in to /account with their password, creates a passkey from the offer and finds it listed;
    creating one again on the same device says it is already registered;
  - signed out, an app's OpenID sign-in is finished with the button: the autofill request is aborted, the
    modal request signs in, consent, the app's code, the exchange, and the ID token's `amr` is
    ["hwk","user","mfa"] (Chromium's virtual authenticator is device-bound);
  - the same through the email field's autofill (conditional mediation) with no button pressed; a copy of
    the passkey taken before those sign-ins (its counter goes backwards) is refused as copied;
  - a second passkey from a synced authenticator, renamed; the first removed, after which it no longer
    signs in; the synced one signs in with `amr` ["swk","user","mfa"];
  - refusals: a passkey of another site only (the browser finds none for this site), a passkey this server
    never registered, a device that does not verify the person (the ceremony is refused): each shows its
    sentence in the page's error area, never an exception name.

A conditional request is observed through a recorder injected before each page's scripts
(`Page.addScriptToEvaluateOnNewDocument`, which the pages' CSP does not govern): it wraps
`navigator.credentials.get` and keeps each call's mediation and outcome in sessionStorage. Chromium's virtual
authenticator without its UI answers a conditional request at once when it holds a passkey for the site, as
a person picking it from the autofill list would; the button journeys therefore load the page with a
recorder that also reports conditional mediation as unavailable, except the one that checks the abort.

WebAuthn needs the page's origin to have a domain: Chromium refuses an IP-address origin ("This is an
invalid domain"), so the demo server's issuer must be http://localhost:PORT, not http://127.0.0.1:PORT. The
journeys fail with that sentence otherwise. Prints "journey NAME: ok" or "journey NAME: FAILED …" per
journey and exits 1 when one failed. Nothing here prints a password, code, key or token.
"""
import base64
import ipaddress
import secrets
import sys
import time
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from journeys import Browser, Callback, Demo, end_journeys, id_token_claims, journey_arguments, run_journeys

# The sentences of docs/passkeys.md, "Errors people see".
CANCELLED = "The passkey request was cancelled or timed out."
ALREADY_REGISTERED = "This passkey is already registered."
UNKNOWN_PASSKEY = "This passkey isn't registered here."
COPIED = "This passkey looks copied. Sign in another way and check your passkeys."

# Chromium's virtual authenticator: a CTAP2 platform authenticator with discoverable credentials and user
# verification, which confirms presence by itself.
AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                 "isUserVerified": True, "automaticPresenceSimulation": True}

# Injected before every document: records each navigator.credentials.get() call (its mediation, then
# "resolved" or the error's name) in sessionStorage["journey-webauthn"]; with `conditional` false it also
# answers isConditionalMediationAvailable() with false, as a browser without passkey autofill does.
RECORDER = """
(() => {
  if (!window.PublicKeyCredential || !navigator.credentials) return;
  const key = "journey-webauthn";
  const record = (entry) => {
    const calls = JSON.parse(sessionStorage.getItem(key) || "[]");
    calls.push(entry);
    sessionStorage.setItem(key, JSON.stringify(calls));
  };
  const get = navigator.credentials.get.bind(navigator.credentials);
  navigator.credentials.get = (options) => {
    const mediation = (options && options.mediation) || "optional";
    record({ mediation, event: "started" });
    return get(options).then(
      (credential) => { record({ mediation, event: "resolved" }); return credential; },
      (error) => { record({ mediation, event: error.name }); throw error; });
  };
  if (!CONDITIONAL) PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
})();
"""


class PasskeyBrowser(Browser):
    """A Browser with Chromium's virtual authenticators and the WebAuthn call recorder."""

    def __init__(self, artifacts, conditional=True):
        super().__init__(artifacts)
        script = RECORDER.replace("CONDITIONAL", "true" if conditional else "false")
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
        self.driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
        self.authenticators = []

    def add_authenticator(self, **options):
        """A new virtual authenticator (AUTHENTICATOR with `options` on top); returns its id."""
        answer = self.driver.execute_cdp_cmd(
            "WebAuthn.addVirtualAuthenticator", {"options": {**AUTHENTICATOR, **options}})
        self.authenticators.append(answer["authenticatorId"])
        return answer["authenticatorId"]

    def remove_authenticator(self, authenticator):
        self.driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        self.authenticators.remove(authenticator)

    def credentials(self, authenticator):
        return self.driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]

    def add_credential(self, authenticator, credential):
        self.driver.execute_cdp_cmd("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": credential})

    def calls(self):
        """The recorder's log for the current origin: [{"mediation", "event"}, …]."""
        return self.driver.execute_script("return JSON.parse(sessionStorage.getItem('journey-webauthn') || '[]')")

    def wait_for_call(self, mediation, event, timeout=15):
        WebDriverWait(self.driver, timeout).until(
            lambda _: {"mediation": mediation, "event": event} in self.calls(),
            f"no {mediation} WebAuthn request {event}")

    def shown_error(self):
        """The passkey error area's sentence once it shows one."""
        WebDriverWait(self.driver, 15).until(
            lambda driver: driver.find_element(By.ID, "passkey-error").text.strip() != "",
            "the passkey error area stayed empty")
        element = self.driver.find_element(By.ID, "passkey-error")
        assert element.is_displayed(), "the passkey error is not visible"
        assert element.get_attribute("role") == "alert", "the passkey error area is not an alert"
        return element.text.strip()

    def press(self, element_id, next_page=True):
        """Clicks the button with `element_id`; with `next_page`, waits for the page the script goes to."""
        old = self.driver.find_element(By.TAG_NAME, "html")
        button = self.driver.find_element(By.ID, element_id)
        assert button.is_displayed(), f"#{element_id} is not shown"
        button.click()
        if next_page:
            WebDriverWait(self.driver, 20).until(lambda _: self.replaced(old), f"#{element_id} led nowhere")
            WebDriverWait(self.driver, 15).until(
                lambda driver: driver.execute_script("return document.readyState") == "complete")

    def click_in(self, container, text):
        """Clicks the button that says `text` inside `container` and waits for the next page."""
        old = self.driver.find_element(By.TAG_NAME, "html")
        button = next((element for element in container.find_elements(By.CSS_SELECTOR, "button")
                       if element.text.strip() == text), None)
        assert button is not None, f"no button says {text!r} there"
        button.click()
        WebDriverWait(self.driver, 15).until(lambda _: self.replaced(old))
        WebDriverWait(self.driver, 15).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete")


def credential_of_another_site():
    """A discoverable ES256 credential for example.com, as WebAuthn.addCredential takes it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return {"credentialId": base64.b64encode(secrets.token_bytes(16)).decode(), "isResidentCredential": True,
            "rpId": "example.com", "privateKey": base64.b64encode(der).decode(),
            "userHandle": base64.b64encode(secrets.token_bytes(32)).decode(), "signCount": 0}


class PasskeyJourneys:
    def __init__(self, demo, artifacts):
        self.demo = demo
        self.artifacts = artifacts
        self.callback = Callback()
        self.host = urllib.parse.urlsplit(demo.issuer).hostname
        self.account = None  # (address, password)
        self.laptop = None  # the first passkey's credential, as the virtual authenticator last held it
        self.laptop_copy = None  # the same as created, before any sign-in raised its counter
        self.phone = None  # the second one's (synced)
        self.browser = None

    def fresh_browser(self, conditional=True):
        if self.browser:
            self.browser.quit()
        self.browser = PasskeyBrowser(self.artifacts, conditional=conditional)
        return self.browser

    def expect_signin_offers_passkeys(self, b):
        button = b.field("passkey-signin")
        WebDriverWait(b.driver, 10).until(lambda _: button.is_displayed(), "the passkey button stays hidden")
        assert button.text.strip() == "Sign in with a passkey", f"the passkey button says {button.text!r}"
        assert b.field("email").get_attribute("autocomplete") == "username webauthn", \
            "the email field does not offer passkeys to autofill"

    def sign_in_to_account(self, b):
        """/account/signin with the password, past the passkey offer if the server shows it."""
        b.open(self.demo.issuer + "/account/signin")
        b.field("email").send_keys(self.account[0])
        b.field("password").send_keys(self.account[1])
        b.click("Sign in")
        if "/account/passkeys/offer" in b.driver.current_url:
            b.click("Not now")
        b.expect_text("Your ZevID account")

    def finish_app_sign_in(self, b, verifier, amr):
        """Consent → the app's callback → the exchange answers an ID token whose amr is `amr`."""
        b.expect_text("Continue to Demo app?", self.account[0])
        b.click("Continue")
        b.expect_text("The app received the sign-in.")
        query = self.callback.received[-1]
        assert query.get("state") == ["journey state"], "the state did not come back unchanged"
        status, body = self.demo.exchange(query["code"][0], verifier, self.callback.uri)
        assert status == 200 and "session" in body, f"the exchange answered {status}"
        token = body["session"].get("idToken")
        assert token, "the OpenID sign-in's exchange answered no ID token"
        claims = id_token_claims(token)
        assert claims.get("amr") == amr, f"amr is {claims.get('amr')}, expected {amr}"

    # MARK: Journeys

    def signin_page(self):
        """The sign-in page of an app's sign-in offers passkeys both ways."""
        b = self.fresh_browser()
        b.add_authenticator()
        url, _ = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.expect_text("Sign in with ZevID", "to continue to Demo app", "Sign in with a passkey")
        self.expect_signin_offers_passkeys(b)
        # The script asked for the options and started the autofill request, which waits (no passkey yet).
        b.wait_for_call("conditional", "started")
        fetched = b.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)")
        assert "/account/passkeys/signin/options" in fetched, "the script fetched no sign-in options"
        assert "/account/static/passkeys.js" in fetched, "the page did not load the passkey script"
        b.expect_reflow()
        b.screenshots("sign-in-passkey")
        b.expect_clean_console()

    def create_passkey(self):
        """Signed in to /account with the password, the person creates a passkey and sees it listed; the
        same device again is refused as already registered."""
        self.account = self.demo.new_account()
        b = self.fresh_browser()
        laptop = b.add_authenticator()
        # The password sign-in offers a passkey next: this device can hold one and the account has none.
        b.open(self.demo.issuer + "/account/signin")
        b.field("email").send_keys(self.account[0])
        b.field("password").send_keys(self.account[1])
        b.click("Sign in")
        b.expect_text("Sign in faster next time", "Create a passkey", "Not now")
        assert b.field("passkey-create").is_displayed(), "Create a passkey stays hidden on the offer"
        b.expect_reflow()
        b.screenshots("passkey-offer")
        b.expect_clean_console()
        b.field("passkey-name").send_keys("Journey laptop")
        b.press("passkey-create")
        b.open(self.demo.issuer + "/account")
        b.expect_text("Your ZevID account", "Passkeys", "Journey laptop", "This device only", "never used")
        assert b.field("passkey-create").is_displayed(), "Create a passkey stays hidden on /account"
        held = b.credentials(laptop)
        assert len(held) == 1 and held[0]["isResidentCredential"], "the device holds no discoverable passkey"
        assert held[0]["rpId"] == self.host, f"the passkey's RP ID is {held[0]['rpId']!r}"
        handle = base64.b64decode(held[0]["userHandle"])
        assert len(handle) == 32 and self.account[0].encode() not in handle, "the user handle is not a random 32 bytes"
        self.laptop = self.laptop_copy = held[0]
        b.expect_reflow()
        b.screenshots("account-passkeys")
        b.expect_clean_console()
        # The same device again: excludeCredentials names it, and the browser refuses.
        b.press("passkey-create", next_page=False)
        assert b.shown_error() == ALREADY_REGISTERED, "creating a passkey twice does not say it exists"
        b.screenshots("passkey-already-registered")
        b.expect_clean_console()

    def offer_skipped(self):
        """After an app sign-in with the password, the offer is skipped with "Not now": the sign-in goes on to
        consent, and the next password sign-in does not offer again."""
        address, password = self.demo.new_account()
        for offered in (True, False):
            b = self.fresh_browser()
            b.add_authenticator()
            url, verifier = self.demo.openid_start_url(self.callback.uri)
            b.open(url)
            b.field("email").send_keys(address)
            b.field("password").send_keys(password)
            b.click("Sign in")
            if offered:
                b.expect_text("Sign in faster next time", "Not now")
                b.expect_clean_console()
                b.click("Not now")
            b.expect_text("Continue to Demo app?", address)
            b.expect_clean_console()

    def button_sign_in(self):
        """Signed out, an app's sign-in is finished with "Sign in with a passkey"; the autofill request the
        page had started is aborted first."""
        b = self.browser
        # First the abort. The device now waits for a touch, so an autofill request stays pending (else the
        # signed-out /account page's own autofill request would sign straight back in).
        laptop = b.authenticators[0]
        b.driver.execute_cdp_cmd("WebAuthn.setAutomaticPresenceSimulation", {"authenticatorId": laptop, "enabled": False})
        b.open(self.demo.issuer + "/account")
        b.click("Sign out of this browser")
        b.expect_text("Your ZevID account", "No ZevID account?", "Sign in with a passkey")
        url, _ = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        self.expect_signin_offers_passkeys(b)
        b.wait_for_call("conditional", "started")
        # … and the button aborts it before its own, modal, request.
        b.press("passkey-signin", next_page=False)
        b.wait_for_call("conditional", "AbortError")
        b.wait_for_call("optional", "started")
        b.expect_clean_console()
        # Then the whole sign-in with the button, in a browser without passkey autofill.
        b = self.fresh_browser(conditional=False)
        device = b.add_authenticator()
        b.add_credential(device, self.laptop)
        url, verifier = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        self.expect_signin_offers_passkeys(b)
        b.press("passkey-signin")
        assert {"mediation": "optional", "event": "resolved"} in b.calls(), "the modal request did not sign in"
        assert "Password" not in b.text(), "a passkey sign-in asks for the password"
        self.laptop = b.credentials(device)[0]  # its signature counter went up
        self.finish_app_sign_in(b, verifier, ["hwk", "user", "mfa"])
        b.expect_clean_console()

    def conditional_sign_in(self):
        """Signed out, an app's sign-in is finished through the email field's passkey autofill: Chromium's
        virtual authenticator picks the passkey as a person would from the list, with no button pressed."""
        b = self.fresh_browser()
        device = b.add_authenticator()
        b.add_credential(device, self.laptop)
        url, verifier = self.demo.openid_start_url(self.callback.uri)
        old = None
        b.open(url)
        try:
            old = b.driver.find_element(By.TAG_NAME, "html")
            b.field("email").click()
        except Exception:
            pass  # the autofill request may already have signed in and left the page
        if old is not None:
            WebDriverWait(b.driver, 20).until(lambda _: b.replaced(old), "the autofill request did not sign in")
        assert {"mediation": "conditional", "event": "resolved"} in b.calls(), "no conditional request signed in"
        assert not any(call["mediation"] == "optional" for call in b.calls()), "a modal request ran"
        self.laptop = b.credentials(device)[0]
        self.finish_app_sign_in(b, verifier, ["hwk", "user", "mfa"])
        b.expect_clean_console()
        # A copy of the passkey taken before those sign-ins: its counter goes backwards, and it is refused.
        b = self.fresh_browser(conditional=False)
        b.add_credential(b.add_authenticator(), self.laptop_copy)
        url, _ = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.press("passkey-signin", next_page=False)
        assert b.shown_error() == COPIED, "a passkey whose counter went back is not refused with its sentence"
        b.screenshots("passkey-copied")
        b.expect_clean_console(allowed_statuses=(400,))

    def second_passkey_rename_remove(self):
        """A second passkey from a synced authenticator, renamed; the first removed, which then no longer
        signs in; the synced one signs in with amr swk."""
        b = self.fresh_browser(conditional=False)
        phone = b.add_authenticator(defaultBackupEligibility=True, defaultBackupState=True)
        self.sign_in_to_account(b)
        b.field("passkey-name").send_keys("Journey phone")
        b.press("passkey-create")
        b.expect_text("Journey laptop", "Journey phone", "Synced", "This device only")
        self.phone = b.credentials(phone)[0]
        # Rename the phone's passkey.
        row = self.passkey_row(b, "Journey phone")
        field = row.find_element(By.CSS_SELECTOR, "input[name='name']")
        field.clear()
        field.send_keys("Work phone")
        b.click_in(row, "Rename")
        b.expect_text("Work phone", "Journey laptop")
        assert "Journey phone" not in self.passkeys_text(b), "the old name is still listed"
        # Remove the laptop's (the sign-in is minutes old: no password asked).
        b.click_in(self.passkey_row(b, "Journey laptop"), "Remove Journey laptop")
        b.expect_text("Work phone")
        assert "Journey laptop" not in self.passkeys_text(b), "the removed passkey is still listed"
        b.expect_reflow()
        b.screenshots("account-passkeys-renamed")
        b.expect_clean_console()
        # The removed passkey, still on the laptop, no longer signs in.
        b = self.fresh_browser(conditional=False)
        b.add_credential(b.add_authenticator(), self.laptop)
        url, _ = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.press("passkey-signin", next_page=False)
        assert b.shown_error() == UNKNOWN_PASSKEY, "a removed passkey is not refused with its sentence"
        b.expect_clean_console(allowed_statuses=(400,))
        # The synced passkey signs in: amr swk.
        b = self.fresh_browser(conditional=False)
        b.add_credential(b.add_authenticator(defaultBackupEligibility=True, defaultBackupState=True), self.phone)
        url, verifier = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.press("passkey-signin")
        self.finish_app_sign_in(b, verifier, ["swk", "user", "mfa"])
        b.expect_clean_console()

    def refusals(self):
        """A passkey of another site, one this server never registered, and a device that does not verify
        the person: each shows its sentence, never an exception name."""
        b = self.fresh_browser(conditional=False)
        device = b.add_authenticator()
        b.add_credential(device, credential_of_another_site())
        url, _ = self.demo.openid_start_url(self.callback.uri)
        b.open(url)
        b.press("passkey-signin", next_page=False)
        assert b.shown_error() == CANCELLED, "a passkey of another site does not end with the cancelled sentence"
        b.expect_text("Sign in with ZevID", "Sign in with a passkey")
        assert b.field("passkey-signin").is_enabled(), "the button stays disabled after a refusal"
        b.screenshots("passkey-error")
        b.expect_clean_console()
        # A passkey for this site that the server never registered: the server's sentence.
        stranger = dict(credential_of_another_site(), rpId=self.host)
        b.add_credential(device, stranger)
        b.press("passkey-signin", next_page=False)
        WebDriverWait(b.driver, 15).until(
            lambda driver: driver.find_element(By.ID, "passkey-error").text.strip() == UNKNOWN_PASSKEY,
            "an unregistered passkey is not refused with its sentence")
        b.screenshots("passkey-unknown")
        b.expect_clean_console(allowed_statuses=(400,))
        # A device that does not verify the person: the ceremony is refused.
        b.driver.execute_cdp_cmd("WebAuthn.setUserVerified", {"authenticatorId": device, "isUserVerified": False})
        b.driver.execute_script("document.getElementById('passkey-error').textContent = ''")
        b.press("passkey-signin", next_page=False)
        assert b.shown_error() == CANCELLED, "an unverified ceremony does not show the cancelled sentence"
        shown = b.text()
        for name in ("NotAllowedError", "SecurityError", "InvalidStateError", "DOMException"):
            assert name not in shown, f"the page shows {name}"
        b.expect_clean_console()

    # MARK: The /account list

    @staticmethod
    def passkeys_text(b):
        return b.driver.find_element(By.ID, "passkeys").text

    @staticmethod
    def passkey_row(b, name):
        """The entry of /account's passkey list that names `name`."""
        for row in b.driver.find_elements(By.CSS_SELECTOR, "#passkeys .passkey"):
            if name in row.text:
                return row
        raise AssertionError(f"no passkey named {name!r} is listed")


def main():
    args, dev = journey_arguments()
    demo = Demo(dev)
    host = urllib.parse.urlsplit(demo.issuer).hostname
    try:
        ipaddress.ip_address(host)
        print(f"passkey journeys: FAILED: the demo server's issuer {demo.issuer} is an IP address, where Chromium "
              "refuses WebAuthn (\"This is an invalid domain\"); start it with its issuer on http://localhost:PORT",
              flush=True)
        sys.exit(1)
    except ValueError:
        pass  # a domain
    journeys = PasskeyJourneys(demo, args.artifacts)
    order = [
        ("passkeys on the sign-in page", journeys.signin_page),
        ("the passkey offer after a password sign-in, skipped", journeys.offer_skipped),
        ("creating a passkey from the offer, and on /account", journeys.create_passkey),
        ("signing in to an app with the passkey button", journeys.button_sign_in),
        ("signing in to an app through passkey autofill", journeys.conditional_sign_in),
        ("a second passkey, renamed, and the first removed", journeys.second_passkey_rename_remove),
        ("passkey refusals show their sentence", journeys.refusals),
    ]
    failed = run_journeys(order, args.only, journeys, args.artifacts,
                          lambda name: f"FAILED-passkeys-{name.replace(' ', '-').replace('/', '')}.png")
    end_journeys(journeys, failed)


if __name__ == "__main__":
    main()
