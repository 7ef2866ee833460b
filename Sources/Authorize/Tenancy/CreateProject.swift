import Foundation

/// What creating a project needs from storage.
public protocol ProjectCreationStore: Sendable {
    /// Creates a project with its development and production environments and one secret key each, and
    /// the first owner's membership when `owner` is given (with its `member.add` audit row), in one
    /// transaction.
    /// - Returns: the project's id.
    /// `audit` (named after the new project) is written in the same transaction (docs/console.md, "Audit log").
    /// - Throws: `MemberRefusal.noAccount` when the owner's account is gone (nothing created);
    ///   `StoreUnavailable`, `StoreError.unstorableInput`.
    func createProject(
        name: String, development: NewEnvironmentKeys, production: NewEnvironmentKeys, owner: NewProjectOwner?, now: Date,
        audit: AuditEntry
    ) throws -> String
}

/// The first owner of a project being created (`POST /v1/admin/projects {"ownerEmail"}`): the account,
/// and who made the change for the `member.add` row the membership records.
public struct NewProjectOwner: Sendable, Equatable {
    /// The open account's id.
    public let userID: String
    public let origin: ChangeOrigin

    public init(userID: String, origin: ChangeOrigin) {
        self.userID = userID
        self.origin = origin
    }
}

/// A new project as its creator sees it once: both environments' publishable keys and secret keys.
public struct CreatedProject: Sendable, Equatable {
    /// The project's id.
    public let id: String
    /// Its name.
    public let name: String
    /// The development environment's keys (`pk_test_…`, `sk_test_…`).
    public let development: IssuedKeys
    /// The production environment's keys (`pk_live_…`, `sk_live_…`).
    public let production: IssuedKeys

    /// An environment's first keys; `secretKey` is shown only in the creation's answer.
    public struct IssuedKeys: Sendable, Equatable {
        public let publishableKey: String
        public let secretKey: String
    }
}

/// Creates a project (docs/protocol.md#admin-api, `POST /v1/admin/projects`): mints both environments'
/// publishable and secret keys and stores the secret keys only as digests.
public struct CreateProject: Sendable {
    let store: any ProjectCreationStore
    let secrets: any Secrets

    /// - Parameters:
    ///   - store: where projects are created.
    ///   - secrets: the key mint and digest.
    public init(store: any ProjectCreationStore, secrets: any Secrets) {
        self.store = store
        self.secrets = secrets
    }

    /// - Parameters:
    ///   - name: the project's name, already checked (`DisplayName` at the edge).
    ///   - owner: the first owner, whose membership is made in the same transaction, or nil.
    ///   - now: the creation time.
    ///   - audit: the `project.create` row (the store names the new project in it).
    /// - Throws: when the CSPRNG fails; `MemberRefusal.noAccount`; `StoreUnavailable`.
    public func callAsFunction(name: String, owner: NewProjectOwner? = nil, now: Date, audit: AuditEntry) throws -> CreatedProject {
        let development = try newKeys(.development)
        let production = try newKeys(.production)
        let id = try store.createProject(
            name: name, development: development.stored, production: production.stored, owner: owner, now: now, audit: audit)
        return CreatedProject(id: id, name: name, development: development.issued, production: production.issued)
    }

    /// Fresh keys of one kind: what is stored, and what is shown once.
    /// - Throws: when the CSPRNG fails.
    public func newKeys(_ kind: EnvironmentKind) throws -> (stored: NewEnvironmentKeys, issued: CreatedProject.IssuedKeys) {
        let secret = try secrets.mintToken(prefix: kind.secretKeyPrefix)
        let publishable = try secrets.mintToken(prefix: kind.publishableKeyPrefix)
        return (
            NewEnvironmentKeys(
                publishableKey: publishable, secretKeyHash: secrets.digest(secret), secretKeySuffix: String(secret.suffix(4))),
            CreatedProject.IssuedKeys(publishableKey: publishable, secretKey: secret)
        )
    }
}
