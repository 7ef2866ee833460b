#!/usr/bin/env python3
"""A local HTTPS server for FetchTests, on 127.0.0.1 only.

Usage: https_server.py DIR. Creates a throwaway CA and two server certificates in DIR with the openssl CLI
(one for assoc.test, one for other.test), then listens on three ephemeral loopback ports:
  good       TLS with the assoc.test certificate
  wrongName  TLS with the other.test certificate (same CA)
  silent     plain TCP that accepts and never answers (a TLS handshake there hangs)
and prints one JSON line {"good", "wrongName", "silent", "ca"}. When its stdin closes (the test process
is gone), its parent PID changes (the same, should another process hold the pipe open), or SIGTERM or
SIGINT arrives, it removes DIR and exits, so it never outlives the tests (docs/architecture.md, "Tests").

Paths (query parameters in brackets):
  /ok                 200 application/json {"ok":true}
  /missing            404 text/plain
  /error              500 text/plain
  /html               200 text/html
  /moved[to]          301 with Location: to
  /big[n]             200 with n bytes and a Content-Length
  /big-chunked[n]     200 with n bytes, chunked (no Content-Length)
  /slow[ms]           waits ms milliseconds, then 200
  /echo               200 application/json: the request headers (lower-case names)
  /seen[path]         200 "yes" when a request for path (without query) arrived, else "no"
"""
import http.server
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

seen_paths = set()
seen_lock = threading.Lock()


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certificates(directory):
    ca_key, ca_pem = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", ca_key, "-out", ca_pem, "-days", "2", "-subj", "/CN=ZevAuth FetchTests CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    pairs = {}
    for name in ("assoc.test", "other.test"):
        key, csr, pem = (os.path.join(directory, name + suffix) for suffix in (".key", ".csr", ".pem"))
        extensions = os.path.join(directory, name + ".ext")
        with open(extensions, "w") as handle:
            handle.write("subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n" % name)
        openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", csr, "-subj", "/CN=" + name)
        openssl("x509", "-req", "-in", csr, "-CA", ca_pem, "-CAkey", ca_key, "-CAcreateserial",
                "-out", pem, "-days", "2", "-extfile", extensions)
        pairs[name] = (pem, key)
    return ca_pem, pairs


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, content_type, body, extra=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        with seen_lock:
            seen_paths.add(url.path)
        path = url.path
        if path == "/ok":
            self.send(200, "application/json", b'{"ok":true}')
        elif path == "/missing":
            self.send(404, "text/plain", b"not found")
        elif path == "/error":
            self.send(500, "text/plain", b"server error")
        elif path == "/html":
            self.send(200, "text/html; charset=utf-8", b"<html><body>hi</body></html>")
        elif path == "/moved":
            self.send(301, "text/plain", b"moved", [("Location", query.get("to", "/"))])
        elif path == "/big":
            self.send(200, "application/json", b"a" * int(query["n"]))
        elif path == "/big-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            remaining = int(query["n"])
            while remaining > 0:
                size = min(remaining, 512)
                self.wfile.write(b"%x\r\n" % size + b"b" * size + b"\r\n")
                remaining -= size
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/slow":
            time.sleep(int(query["ms"]) / 1000)
            self.send(200, "application/json", b"{}")
        elif path == "/echo":
            headers = {name.lower(): value for name, value in self.headers.items()}
            self.send(200, "application/json", json.dumps(headers).encode())
        elif path == "/seen":
            with seen_lock:
                answer = b"yes" if query.get("path") in seen_paths else b"no"
            self.send(200, "text/plain", answer)
        else:
            self.send(404, "text/plain", b"unknown test path")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (timeout, size cap) is expected


def tls_server(certificate, key):
    server = Server(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def silent_listener():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held = []

    def accept_forever():
        while True:
            connection, _ = listener.accept()
            held.append(connection)

    threading.Thread(target=accept_forever, daemon=True).start()
    return listener


def main():
    # A child inherits its parent's blocked signals (the Swift test process blocks SIGTERM): unblock them.
    done = threading.Event()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    parent = os.getppid()
    directory = sys.argv[1]
    ca, pairs = make_certificates(directory)
    good = tls_server(*pairs["assoc.test"])
    wrong = tls_server(*pairs["other.test"])
    silent = silent_listener()
    print(json.dumps({"good": good.server_address[1], "wrongName": wrong.server_address[1],
                      "silent": silent.getsockname()[1], "ca": ca}), flush=True)

    def wait_for_eof():
        sys.stdin.read()  # returns at EOF: the test process is gone
        done.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    while not done.wait(0.5) and os.getppid() == parent:
        pass
    shutil.rmtree(directory, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    main()
