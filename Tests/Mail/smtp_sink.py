#!/usr/bin/env python3
"""A local SMTP server for tests: accepts every message on 127.0.0.1 and writes each one, as received,
to DIR/NNNNNN.eml (numbered in arrival order), after two lines of its own: `X-Envelope-To: RCPT, ...`
(the first line) and `X-Envelope-From: <MAIL FROM>` (the envelope sender). Needs aiosmtpd (PyPI).

    smtp_sink.py --port PORT --dir DIR [--ready-file FILE]

--ready-file is written once the server listens. Stops within half a second on SIGTERM or SIGINT, and on
its own once its parent process is gone (docs/architecture.md, "Tests": no process left behind).
"""
import argparse
import os
import signal
import threading

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            number = self.count
        path = os.path.join(self.directory, "%06d.eml" % number)
        temporary = path + ".part"
        with open(temporary, "wb") as out:
            out.write(b"X-Envelope-To: " + ", ".join(envelope.rcpt_tos).encode() + b"\r\n")
            out.write(b"X-Envelope-From: <" + (envelope.mail_from or "").encode() + b">\r\n")
            out.write(envelope.original_content or envelope.content)
        os.rename(temporary, path)
        return "250 OK"


def stop_on_signals_or_orphaning(stop):
    """Sets `stop` on SIGTERM or SIGINT, and returns a function that is true once the parent is gone.

    The signals are unblocked first: a child inherits its parent's blocked signals (the Swift test process
    blocks SIGTERM for its own handling), and a blocked SIGTERM would never arrive. The handlers replace
    an inherited "ignore" too (a shell's `&` ignores SIGINT). A parent that dies, even by SIGKILL, sends
    nothing, so the main loop polls the parent PID: when it changes, the sink was reparented and exits."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = os.getppid()
    return lambda: os.getppid() != parent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--ready-file")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    stop = threading.Event()
    # Before the server's thread starts, so that thread inherits the unblocked mask.
    orphaned = stop_on_signals_or_orphaning(stop)
    controller = Controller(Sink(args.dir), hostname="127.0.0.1", port=args.port)
    controller.start()
    if args.ready_file:
        with open(args.ready_file, "w") as ready:
            ready.write(str(args.port))
    # A bounded wait, so the handlers run and the parent is checked at least twice a second.
    while not stop.wait(0.5) and not orphaned():
        pass
    controller.stop()


if __name__ == "__main__":
    main()
