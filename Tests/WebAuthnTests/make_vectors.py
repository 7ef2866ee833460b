#!/usr/bin/env python3
"""Writes Vectors.swift: registration and authentication responses of a software authenticator.

A software authenticator made with the `cryptography` package (Debian python3-cryptography or PyPI)
produces, for each of ES256, EdDSA (Ed25519) and RS256, what a browser would hand the hosted page: a
registration (clientDataJSON, attestationObject with fmt "none") and an authentication (clientDataJSON,
authenticatorData, signature, userHandle), laid out as WebAuthn Level 3 §6.1, §6.5 and §5.8.1 describe.
The ES256 and Ed25519 private keys come from fixed seeds; the RSA key and the ECDSA signatures are random,
so a new run writes other bytes that verify just the same. The CBOR here is a few lines of test tooling
that only encode; the server decodes with libcbor.

    python3 Tests/WebAuthnTests/make_vectors.py > Tests/WebAuthnTests/Vectors.swift
"""
import hashlib
import json
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

RP_ID = "id.example.com"
ORIGIN = "https://id.example.com"


def head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | info]) + n.to_bytes(size, "big")
    raise ValueError(n)


def cbor(value):
    if isinstance(value, bool):
        return b"\xf5" if value else b"\xf4"
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        raw = value.encode()
        return head(3, len(raw)) + raw
    if isinstance(value, list):
        return head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


def b64url(raw):
    import base64

    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def client_data(kind, challenge):
    # The member order and spelling browsers use; JSON without spaces.
    return json.dumps(
        {"type": kind, "challenge": b64url(challenge), "origin": ORIGIN, "crossOrigin": False}, separators=(",", ":")
    ).encode()


def seed(label, size=32):
    return hashlib.sha256(label.encode()).digest()[:size]


def make(name, private, cose, sign, flags_reg, flags_get, count_reg, count_get, extensions=None):
    rp_hash = hashlib.sha256(RP_ID.encode()).digest()
    credential_id = seed(name + " credential", 16)
    user_handle = seed(name + " user")
    aaguid = seed(name + " aaguid", 16)
    reg_challenge = seed(name + " registration challenge")
    get_challenge = seed(name + " authentication challenge")
    reg_client = client_data("webauthn.create", reg_challenge)
    flags = flags_reg | 0x40 | (0x80 if extensions else 0)
    attested = aaguid + struct.pack(">H", len(credential_id)) + credential_id + cbor(cose)
    auth_reg = rp_hash + bytes([flags]) + struct.pack(">I", count_reg) + attested + (cbor(extensions) if extensions else b"")
    attestation = cbor({"fmt": "none", "attStmt": {}, "authData": auth_reg})
    get_client = client_data("webauthn.get", get_challenge)
    auth_get = rp_hash + bytes([flags_get]) + struct.pack(">I", count_get)
    signature = sign(auth_get + hashlib.sha256(get_client).digest())
    return {
        "credentialID": credential_id,
        "userHandle": user_handle,
        "aaguid": aaguid,
        "registrationChallenge": reg_challenge,
        "registrationClientDataJSON": reg_client,
        "attestationObject": attestation,
        "authenticationChallenge": get_challenge,
        "authenticationClientDataJSON": get_client,
        "authenticatorData": auth_get,
        "signature": signature,
    }, (count_reg, count_get)


def es256():
    key = ec.derive_private_key(int.from_bytes(seed("es256 key"), "big"), ec.SECP256R1())
    numbers = key.public_key().public_numbers()
    cose = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
    # UP|UV, device-bound; counters 1 then 5.
    return make("es256", key, cose, lambda m: key.sign(m, ec.ECDSA(hashes.SHA256())), 0x05, 0x05, 1, 5)


def eddsa():
    key = ed25519.Ed25519PrivateKey.from_private_bytes(seed("eddsa key"))
    x = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    cose = {1: 1, 3: -8, -1: 6, -2: x}
    # UP|UV|BE|BS, a synced passkey with no counter.
    return make("eddsa", key, cose, key.sign, 0x1D, 0x1D, 0, 0)


def rs256():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    cose = {1: 3, 3: -257, -1: numbers.n.to_bytes(256, "big"), -2: numbers.e.to_bytes(3, "big")}
    sign = lambda m: key.sign(m, padding.PKCS1v15(), hashes.SHA256())
    # UP|UV|BE (not backed up), with an extension output in the registration (ED).
    return make("rs256", key, cose, sign, 0x0D, 0x0D, 0, 0, extensions={"credProtect": 2})


def swift_bytes(raw):
    return "hex(\"" + raw.hex() + "\")"


def main():
    print("// Generated by Tests/WebAuthnTests/make_vectors.py (a software authenticator built on the Python")
    print("// `cryptography` package; see that file). Do not edit: run it again instead.")
    print("// swift-format-ignore-file")
    print()
    print("/// One software authenticator's registration and authentication, as a browser would hand them over.")
    print("struct Vector: Sendable {")
    fields = [
        "credentialID", "userHandle", "aaguid", "registrationChallenge", "registrationClientDataJSON",
        "attestationObject", "authenticationChallenge", "authenticationClientDataJSON", "authenticatorData", "signature",
    ]
    for field in fields:
        print(f"    let {field}: [UInt8]")
    print("    let registrationSignCount: UInt32")
    print("    let authenticationSignCount: UInt32")
    print("}")
    print()
    print("/// Relying party ID and origin of every vector.")
    print(f"let vectorRPID = \"{RP_ID}\"")
    print(f"let vectorOrigin = \"{ORIGIN}\"")
    for name, make_vector in (("es256", es256), ("eddsa", eddsa), ("rs256", rs256)):
        values, (count_reg, count_get) = make_vector()
        print()
        print(f"let {name}Vector = Vector(")
        for field in fields:
            print(f"    {field}: {swift_bytes(values[field])},")
        print(f"    registrationSignCount: {count_reg}, authenticationSignCount: {count_get})")


main()
