"""What the interop clients share: their report lines and the hosted sign-in they drive like a scripted browser.

authlib_client.py, par_client.py and dpop_client.py drive the sign-in and consent forms with `sign_in` and
report with a `Reporter`; openid_clients.py reads the forms with `hidden_fields`. The forms are posted back
with their hidden fields (the pending sign-in, its CSRF token) and what a person would type.
"""
import html.parser
import sys
import urllib.parse


class HiddenFields(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "input" and attributes.get("type") == "hidden" and attributes.get("name"):
            self.fields[attributes["name"]] = attributes.get("value") or ""


def hidden_fields(page):
    """Every `<input type="hidden">` of the HTML `page`, name to value (the last of a repeated name)."""
    parser = HiddenFields()
    parser.feed(page)
    return parser.fields


class Reporter:
    """A client's report: "PREFIX: ok   STEP" on stdout per passing step (the lines scripts/test counts), and at
    the first failure "PREFIX: FAILED at STEP: DETAIL" on stderr and exit status 1. Steps and details are names
    and statuses only, never a token, code, verifier, password or key."""

    def __init__(self, prefix):
        self.prefix = prefix

    def ok(self, step):
        print(f"{self.prefix}: ok   {step}")

    def fail(self, step, detail):
        print(f"{self.prefix}: FAILED at {step}: {detail}", file=sys.stderr)
        sys.exit(1)

    def expect(self, condition, step, detail=""):
        """Reports `step` as passed when `condition` holds; otherwise fails there with `detail`."""
        if not condition:
            self.fail(step, detail)
        self.ok(step)


def sign_in(report, browser, issuer, user, start, first_step="authorize redirects to the sign-in page",
            check_pages=True):
    """The hosted sign-in from the authorization endpoint's answer `start` (a 303 to the sign-in page, step
    `first_step`) through the sign-in form (`user`, dev.json's email and password) and consent ("allow") to the
    303 back to the app, in the `requests.Session` `browser`, reporting each step to `report`. With `check_pages`
    it also checks that the sign-in and consent pages answer 200 with a CSRF token. Returns the redirect's
    Location: the app's callback URL."""
    report.expect(start.status_code == 303, first_step, start.status_code)
    page = browser.get(urllib.parse.urljoin(issuer, start.headers["Location"]), timeout=30)
    fields = hidden_fields(page.text)
    if check_pages:
        report.expect(page.status_code == 200 and "csrf" in fields, "sign-in page with a CSRF token", page.status_code)
    fields.update({"email": user["email"], "password": user["password"]})
    response = browser.post(issuer + "/v1/auth/zevid/signin", data=fields, allow_redirects=False, timeout=30)
    report.expect(response.status_code == 303, "sign-in accepted", response.status_code)
    page = browser.get(urllib.parse.urljoin(issuer, response.headers["Location"]), timeout=30)
    fields = hidden_fields(page.text)
    if check_pages:
        report.expect(page.status_code == 200 and "csrf" in fields, "consent page", page.status_code)
    fields["decision"] = "allow"
    response = browser.post(issuer + "/v1/auth/zevid/consent", data=fields, allow_redirects=False, timeout=30)
    report.expect(response.status_code == 303, "consent redirects to the app", response.status_code)
    return response.headers["Location"]
