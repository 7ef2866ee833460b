#!/usr/bin/env python3
"""A local SMTP server for tests: accepts every message on 127.0.0.1 and writes each one, as received,
to DIR/NNNNNN.eml (numbered in arrival order). Needs aiosmtpd (PyPI).

    smtp_sink.py --port PORT --dir DIR [--ready-file FILE]

--ready-file is written once the server listens. Stops on SIGTERM or SIGINT.
"""
import argparse
import asyncio
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
            out.write(envelope.original_content or envelope.content)
        os.rename(temporary, path)
        return "250 OK"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--ready-file")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    controller = Controller(Sink(args.dir), hostname="127.0.0.1", port=args.port)
    controller.start()
    if args.ready_file:
        with open(args.ready_file, "w") as ready:
            ready.write(str(args.port))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    controller.stop()


if __name__ == "__main__":
    main()
