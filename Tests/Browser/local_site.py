"""The pieces the HTTPS journeys share: the local site of Tests/Browser/https_site.py (publishing files on
it) and the admin API of the demo server (docs/protocol.md, "Admin API"). Nothing here prints a key,
token or secret."""
import http.client
import json
import os
import secrets
import urllib.parse

TOKEN_FILE = ".well-known/zevauth-domain-verification"
AASA_FILE = ".well-known/apple-app-site-association"
ASSETLINKS_FILE = ".well-known/assetlinks.json"


class Site:
    """The running https_site.py, read from its ready file: publish, replace or remove a host's files."""

    def __init__(self, ready_file):
        with open(ready_file) as handle:
            ready = json.load(handle)
        self.root = ready["root"]
        self.hosts = ready["hosts"]
        self.address = ready["address"]
        self.log = os.path.join(os.path.dirname(self.root), "requests.log")

    def path(self, host, name):
        assert host in self.hosts, f"the local site does not serve {host}"
        return os.path.join(self.root, host, name)

    def publish(self, host, name, content):
        """Writes `content` (str, bytes, or a JSON value) as https://HOST/NAME."""
        if isinstance(content, (dict, list)):
            content = json.dumps(content, indent=2)
        if isinstance(content, str):
            content = content.encode()
        path = self.path(host, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = path + ".tmp"
        with open(temporary, "wb") as handle:
            handle.write(content)
        os.replace(temporary, path)  # a fetch never sees half a file

    def remove(self, host, name):
        try:
            os.remove(self.path(host, name))
        except FileNotFoundError:
            pass

    def clear(self, host):
        """Removes the three files a check publishes on `host`, so a run starts from a site with none."""
        for name in (TOKEN_FILE, AASA_FILE, ASSETLINKS_FILE):
            self.remove(host, name)

    def fetched(self, host, name):
        """How many times the site answered a request for https://HOST/NAME."""
        if not os.path.exists(self.log):
            return 0
        with open(self.log) as handle:
            return sum(1 for line in handle if line.split(" ")[:2] == [host, "/" + name])


class Admin:
    """The admin API over HTTP with one bearer (an operator token or an environment's secret key)."""

    def __init__(self, issuer, bearer):
        parts = urllib.parse.urlsplit(issuer)
        self.host, self.port = parts.hostname, parts.port or 80
        self.bearer = bearer

    def call(self, method, path, body=None):
        """(status, JSON body or {}); the fetching calls can take a while, hence the long timeout."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        headers = {"Authorization": f"Bearer {self.bearer}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        try:
            return response.status, json.loads(data) if data else {}
        except ValueError:
            return response.status, {"text": data.decode(errors="replace")}

    def expect(self, status, method, path, body=None):
        answered, answer = self.call(method, path, body)
        assert answered == status, (
            f"{method} {path.split('?')[0]} answered {answered} (expected {status}): "
            f"{answer.get('error', '')} {answer.get('error_description', '')}".rstrip())
        return answer


def random_fingerprint():
    """A random SHA-256 certificate fingerprint in the canonical form: 32 upper-case hex pairs joined by `:`."""
    return ":".join("%02X" % byte for byte in secrets.token_bytes(32))
