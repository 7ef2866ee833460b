import Association
import Authorize
import Encoding
import Foundation
import Postgres

/// Association checks: each app's link state, the history of every check, and the per-domain schedule
/// whose leases keep several instances from checking one domain at once (docs/protocol.md#link-check-schedule:
/// checked when an app is added, when asked, and at least once a day). One type for the aggregate,
/// conforming to the link check's and the scheduler's stores; every statement runs inside `PostgresEdge.run`.
public struct PostgresLinkChecks: Sendable {
    let pool: EdgePool

    /// - Parameter pool: the connection pool every statement goes through.
    public init(pool: PostgresPool) { self.pool = EdgePool(pool: pool) }

    // MARK: Link states

    static func problems(fromJSON text: String?) -> [LinkProblemRecord] {
        guard let text, let array = (try? JSONValue.parse(Array(text.utf8)))?.arrayValue else { return [] }
        return array.compactMap { element in
            guard let item = element.objectValue else { return nil }
            func member(_ name: String) -> JSONValue? { item.first { $0.0 == name }?.1 }
            guard let code = member("code")?.stringValue, let message = member("message")?.stringValue else { return nil }
            return LinkProblemRecord(code: code, message: message, blocking: member("blocking")?.boolValue ?? true)
        }
    }

    static func json(_ problems: [LinkProblemRecord]) -> JSONValue {
        .array(problems.map { ["code": .string($0.code), "message": .string($0.message), "blocking": .bool($0.blocking)] })
    }

    /// JSON text for a `jsonb` parameter.
    static func jsonText(_ value: some JSONEncodable) -> String { String(decoding: JSONWriter.encode(value), as: UTF8.self) }

    /// A JSON array of strings as text (from `array_to_json`), or [] when absent.
    static func stringArray(_ text: String?) -> [String] {
        ((try? JSONValue.parse(Array((text ?? "[]").utf8)))?.arrayValue ?? []).compactMap(\.stringValue)
    }

    private static func linkState(from row: PostgresRow) throws -> LinkStateRecord {
        let paths = stringArray(row["covered_paths"])
        guard let status = LinkStatus(rawValue: try row.string("status")) else {
            throw PostgresError(kind: .query, message: "column \"status\" holds an unknown link status")
        }
        return LinkStateRecord(
            appID: try row.string("app_id"), domain: try row.string("domain"), status: status,
            checkedAt: try row.optionalDate("checked_at"), nextCheckAt: try row.optionalDate("next_check_at"),
            problems: problems(fromJSON: row["problems"]), coveredPaths: paths)
    }

    private static let linkStateColumns =
        "app_id, domain, status, checked_at, next_check_at, problems::text AS problems, array_to_json(covered_paths)::text AS covered_paths"

    /// The link states of these apps, by app id, each list ordered by domain.
    public func linkStates(appIDs: [String]) throws -> [String: [LinkStateRecord]] {
        let ids = appIDs.filter { UUID(uuidString: $0) != nil }
        guard !ids.isEmpty else { return [:] }
        let rows = try pool.query(
            """
            SELECT \(Self.linkStateColumns) FROM app_link_states
            WHERE app_id = ANY(ARRAY(SELECT jsonb_array_elements_text($1::jsonb))::uuid[]) ORDER BY domain
            """, [Self.jsonText(ids)]
        ).rows
        var result: [String: [LinkStateRecord]] = [:]
        for row in rows {
            let state = try Self.linkState(from: row)
            result[state.appID, default: []].append(state)
        }
        return result
    }

    /// The current link states on one domain, by app id.
    public func linkStates(domain: String) throws -> [String: LinkStateRecord] {
        var result: [String: LinkStateRecord] = [:]
        for row in try pool.query("SELECT \(Self.linkStateColumns) FROM app_link_states WHERE domain = $1", [domain]).rows {
            let state = try Self.linkState(from: row)
            result[state.appID] = state
        }
        return result
    }

    // MARK: Recording a check

    /// Stores one check in one transaction: a history row, each app's new state on the domain (states of
    /// apps no longer judged there are removed), and the domain's schedule (the lease is released when
    /// `leaseOwner` holds it).
    public func recordCheck(_ check: LinkCheckRecord) throws {
        let results = JSONValue.object(
            check.states.map { state in
                (
                    state.appID,
                    [
                        "status": .string(state.status.rawValue), "problems": Self.json(state.problems),
                        "coveredPaths": .array(state.coveredPaths.map(JSONValue.string)),
                    ]
                )
            })
        let now = SQLTime.parameter(check.checkedAt)
        try pool.transaction { connection in
            try connection.query(
                """
                INSERT INTO association_checks (domain, checked_at, aasa_status, assetlinks_status, transient, results)
                VALUES ($1, to_timestamp($2::float8), $3, $4, $5, $6::jsonb)
                """,
                [
                    check.domain, now, check.aasaStatus.map(String.init), check.assetlinksStatus.map(String.init),
                    check.transient ? "true" : "false", Self.jsonText(results),
                ])
            for state in check.states {
                try connection.query(
                    """
                    INSERT INTO app_link_states (app_id, domain, status, checked_at, next_check_at, problems, covered_paths)
                    SELECT $1, $2, $3, to_timestamp($4::float8), to_timestamp($5::float8), $6::jsonb,
                           ARRAY(SELECT jsonb_array_elements_text($7::jsonb))
                    WHERE EXISTS (SELECT 1 FROM mobile_apps WHERE id = $1)
                    ON CONFLICT (app_id, domain) DO UPDATE SET status = EXCLUDED.status, checked_at = EXCLUDED.checked_at,
                        next_check_at = EXCLUDED.next_check_at, problems = EXCLUDED.problems,
                        covered_paths = EXCLUDED.covered_paths
                    """,
                    [
                        state.appID, check.domain, state.status.rawValue, now, SQLTime.parameter(check.nextCheckAt),
                        Self.jsonText(Self.json(state.problems)),
                        Self.jsonText(state.coveredPaths),
                    ])
            }
            try connection.query(
                """
                DELETE FROM app_link_states
                WHERE domain = $1 AND NOT (app_id = ANY(ARRAY(SELECT jsonb_array_elements_text($2::jsonb))::uuid[]))
                """, [check.domain, Self.jsonText(check.states.map(\.appID))])
            try connection.query(
                """
                INSERT INTO link_domain_schedule (domain, next_check_at, last_checked_at, consecutive_transient_failures)
                VALUES ($1, to_timestamp($2::float8), to_timestamp($3::float8), $4)
                ON CONFLICT (domain) DO UPDATE SET next_check_at = EXCLUDED.next_check_at,
                    last_checked_at = EXCLUDED.last_checked_at,
                    consecutive_transient_failures = EXCLUDED.consecutive_transient_failures,
                    lease_owner = CASE WHEN link_domain_schedule.lease_owner = $5 THEN NULL ELSE link_domain_schedule.lease_owner END,
                    lease_expires_at = CASE WHEN link_domain_schedule.lease_owner = $5 THEN NULL
                                            ELSE link_domain_schedule.lease_expires_at END
                """,
                [
                    check.domain, SQLTime.parameter(check.nextCheckAt), now, String(check.consecutiveTransientFailures),
                    check.leaseOwner,
                ])
        }
    }

    /// The number of consecutive transient failures recorded for a domain (0 when never checked).
    public func consecutiveTransientFailures(domain: String) throws -> Int {
        try pool.query("SELECT consecutive_transient_failures FROM link_domain_schedule WHERE domain = $1", [domain]).first
            .map { try $0.int("consecutive_transient_failures") } ?? 0
    }

    /// The history of a domain's checks, newest first: `(checkedAt, results JSON text)`.
    public func checkHistory(domain: String, limit: Int) throws -> [(checkedAt: Date, results: String)] {
        try pool.query(
            "SELECT checked_at, results::text AS results FROM association_checks WHERE domain = $1 ORDER BY checked_at DESC LIMIT $2",
            [domain, String(limit)]
        ).rows.map { (try $0.date("checked_at"), try $0.string("results")) }
    }

    // MARK: Schedule

    /// Puts every link domain that has apps to judge on the schedule (due now when new), and makes a
    /// scheduled domain due now when a link callback or an app was added there since its last check.
    public func syncSchedule(now: Date) throws {
        // The host of each link callback of an environment with apps, read from its parsed URI.
        var targets: [JSONValue] = []
        for row in try pool.query(
            """
            SELECT c.id, c.uri FROM callbacks c
            WHERE c.kind = 'link' AND EXISTS (SELECT 1 FROM mobile_apps a WHERE a.environment_id = c.environment_id)
            """
        ).rows {
            guard let host = PostgresApps.linkTarget(try row.string("uri"))?.host else { continue }
            targets.append(["domain": .string(host), "callback_id": .string(try row.string("id"))])
        }
        guard !targets.isEmpty else { return }
        let hosts = Self.jsonText(targets)
        try pool.query(
            """
            INSERT INTO link_domain_schedule (domain, next_check_at)
            SELECT DISTINCT t.domain, to_timestamp($1::float8) FROM jsonb_to_recordset($2::jsonb) AS t(domain text, callback_id uuid)
            ON CONFLICT (domain) DO NOTHING
            """, [SQLTime.parameter(now), hosts])
        try pool.query(
            """
            UPDATE link_domain_schedule s SET next_check_at = to_timestamp($1::float8)
            WHERE s.next_check_at > to_timestamp($1::float8) AND s.last_checked_at IS NOT NULL AND EXISTS (
                SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS t(domain text, callback_id uuid)
                JOIN callbacks c ON c.id = t.callback_id JOIN mobile_apps a ON a.environment_id = c.environment_id
                WHERE t.domain = s.domain
                  AND (c.created_at > s.last_checked_at OR a.created_at > s.last_checked_at))
            """, [SQLTime.parameter(now), hosts])
    }

    /// Claims up to `limit` domains due by `dueBy` (default `now`) for `owner`, in one statement:
    /// `FOR UPDATE SKIP LOCKED` skips rows another instance is claiming, and the lease (`owner`, from `now`
    /// for `leaseSeconds`) keeps them from claiming what this one holds until it records its check or the
    /// lease expires.
    /// - Parameter only: restricts the claim to these domains (tests share one database); nil for all.
    public func claimDueDomains(
        owner: String, now: Date, dueBy: Date? = nil, leaseSeconds: Double, limit: Int, only: [String]? = nil
    ) throws -> [DomainScheduleRecord] {
        try pool.query(
            """
            UPDATE link_domain_schedule s SET lease_owner = $1, lease_expires_at = to_timestamp($3::float8)
            FROM (SELECT domain FROM link_domain_schedule
                  WHERE next_check_at <= to_timestamp($6::float8)
                    AND (lease_expires_at IS NULL OR lease_expires_at <= to_timestamp($2::float8))
                    AND ($5::jsonb IS NULL OR domain = ANY(ARRAY(SELECT jsonb_array_elements_text($5::jsonb))))
                  ORDER BY next_check_at, domain LIMIT $4
                  FOR UPDATE SKIP LOCKED) due
            WHERE s.domain = due.domain
            RETURNING s.domain, s.consecutive_transient_failures
            """,
            [
                owner, SQLTime.parameter(now), SQLTime.parameter(now.addingTimeInterval(leaseSeconds)), String(limit),
                only.map { Self.jsonText($0) }, SQLTime.parameter(dueBy ?? now),
            ]
        ).rows.map {
            DomainScheduleRecord(
                domain: try $0.string("domain"), consecutiveTransientFailures: try $0.int("consecutive_transient_failures"))
        }
    }

    /// Releases a lease without a check (a domain with nothing left to judge), moving it to `nextCheckAt`.
    public func releaseLease(domain: String, owner: String, nextCheckAt: Date) throws {
        try pool.query(
            """
            UPDATE link_domain_schedule SET lease_owner = NULL, lease_expires_at = NULL, next_check_at = to_timestamp($3::float8)
            WHERE domain = $1 AND lease_owner = $2
            """, [domain, owner, SQLTime.parameter(nextCheckAt)])
    }
}

/// The pool seen through the store's edge: every statement runs inside `PostgresEdge.run`, so a
/// connection failure or a pool timeout leaves as `StoreUnavailable`.
struct EdgePool: Sendable {
    let pool: PostgresPool

    /// Runs one statement (see `PostgresPool.query`).
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        try PostgresEdge.run { try pool.query(sql, parameters) }
    }

    /// Runs `body` in one transaction (see `PostgresPool.transaction`).
    func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try PostgresEdge.run { try pool.transaction(body) }
    }
}

extension PostgresLinkChecks: LinkCheckStore, LinkScheduleStore {
    /// See `PostgresApps.linkDomains`.
    public func linkDomains(environmentID: String) throws -> [String] {
        try PostgresApps(pool: pool.pool).linkDomains(environmentID: environmentID)
    }

    /// See `PostgresApps.domainSubjects`.
    public func domainSubjects(domain: String) throws -> [DomainSubject] {
        try PostgresApps(pool: pool.pool).domainSubjects(domain: domain)
    }
}

extension PostgresStore {
    /// The link checks' aggregate (states, history, schedule).
    public var linkChecks: PostgresLinkChecks { PostgresLinkChecks(pool: pool) }
}
