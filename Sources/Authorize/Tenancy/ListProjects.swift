/// What the operator's project list needs from storage.
public protocol ProjectListStore: Sendable {
    /// Up to `limit` projects in creation order after the project `after` (a cursor that is not a project
    /// id starts from the beginning).
    /// - Throws: `StoreUnavailable`.
    func projects(after: String?, limit: Int) throws -> [ProjectRecord]
}

/// The operator's `GET /v1/admin/projects`: one page of the deployment's projects in creation order.
public struct ListProjects: Sendable {
    let store: any ProjectListStore

    /// - Parameter store: where projects are listed from.
    public init(store: any ProjectListStore) { self.store = store }

    /// - Parameters:
    ///   - cursor: the previous page's `nextCursor`, or nil.
    ///   - limit: 1–100 items.
    /// - Throws: `StoreUnavailable`.
    public func callAsFunction(cursor: String?, limit: Int) throws -> Page<ProjectRecord> {
        Page(rows: try store.projects(after: cursor, limit: limit + 1), limit: limit, id: \.id)
    }
}
