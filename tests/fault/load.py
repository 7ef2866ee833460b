#!/usr/bin/python3
"""The fault test's load, its fault and its verdict (docs/operations.md, "The fault test").

Run by tests/fault/run.sh, which builds the cluster, the instances and the load balancer and passes their
addresses here. Three parts, all bounded by --duration and --max-requests:

- the load: --workers threads, each repeating the sign-in round trip of docs/examples/outside-client.py
  through the load balancer (start, the hosted sign-in form with its cookies, consent, the exchange),
  then session reads and refreshes. A 503 with Retry-After is obeyed the way a client library would: the
  same request is sent again (same code, same refresh token) after the delay, up to --retries times;
- the fault: --event-cmd runs once at --event-at seconds; a monitor samples every database node
  (writable, standby or down) every 100 ms, and the load balancer's view of every instance;
- the verdict, after the load: requests by status before, during and after the failover, seconds until
  requests succeed again, and, checked in the database, that every exchange and refresh acknowledged with
  a 2xx is there, that no code produced two sessions and that no session was revoked. Every acknowledged
  token is logged here only as the SHA-256 hex digest the server stores (Secrets.digest), never raw.

Exit status 0 when every goal is met, 1 when one is missed (each miss is named), 2 when the run itself
could not be made.
"""
import argparse
import base64
import collections
import hashlib
import html.parser
import http.client
import json
import queue
import secrets
import subprocess
import sys
import threading
import time
import urllib.parse

import psycopg2

REDIRECT_URI = "http://127.0.0.1:54321/callback"
WRITES = ("exchange", "refresh")
LB_PAGES = (b"No server is available to handle this request", b"<h1>502 Bad Gateway</h1>",
            b"<h1>504 Gateway Time-out</h1>")


def digest(text):
    """The server's stored form of a code or token: SHA-256 of its UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(text.encode()).hexdigest()


class Log:
    """Every request the load sent, and what it learnt; shared by the threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []        # (sent, done, origin, kind, status, retry_after, lb_generated)
        self.exchanges = []       # acknowledged: (code_hash, session_id, access_hash, refresh_hash)
        self.refreshes = []       # acknowledged: (session_id, access_hash, refresh_hash)
        self.retry_refused = collections.Counter()   # kind → a retry after a 503 answered 4xx
        self.count = 0

    def add(self, record):
        with self.lock:
            self.requests.append(record)
            self.count += 1


class Client:
    """One HTTP connection per request, a cookie jar, no redirect following (as the outside client)."""

    def __init__(self, host, port, log, origin, deadline, max_requests):
        self.host, self.port, self.log, self.origin = host, port, log, origin
        self.deadline, self.max_requests = deadline, max_requests
        self.cookies = {}

    def exhausted(self):
        return time.time() >= self.deadline or self.log.count >= self.max_requests

    def request(self, kind, method, target, body=None, headers=None):
        all_headers = dict(headers or {})
        if self.cookies:
            all_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        sent = time.time()
        status, response_headers, data, lb = "conn", {}, b"", False
        try:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=20)
            connection.request(method, target, body=body, headers=all_headers)
            response = connection.getresponse()
            data = response.read()
            status = response.status
            response_headers = response.headers
            for header in response.headers.get_all("Set-Cookie") or []:
                name, _, rest = header.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
            connection.close()
            # haproxy's own answers (no instance up, an instance cut off): its fixed HTML pages.
            lb = status >= 500 and any(p in data for p in LB_PAGES)
        except (OSError, http.client.HTTPException) as error:
            status = "timeout" if "timed out" in str(error) else "conn"
        retry_after = bool(response_headers.get("Retry-After")) if response_headers else False
        self.log.add((sent, time.time(), self.origin, kind, status, retry_after, lb))
        return status, response_headers, data

    def obeying(self, kind, method, target, body=None, headers=None, retries=8):
        """The request, sent again after Retry-After while it answers 503 (a client library's retry)."""
        for attempt in range(retries + 1):
            status, response_headers, data = self.request(kind, method, target, body, headers)
            if status == 503 or status in ("conn", "timeout"):
                if attempt == retries or self.exhausted():
                    return status, response_headers, data, attempt
                delay = 0.5
                try:
                    delay = min(float(response_headers.get("Retry-After", "0.5")), 5.0)
                except (TypeError, ValueError, AttributeError):
                    pass
                time.sleep(delay)
                continue
            return status, response_headers, data, attempt
        return status, response_headers, data, retries


class HiddenFields(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "input" and attributes.get("type") == "hidden":
            self.fields[attributes["name"]] = attributes.get("value", "")


def hidden_fields(page):
    parser = HiddenFields()
    parser.feed(page.decode(errors="replace"))
    return parser.fields


FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def sign_in(client, key, user):
    """The browser half: start → (sign-in form) → consent → the redirect; the code, or None."""
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(12)
    query = urllib.parse.urlencode({"client_id": key, "redirect_uri": REDIRECT_URI, "state": state,
                                    "code_challenge": challenge, "code_challenge_method": "S256"})
    status, headers, _, _ = client.obeying("start", "GET", "/v1/auth/zevid/start?" + query)
    if status != 303:
        return None
    location = headers["Location"]
    for _ in range(4):
        if location.startswith(REDIRECT_URI + "?"):
            returned = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
            return (returned["code"], verifier) if returned.get("state") == state else None
        if location.startswith("/v1/auth/zevid/signin"):
            status, _, page, _ = client.obeying("signin-page", "GET", location)
            if status != 200:
                return None
            form = hidden_fields(page)
            form.update(email=user[0], password=user[1])
            status, headers, _, _ = client.obeying("signin", "POST", "/v1/auth/zevid/signin",
                                                   urllib.parse.urlencode(form), FORM)
        elif location.startswith("/v1/auth/zevid/consent"):
            status, _, page, _ = client.obeying("consent-page", "GET", location)
            if status != 200:
                return None
            form = hidden_fields(page)
            form["decision"] = "allow"
            status, headers, _, _ = client.obeying("consent", "POST", "/v1/auth/zevid/consent",
                                                   urllib.parse.urlencode(form), FORM)
        else:
            return None
        if status != 303:
            return None
        location = headers["Location"]
    return None


def exchange(client, key, code, verifier, log):
    body = json.dumps({"code": code, "codeVerifier": verifier, "redirectUri": REDIRECT_URI})
    status, _, data, attempts = client.obeying("exchange", "POST", "/v1/auth/handoff/exchange", body,
                                               {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    if status == 200:
        session = json.loads(data)["session"]
        with log.lock:
            log.exchanges.append((digest(code), session["id"], digest(session["accessToken"]),
                                  digest(session["refreshToken"])))
        return session
    if attempts > 0 and isinstance(status, int) and 400 <= status < 500:
        with log.lock:
            log.retry_refused["exchange"] += 1
    return None


def refresh(client, key, session, log):
    body = json.dumps({"refreshToken": session["refreshToken"]})
    status, _, data, attempts = client.obeying("refresh", "POST", "/v1/auth/session/refresh", body,
                                               {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    if status == 200:
        fresh = json.loads(data)["session"]
        with log.lock:
            log.refreshes.append((fresh["id"], digest(fresh["accessToken"]), digest(fresh["refreshToken"])))
        return fresh
    if attempts > 0 and isinstance(status, int) and 400 <= status < 500:
        with log.lock:
            log.retry_refused["refresh"] += 1
    return None


def worker(args, number, user, log, deadline):
    host, port = args.lb.rsplit(":", 1)
    client = None
    cycle = 0
    while True:
        if client is None or cycle % 3 == 0:   # a fresh browser every third sign-in: a password each time
            client = Client(host, int(port), log, "lb", deadline, args.max_requests)
        if client.exhausted():
            return
        cycle += 1
        found = sign_in(client, args.key, user)
        if found is None:
            time.sleep(0.2)
            continue
        session = exchange(client, args.key, found[0], found[1], log)
        if session is None:
            continue
        for _ in range(args.refreshes):
            if client.exhausted():
                return
            client.obeying("session", "GET", "/v1/auth/session",
                           headers={"Authorization": "Bearer " + session["accessToken"]})
            session = refresh(client, args.key, session, log)
            if session is None:
                break


def prober(args, log, deadline, sessions):
    """Straight to one instance (the stale one): a refresh and a /readyz every 250 ms."""
    host, port = args.probe.rsplit(":", 1)
    client = Client(host, int(port), log, "probe", deadline, args.max_requests)
    readyz = []
    session = sessions.get(timeout=5)
    while not client.exhausted():
        status, headers, _ = client.request("readyz", "GET", "/readyz")
        readyz.append((time.time(), status))
        if session is not None:
            body = json.dumps({"refreshToken": session["refreshToken"]})
            status, _, data = client.request("refresh", "POST", "/v1/auth/session/refresh", body,
                                             {"Authorization": f"Bearer {args.key}", "Content-Type": "application/json"})
            if status == 200:
                session = json.loads(data)["session"]
                with log.lock:
                    log.refreshes.append((session["id"], digest(session["accessToken"]),
                                          digest(session["refreshToken"])))
            elif isinstance(status, int) and 400 <= status < 500:
                # A refused token: take another session made through the balancer (none left: readyz only).
                session = None if sessions.empty() else sessions.get()
        time.sleep(0.25)
    return readyz


def monitor(args, deadline, samples, lb_states, stop):
    """Every 100 ms: each node's state (writable / standby / down); every 500 ms: haproxy's server states."""
    nodes = [n.split("=", 1) for n in args.nodes.split(",")]
    last_lb = 0.0
    while not stop.is_set() and time.time() < deadline + 5:
        for name, hostport in nodes:
            host, port = hostport.rsplit(":", 1)
            state = "down"
            try:
                connection = psycopg2.connect(host=host, port=int(port), user="postgres", dbname="postgres",
                                              connect_timeout=1)
                connection.autocommit = True
                with connection.cursor() as cursor:
                    cursor.execute("SET statement_timeout = 1000")
                    cursor.execute("SELECT pg_is_in_recovery()")
                    state = "standby" if cursor.fetchone()[0] else "writable"
                connection.close()
            except psycopg2.Error:
                pass
            samples.append((time.time(), name, state))
        if args.lb_stats and time.time() - last_lb >= 0.5:
            last_lb = time.time()
            try:
                host, port = args.lb_stats.rsplit(":", 1)
                connection = http.client.HTTPConnection(host, int(port), timeout=2)
                connection.request("GET", "/stats;csv")
                text = connection.getresponse().read().decode()
                connection.close()
                for line in text.splitlines():
                    fields = line.split(",")
                    if len(fields) > 17 and fields[0] == "zevauth" and fields[1] not in ("FRONTEND", "BACKEND"):
                        lb_states.append((last_lb, fields[1], fields[17]))
            except (OSError, http.client.HTTPException):
                pass
        time.sleep(0.1)


def checked_in_database(args, log, primary):
    """What the database holds for every acknowledged change, and what it says happened to sessions."""
    host, port = primary.rsplit(":", 1)
    connection = psycopg2.connect(host=host, port=int(port), user="postgres", dbname="zevauth", connect_timeout=5)
    cursor = connection.cursor()
    cursor.execute("SELECT id FROM environments WHERE publishable_key = %s", (args.key,))
    environment = cursor.fetchone()[0]
    lost = []
    exchange_hashes = [e[0] for e in log.exchanges]
    cursor.execute("""SELECT c.code_hash, s.id::text FROM authorization_codes c JOIN sessions s ON s.authorization_code_id = c.id
                      WHERE c.code_hash = ANY(%s)""", (exchange_hashes,))
    by_code = dict(cursor.fetchall())
    access = [e[2] for e in log.exchanges] + [r[1] for r in log.refreshes]
    refresh_hashes = [e[3] for e in log.exchanges] + [r[2] for r in log.refreshes]
    cursor.execute("SELECT token_hash, session_id::text FROM issued_access_tokens WHERE token_hash = ANY(%s)", (access,))
    access_found = dict(cursor.fetchall())
    cursor.execute("SELECT token_hash, session_id::text FROM issued_refresh_tokens WHERE token_hash = ANY(%s)", (refresh_hashes,))
    refresh_found = dict(cursor.fetchall())
    for code_hash, session_id, access_hash, refresh_hash in log.exchanges:
        if by_code.get(code_hash) != session_id or access_found.get(access_hash) != session_id \
                or refresh_found.get(refresh_hash) != session_id:
            lost.append(("exchange", session_id))
    for session_id, access_hash, refresh_hash in log.refreshes:
        if access_found.get(access_hash) != session_id or refresh_found.get(refresh_hash) != session_id:
            lost.append(("refresh", session_id))
    cursor.execute("""SELECT authorization_code_id, count(*) FROM sessions WHERE environment_id = %s
                      AND authorization_code_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1""", (environment,))
    twice_db = cursor.fetchall()
    cursor.execute("""SELECT COALESCE(revoked_reason, '(none)'), count(*) FROM sessions
                      WHERE environment_id = %s AND revoked_at IS NOT NULL GROUP BY 1 ORDER BY 1""", (environment,))
    revoked = dict(cursor.fetchall())
    cursor.execute("SELECT count(*) FROM sessions WHERE environment_id = %s", (environment,))
    sessions_total = cursor.fetchone()[0]
    connection.close()
    twice_client = [h for h, n in collections.Counter(e[0] for e in log.exchanges).items() if n > 1]
    return {"lost": lost, "twice_db": twice_db, "twice_client": twice_client, "revoked": revoked,
            "sessions_total": sessions_total}


def status_name(record):
    status, retry_after, lb = record[4], record[5], record[6]
    if lb:
        return f"{status}-lb"
    if status == 503 and not retry_after:
        return "503-no-retry-after"
    return str(status)


def failed(record):
    status = record[4]
    return record[6] or status in ("conn", "timeout") or (isinstance(status, int) and status >= 500)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lb", required=True, help="host:port of the load balancer")
    parser.add_argument("--lb-stats", default="", help="host:port of haproxy's stats page")
    parser.add_argument("--key", required=True, help="the development publishable key")
    parser.add_argument("--users", required=True, help="file of email<TAB>password lines")
    parser.add_argument("--nodes", required=True, help="name=host:port,… of the PostgreSQL nodes")
    parser.add_argument("--old-primary", required=True, help="the node name that is primary before the event")
    parser.add_argument("--event-cmd", required=True)
    parser.add_argument("--event-at", type=float, default=20)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=40000)
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--refreshes", type=int, default=3)
    parser.add_argument("--probe", default="", help="host:port of an instance to probe directly (stale URL)")
    parser.add_argument("--probe-name", default="", help="that instance's server name in haproxy")
    parser.add_argument("--recovery-goal", type=float, default=3.0)
    parser.add_argument("--report", required=True, help="where the JSON report is written")
    args = parser.parse_args()

    with open(args.users) as f:
        users = [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip()]
    log = Log()
    readyz_result = []
    sessions = queue.Queue()
    if args.probe:
        # Sessions for the prober, made through the balancer before the load starts (their exchanges are
        # acknowledged changes like any other).
        host, port = args.lb.rsplit(":", 1)
        for _ in range(12):
            client = Client(host, int(port), Log(), "setup", time.time() + 60, 10 ** 9)
            found = sign_in(client, args.key, users[-1])
            if found:
                session = exchange(client, args.key, found[0], found[1], log)
                if session:
                    sessions.put(session)
    began = time.time()
    deadline = began + args.duration
    samples, lb_states, stop = [], [], threading.Event()
    threads = [threading.Thread(target=monitor, args=(args, deadline, samples, lb_states, stop), daemon=True)]
    for number in range(args.workers):
        threads.append(threading.Thread(target=worker, args=(args, number, users[number % len(users)], log, deadline),
                                        daemon=True))
    if args.probe:
        threads.append(threading.Thread(target=lambda: readyz_result.extend(prober(args, log, deadline, sessions)),
                                        daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(max(0, began + args.event_at - time.time()))
    event_at = time.time()
    event = subprocess.run(["bash", "-c", args.event_cmd], capture_output=True, text=True, timeout=120)
    event_done = time.time()
    for thread in threads[1:]:
        thread.join(timeout=max(1, deadline - time.time() + 30))
    stop.set()
    threads[0].join(timeout=10)
    ended = time.time()

    # --- The nodes: when a writable primary was back, and which node it is.
    old = args.old_primary
    seen_old_fail = False
    writable_at, new_primary, demoted_at = None, None, None
    for t, name, state in sorted(samples):
        if t < event_at:
            continue
        if name == old and state != "writable":
            seen_old_fail = True
            if demoted_at is None:
                demoted_at = t
        if writable_at is None and state == "writable" and (name != old or seen_old_fail):
            writable_at, new_primary = t, name
    if writable_at is None and any(s == "writable" for t, n, s in samples if t >= event_at):
        # The old primary was never seen unavailable (back within one sample): writable all along.
        writable_at = event_at
        new_primary = next(n for t, n, s in sorted(samples) if t >= event_at and s == "writable")
    nodes = dict(n.split("=", 1) for n in args.nodes.split(","))
    final = {}
    for t, name, state in sorted(samples):
        final[name] = state
    primary_names = [n for n, s in final.items() if s == "writable"]

    # --- Requests by status and phase; the recovery.
    lb_requests = sorted((r for r in log.requests if r[2] == "lb"), key=lambda r: r[0])
    failures_after = [r for r in lb_requests if r[0] >= event_at and failed(r)]
    if failures_after:
        last_failure_sent = max(r[0] for r in failures_after)
        first_failure_sent = min(r[0] for r in failures_after)
        later_ok = [r[1] for r in lb_requests if r[0] > last_failure_sent and r[3] in WRITES and r[4] == 200]
        recovered_at = min(later_ok) if later_ok else None
    else:
        first_failure_sent, last_failure_sent, recovered_at = None, None, event_at
    phases = collections.OrderedDict((("before", collections.Counter()), ("during", collections.Counter()),
                                      ("after", collections.Counter())))
    by_kind = collections.defaultdict(collections.Counter)
    probe = collections.Counter()
    for r in log.requests:
        name = status_name(r)
        if r[2] == "probe":
            probe[f"{r[3]} {name}"] += 1
            continue
        if r[0] < event_at:
            phases["before"][name] += 1
        elif recovered_at is None or r[0] < recovered_at:
            phases["during"][name] += 1
        else:
            phases["after"][name] += 1
        by_kind[r[3]][name] += 1
    timeline = collections.OrderedDict()
    for r in lb_requests:
        second = int(r[0] - event_at)
        if -3 <= second <= 15:
            timeline.setdefault(second, collections.Counter())[status_name(r)] += 1

    report = {
        "duration_s": round(ended - began, 1), "requests": len(log.requests),
        "event": {"at_s": round(event_at - began, 2), "took_s": round(event_done - event_at, 2),
                  "exit": event.returncode, "output": (event.stdout + event.stderr).strip()[-400:]},
        "old_primary": old, "new_primary": new_primary, "writable_nodes_at_end": primary_names,
        "writable_after_event_s": None if writable_at is None else round(writable_at - event_at, 2),
        "first_failure_after_event_s": None if first_failure_sent is None else round(first_failure_sent - event_at, 2),
        "last_failure_after_event_s": None if last_failure_sent is None else round(last_failure_sent - event_at, 2),
        "recovered_after_event_s": None if recovered_at is None else round(recovered_at - event_at, 2),
        "recovered_after_writable_s": None if (recovered_at is None or writable_at is None)
        else round(max(0.0, recovered_at - writable_at), 2),
        "phases": {k: dict(v) for k, v in phases.items()},
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "timeline_from_event": {str(k): dict(v) for k, v in timeline.items()},
        "acknowledged": {"exchanges": len(log.exchanges), "refreshes": len(log.refreshes)},
        "retries_refused": dict(log.retry_refused),
    }
    if args.probe:
        stale_from = (demoted_at or event_done) + 2.0
        report["probe"] = dict(probe)
        report["probe_readyz_ready_while_stale"] = sum(1 for t, s in readyz_result if t >= stale_from and s == 200)
        report["probe_readyz_samples_while_stale"] = sum(1 for t, s in readyz_result if t >= stale_from)
        downs = {}
        for t, server, state in lb_states:
            if t >= event_at and state.startswith("DOWN") and server not in downs:
                downs[server] = round(t - event_at, 2)
        report["lb_marked_down_after_event_s"] = downs
        # haproxy needs `fall` (2) failed checks 500 ms apart after /readyz turns: 1.5 s more of grace.
        stale_lb = [state for t, server, state in lb_states if server == args.probe_name and t >= stale_from + 1.5]
        report["lb_stale_instance_up_while_stale"] = sum(1 for state in stale_lb if state.startswith("UP"))
        report["lb_stale_instance_samples_while_stale"] = len(stale_lb)
    try:
        target = nodes[primary_names[0]] if primary_names else None
        report["database"] = checked_in_database(args, log, target) if target else {"error": "no writable node"}
    except psycopg2.Error as error:
        report["database"] = {"error": str(error).strip()}

    # --- Goals.
    misses = []
    five_hundreds = sum(n for r in (phases, ) for c in r.values() for s, n in c.items()
                        if s.isdigit() and int(s) >= 500 and s != "503")
    five_hundreds += sum(n for s, n in probe.items() if s.split()[1].isdigit() and int(s.split()[1]) >= 500
                         and s.split()[1] != "503")
    if five_hundreds:
        misses.append(f"{five_hundreds} answers were a 5xx other than 503")
    no_retry_after = sum(c.get("503-no-retry-after", 0) for c in phases.values()) + \
        sum(n for s, n in probe.items() if s.endswith("503-no-retry-after"))
    if no_retry_after:
        misses.append(f"{no_retry_after} answers were 503 without Retry-After")
    database = report["database"]
    if "error" in database:
        misses.append("the database could not be checked: " + database["error"])
    else:
        if database["lost"]:
            misses.append(f"{len(database['lost'])} acknowledged changes are not in the database")
        if database["twice_db"] or database["twice_client"]:
            misses.append(f"{len(database['twice_db']) + len(database['twice_client'])} codes were redeemed twice")
        if sum(database["revoked"].values()):
            misses.append("sessions were revoked by a client's retry: " +
                          ", ".join(f"{n} × {k}" for k, n in database["revoked"].items()))
    if log.retry_refused:
        misses.append("retries after a 503 were refused: " +
                      ", ".join(f"{n} × {k}" for k, n in log.retry_refused.items()))
    if recovered_at is None:
        misses.append("requests did not succeed again before the end of the run")
    elif writable_at is not None and recovered_at - writable_at > args.recovery_goal:
        misses.append(f"recovery took {recovered_at - writable_at:.1f} s after a primary accepted writes "
                      f"(goal {args.recovery_goal:.0f} s)")
    if not log.exchanges or not log.refreshes:
        misses.append("the load acknowledged no exchange or no refresh: nothing was tested")
    if args.probe:
        if report["probe_readyz_ready_while_stale"]:
            misses.append(f"/readyz of the stale instance answered 200 {report['probe_readyz_ready_while_stale']} "
                          f"times while its database was a standby")
        if args.probe_name and (report["lb_stale_instance_up_while_stale"] or not report["lb_stale_instance_samples_while_stale"]):
            misses.append(f"haproxy routed to the stale instance ({args.probe_name}) in "
                          f"{report['lb_stale_instance_up_while_stale']} of {report['lb_stale_instance_samples_while_stale']} "
                          f"samples while its database was a standby")
    report["goals_missed"] = misses
    with open(args.report, "w") as f:
        json.dump(report, f, indent=1)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
