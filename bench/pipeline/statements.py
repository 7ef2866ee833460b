#!/usr/bin/env python3
"""Writes the pgbench scripts that run the server's OWN statements (docs/performance.md, "Pipeline benchmark").

The SQL text comes from the server itself (`zevauth statements`, `HotPathStatements.all`), so the ceiling
follows the statement the server really prepares, interpolated parts included:
  - the exchange (`PostgresAuthorizations.exchangeSQL`);
  - the refresh (`PostgresSessions.refreshSQL`);
  - the start's insert (`PostgresAuthorizations.pendingSignInSQL`).
Each `$N` is replaced by the pgbench expression below that stands for what the server binds (hashes and
ids derived from the per-transaction number `:n`, so every transaction presents a fresh code or token).
A statement whose placeholders differ from the table here stops the script: update the table.

  python3 statements.py ZEVAUTH_BINARY OUT_DIR
"""
import json
import pathlib
import re
import subprocess
import sys

# Per-transaction number: each client takes base + k * step + client_id + 1 (k = 0, 1, …), so clients never
# share a number and a measurement never reaches into another's range. `k` starts at -1 (pgbench -D k=-1).
PROLOGUE = "\\set k :k + 1\n\\set n :base + :k * :step + :client_id + 1\n"


def sha(prefix):
    return f"encode(sha256(convert_to('{prefix}' || :n::text, 'UTF8')), 'hex')"


# What the server binds, per statement (see PostgresAuthorizations.exchange, PostgresSessions.refresh,
# PostgresAuthorizations.recordPendingSignIn).
PARAMETERS = {
    "exchange": {
        1: ":env",  # the environment's id (found by publishable key in the configuration in memory)
        2: sha("hoc_bench_"),  # SHA-256 hex of the presented code
        3: ":redirect",  # redirectUri sent
        4: ":challenge",  # S256 of the sent codeVerifier
        5: ":now",  # the request's time, epoch seconds
        6: "('00000000-0000-4000-8000-' || lpad(:n::text, 12, '0'))",  # the attempt's UUID
        7: sha("zat_pgbench_"),  # SHA-256 hex of the new access token
        8: sha("zrt_pgbench_"),  # SHA-256 hex of the new refresh token
        9: ":bucket",  # failure gate: bucket
        10: ":addr",  # failure gate: client address
        11: ":window",  # failure gate: window start, epoch seconds
        12: ":threshold",  # failure gate: threshold
        13: "NULL",  # the authenticated web client (a native app: none)
        14: "90",  # the environment's settings (seed.sql keeps the defaults): session maximum age, days
        15: "30",  # session idle days
        16: "15",  # access token lifetime, minutes
        17: "'RS256'",  # ID token algorithm
    },
    "refresh": {
        1: ":env",
        2: sha("zrt_bench_"),  # SHA-256 hex of the presented refresh token
        3: ":now",
        4: sha("zat_rotated_"),  # new access token hash
        5: sha("zrt_rotated_"),  # new refresh token hash
        6: ":bucket",  # failure gate: bucket
        7: ":addr",  # failure gate: client address
        8: ":window",  # failure gate: window start, epoch seconds
        9: ":threshold",  # failure gate: threshold
        10: "NULL",  # the authenticated web client (a native app: none)
        11: "90",  # the environment's settings, as for the exchange
        12: "30",
        13: "15",
        14: "0",  # refresh reuse grace, seconds
        15: "'RS256'",
    },
    "start": {
        1: ":env",  # environment id
        2: ":redirect",
        3: "'loopback'",  # redirect kind
        4: "'s' || :n::text",  # state
        5: ":challenge",
        6: "'false'",  # prompt=login
        7: "NULL",  # login_hint
        8: ":now",
        9: ":expires",  # now + 600 s
        10: "'false'",  # standard endpoint
        11: "NULL",  # the presented binding (a new browser has none)
        12: sha("zbb_bench_"),  # SHA-256 hex of the freshly minted binding id
        13: ":expires",  # when the binding's record expires
        14: "NULL",  # the browser-session cookie's digest (a new browser has none)
        15: "90",  # the environment's session maximum age, days
        16: "'http'",  # the redirect URI's parsed parts: scheme,
        17: "'127.0.0.1'",  # host,
        18: "5000",  # port,
        19: "'/cb'",  # path and query
        20: "NULL",  # max_age, seconds (the start gave none)
        21: "'false'",  # prompt=consent
        22: "''",  # scope (none requested)
        23: "NULL",  # nonce (none sent)
        24: "NULL",  # dpop_jkt (none sent)
        25: "NULL",  # the web client (a native app: none)
        26: "'false'",  # response_mode=form_post
    },
}


def strip_comments(sql):
    """Drops `-- …` comments outside single-quoted strings (pgbench should see only the statement)."""
    out = []
    for line in sql.split("\n"):
        quoted = False
        cut = len(line)
        for k, ch in enumerate(line):
            if ch == "'":
                quoted = not quoted
            elif not quoted and line.startswith("--", k):
                cut = k
                break
        if line[:cut].strip():
            out.append(line[:cut].rstrip())
    return "\n".join(out)


def main():
    binary, out = sys.argv[1], pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    statements = json.loads(subprocess.run([binary, "statements"], check=True, capture_output=True, text=True).stdout)
    path = f"{binary} statements"
    for name, parameters in PARAMETERS.items():
        if name not in statements:
            sys.exit(f"statements.py: `{path}` printed no {name} statement")
        sql = strip_comments(statements[name])
        used = {int(m) for m in re.findall(r"\$(\d+)", sql)}
        if used != set(parameters):
            sys.exit(
                f"statements.py: the {name} statement in {path} uses ${sorted(used)}, "
                f"the table here knows ${sorted(parameters)}: update PARAMETERS"
            )
        # Highest first, so $1 does not eat the front of $12.
        for number in sorted(parameters, reverse=True):
            sql = sql.replace(f"${number}", f"({parameters[number]})" if parameters[number] != "NULL" else "NULL")
        (out / f"{name}.sql").write_text(f"-- generated from {path} by bench/pipeline/statements.py\n{PROLOGUE}{sql};\n")
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
