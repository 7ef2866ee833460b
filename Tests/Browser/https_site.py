#!/usr/bin/env python3
"""A local HTTPS site for the journeys: the project's own web site, where a person publishes the domain
token and the association files, as the demo server fetches them (docs/protocol.md, section 7.1).

    https_site.py --dir DIR --hosts acme.test,console.acme.test --ready-file FILE [--port 443]

At start it makes a throwaway CA and one certificate for every host (subjectAltName) in DIR/ca with the
`openssl` command, then serves the files under DIR/www/HOST/ over TLS, chosen by the request's Host:
`GET https://acme.test/.well-known/assetlinks.json` answers DIR/www/acme.test/.well-known/assetlinks.json.
Answers: 200 with the file (`application/json` for the two association files and `*.json`, else
`text/plain`), 404 when there is no such file; never a redirect. Every request is appended to
DIR/requests.log as "HOST PATH STATUS".

It listens on loopback only, on port 443 (the server fetches nothing else): 127.0.0.1 when that port is
free there, else the first free one of a few other 127.0.0.0/8 addresses (so two test runs on one machine
do not collide). When listening it writes FILE, one JSON object:
  {"address", "port", "caFile", "root", "hosts", "resolve"}
where `root` is DIR/www and `resolve` the `ZEVAUTH_OUTBOUND_RESOLVE` value that sends every host there
(docs/operations.md, "Outbound fetches"). It runs until SIGTERM or SIGINT, or until its parent process is
gone (docs/architecture.md, "Tests": no process left behind), then removes nothing: the test command
deletes DIR with the rest of its temporary files.
"""
import argparse
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading

JSON_FILES = ("apple-app-site-association",)


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certificates(directory, hosts):
    """A CA (ca.pem) and a leaf certificate (leaf.pem, leaf.key) for `hosts`, valid for two days."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "leaf.ext"), "w") as handle:
        handle.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                     % ",".join("DNS:" + host for host in hosts))
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=ZevAuth journeys CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=directory)
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=" + hosts[0], cwd=directory)
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext", cwd=directory)
    return tuple(os.path.join(directory, name) for name in ("ca.pem", "leaf.pem", "leaf.key"))


def handler(root, hosts, log_path):
    log_lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, content_type, body, send_body=True):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            if send_body:
                self.wfile.write(body)
            host = (self.headers.get("Host") or "").split(":")[0]
            with log_lock, open(log_path, "a") as log:
                log.write(f"{host} {self.path} {status}\n")

        def serve(self, send_body):
            host = (self.headers.get("Host") or "").split(":")[0].lower()
            path = self.path.split("?", 1)[0]
            parts = [part for part in path.split("/") if part]
            # Only the site's own hosts, and only plain names under its folder (no "..", no hidden tricks).
            if host not in hosts or not parts or any(part in (".", "..") or "\\" in part for part in parts):
                self.answer(404, "text/plain", b"Not found.\n", send_body)
                return
            file = os.path.join(root, host, *parts)
            if not os.path.isfile(file):
                self.answer(404, "text/plain", b"Not found.\n", send_body)
                return
            with open(file, "rb") as handle:
                body = handle.read()
            name = parts[-1]
            content_type = "application/json" if name in JSON_FILES or name.endswith(".json") else "text/plain"
            self.answer(200, content_type, body, send_body)

        def do_GET(self):
            self.serve(True)

        def do_HEAD(self):
            self.serve(False)

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-answer is not the site's problem


def listen(port, request_handler):
    """The server on 127.0.0.1:PORT, else on the first free one of a bounded list of loopback addresses."""
    candidates = ["127.0.0.1"] + [f"127.77.{os.getpid() % 250 + 1}.{n}" for n in range(1, 21)]
    last = None
    for address in candidates:
        try:
            return Server((address, port), request_handler)
        except OSError as error:
            last = error
    raise SystemExit(f"https_site: no loopback address has port {port} free ({last})")


def main():
    # A child inherits its parent's blocked signals: unblock the two this server stops on.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parent = os.getppid()
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--hosts", required=True, help="comma-separated host names, e.g. acme.test")
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--port", type=int, default=443)
    args = parser.parse_args()
    hosts = [host.strip().lower() for host in args.hosts.split(",") if host.strip()]
    directory = os.path.abspath(args.dir)
    root = os.path.join(directory, "www")
    for host in hosts:
        os.makedirs(os.path.join(root, host, ".well-known"), exist_ok=True)
    ca, certificate, key = make_certificates(os.path.join(directory, "ca"), hosts)
    server = listen(args.port, handler(root, set(hosts), os.path.join(directory, "requests.log")))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    address = server.server_address[0]
    ready = {"address": address, "port": args.port, "caFile": ca, "root": root, "hosts": hosts,
             "resolve": ";".join(f"{host}:{args.port}:{address}" for host in hosts)}
    temporary = args.ready_file + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(ready, handle)
    os.replace(temporary, args.ready_file)

    def stop(*_):
        threading.Thread(target=server.shutdown, daemon=True).start()

    def stop_when_orphaned():
        # A parent that dies (even by SIGKILL) sends nothing: a changed parent PID means it is gone.
        while os.getppid() == parent:
            threading.Event().wait(0.5)
        stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    print(f"https_site: serving {', '.join(hosts)} on {address}:{args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
