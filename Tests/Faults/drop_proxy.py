#!/usr/bin/env python3
"""A TCP proxy on loopback in front of PostgreSQL's unix socket that, once per pattern, forwards a client
message containing the pattern, lets the server run it, and then drops both connections without passing
the answer back: the client's write is in doubt (it was sent; whether it committed is unknown).

    drop_proxy.py --socket /tmp/pg/run/.s.PGSQL.5433 --port-file F --pattern 'new_session AS' [--pattern …]

The chosen port is written to F once listening. Every connection after the drop passes through untouched.
Runs until SIGTERM or SIGINT, until --seconds pass (bounded), or until its parent process is gone
(docs/architecture.md, "Tests": no process left behind).
"""
import argparse
import os
import select
import signal
import socket
import threading
import time


def main():
    # A child inherits its parent's blocked signals (the Swift test process blocks SIGTERM): unblock the
    # two it stops on, and note the parent, whose death (even by SIGKILL) sends nothing.
    stopping = threading.Event()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    parent = os.getppid()
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--pattern", action="append", default=[])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--linger", type=float, default=0.3, help="seconds the server gets to commit before the drop")
    args = parser.parse_args()
    pending = [p.encode() for p in args.pattern]
    lock = threading.Lock()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(args.port_file + ".tmp", args.port_file)

    def serve(client):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.connect(args.socket)
        except OSError:
            client.close()
            return
        dropping = False
        try:
            while True:
                readable, _, _ = select.select([client, server], [], [], 1.0)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is client:
                        with lock:
                            for pattern in list(pending):
                                if pattern in data:
                                    pending.remove(pattern)
                                    dropping = True
                                    break
                        server.sendall(data)
                        if dropping:
                            time.sleep(args.linger)
                            return
                    else:
                        client.sendall(data)
        except OSError:
            return
        finally:
            for sock in (client, server):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    deadline = time.time() + args.seconds
    listener.settimeout(0.5)
    while time.time() < deadline and not stopping.is_set() and os.getppid() == parent:
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(client,), daemon=True).start()


if __name__ == "__main__":
    main()
