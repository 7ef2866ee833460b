#!/usr/bin/env python3
"""Regenerates Sources/Authorize/Accounts/CommonPasswordList.swift from the data file
data/common-passwords/10-million-password-list-top-1000.txt (SecLists, MIT licence; see its README)."""
import json
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
lines = (root / "data/common-passwords/10-million-password-list-top-1000.txt").read_text().splitlines()
out = [
    "// Generated from data/common-passwords/10-million-password-list-top-1000.txt by",
    "// scripts/common-passwords.py; do not edit. Source: SecLists (Daniel Miessler et al., MIT licence),",
    "// Passwords/Common-Credentials/10-million-password-list-top-1000.txt.",
    "",
    "/// The 1,000 most common passwords (SecLists' 10-million-password-list-top-1000, MIT licence).",
    "enum CommonPasswordList {",
    "    static let entries: [String] = [",
]
out += ["        " + json.dumps(line) + "," for line in lines]
out += ["    ]", "}", ""]
(root / "Sources/Authorize/Accounts/CommonPasswordList.swift").write_text("\n".join(out))
