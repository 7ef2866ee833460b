import Authorize
import Foundation
import ZevAuthServer

/// The upstream sign-in ports of a deployment with no provider and no linked identity, for contexts with no
/// database: the sign-in pages show no "Continue with" button and the account page lists nothing linked;
/// anything that would start, finish or change an upstream sign-in is `StoreUnavailable`, as it would be
/// without PostgreSQL.
public struct NoUpstream: UpstreamSignInStores {
    public init() {}

    private func unavailable() -> StoreUnavailable { StoreUnavailable(reason: "upstream_not_in_this_fake") }
    public func provider(slug: String) throws -> UpstreamProviderRecord? { nil }
    public func shownProviders(projectID: String) throws -> [UpstreamProviderRecord] { [] }
    public func allProviders() throws -> [UpstreamProviderRecord] { [] }
    public func createUpstreamFlow(_ flow: UpstreamFlowRecord, stateHash: String, now: Date) throws { throw unavailable() }
    public func parkPostedCode(stateHash: String, sealedCode: String, name: String?, now: Date) throws -> Bool { false }
    public func consumeUpstreamFlow(stateHash: String, bindingHash: String, now: Date) throws -> UpstreamFlowRecord? { nil }
    public func upstreamFlow(stateHash: String) throws -> UpstreamFlowRecord? { nil }
    public func endUpstreamFlow(stateHash: String, now: Date) throws {}
    public func createLinkConfirmation(_ confirmation: LinkConfirmationRecord, tokenHash: String) throws { throw unavailable() }
    public func linkConfirmation(tokenHash: String) throws -> LinkConfirmationRecord? { nil }
    public func useLinkConfirmation(id: String, now: Date) throws -> Bool { false }
    public func detachBrowserSession(requestID: String) throws {}
    public func createFederatedMFAChallenge(
        userID: String, browserBindingHash: String, authorizationRequestID: String?, now: Date, lifetimeSeconds: Double
    ) throws -> String { throw unavailable() }
    public func createFederatedBrowserSession(tokenHash: String, userID: String, now: Date) throws -> String { throw unavailable() }
    public func linkedAccount(_ identity: UpstreamIdentity, now: Date) throws -> UserRecord? { nil }
    public func user(emailKey: String) throws -> UserRecord? { nil }
    public func createLinkedAccount(
        email: EmailAddress, name: DisplayName, verified: Bool, identity: UpstreamIdentity, now: Date, clientAddress: String?
    ) throws -> UserRecord { throw unavailable() }
    public func linkIdentity(
        providerID: String, issuer: String, subject: String, email: String?, userID: String, now: Date, clientAddress: String?
    ) throws -> Bool { throw unavailable() }
    public func linkedIdentities(userID: String) throws -> [LinkedIdentity] { [] }
    public func unlinkIdentity(
        id: String, userID: String, now: Date, clientAddress: String?, allowed: (Bool, Int, Int) -> Bool
    ) throws -> UnlinkOutcome { throw unavailable() }
}
