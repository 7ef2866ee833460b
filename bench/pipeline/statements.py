#!/usr/bin/env python3
"""Writes the pgbench scripts that run the server's OWN statements (docs/performance.md, "Pipeline benchmark").

The SQL text is read from the Swift sources, so the ceiling follows the statement the server really sends:
  - the exchange: the string literal `static let exchangeSQL = \"\"\"…\"\"\"`;
  - the refresh:  the string literal `static let refreshSQL = \"\"\"…\"\"\"`;
  - the start's insert: the one string literal that contains `INSERT INTO authorization_requests`.
Each `$N` is replaced by the pgbench expression below that stands for what the server binds (hashes and
ids derived from the per-transaction number `:n`, so every transaction presents a fresh code or token).
A statement whose placeholders differ from the table here stops the script: update the table.

  python3 statements.py SOURCES_DIR OUT_DIR
"""
import pathlib
import re
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
        1: ":pk",  # publishable key (Authorization: Bearer)
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
    },
    "refresh": {
        1: ":pk",
        2: sha("zrt_bench_"),  # SHA-256 hex of the presented refresh token
        3: ":now",
        4: sha("zat_rotated_"),  # new access token hash
        5: sha("zrt_rotated_"),  # new refresh token hash
        6: ":bucket",  # failure gate: bucket
        7: ":addr",  # failure gate: client address
        8: ":window",  # failure gate: window start, epoch seconds
        9: ":threshold",  # failure gate: threshold
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
    },
}


def swift_literals(sources):
    """Every Swift multi-line string literal under `sources`: (file, the line before it, its text)."""
    for path in sorted(pathlib.Path(sources).rglob("*.swift")):
        lines = path.read_text().split("\n")
        i = 0
        while i < len(lines):
            if lines[i].rstrip().endswith('"""') and lines[i].count('"""') == 1:
                opener = lines[i]
                j = i + 1
                while j < len(lines) and lines[j].strip() != '"""' and not lines[j].strip().startswith('"""'):
                    j += 1
                if j >= len(lines):
                    break
                indent = len(lines[j]) - len(lines[j].lstrip())
                body = "\n".join(line[indent:] for line in lines[i + 1 : j])
                yield path, opener, body
                i = j + 1
            else:
                i += 1


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


def find(sources, name):
    found = []
    for path, opener, body in swift_literals(sources):
        if name == "start":
            if "INSERT INTO authorization_requests" in body:
                found.append((path, body))
        elif re.search(rf"\b{name}SQL\s*=", opener):
            found.append((path, body))
    if len(found) != 1:
        where = ", ".join(str(p) for p, _ in found) or "nowhere"
        sys.exit(f"statements.py: expected one {name} statement in {sources}, found {len(found)} ({where})")
    path, body = found[0]
    if "\\(" in body:
        sys.exit(f"statements.py: the {name} statement in {path} interpolates Swift values; it cannot be replayed")
    return path, body


def main():
    sources, out = sys.argv[1], pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, parameters in PARAMETERS.items():
        path, sql = find(sources, name)
        sql = strip_comments(sql)
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
