import Crypto
import Encoding
import Foundation

/// A client's DPoP key (P-256, ES256) and the proofs it signs (RFC 9449 §4.2), with every part of the
/// proof open to a test that needs to break one rule.
public struct DPoPProver: Sendable {
    public let key: Crypto.SigningKey
    public let x: [UInt8]
    public let y: [UInt8]

    /// A new P-256 key.
    public init() throws {
        key = try Crypto.SigningKey.generate(.p256)
        guard case .p256(let x, let y) = try key.publicParameters() else { throw Crypto.SigningError.notAKey }
        self.x = x
        self.y = y
    }

    /// The public `jwk` header member.
    public var jwk: JSONValue {
        ["kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y))]
    }

    /// The key's `jkt` (RFC 7638).
    public var thumbprint: String {
        let input = #"{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(x))","y":"\#(Base64URL.encode(y))"}"#
        return Base64URL.encode(Crypto.sha256(Array(input.utf8)))
    }

    /// A signed proof for `method` and `url` at `issuedAt`, with `ath` of `accessToken` and `nonce` when given.
    /// `header` and `claims` replace the defaults member by member (`.null` removes one).
    public func proof(
        method: String, url: String, issuedAt: Date, accessToken: String? = nil, nonce: String? = nil,
        identifier: String = UUID().uuidString, header: [(String, JSONValue)] = [], claims: [(String, JSONValue)] = []
    ) throws -> String {
        var headerMembers: [(String, JSONValue)] = [("typ", "dpop+jwt"), ("alg", "ES256"), ("jwk", jwk)]
        var claimMembers: [(String, JSONValue)] = [
            ("jti", .string(identifier)), ("htm", .string(method)), ("htu", .string(url)),
            ("iat", .int(Int(issuedAt.timeIntervalSince1970))),
        ]
        if let accessToken { claimMembers.append(("ath", .string(Base64URL.encode(Crypto.sha256(Array(accessToken.utf8)))))) }
        if let nonce { claimMembers.append(("nonce", .string(nonce))) }
        func merge(_ base: inout [(String, JSONValue)], _ changes: [(String, JSONValue)]) {
            for (name, value) in changes {
                base.removeAll { $0.0 == name }
                if value != .null { base.append((name, value)) }
            }
        }
        merge(&headerMembers, header)
        merge(&claimMembers, claims)
        let input = Array(
            (Base64URL.encode(JSONWriter.encode(JSONValue.object(headerMembers))) + "."
                + Base64URL.encode(JSONWriter.encode(JSONValue.object(claimMembers)))).utf8)
        return String(decoding: input, as: UTF8.self) + "." + Base64URL.encode(try key.sign(input))
    }
}
