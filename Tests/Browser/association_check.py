#!/usr/bin/env python3
"""The association checks against a real HTTPS site, through the admin API alone (docs/protocol.md,
"Link verification" and section 7.1): the demo server fetches from Tests/Browser/https_site.py, which the
test command starts and points the server at (ZEVAUTH_OUTBOUND_RESOLVE, ZEVAUTH_OUTBOUND_CA_FILE,
ZEVAUTH_OUTBOUND_ALLOW_PRIVATE).

    association_check.py --dev-json DIR/dev.json --site-json FILE [--domain acme.test]

In a project of its own (made with the operator token): adds the domain, is refused while the token file
is not published, publishes it and is verified; adds a link callback; registers an iOS and an Android app;
publishes the generated files; "Check again" answers `verified` for both; then breaks each file in turn
and the check names exactly what is missing (and only that), and a removed file is `file_missing`.
Prints "association check: ok" and one line per step; exits 1 with the reason at the first failure.
"""
import argparse
import copy
import json
import secrets
import sys
import urllib.parse

from local_site import AASA_FILE, ASSETLINKS_FILE, TOKEN_FILE, Admin, Site, random_fingerprint


def blocking(app):
    return [problem for problem in app["link"]["problems"] if problem.get("blocking", True)]


def expect_verified(app, what):
    link = app["link"]
    assert link["status"] == "verified" and not blocking(app), (
        f"{what}: the check answered {link['status']} with {[p['code'] for p in link['problems']]}")


def expect_only(app, code, *words, what):
    """The app is not verified, and its blocking problems are exactly one `code` whose message has `words`."""
    problems = blocking(app)
    assert app["link"]["status"] == "not_verified", f"{what}: the check answered {app['link']['status']}"
    assert [problem["code"] for problem in problems] == [code], (
        f"{what}: the problems are {[(p['code'], p['message']) for p in problems]}, expected only {code}")
    for word in words:
        assert word in problems[0]["message"], f"{what}: the message {problems[0]['message']!r} does not name {word!r}"


def run(dev, site, domain):
    operator = Admin(dev["issuer"], dev["operatorToken"])
    project = operator.expect(201, "POST", "/v1/admin/projects", {"name": "Association check " + secrets.token_hex(3)})
    admin = Admin(dev["issuer"], project["development"]["secretKey"])
    quoted = urllib.parse.quote(domain)

    # The domain: refused while its token file is not published, verified once it is.
    added = admin.expect(201, "POST", "/v1/admin/domains", {"domain": domain})
    assert added["verified"] is False and added["verificationUrl"] == f"https://{domain}/{TOKEN_FILE}", added
    site.clear(domain)
    status, refused = admin.call("POST", f"/v1/admin/domains/{quoted}/verify")
    assert status == 400 and refused.get("error") == "invalid_request", f"an unpublished token answered {status}"
    print(f"  the token file not yet published: 400 ({refused.get('error_description', '')})")
    site.publish(domain, TOKEN_FILE, added["verificationToken"] + "\n")
    verified = admin.expect(200, "POST", f"/v1/admin/domains/{quoted}/verify")
    assert verified.get("verified") is True, verified
    assert site.fetched(domain, TOKEN_FILE) >= 2, "the site never saw the server fetch the token file"
    print(f"  domain {domain}: verified against the local HTTPS site")

    # A link callback on it, then one app of each platform.
    admin.expect(201, "POST", "/v1/admin/callbacks", {"uri": f"https://{domain}/auth/callback"})
    team = "JRNY" + secrets.token_hex(3).upper()
    fingerprints = [random_fingerprint(), random_fingerprint()]
    ios = admin.expect(201, "POST", "/v1/admin/apps",
                       {"platform": "ios", "bundleId": "com.acme.journeys", "teamId": team})
    # Fingerprints pasted in any format: lower case, no colons.
    android = admin.expect(201, "POST", "/v1/admin/apps", {
        "platform": "android", "packageName": "com.acme.journeys",
        "sha256CertFingerprints": [fingerprints[0].replace(":", "").lower(), fingerprints[1]]})
    assert android["sha256CertFingerprints"] == fingerprints, "the fingerprints were not stored canonical"
    for app in (ios, android):
        codes = [problem["code"] for problem in app["link"]["problems"]]
        assert app["link"]["status"] == "not_verified" and "file_missing" in codes, (
            f"before the files are published the {app['platform']} app is {app['link']['status']} with {codes}")
    print("  both apps registered: not verified, file_missing, before the files are published")

    # The generated files, published as served; "Check again" verifies both.
    files = admin.expect(200, "GET", f"/v1/admin/association-files?domain={quoted}")
    aasa, assetlinks = files["appleAppSiteAssociation"], files["assetlinks"]
    assert f"{team}.com.acme.journeys" in json.dumps(aasa), "the AASA does not list the iOS app"
    assert all(fingerprint in json.dumps(assetlinks) for fingerprint in fingerprints), "assetlinks lacks a fingerprint"
    site.publish(domain, AASA_FILE, aasa)
    site.publish(domain, ASSETLINKS_FILE, assetlinks)
    for app in (ios, android):
        checked = admin.expect(200, "POST", f"/v1/admin/apps/{app['id']}/check")
        expect_verified(checked, f"the {app['platform']} app with the generated files")
        assert checked["link"]["checkedAt"] and checked["link"]["nextCheckAt"], "no checkedAt or nextCheckAt"
    print("  the generated files published: Check again answers verified for both apps")

    # Broken files: each check names exactly what is missing.
    broken = copy.deepcopy(assetlinks)
    for statement in broken:
        target = statement.get("target", {})
        if target.get("package_name") == "com.acme.journeys":
            target["sha256_cert_fingerprints"] = [fingerprints[0]]
    site.publish(domain, ASSETLINKS_FILE, broken)
    checked = admin.expect(200, "POST", f"/v1/admin/apps/{android['id']}/check")
    expect_only(checked, "fingerprint_missing", fingerprints[1], "com.acme.journeys",
                what="assetlinks.json without the second certificate")
    assert fingerprints[0] not in blocking(checked)[0]["message"], "the listed certificate is named as missing"
    expect_verified(admin.expect(200, "POST", f"/v1/admin/apps/{ios['id']}/check"), "the iOS app beside a broken assetlinks")
    print("  assetlinks.json without a certificate: fingerprint_missing naming exactly that certificate")

    broken = copy.deepcopy(aasa)
    for detail in broken["applinks"]["details"]:
        detail["appIDs"] = [app_id.lower() for app_id in detail.get("appIDs", [])]
    site.publish(domain, AASA_FILE, broken)
    checked = admin.expect(200, "POST", f"/v1/admin/apps/{ios['id']}/check")
    expect_only(checked, "app_id_missing", f"{team}.com.acme.journeys", "different letter case",
                what="an AASA listing the app ID in lower case")
    print("  an AASA with the app ID in lower case: app_id_missing, saying the letter case differs")

    site.remove(domain, ASSETLINKS_FILE)
    checked = admin.expect(200, "POST", f"/v1/admin/apps/{android['id']}/check")
    expect_only(checked, "file_missing", f"https://{domain}/{ASSETLINKS_FILE}", what="no assetlinks.json at all")
    print("  assetlinks.json removed: file_missing, naming its URL")

    # Published again as generated: verified again.
    site.publish(domain, AASA_FILE, aasa)
    site.publish(domain, ASSETLINKS_FILE, assetlinks)
    for app in (ios, android):
        expect_verified(admin.expect(200, "POST", f"/v1/admin/apps/{app['id']}/check"), f"the {app['platform']} app once fixed")
    print("  the files fixed: verified again")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev-json", required=True)
    parser.add_argument("--site-json", required=True)
    parser.add_argument("--domain", default="acme.test")
    args = parser.parse_args()
    with open(args.dev_json) as handle:
        dev = json.load(handle)
    try:
        run(dev, Site(args.site_json), args.domain)
    except AssertionError as error:
        print(f"association check: FAILED {error}", flush=True)
        sys.exit(1)
    print("association check: ok", flush=True)


if __name__ == "__main__":
    main()
