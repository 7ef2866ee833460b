import Foundation

/// What creating an account needs from storage.
public protocol CreateUserStore: Sendable {
    /// Creates an account under `email.key` (unique across the deployment).
    /// `audit` (the operator's `account.create`, named after the new account) is written in the same
    /// statement; a person's own sign-up passes nil.
    /// - Throws: `StoreError.duplicate(constraint:)` when the address has an account; `StoreUnavailable`.
    func createUser(email: EmailAddress, name: DisplayName, passwordHash: String, now: Date, audit: AuditEntry?) throws -> UserRecord
}

/// The operator creates a ZevID account (`POST /v1/admin/users`, docs/protocol.md#admin-api): every value
/// already parsed at the edge; a taken address is a conflict the operator is told about.
public struct CreateUser: Sendable {
    /// What happened.
    public enum Outcome: Sendable, Equatable {
        case created(UserRecord)
        /// The address (its key) has an account already (409 `conflict`).
        case addressTaken
    }

    let store: any CreateUserStore
    let passwords: any PasswordHashingPort

    /// - Parameters:
    ///   - store: where accounts live.
    ///   - passwords: Argon2id.
    public init(store: any CreateUserStore, passwords: any PasswordHashingPort) {
        self.store = store
        self.passwords = passwords
    }

    /// Hashes the password and creates the account.
    /// - Parameter audit: the operator's `account.create` row, or nil for a person's own sign-up.
    /// - Throws: `StoreUnavailable`, or what hashing throws.
    public func callAsFunction(
        email: EmailAddress, name: DisplayName, password: NewPassword, now: Date, audit: AuditEntry? = nil
    ) throws -> Outcome {
        let hash = try passwords.hash(password.text)
        do {
            return .created(try store.createUser(email: email, name: name, passwordHash: hash, now: now, audit: audit))
        } catch StoreError.duplicate {
            return .addressTaken
        }
    }
}

/// A person signs up on the hosted page (docs/protocol.md#accounts). A new address gets an account; an
/// address that has one gets the very same answer after the same Argon2id work, and its account is left
/// untouched, so the page never tells whether an address is registered (docs/decisions.md). It uses
/// `CreateUserStore`: the same one statement as the operator's `CreateUser`.
public struct SignUp: Sendable {
    let create: CreateUser

    /// - Parameters:
    ///   - store: where accounts live.
    ///   - passwords: Argon2id.
    public init(store: any CreateUserStore, passwords: any PasswordHashingPort) {
        create = CreateUser(store: store, passwords: passwords)
    }

    /// Creates the account unless the address has one; either way the caller shows the same page.
    /// - Throws: `StoreUnavailable`, or what hashing throws.
    public func callAsFunction(email: EmailAddress, name: DisplayName, password: NewPassword, now: Date) throws {
        _ = try create(email: email, name: name, password: password, now: now)
    }
}
