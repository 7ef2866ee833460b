import Authorize
import Foundation
import Postgres

/// The rate-limit counters' aggregate (`rate_limit_counters`, docs/protocol.md#rate-limits). Failure gates
/// of the exchange and the refresh read the same table inside their own statements.
public struct PostgresRateLimits: Sendable {
    let pool: PostgresPool

    /// Deletes counters of windows that ended before `before` (housekeeping; safe at any time).
    /// - Returns: rows deleted.
    public func prune(before: Date) throws -> Int {
        try PostgresEdge.run {
            try pool.query(
                "DELETE FROM rate_limit_counters WHERE window_start < to_timestamp($1::float8)", [SQLTime.parameter(before)]
            ).rowsAffected
        }
    }
}

extension PostgresRateLimits: RateLimitStore {
    /// One atomic `INSERT … ON CONFLICT DO UPDATE … RETURNING`, so every instance sees the same count.
    public func rateLimitHit(bucket: String, key: String, windowStart: Date) throws -> Int {
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO rate_limit_counters (bucket, key, window_start, count) VALUES ($1, $2, to_timestamp($3::float8), 1)
                ON CONFLICT (bucket, key, window_start) DO UPDATE SET count = rate_limit_counters.count + 1
                RETURNING count
                """, [bucket, key, SQLTime.parameter(windowStart)]
            ).rows[0].int("count")
        }
    }

    public func rateLimitCount(bucket: String, key: String, windowStart: Date) throws -> Int {
        try PostgresEdge.run {
            try pool.query(
                "SELECT count FROM rate_limit_counters WHERE bucket = $1 AND key = $2 AND window_start = to_timestamp($3::float8)",
                [bucket, key, SQLTime.parameter(windowStart)]
            ).first.map { try $0.int("count") } ?? 0
        }
    }
}

extension PostgresStore {
    /// The rate-limit counters' aggregate.
    public var rateLimits: PostgresRateLimits { PostgresRateLimits(pool: pool) }
}
