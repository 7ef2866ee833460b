#!/usr/bin/env python3
"""The console's journeys in a real browser (docs/console.md): Debian's Chromium driven by Selenium, with
the Browser class of journeys.py, against a running demo server whose outbound fetches reach the local
HTTPS site of Tests/Browser/https_site.py.

    console_journeys.py --dev-json DIR/dev.json --site-json FILE --artifacts DIR [--domain console.acme.test]
                        [--only NAME]

  - an owner signs in to /console (enrolling TOTP first), adds the domain and verifies it against the local
    site, adds a link callback, registers an iOS and an Android app, reads both generated files from the
    Association files panel (and presses "Copy"), publishes them on the site, presses "Check again" and sees
    "Link verified", then breaks a file and sees exactly what is missing, and finds the domain and the apps
    on the Activity page;
  - a viewer of that project sees no button that changes anything, and a POST forged from the owner's own
    forms is refused with 403 and changes nothing;
  - an operator creates a project for a new owner (`ownerEmail`), who then finds it on their Projects page.

Set-up that the console does not offer goes through the admin API with the operator token (accounts,
operators, members, the project). Every page is checked for console errors and CSP violations, and saved at
390 px and 1280 px as ARTIFACTS/console-JOURNEY-NN-STEP-WIDTH.png. Prints "journey NAME: ok" or
"journey NAME: FAILED …" per journey and exits 1 when one failed; when the server has no console (`GET
/console` answers 404) it prints "console journeys: skipped (no console)" and exits 0.
"""
import argparse
import glob
import http.client
import json
import os
import re
import secrets
import sys
import time
import urllib.parse

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from journeys import Browser, current_step, run_journeys, totp
from local_site import AASA_FILE, ASSETLINKS_FILE, TOKEN_FILE, Admin, Site, random_fingerprint

# The buttons that change something (docs/console.md, "Pages"): a viewer sees none of them.
CHANGE_BUTTONS = ("Add domain", "Verify", "Add callback", "Delete", "Add app", "Check again", "Remove", "Save",
                  "Create secret key", "Revoke", "Add member", "Create project", "Rotate", "Close account")


def console_exists(issuer):
    """Whether the server has a console: `GET /console` answers anything but 404 (a redirect when signed out)."""
    parts = urllib.parse.urlsplit(issuer)
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=30)
    connection.request("GET", "/console")
    status = connection.getresponse().status
    connection.close()
    return status != 404


class Person:
    """A ZevID account the journeys made through the admin API, and its TOTP secret once enrolled."""

    def __init__(self, operator, label):
        self.email = f"console-{label}-{secrets.token_hex(5)}@example.com"
        self.password = secrets.token_urlsafe(18)
        self.name = f"Console {label.capitalize()}"
        created = operator.expect(201, "POST", "/v1/admin/users",
                                  {"email": self.email, "password": self.password, "name": self.name})
        self.id = created["id"]
        self.secret = None
        self.last_step = 0

    def next_code(self):
        """A TOTP code for a step this account has not used yet (a used step is refused, RFC 6238 §5.2)."""
        while current_step() <= self.last_step:
            time.sleep(0.5)
        self.last_step = current_step()
        return totp(self.secret, self.last_step)


class ConsoleBrowser(Browser):
    """journeys.py's Browser with what the console pages need: fields by name, nth buttons, statuses."""

    def named(self, name):
        """The first displayed form control called `name`."""
        elements = [e for e in self.driver.find_elements(By.NAME, name) if e.is_displayed()]
        assert elements, f"the page has no field {name!r}"
        return elements[0]

    def fill(self, name, value):
        element = self.named(name)
        element.clear()
        element.send_keys(value)

    def buttons(self, text):
        return [e for e in self.driver.find_elements(By.CSS_SELECTOR, "button, a, input[type=submit]")
                if (e.text.strip() or (e.get_attribute("value") or "").strip()) == text and e.is_displayed()]

    def click_nth(self, text, index):
        """Clicks the index-th (0-based) button or link saying `text` and waits for the next page."""
        targets = self.buttons(text)
        assert len(targets) > index, f"the page has {len(targets)} buttons or links saying {text!r}"
        old = self.driver.find_element(By.TAG_NAME, "html")
        targets[index].click()
        WebDriverWait(self.driver, 60).until(lambda driver: self.replaced(old))
        WebDriverWait(self.driver, 60).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete")

    def heading(self):
        headings = self.driver.find_elements(By.TAG_NAME, "h1")
        return headings[0].text.strip() if headings else ""

    def expect_heading(self, name):
        assert self.heading() == name, f"the page's heading is {self.heading()!r}, expected {name!r}"

    def status(self):
        """The HTTP status of the current document (Navigation Timing's responseStatus)."""
        return self.driver.execute_script(
            "const n = performance.getEntriesByType('navigation')[0]; return n ? n.responseStatus : 0")

    def path(self):
        return urllib.parse.urlsplit(self.driver.current_url).path

    def post_form(self, action, fields):
        """Submits a POST form built in the page (DOM calls, no inline script) and waits for the answer."""
        old = self.driver.find_element(By.TAG_NAME, "html")
        self.driver.execute_script("""
            const form = document.createElement('form');
            form.method = 'post';
            form.action = arguments[0];
            for (const [name, value] of Object.entries(arguments[1])) {
              const input = document.createElement('input');
              input.type = 'hidden'; input.name = name; input.value = value;
              form.appendChild(input);
            }
            document.body.appendChild(form);
            form.submit();""", action, fields)
        WebDriverWait(self.driver, 30).until(lambda driver: self.replaced(old))
        WebDriverWait(self.driver, 30).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete")


class ConsoleJourneys:
    def __init__(self, dev, site, artifacts, domain):
        self.issuer = dev["issuer"]
        self.operator = Admin(self.issuer, dev["operatorToken"])
        self.site = site
        self.artifacts = artifacts
        self.domain = domain
        self.browser = None
        self.shot = 0
        self.journey = ""
        # What the owner's journey leaves for the viewer's: the project, its apps, the owner's forms.
        self.project = None
        self.admin = None  # the project's development secret key
        self.apps = {}
        self.owner_forms = {}

    # MARK: Helpers

    def fresh_browser(self):
        if self.browser:
            self.browser.quit()
        self.browser = ConsoleBrowser(self.artifacts)
        # The Copy buttons may write to the clipboard; headless Chromium asks no one, so grant it here.
        try:
            self.browser.driver.execute_cdp_cmd("Browser.grantPermissions", {
                "origin": self.issuer, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
        except WebDriverException:
            pass  # an older Chromium: the journey then accepts a Copy button that says nothing
        return self.browser

    def page(self, step, allowed_statuses=()):
        """The checks every console page gets: reflow at 320 px, screenshots, no console error or CSP
        violation (Chromium logs those as errors)."""
        b = self.browser
        self.shot += 1
        b.expect_reflow()
        b.screenshots(f"console-{self.journey}-{self.shot:02d}-{step}")
        b.expect_clean_console(allowed_statuses)

    def open(self, path):
        self.browser.open(self.issuer + path)

    def sign_in(self, person):
        """GET /console and whatever the sign-in asks, up to the console: the password, enrolling TOTP
        (reading the key from the page, as an authenticator app would get it), the recovery codes, a
        second-factor challenge. Bounded: a page that repeats is a failure."""
        b = self.browser
        self.open("/console")
        for _ in range(12):
            path = b.path()
            secret = b.driver.find_elements(By.CSS_SELECTOR, "code.secret")
            has = lambda name: bool(b.driver.find_elements(By.NAME, name))  # noqa: E731
            if secret:
                person.secret = secret[0].text.replace(" ", "")
                assert re.fullmatch(r"[A-Z2-7]+", person.secret), "the enrolment page shows no TOTP key"
                b.fill("code", person.next_code())
                b.click("Turn on")
            elif b.driver.find_elements(By.CSS_SELECTOR, "ul.codes li"):
                b.click("Done" if b.buttons("Done") else "Continue")
            elif has("email") and has("password") and b.buttons("Sign in"):
                b.fill("email", person.email)
                b.fill("password", person.password)
                b.click("Sign in")
            elif has("code") and b.buttons("Verify"):
                assert person.secret, "the sign-in asks for a second factor the account does not have"
                b.fill("code", person.next_code())
                b.click("Verify")
            elif b.heading() == "Set up two-step verification":
                # The console's own page for operators and owners without TOTP: it sends them to /account.
                b.click("Set up two-step verification on your account page")
            elif b.buttons("Set up two-step verification"):
                b.click("Set up two-step verification")
            elif path.startswith("/console") and not path.startswith("/console/callback"):
                if b.heading() in ("Projects", "Domains & callbacks") or b.buttons("Sign out"):
                    return
                raise AssertionError(f"the console shows {b.heading()!r} after the sign-in: {b.text()[:300]!r}")
            elif path.startswith("/account"):
                self.open("/console")  # enrolled on the account pages: back to the console
            else:
                raise AssertionError(f"the sign-in stopped at {path}: {b.text()[:300]!r}")
        raise AssertionError("the console sign-in did not finish within 12 pages")

    def project_path(self, page, env="development"):
        return f"/console/projects/{self.project['id']}/{env}/{page}"

    def forms_by_button(self):
        """{button text: (action, {field: value})} of the page's POST forms, the hidden csrf included."""
        forms = {}
        for form in self.browser.driver.find_elements(By.CSS_SELECTOR, "form"):
            if (form.get_attribute("method") or "").lower() != "post":
                continue
            fields = {e.get_attribute("name"): e.get_attribute("value") or ""
                      for e in form.find_elements(By.CSS_SELECTOR, "input, select, textarea") if e.get_attribute("name")}
            for button in form.find_elements(By.CSS_SELECTOR, "button, input[type=submit]"):
                text = button.text.strip() or (button.get_attribute("value") or "").strip()
                forms.setdefault(text, (form.get_attribute("action"), fields))
        return forms

    def expect_every_form_has_csrf(self):
        for text, (action, fields) in self.forms_by_button().items():
            assert fields.get("csrf"), f"the form of {text!r} ({action}) has no csrf field"

    def app_problems(self, app_id):
        app = self.admin.expect(200, "GET", f"/v1/admin/apps/{app_id}")
        return [p for p in app["link"]["problems"] if p.get("blocking", True)], app

    # MARK: Journeys

    def owner_links_apps(self):
        self.journey, self.shot = "owner", 0
        owner = Person(self.operator, "owner")
        name = "Console Journey " + secrets.token_hex(3)
        self.project = self.operator.expect(201, "POST", "/v1/admin/projects", {"name": name, "ownerEmail": owner.email})
        self.admin = Admin(self.issuer, self.project["development"]["secretKey"])
        self.site.clear(self.domain)
        b = self.fresh_browser()
        self.sign_in(owner)
        assert owner.secret, "the console let an owner in without two-step verification"
        self.open("/console/projects")
        b.expect_heading("Projects")
        b.expect_text(name)
        assert not b.buttons("Create project"), "an owner who is not an operator is offered Create project"
        self.page("projects")
        link = next((a for a in b.driver.find_elements(By.TAG_NAME, "a")
                     if (a.get_attribute("href") or "").endswith(self.project_path("domains"))), None)
        assert link is not None, "the Projects page does not link to the project's Domains & callbacks"
        link.click()
        WebDriverWait(b.driver, 15).until(lambda driver: b.path() == self.project_path("domains"))

        # Domains & callbacks: add the domain, publish its token on the local site, Verify.
        b.expect_heading("Domains & callbacks")
        b.expect_text("Development", "Production")
        self.expect_every_form_has_csrf()
        b.fill("domain", self.domain)
        b.click("Add domain")
        b.expect_heading("Domains & callbacks")
        b.expect_text(self.domain, f"https://{self.domain}/{TOKEN_FILE}", "Not verified")
        token = re.search(r"zdv_[A-Za-z0-9_-]+", b.text()) or re.search(r"zdv_[A-Za-z0-9_-]+", b.driver.page_source)
        assert token, "the page does not show the token file's text"
        self.page("domain-added")
        self.owner_forms.update(self.forms_by_button())
        self.site.publish(self.domain, TOKEN_FILE, token.group(0) + "\n")
        b.click("Verify")
        b.expect_text("Domain verified")
        assert self.site.fetched(self.domain, TOKEN_FILE) >= 1, "the server never fetched the token file"
        b.fill("uri", f"https://{self.domain}/auth/callback")
        b.click("Add callback")
        b.expect_text(f"https://{self.domain}/auth/callback")
        self.page("domain-verified")
        self.owner_forms.update(self.forms_by_button())

        # Mobile apps: one iOS app, one Android app with fingerprints pasted in two formats.
        self.open(self.project_path("apps"))
        b.expect_heading("Mobile apps")
        b.expect_text("0 of 10 iOS apps", "0 of 10 Android apps")
        self.expect_every_form_has_csrf()
        team = "CNSL" + secrets.token_hex(3).upper()
        Select(b.named("platform")).select_by_value("ios")
        b.fill("bundleId", "com.acme.console")
        b.fill("teamId", team.lower())  # upper-cased on input
        b.click("Add app")
        b.expect_heading("Mobile apps")
        b.expect_text("1 of 10 iOS apps", "com.acme.console", "Not verified", "the file is not published")
        fingerprints = [random_fingerprint(), random_fingerprint()]
        Select(b.named("platform")).select_by_value("android")
        b.fill("packageName", "com.acme.console")
        b.fill("fingerprints", fingerprints[0].replace(":", "").lower() + "\n" + fingerprints[1].replace(":", " : "))
        b.click("Add app")
        b.expect_text("1 of 10 iOS apps", "1 of 10 Android apps")
        self.apps = {app["platform"]: app for app in self.admin.expect(200, "GET", "/v1/admin/apps")["items"]}
        assert set(self.apps) == {"ios", "android"}, f"the environment has apps {sorted(self.apps)}"
        assert self.apps["android"]["sha256CertFingerprints"] == fingerprints, "the pasted fingerprints were not stored canonical"
        self.page("apps-added")
        self.owner_forms.update(self.forms_by_button())

        # The Association files panel: both files exactly as the server generates them, where to publish.
        served = self.admin.expect(200, "GET", f"/v1/admin/association-files?domain={urllib.parse.quote(self.domain)}")
        panels = {}
        for kind, key in (("aasa", "appleAppSiteAssociation"), ("assetlinks", "assetlinks")):
            element = b.driver.find_element(By.ID, f"{kind}-{self.domain}")
            assert element.tag_name == "pre", f"#{kind}-{self.domain} is a {element.tag_name}, not a pre"
            panels[kind] = element.get_attribute("textContent")
            assert json.loads(panels[kind]) == served[key], f"the {kind} panel is not the generated file"
        b.expect_text(f"https://{self.domain}/{AASA_FILE}", f"https://{self.domain}/{ASSETLINKS_FILE}", "redirect")
        copied = self.press_copy(panels["aasa"])
        self.page("association-files")

        # Published as copied; "Check again" on each app: "Link verified" for both.
        self.site.publish(self.domain, AASA_FILE, copied or panels["aasa"])
        self.site.publish(self.domain, ASSETLINKS_FILE, panels["assetlinks"])
        for index in range(2):
            b.click_nth("Check again", index)
            b.expect_heading("Mobile apps")
        for platform, app in self.apps.items():
            _, checked = self.app_problems(app["id"])
            assert checked["link"]["status"] == "verified", f"the {platform} app is {checked['link']['status']} after Check again"
        verified_words = b.text().count("Link verified")
        assert verified_words >= 2, f"the page says \"Link verified\" {verified_words} times for two verified apps"
        b.expect_text("Checked", "Next check", "Shown in Sign in with ZevID")
        assert self.site.fetched(self.domain, AASA_FILE) and self.site.fetched(self.domain, ASSETLINKS_FILE)
        self.page("link-verified")

        # A broken assetlinks.json (the second certificate gone): exactly that is missing, and only there.
        broken = json.loads(panels["assetlinks"])
        for statement in broken:
            if statement.get("target", {}).get("package_name") == "com.acme.console":
                statement["target"]["sha256_cert_fingerprints"] = [fingerprints[0]]
        self.site.publish(self.domain, ASSETLINKS_FILE, broken)
        for index in range(2):
            b.click_nth("Check again", index)
        problems, _ = self.app_problems(self.apps["android"]["id"])
        assert [p["code"] for p in problems] == ["fingerprint_missing"], f"the check found {[p['code'] for p in problems]}"
        assert fingerprints[1] in problems[0]["message"] and fingerprints[0] not in problems[0]["message"]
        shown = b.text()
        assert shown.count("Link verified") == verified_words - 1, "the page does not show exactly one app turned unverified"
        _, ios = self.app_problems(self.apps["ios"]["id"])
        assert ios["link"]["status"] == "verified", "the iOS app turned unverified with the assetlinks.json broken"
        b.expect_text("Not verified", problems[0]["message"])
        self.page("link-broken")

        # Activity: the owner's changes above (the domain, the apps) in words, newest first.
        self.open(self.project_path("activity"))
        b.expect_heading("Activity")
        b.expect_text("Domain added", "domain.add", "App added", "app.create")
        self.page("activity")

    def press_copy(self, expected):
        """Presses the first "Copy" (the AASA's). When the clipboard is available the page says it copied and
        the clipboard holds the file; headless without a clipboard, the button being there is what is checked.
        Returns the clipboard's text, or None."""
        b = self.browser
        buttons = b.buttons("Copy")
        assert len(buttons) >= 2, f"the Association files panel has {len(buttons)} Copy buttons, expected one per file"
        before = b.text()
        buttons[0].click()
        try:
            WebDriverWait(b.driver, 3).until(lambda driver: "opied" in b.text() and b.text() != before)
        except WebDriverException:
            return None  # the clipboard refused headless: the button is present, and that is all we can see
        b.expect_text("opied")
        try:
            text = b.driver.execute_async_script(
                "const done = arguments[0]; navigator.clipboard.readText().then(done, () => done(null))")
        except WebDriverException:
            text = None
        if text is not None:
            assert json.loads(text) == json.loads(expected), "the clipboard does not hold the AASA as shown"
        return text

    def viewer_cannot_change(self):
        self.journey, self.shot = "viewer", 0
        assert self.project and self.owner_forms, "the owner's journey did not get far enough to forge its forms"
        viewer = Person(self.operator, "viewer")
        self.operator.expect(201, "POST", f"/v1/admin/projects/{self.project['id']}/members",
                             {"email": viewer.email, "role": "viewer"})
        b = self.fresh_browser()
        self.sign_in(viewer)
        for page, heading in (("domains", "Domains & callbacks"), ("apps", "Mobile apps"),
                              ("sessions", "Sign in with ZevID sessions")):
            self.open(self.project_path(page))
            b.expect_heading(heading)
            offered = [text for text in CHANGE_BUTTONS if b.buttons(text)]
            assert not offered, f"a viewer is offered {offered} on {heading}"
            self.page(page)

        # The owner's own forms, posted with the viewer's session and the viewer's csrf token.
        self.open(self.project_path("apps"))
        b.expect_text("Link verified", "Not verified")  # the viewer reads what the owner left
        csrf = next((e.get_attribute("value") for e in b.driver.find_elements(By.NAME, "csrf")), None)
        assert csrf, "the viewer's page carries no csrf token (the sign-out form has one)"
        before = self.admin.expect(200, "GET", "/v1/admin/apps")["items"]
        domains_before = self.admin.expect(200, "GET", "/v1/admin/domains")["items"]
        forged = [("Remove", {}), ("Add domain", {"domain": "forged." + self.domain}),
                  ("Add app", {"platform": "ios", "bundleId": "com.acme.forged", "teamId": self.apps["ios"]["teamId"]})]
        for button, values in forged:
            assert button in self.owner_forms, f"the owner's pages had no {button!r} form to forge"
            action, fields = self.owner_forms[button]
            fields = dict(fields, **values, csrf=csrf)
            b.post_form(action, fields)
            assert b.status() == 403, f"a viewer's forged {button!r} answered {b.status()}, not 403"
            assert b.text().strip(), "the refusal page says nothing"
            assert "This form expired." not in b.text(), (
                f"the forged {button!r} was refused for its csrf token, so the role's refusal went untested")
            b.expect_clean_console(allowed_statuses=(403,))
        self.shot += 1
        b.screenshots(f"console-{self.journey}-{self.shot:02d}-refused")
        after = self.admin.expect(200, "GET", "/v1/admin/apps")["items"]
        assert sorted(a["id"] for a in after) == sorted(a["id"] for a in before), "a viewer's forged POST changed the apps"
        assert len(self.admin.expect(200, "GET", "/v1/admin/domains")["items"]) == len(domains_before), \
            "a viewer's forged POST added a domain"
        # Each refusal is in the audit log as a refused action (docs/console.md, "Audit log").
        status, audit = self.operator.call("GET", "/v1/admin/audit?limit=100")
        assert status == 200, f"GET /v1/admin/audit answered {status}"
        refused = [item for item in audit.get("items", []) if "refused" in json.dumps(item)]
        for action in ("app.delete", "domain.add", "app.create"):
            assert any(action in json.dumps(item) for item in refused), (
                f"no refused {action} in the audit log: the forged POST was refused, but not recorded as the role's refusal")

    def operator_creates_project(self):
        self.journey, self.shot = "operator", 0
        person = Person(self.operator, "operator")
        self.operator.expect(201, "POST", "/v1/admin/operators", {"email": person.email})
        new_owner = Person(self.operator, "newowner")
        b = self.fresh_browser()
        self.sign_in(person)
        assert person.secret, "the console let an operator in without two-step verification"
        self.open("/console/projects")
        b.expect_heading("Projects")
        self.expect_every_form_has_csrf()
        self.page("projects")
        name = "Operator Journey " + secrets.token_hex(3)
        b.fill("name", name)
        b.fill("ownerEmail", new_owner.email)
        b.click("Create project")
        b.expect_text(name)
        self.page("project-created")
        self.open("/console/projects?" + urllib.parse.urlencode({"q": name}))
        b.expect_text(name)
        self.page("projects-search")
        # The new owner signs in (enrolling TOTP too) and finds the project, as its owner.
        b = self.fresh_browser()
        self.journey, self.shot = "newowner", 0
        self.sign_in(new_owner)
        self.open("/console/projects")
        b.expect_text(name)
        self.page("projects")
        link = next((a for a in b.driver.find_elements(By.TAG_NAME, "a")
                     if name in a.text and "/console/projects/" in (a.get_attribute("href") or "")), None)
        assert link is not None, "the new owner's Projects page does not link to the project"
        project_id = re.search(r"/console/projects/([^/]+)/", link.get_attribute("href")).group(1)
        members = self.operator.expect(200, "GET", f"/v1/admin/projects/{project_id}/members")["items"]
        assert (new_owner.email, "owner") in [(m["email"], m["role"]) for m in members], \
            f"the project's members are {[(m['email'], m['role']) for m in members]}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev-json", required=True)
    parser.add_argument("--site-json", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--domain", default="console.acme.test")
    parser.add_argument("--only", action="append")
    args = parser.parse_args()
    with open(args.dev_json) as handle:
        dev = json.load(handle)
    if not console_exists(dev["issuer"]):
        print("console journeys: skipped (no console)", flush=True)
        return
    os.makedirs(args.artifacts, exist_ok=True)
    journeys = ConsoleJourneys(dev, Site(args.site_json), args.artifacts, args.domain)
    order = [
        ("console: an owner links an iOS and an Android app", journeys.owner_links_apps),
        ("console: a viewer cannot change anything", journeys.viewer_cannot_change),
        ("console: an operator creates a project for a new owner", journeys.operator_creates_project),
    ]
    failed = run_journeys(
        order, args.only, journeys, args.artifacts, lambda name: f"FAILED-console-{journeys.journey}.png")
    if journeys.browser:
        shots = sorted(glob.glob(os.path.join(args.artifacts, "console-*.png")))
        print(f"console screenshots: {len(shots)} in {args.artifacts}", flush=True)
        journeys.browser.quit()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
