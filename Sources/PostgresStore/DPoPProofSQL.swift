/// The DPoP part of every statement that issues or refreshes a session (docs/dpop.md, "Binding"): the code
/// exchange (`PostgresAuthorizations.exchangeSQL`), the refresh (`PostgresSessions.refreshSQL`) and the native
/// token exchange (`PostgresTokenExchange.sessionSQL`) write it in one place, each with its own parameter
/// numbers, so the rule stays one rule inside three single statements (no extra round trip).
///
/// The text is three common table expressions, to follow an `env` CTE that selects the environment's
/// `require_dpop`: `dpop` (an environment that requires DPoP refuses a request without a proof, `missing`, or
/// without an accepted nonce, `stale_nonce`), `proof_use` (the proof's use, inserted once per key and `jti`
/// digest: a conflict with a row that has not expired is a replay and inserts nothing; RFC 9449 §11.1) and
/// `proof_ok` (one row, `ok`: no proof, or a proof whose use was inserted, with neither refusal).
enum DPoPProofSQL {
    /// The statement's parameter numbers (`$n`) for the DPoP inputs and the request's time.
    struct Parameters {
        /// The proof key's RFC 7638 thumbprint, or NULL when the request carried no proof.
        let thumbprint: Int
        /// The SHA-256 of the proof's `jti`.
        let jtiDigest: Int
        /// When the proof's use may be forgotten (seconds since 1970): its `iat` plus the accepted window.
        let usableUntil: Int
        /// Whether the proof's nonce is accepted (a boolean).
        let nonceAccepted: Int
        /// The request's time (seconds since 1970): a stored use that expired by then may be taken again.
        let now: Int
    }

    /// The three CTEs, without a leading or trailing comma.
    /// - Parameters:
    ///   - parameters: the statement's parameter numbers.
    ///   - gatedByRateLimit: whether the statement has a `gate` CTE (`over`: the client address is over its
    ///     limit), which then also holds the proof's use back.
    static func commonTableExpressions(_ parameters: Parameters, gatedByRateLimit: Bool) -> String {
        let key = "$\(parameters.thumbprint)"
        let gate = gatedByRateLimit ? " AND NOT (SELECT over FROM gate)" : ""
        return """
            dpop AS (
                SELECT COALESCE((SELECT require_dpop FROM env), false) AND \(key)::text IS NULL AS missing,
                       COALESCE((SELECT require_dpop FROM env), false) AND \(key)::text IS NOT NULL AND NOT $\(parameters.nonceAccepted)::boolean AS stale_nonce
            ), proof_use AS (
                INSERT INTO dpop_proof_uses (jkt, jti_hash, expires_at)
                SELECT \(key), $\(parameters.jtiDigest), to_timestamp($\(parameters.usableUntil)::float8) FROM dpop
                WHERE \(key)::text IS NOT NULL AND EXISTS (SELECT 1 FROM env)\(gate) AND NOT dpop.stale_nonce
                ON CONFLICT (jkt, jti_hash) DO UPDATE SET expires_at = EXCLUDED.expires_at
                    WHERE dpop_proof_uses.expires_at <= to_timestamp($\(parameters.now)::float8)
                RETURNING 1
            ), proof_ok AS (
                SELECT NOT dpop.missing AND NOT dpop.stale_nonce AND (\(key)::text IS NULL OR EXISTS (SELECT 1 FROM proof_use)) AS ok
                FROM dpop
            )
            """
    }
}
