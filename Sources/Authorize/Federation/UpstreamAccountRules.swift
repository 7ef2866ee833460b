import Foundation

/// Which ZevID account a verified upstream identity signs in to (docs/federation.md, "Accounts").
public enum UpstreamAccountDecision: Sendable, Equatable {
    /// The identity is linked to this account: sign in to it.
    case signIn(accountID: String)
    /// No account has the address: create one under it (its address verified when the upstream says so), and
    /// link the identity to it.
    case create(email: EmailAddress, verified: Bool, name: DisplayName)
    /// An account has the address but the identity is not linked to it: nothing is linked silently. The person
    /// signs in to that account once (password, passkey or code) and confirms; only then is the identity
    /// linked (the defence against account pre-hijacking).
    case confirmLink(existingAccountID: String)
    /// The identity cannot sign in to any account.
    case refuse(UpstreamAccountRefusal)
}

/// Why an upstream identity gets no account.
public enum UpstreamAccountRefusal: Error, Sendable, Equatable {
    /// The upstream shared no email address (or one that is not an address), and the identity is linked to no
    /// account, so there is nothing to sign in to and nothing to create an account under.
    case noAddress

    /// What the page says, with `provider` the provider's display name.
    public func sentence(provider: String) -> String {
        switch self {
        case .noAddress:
            "\(provider) did not share an email address with ZevID, so no account can be made with it. "
                + "Sign in another way, or allow \(provider) to share your email address."
        }
    }
}

/// The account rules of an upstream sign-in, in one place (docs/federation.md, "Accounts"). The hosted flow
/// and the native token exchange both call `decide` after the upstream ID token is verified; they look up
/// the two accounts it needs and act on the answer.
public enum UpstreamAccountRules {
    /// Parses the address the upstream asserted, as an account's address is parsed; nil when it gave none
    /// or one the address rule refuses. Apple's private-relay addresses are real addresses.
    /// - Parameters:
    ///   - email: the ID token's `email` claim.
    ///   - domainToASCII: IDNA's ToASCII, as `EmailAddress.parse` takes it.
    public static func address(_ email: String?, domainToASCII: (String) -> String?) -> EmailAddress? {
        guard let email else { return nil }
        return try? EmailAddress.parse(email, domainToASCII: domainToASCII).get()
    }

    /// Decides where the identity signs in.
    ///
    /// In this order: an identity (provider, issuer, `sub`) already linked signs in to its account, whatever
    /// address it now asserts, and never moves to another one; else an address that no account has creates an
    /// account; else the account with the address must confirm the link after signing in. An unverified
    /// address is never a reason to link: confirming needs a sign-in to the account either way.
    /// - Parameters:
    ///   - identity: the verified identity.
    ///   - address: `address(identity.email, …)`.
    ///   - linkedAccount: the account the identity is linked to, if any.
    ///   - accountWithAddress: the account whose address has `address.key`, if any.
    /// The new account's name is the identity's `name` (the hosted flow fills Apple's first-sign-in `user`
    /// name in with `UpstreamIdentity.naming`), else the address's local part.
    public static func decide(
        identity: UpstreamIdentity, address: EmailAddress?, linkedAccount: String?, accountWithAddress: String?
    ) -> UpstreamAccountDecision {
        if let linkedAccount { return .signIn(accountID: linkedAccount) }
        guard let address else { return .refuse(.noAddress) }
        if let accountWithAddress { return .confirmLink(existingAccountID: accountWithAddress) }
        return .create(email: address, verified: identity.emailVerified, name: name(identity.name, address: address))
    }

    /// The new account's display name: the identity's `name` when the name rule accepts it, else the
    /// address's local part (an account always has a name; the person can change it on /account).
    static func name(_ given: String?, address: EmailAddress) -> DisplayName {
        if let given, let name = DisplayName(given) { return name }
        let local = String(address.typed.prefix(while: { $0 != "@" }))
        return DisplayName(local) ?? DisplayName(address.typed) ?? DisplayName("ZevID")!
    }

    /// The name in Apple's `user` form field, sent with the first authorization only:
    /// `{"name":{"firstName":"…","lastName":"…"},"email":"…"}` (Apple's "Incorporating Sign in with Apple into
    /// other platforms"); nil when absent or malformed. The field is not signed, so it is used only as the
    /// name of an account the verified token creates.
    public static func appleUserName(_ json: String?) -> String? {
        guard let json, json.utf8.count <= 4096, let data = json.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let name = object["name"] as? [String: Any]
        else { return nil }
        let parts = [name["firstName"], name["lastName"]].compactMap { ($0 as? String)?.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// Whether a linked identity may be unlinked: only while another way to sign in remains, so nobody locks
    /// themselves out (docs/federation.md, "Unlinking").
    /// - Parameters:
    ///   - hasPassword: the account has a password.
    ///   - passkeys: how many passkeys it has.
    ///   - linkedIdentities: how many identities are linked to it, the one to unlink included.
    public static func mayUnlink(hasPassword: Bool, passkeys: Int, linkedIdentities: Int) -> Bool {
        hasPassword || passkeys > 0 || linkedIdentities > 1
    }
}
