#!/usr/bin/env python3
"""Verifies ID tokens the server signed against its JWKS with an independent implementation (the
`cryptography` package, not OpenSSL through the server's Swift wrapper).

    verify_signatures.py JWKS_URL TOKEN [TOKEN ...]

Fetches JWKS_URL (loopback only), checks its shape (RFC 7517 §5, RFC 7518 §6: kty, kid, use "sig", alg,
RSA n/e of 2048 bits or more, EC P-256 x/y of 32 bytes, unique kids, no private member) and
`Cache-Control: public, max-age=300`, then verifies each compact JWS (RFC 7515 §7.1) with the key its
`kid` names: RS256 as RSASSA-PKCS1-v1_5 with SHA-256, ES256 as ECDSA P-256 with SHA-256 over the 64-byte
r||s of RFC 7518 §3.4. Prints one line per token and exits 1 on the first failure.
"""
import base64
import json
import sys
import urllib.parse
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64url(text):
    if "=" in text or "+" in text or "/" in text:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def fail(message):
    print("FAIL " + message)
    sys.exit(1)


def public_key(jwk):
    if jwk.get("use") != "sig":
        fail(f"key {jwk.get('kid')} has use {jwk.get('use')!r}, not 'sig'")
    if any(name in jwk for name in ("d", "p", "q", "dp", "dq", "qi")):
        fail(f"key {jwk.get('kid')} publishes a private member")
    if jwk.get("kty") == "RSA" and jwk.get("alg") == "RS256":
        n = int.from_bytes(b64url(jwk["n"]), "big")
        e = int.from_bytes(b64url(jwk["e"]), "big")
        if n.bit_length() < 2048:
            fail(f"key {jwk['kid']} is an RSA key of {n.bit_length()} bits")
        return rsa.RSAPublicNumbers(e, n).public_key()
    if jwk.get("kty") == "EC" and jwk.get("alg") == "ES256" and jwk.get("crv") == "P-256":
        x, y = b64url(jwk["x"]), b64url(jwk["y"])
        if len(x) != 32 or len(y) != 32:
            fail(f"key {jwk['kid']} has coordinates of {len(x)} and {len(y)} bytes")
        return ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()).public_key()
    fail(f"key {jwk.get('kid')} is kty={jwk.get('kty')} alg={jwk.get('alg')} crv={jwk.get('crv')}")


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    url = argv[1]
    host = urllib.parse.urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        fail(f"{url} is not a loopback address")
    with urllib.request.urlopen(url, timeout=10) as response:
        cache = response.headers.get("Cache-Control")
        if cache != "public, max-age=300":
            fail(f"the JWKS answered Cache-Control {cache!r}")
        jwks = json.load(response)
    keys = jwks.get("keys")
    if not isinstance(keys, list) or not keys:
        fail("the JWKS has no keys")
    kids = [key.get("kid") for key in keys]
    if len(set(kids)) != len(kids):
        fail("the JWKS repeats a kid")
    by_kid = {key["kid"]: (key["alg"], public_key(key)) for key in keys}
    print(f"ok jwks: {len(keys)} keys, " + ", ".join(sorted({key['alg'] for key in keys})))
    for token in argv[2:]:
        parts = token.split(".")
        if len(parts) != 3:
            fail("a token is not a JWS compact serialization")
        header = json.loads(b64url(parts[0]))
        alg, key = by_kid.get(header.get("kid"), (None, None))
        if key is None:
            fail(f"no published key has kid {header.get('kid')}")
        if header.get("alg") != alg or header.get("typ") != "JWT":
            fail(f"header {header} does not match its key's alg {alg}")
        signed = (parts[0] + "." + parts[1]).encode("ascii")
        signature = b64url(parts[2])
        try:
            if alg == "RS256":
                key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
            else:
                if len(signature) != 64:
                    fail(f"an ES256 signature of {len(signature)} bytes, not 64")
                der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
                key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            fail(f"the {alg} signature of a token does not verify")
        print(f"ok {alg} token signed by {header['kid']} verifies")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
