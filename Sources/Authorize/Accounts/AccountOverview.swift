/// What the account page needs from storage.
public protocol AccountOverviewStore: Sendable {
    /// The person's TOTP factor, confirmed or not. - Throws: `StoreUnavailable`.
    func totpFactor(userID: String) throws -> TOTPFactorRecord?
    /// The environments the person is connected to, by project name. - Throws: `StoreUnavailable`.
    func connectedApps(userID: String) throws -> [ConnectedApp]
    /// Unused recovery codes the person has left. - Throws: `StoreUnavailable`.
    func unusedRecoveryCodes(userID: String) throws -> Int
}

/// What the account page shows (docs/protocol.md#accounts): connected apps, and whether two-step
/// verification is on with how many recovery codes are left.
public struct AccountOverview: Sendable {
    /// The page's facts.
    public struct Facts: Sendable, Equatable {
        public let apps: [ConnectedApp]
        /// Whether a confirmed TOTP factor exists.
        public let totpEnabled: Bool
        /// Unused recovery codes; 0 when two-step verification is off.
        public let recoveryCodesLeft: Int
    }

    let store: any AccountOverviewStore

    /// - Parameter store: factors, connected apps and recovery codes.
    public init(store: any AccountOverviewStore) { self.store = store }

    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(userID: String) throws -> Facts {
        let enabled = try store.totpFactor(userID: userID)?.confirmed == true
        return Facts(
            apps: try store.connectedApps(userID: userID), totpEnabled: enabled,
            recoveryCodesLeft: enabled ? try store.unusedRecoveryCodes(userID: userID) : 0)
    }
}
