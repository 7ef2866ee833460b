import Authorize
import Encoding
import Foundation
import Postgres

/// The authorization codes' aggregate: the one-statement exchange (docs/protocol.md#exchange-checks).
/// Every statement runs through `PostgresEdge.run`, so only domain errors leave it.
public struct PostgresAuthorizations: Sendable {
    let pool: PostgresPool
    /// The in-memory start clients and exchange environments, when the store has a listener
    /// (docs/operations.md, "Configuration in memory"); nil reads PostgreSQL every time.
    let configuration: ConfigurationSnapshot?

    init(pool: PostgresPool, configuration: ConfigurationSnapshot? = nil) {
        self.pool = pool
        self.configuration = configuration
    }

    // The exchange in ONE statement (docs/protocol.md#exchange-checks). It returns FACTS, and
    // `ExchangeDecision.decide` (Authorize) answers from them; the statement gates only its own writes on
    // the same facts: check the client's failed-exchange counter; consume the code if unconsumed and
    // unexpired (recording which attempt consumed it), or, when it was already consumed and this
    // presentation would pass rows 4–6, mark it replayed; create the session when this attempt consumed
    // it and rows 4–6 pass (its first token pair's digests written in the session row, sql/021: one row
    // per exchange, not three); revoke the code's session on a valid replay, in the same statement, so
    // marking the replay and ending the session commit together.
    // The environment is found before the statement, by publishable key, from the configuration in memory
    // (docs/architecture.md, "Configuration in memory"); its settings are parameters $14–$18 and its id $1,
    // so the statement reads no configuration table.
    // Consumption and session creation commit together. The UPDATE's row lock serialises concurrent
    // attempts on any number of server instances: exactly one sees `consumed_at IS NULL`.
    // A code is consumed only while what it stood for still holds (docs/protocol.md, "Exchange", row 3):
    // the account open (`holder`) and the ZevID browser session it was issued from not ended (`issuer`).
    // Both rows are locked FOR SHARE, account first, in the order a password change or a closing takes
    // them (`PostgresStore+Accounts.swift`), so the two serialise instead of deadlocking: a sign-out,
    // sign-out everywhere, password change or closing that commits while this statement waits is seen
    // here (READ COMMITTED re-checks a locked row's newest version), and one that starts after this
    // statement waits for it and then revokes the session it made, in its next statement.
    // A password change ends every browser session of the account, so `issuer` covers it.
    // $4 is the S256 of a well-formed verifier or NULL, so `code_challenge = $4` is row 6's whole fact.
    // Web clients (docs/protocol.md, "Web clients"): $13 the authenticated web client (`zc_…`) or NULL for a
    // native app; a code is consumed only by the client it was issued to, and the session carries it (sql/026).
    // DPoP (docs/dpop.md, "Binding"), only in the form with a proof (`proof: true`, used when the request
    // carried one or the environment requires DPoP): $18 whether the environment requires it, $19 the
    // proof's key thumbprint or NULL, $20 its `jti` digest, $21 when that use expires, $22 whether its nonce
    // is accepted. Before any code is touched: an environment that requires DPoP refuses a request without a
    // proof (`dpop_missing`) or without an accepted nonce (`dpop_stale_nonce`); the proof's use is inserted
    // once per key and `jti` (`proof_use`: a conflict with a live row is a replay, and the code stays
    // untouched). The code's own binding is checked with rows 4–6, after consumption, and the session is
    // bound to the proof's key. The form without a proof has the same columns, with the DPoP parts constant
    // (no proof to record, nothing required) and a code bound to a key never matching.
    static func exchangeStatement(proof: Bool) -> String {
        let key = proof ? "$19" : "NULL::text"
        let dpop =
            proof
            ? DPoPProofSQL.commonTableExpressions(
                .init(thumbprint: 19, jtiDigest: 20, usableUntil: 21, nonceAccepted: 22, now: 5), gatedByRateLimit: true)
            : "dpop AS (SELECT false AS missing, false AS stale_nonce), proof_ok AS (SELECT true AS ok)"
        return """
            WITH env AS (
                SELECT $1::uuid AS id, $14::int AS session_max_age_days, $15::int AS session_idle_days,
                       $16::int AS access_token_ttl_minutes, $17::text AS id_token_signing_alg, \(proof ? "$18::boolean" : "false") AS require_dpop
            ), gate AS (
                SELECT EXISTS (
                    SELECT 1 FROM rate_limit_counters
                    WHERE bucket = $9 AND key = $10 AND window_start = to_timestamp($11::float8) AND count >= $12::int
                ) AS over
            ), \(dpop), holder AS (
                SELECT u.id FROM authorization_codes c0 JOIN users u ON u.id = c0.user_id
                WHERE c0.code_hash = $2 AND c0.consumed_at IS NULL AND u.closed_at IS NULL
                FOR SHARE OF u
            ), issuer AS (
                SELECT b.id FROM authorization_codes c0 JOIN browser_sessions b ON b.id = c0.browser_session_id
                WHERE c0.code_hash = $2 AND c0.consumed_at IS NULL AND b.ended_at IS NULL AND EXISTS (SELECT 1 FROM holder)
                FOR SHARE OF b
            ), code AS (
                UPDATE authorization_codes c SET
                    consumed_at = COALESCE(c.consumed_at, to_timestamp($5::float8)),
                    consumed_by = COALESCE(c.consumed_by, $6::uuid),
                    replayed_at = CASE
                        WHEN c.consumed_at IS NOT NULL AND c.redirect_uri = $3 AND c.code_challenge = $4
                        THEN COALESCE(c.replayed_at, to_timestamp($5::float8)) ELSE c.replayed_at END
                WHERE c.code_hash = $2 AND c.environment_id = $1::uuid AND NOT (SELECT over FROM gate)
                  AND (SELECT ok FROM proof_ok)
                  AND c.web_client_id IS NOT DISTINCT FROM $13
                  AND (c.consumed_at IS NOT NULL OR (
                      c.expires_at > to_timestamp($5::float8) AND EXISTS (SELECT 1 FROM holder)
                      AND (c.browser_session_id IS NULL OR EXISTS (SELECT 1 FROM issuer))))
                RETURNING c.id, c.user_id, c.browser_session_id, c.auth_time, c.scope, c.nonce, c.amr, c.web_client_id,
                          c.consumed_by = $6::uuid AS won,
                          COALESCE(c.redirect_uri = $3, false) AS redirect_matches,
                          COALESCE(c.code_challenge = $4, false) AS challenge_matches,
                          COALESCE(c.dpop_jkt = \(key), c.dpop_jkt IS NULL) AS key_matches
            ), account AS (
                SELECT u.id, u.email, u.name, u.image_url, u.created_at, u.email_verified_at FROM users u
                WHERE u.id = (SELECT user_id FROM code) AND u.closed_at IS NULL
            ), new_session AS (
                INSERT INTO sessions (environment_id, user_id, browser_session_id, authorization_code_id, auth_time,
                    created_at, last_refreshed_at, scope, amr, first_access_token_hash, first_access_expires_at,
                    first_refresh_token_hash, dpop_jkt, web_client_id)
                SELECT env.id, code.user_id, code.browser_session_id, code.id, code.auth_time,
                       to_timestamp($5::float8), to_timestamp($5::float8), code.scope, code.amr, $7,
                       to_timestamp($5::float8) + make_interval(mins => env.access_token_ttl_minutes), $8, \(key), code.web_client_id
                FROM code, env, account
                WHERE code.won AND code.redirect_matches AND code.challenge_matches AND code.key_matches
                RETURNING id, auth_time, last_refreshed_at, dpop_jkt
            ), revoked AS (
                UPDATE sessions s SET revoked_at = to_timestamp($5::float8), revoked_reason = 'authorization_code_replay'
                FROM code WHERE NOT code.won AND code.redirect_matches AND code.challenge_matches AND code.key_matches
                  AND s.authorization_code_id = code.id AND s.revoked_at IS NULL
                RETURNING s.id
            )
            SELECT env.id AS environment_id, (SELECT over FROM gate) AS rate_limited,
                   env.session_max_age_days, env.session_idle_days,
                   code.id AS code_id, code.won, code.redirect_matches, code.challenge_matches, code.key_matches,
                   (SELECT missing FROM dpop) AS dpop_missing, (SELECT stale_nonce FROM dpop) AS dpop_stale_nonce,
                   NOT (SELECT ok FROM proof_ok) AS dpop_refused, new_session.dpop_jkt,
                   $3::text IS NOT NULL AS redirect_present,
                   (SELECT count(*) FROM revoked) AS revoked_count,
                   new_session.id AS session_id, new_session.auth_time, new_session.last_refreshed_at,
                   to_timestamp($5::float8) + make_interval(mins => env.access_token_ttl_minutes) AS access_expires_at,
                   account.id AS user_id, account.email, account.name, account.image_url,
                   code.scope, code.nonce, code.amr, env.id_token_signing_alg, account.created_at AS profile_updated_at,
                   account.email_verified_at IS NOT NULL AS email_verified
            FROM env LEFT JOIN code ON true LEFT JOIN new_session ON true LEFT JOIN account ON true
            """
    }

    /// The exchange when the request carried a DPoP proof or the environment requires one (`exchangeStatement(proof:)`).
    static let exchangeWithProofSQL = exchangeStatement(proof: true)
    /// The exchange in the common case: no DPoP proof, none required (`exchangeStatement(proof:)`).
    static let exchangeSQL = exchangeStatement(proof: false)

    /// A valid replay's revocation when the exchange statement could not see the session yet: the replay
    /// waited on the winner's row lock, and a new statement (a new snapshot under READ COMMITTED) sees the
    /// session the winner committed.
    static let replayRevocationSQL = """
        UPDATE sessions SET revoked_at = to_timestamp($2::float8), revoked_reason = 'authorization_code_replay'
        WHERE authorization_code_id = $1 AND revoked_at IS NULL
        """

    /// The parameters of `exchangeStatement(proof:)`, in order; the form without a proof takes the first 17.
    static func parameters(_ attempt: ExchangeAttempt, environment: ExchangeEnvironment, proof: Bool) -> [String?] {
        var parameters: [String?] = [
            environment.id, attempt.codeHash, attempt.requestedRedirectURI, attempt.verifierChallenge,
            SQLTime.parameter(attempt.now), attempt.attemptID, attempt.accessTokenHash, attempt.refreshTokenHash,
            attempt.failureGate?.bucket, attempt.failureGate?.key, attempt.failureGate.map { SQLTime.parameter($0.windowStart) },
            attempt.failureGate.map { String($0.threshold) }, attempt.webClientID, String(environment.sessionMaxAgeDays),
            String(environment.sessionIdleDays), String(environment.accessTokenTTLMinutes), environment.idTokenSigningAlg.rawValue,
        ]
        if proof {
            parameters += [
                environment.requireDPoP ? "true" : "false", attempt.proof?.thumbprint, attempt.proof?.identifierHash,
                attempt.proof.map { SQLTime.parameter($0.usableUntil) }, attempt.proof?.nonceAccepted == true ? "true" : "false",
            ]
        }
        return parameters
    }

    /// The facts of one `exchangeStatement(proof:)` row. `replayRevoked` overrides the row's replay
    /// revocation (`replayRevocationSQL`'s result).
    static func facts(from row: PostgresRow, replayRevoked: Bool? = nil) throws -> ExchangeFacts {
        guard row["environment_id"] != nil else { return ExchangeFacts(clientKnown: false) }
        if try row.bool("rate_limited") { return ExchangeFacts(clientKnown: true, rateLimited: true) }
        if try row.bool("dpop_refused") {
            var facts = ExchangeFacts(clientKnown: true)
            facts.dpop =
                try row.bool("dpop_missing") ? .required : try row.bool("dpop_stale_nonce") ? .nonceRequired : .replayed
            return facts
        }
        guard row["code_id"] != nil else { return ExchangeFacts(clientKnown: true) }
        let redirectPresent = try row.bool("redirect_present")
        let redirectMatches = try row.bool("redirect_matches")
        let challengeMatches = try row.bool("challenge_matches")
        let keyMatches = try row.bool("key_matches")
        guard try row.bool("won") else {
            let revoked = try replayRevoked ?? (row.int("revoked_count") > 0)
            return ExchangeFacts(
                clientKnown: true, code: .alreadyConsumed(revokedSession: revoked), redirectPresent: redirectPresent,
                redirectMatches: redirectMatches, challengeMatches: challengeMatches)
        }
        var session: IssuedSession?
        if let sessionID = row["session_id"] {
            let windows = IssuedSession.windows(
                authTime: try row.date("auth_time"), lastRefreshedAt: try row.date("last_refreshed_at"),
                maxAgeDays: try row.int("session_max_age_days"), idleDays: try row.int("session_idle_days"))
            session = IssuedSession(
                sessionID: sessionID, accessExpiresAt: try row.date("access_expires_at"), expiresAt: windows.expiresAt,
                idleExpiresAt: windows.idleExpiresAt,
                user: SessionUser(
                    id: try row.string("user_id"), email: try row.string("email"), name: try row.string("name"),
                    imageURL: row["image_url"]),
                grant: try PostgresStore.grant(from: row, nonce: row["nonce"]))
            session?.dpopThumbprint = row["dpop_jkt"]
        }
        var facts = ExchangeFacts(
            clientKnown: true, code: .won, redirectPresent: redirectPresent, redirectMatches: redirectMatches,
            challengeMatches: challengeMatches, session: session)
        facts.keyMatches = keyMatches
        return facts
    }
}

extension PostgresAuthorizations: ExchangeStore {
    /// Runs one exchange attempt (see `exchangeStatement(proof:)`): the environment from the configuration in
    /// memory, then one statement, plus one more only when a valid replay raced the winning exchange and could
    /// not yet see its session.
    public func exchange(_ attempt: ExchangeAttempt) throws -> ExchangeFacts {
        guard
            let environment = try PostgresEdge.notInDoubt({ try exchangeEnvironment(publishableKey: attempt.publishableKey) })
        else { return ExchangeFacts(clientKnown: false) }
        let proof = attempt.proof != nil || environment.requireDPoP
        return try PostgresEdge.run {
            let row = try pool.query(
                prepared: proof ? Self.exchangeWithProofSQL : Self.exchangeSQL,
                Self.parameters(attempt, environment: environment, proof: proof)
            ).rows[0]
            if row["code_id"] != nil, try row.bool("won") == false, try row.bool("redirect_matches"),
                try row.bool("challenge_matches"), try row.bool("key_matches"), try row.int("revoked_count") == 0
            {
                let revoked =
                    try pool.query(Self.replayRevocationSQL, [try row.string("code_id"), SQLTime.parameter(attempt.now)])
                    .rowsAffected > 0
                return try Self.facts(from: row, replayRevoked: revoked)
            }
            return try Self.facts(from: row)
        }
    }

    /// Whether an environment has this publishable key (one indexed read).
    public func isKnownClient(publishableKey: String) throws -> Bool {
        try PostgresEdge.run {
            try pool.query("SELECT 1 FROM environments WHERE publishable_key = $1", [publishableKey]).first != nil
        }
    }

    /// The session an in-doubt exchange made, by its first access token (the current-session read).
    /// Its ID token carries the start's `nonce` as the direct answer's does, read from the consumed code.
    public func exchangedSession(accessTokenHash: String, now: Date) throws -> IssuedSession? {
        guard var session = try PostgresSessions(pool: pool).session(accessTokenHash: accessTokenHash, now: now) else { return nil }
        session.grant.nonce = try PostgresEdge.run {
            try pool.query(
                """
                SELECT c.nonce FROM issued_access_tokens a JOIN sessions s ON s.id = a.session_id
                JOIN authorization_codes c ON c.id = s.authorization_code_id
                WHERE a.token_hash = $1
                """, [accessTokenHash]
            ).first?["nonce"]
        }
        return session
    }
}

extension PostgresAuthorizations: ConsentStore {
    /// Issues an authorization code for a pending sign-in and completes it, in one statement, so a pending
    /// sign-in yields at most one code. Remembers consent when `rememberConsent` is set.
    /// - Parameters:
    ///   - codeHash: SHA-256 hex of the `hoc_…` code (the code itself is never stored).
    ///   - lifetimeSeconds: 60 (docs/protocol.md#code-lifetime).
    /// - Returns: false when the pending sign-in is unknown, expired, completed, or not authenticated by
    ///   `browserSessionID`.
    public func issueCode(
        requestID: String, browserSessionID: String, codeHash: String, rememberConsent: Bool, now: Date, lifetimeSeconds: Double
    ) throws -> Bool {
        let result = try PostgresEdge.run {
            try pool.query(
                """
                WITH request AS (
                    UPDATE authorization_requests r SET completed_at = to_timestamp($4::float8)
                    FROM browser_sessions b
                    WHERE r.id = $1 AND r.completed_at IS NULL AND r.expires_at > to_timestamp($4::float8)
                      AND r.browser_session_id = $2 AND b.id = r.browser_session_id AND b.ended_at IS NULL
                    RETURNING r.environment_id, r.redirect_uri, r.code_challenge, b.user_id, b.id AS browser_session_id, b.auth_time,
                              r.scope, r.nonce, b.amr, r.dpop_jkt, r.web_client_id
                ), consent AS (
                    INSERT INTO consents (user_id, environment_id, granted_at)
                    SELECT user_id, environment_id, to_timestamp($4::float8) FROM request WHERE $6::boolean AND web_client_id IS NULL
                    ON CONFLICT (user_id, environment_id) DO NOTHING
                ), web_consent AS (
                    -- A web client's consent is remembered per account and scope set (sql/026).
                    INSERT INTO web_client_consents (user_id, client_id, scope, granted_at)
                    SELECT user_id, web_client_id, scope, to_timestamp($4::float8) FROM request WHERE web_client_id IS NOT NULL
                    ON CONFLICT (user_id, client_id, scope) DO NOTHING
                )
                INSERT INTO authorization_codes (code_hash, environment_id, user_id, browser_session_id, redirect_uri,
                    code_challenge, auth_time, issued_at, expires_at, scope, nonce, amr, dpop_jkt, web_client_id)
                SELECT $3, environment_id, user_id, browser_session_id, redirect_uri, code_challenge, auth_time,
                       to_timestamp($4::float8), to_timestamp($5::float8), scope, nonce, amr, dpop_jkt, web_client_id
                FROM request
                RETURNING id
                """,
                [
                    requestID, browserSessionID, codeHash, SQLTime.parameter(now),
                    SQLTime.parameter(now.addingTimeInterval(lifetimeSeconds)), rememberConsent ? "true" : "false",
                ])
        }
        return result.rowsAffected == 1
    }

    /// Ends a pending sign-in without a code (consent denied).
    /// - Returns: false when it had already ended.
    public func completeAuthorizationRequest(id: String, now: Date) throws -> Bool {
        try PostgresEdge.run {
            try pool.query(
                "UPDATE authorization_requests SET completed_at = to_timestamp($2::float8) WHERE id = $1 AND completed_at IS NULL",
                [id, SQLTime.parameter(now)]
            ).rowsAffected == 1
        }
    }
}

extension PostgresStore {
    /// The pending sign-ins' and authorization codes' aggregate (start, consent, exchange).
    public var authorizations: PostgresAuthorizations { PostgresAuthorizations(pool: pool, configuration: configuration) }
}

extension PostgresAuthorizations: StartStore {
    /// The client with its registered callbacks as stored (see `PostgresStore.clientEnvironment`): from the
    /// configuration snapshot when the store has one (and its listener listens), else read from PostgreSQL.
    public func startClient(publishableKey: String) throws -> StartClient? {
        if let configuration { return try configuration.startClient(publishableKey: publishableKey) }
        return try uncachedStartClient(publishableKey: publishableKey)
    }

    /// The start client read from PostgreSQL, for a `zc_…` web client (`webStartClient`) or a `pk_…`
    /// environment (`PostgresStore.clientEnvironment`): the configuration snapshot's loader.
    /// - Throws: `StoreUnavailable` and the store's other errors.
    public func uncachedStartClient(publishableKey: String) throws -> StartClient? {
        if publishableKey.hasPrefix(WebClients.clientIDPrefix) { return try webStartClient(clientID: publishableKey) }
        return try PostgresEdge.run {
            guard let (environment, client) = try PostgresStore(pool: pool).clientEnvironment(publishableKey: publishableKey) else {
                return nil
            }
            return StartClient(client: client, sessionMaxAgeDays: environment.sessionMaxAgeDays)
        }
    }

    // The start's write in ONE statement (one commit): adopt the presented binding when it is on record for
    // the whole pending sign-in, else record the fresh one; attach the browser session when it is live, its
    // account open and its authentication younger than the environment's maximum age
    // (docs/protocol.md#browser-recognised) and than `max_age` when the start gave one ($20, seconds; OpenID
    // Connect Core §3.1.2.1); insert the pending sign-in bound to the binding, with its parsed redirect
    // URI's parts (sql/008) and `prompt=consent` (sql/014).
    static let pendingSignInSQL = """
        WITH adopted AS (
            SELECT binding_hash FROM browser_bindings
            WHERE binding_hash = $11 AND expires_at > to_timestamp($9::float8)
        ), minted AS (
            INSERT INTO browser_bindings (binding_hash, created_at, expires_at)
            SELECT $12, to_timestamp($8::float8), to_timestamp($13::float8)
            WHERE NOT EXISTS (SELECT 1 FROM adopted)
            RETURNING binding_hash
        ), browser AS (
            SELECT b.id FROM browser_sessions b JOIN users u ON u.id = b.user_id
            WHERE b.token_hash = $14 AND b.ended_at IS NULL AND u.closed_at IS NULL
              AND b.auth_time > to_timestamp($8::float8) - make_interval(secs => $15::integer * 86400)
              AND ($20::bigint IS NULL OR b.auth_time > to_timestamp($8::float8) - make_interval(secs => $20::bigint))
        )
        INSERT INTO authorization_requests (environment_id, redirect_uri, redirect_kind, state, code_challenge,
            prompt_login, login_hint, browser_binding_hash, browser_session_id, created_at, expires_at, standard_endpoint,
            redirect_scheme, redirect_host, redirect_port, redirect_path_and_query, prompt_consent, scope, nonce, dpop_jkt,
            web_client_id, form_post)
        SELECT $1::uuid, $2, $3, $4, $5, $6::boolean, $7,
               COALESCE((SELECT binding_hash FROM adopted), (SELECT binding_hash FROM minted)),
               (SELECT id FROM browser), to_timestamp($8::float8), to_timestamp($9::float8), $10::boolean,
               $16, $17, $18::integer, $19, $21::boolean, $22, $23, $24, $25, $26::boolean
        RETURNING id, browser_session_id IS NOT NULL AS authenticated, NOT EXISTS (SELECT 1 FROM adopted) AS minted
        """

    /// Records a pending sign-in (see `pendingSignInSQL`).
    public func recordPendingSignIn(_ pending: PendingSignIn) throws -> RecordedSignIn {
        let request = pending.request
        let row = try PostgresEdge.run {
            try pool.query(
                prepared: Self.pendingSignInSQL,
                [
                    request.environmentID, request.redirect.raw, request.redirect.kind.rawValue, request.state.value,
                    request.challenge.value, request.prompt == .login ? "true" : "false", request.loginHint,
                    SQLTime.parameter(pending.now), SQLTime.parameter(pending.now.addingTimeInterval(pending.lifetimeSeconds)),
                    pending.standardEndpoint ? "true" : "false", pending.presentedBindingHash, pending.freshBindingHash,
                    SQLTime.parameter(pending.now.addingTimeInterval(pending.bindingLifetimeSeconds)),
                    pending.browserSessionTokenHash, String(pending.sessionMaxAgeDays), request.redirect.scheme,
                    request.redirect.host, request.redirect.port.map(String.init), request.redirect.pathAndQuery,
                    request.options.maxAgeSeconds.map(String.init), request.options.prompts.contains(.consent) ? "true" : "false",
                    request.scope.value, request.nonce?.value, request.dpopThumbprint, request.webClientID,
                    request.options.formPost ? "true" : "false",
                ]
            ).rows[0]
        }
        return RecordedSignIn(
            requestID: try row.string("id"), mintedBinding: try row.bool("minted"), authenticated: try row.bool("authenticated"))
    }
}

extension PostgresAuthorizations: PushedRequestStore {
    /// Records a pushed request (sql/024_pushed_authorization_requests.sql): the parameters as a JSON object.
    public func recordPushedRequest(_ request: PushedRequest) throws {
        let parameters = JSONValue.object(request.parameters.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })
        try PostgresEdge.run {
            try pool.query(
                """
                INSERT INTO pushed_authorization_requests (environment_id, reference_hash, parameters, created_at, expires_at)
                VALUES ($1::uuid, $2, $3::jsonb, to_timestamp($4::float8), to_timestamp($5::float8))
                """,
                [
                    request.environmentID, request.referenceHash, String(decoding: JSONWriter.encode(parameters), as: UTF8.self),
                    SQLTime.parameter(request.createdAt), SQLTime.parameter(request.expiresAt),
                ])
        }
    }

    /// Uses a pushed request once (RFC 9126 §4): ONE statement marks it used only when it is this
    /// environment's, unused and unexpired at `now`, and returns its parameters; concurrent uses on any number
    /// of instances serialise on the row, and exactly one sees `NOT used`.
    public func consumePushedRequest(referenceHash: String, environmentID: String, now: Date) throws -> [String: String]? {
        guard UUID(uuidString: environmentID) != nil else { return nil }
        return try PostgresEdge.run {
            let result = try pool.query(
                """
                UPDATE pushed_authorization_requests SET used = true
                WHERE environment_id = $2::uuid AND reference_hash = $1 AND NOT used AND expires_at > to_timestamp($3::float8)
                RETURNING parameters
                """, [referenceHash, environmentID, SQLTime.parameter(now)])
            guard let text = result.first?["parameters"], let members = (try? JSONValue.parse(text))?.objectValue else { return nil }
            var parameters: [String: String] = [:]
            for (name, value) in members {
                guard let string = value.stringValue else { return nil }
                parameters[name] = string
            }
            return parameters
        }
    }
}

extension PostgresAuthorizations {
    /// A web client as the start sees it (docs/protocol.md, "Web clients"): its environment, its name on
    /// the consent page, its redirect URIs (registered as parsed by `RedirectURI.parse`, so they parse
    /// again; https ones count as verified, since a web client's redirect is a server, not an app link)
    /// its PKCE rule and whether it, or its environment, requires pushed requests.
    func webStartClient(clientID: String) throws -> StartClient? {
        guard clientID.utf8.count <= 100 else { return nil }
        return try PostgresEdge.run {
            guard
                let row = try pool.query(
                    """
                    SELECT c.name, array_to_json(c.redirect_uris)::text AS redirect_uris, c.require_pkce, e.id AS environment_id, e.kind,
                           e.session_max_age_days, e.require_pushed_authorization_requests,
                           c.require_pushed_authorization_requests AS client_requires_pushed
                    FROM web_clients c JOIN environments e ON e.id = c.environment_id
                    WHERE c.client_id = $1
                    """, [clientID]
                ).first
            else { return nil }
            let redirects = PostgresWebClients.strings(row["redirect_uris"]).compactMap { raw -> RegisteredRedirect? in
                guard case .success(let uri) = RedirectURI.parse(raw) else { return nil }
                return RegisteredRedirect(uri: uri, linkVerified: true)
            }
            var client = ClientEnvironment(
                environmentID: try row.string("environment_id"),
                kind: try row.string("kind") == "production" ? .production : .development, appName: try row.string("name"),
                registeredRedirects: redirects)
            client.webClient = WebClientStartFacts(
                clientID: clientID, requirePKCE: try row.bool("require_pkce"),
                requirePushedRequests: try row.bool("client_requires_pushed"))
            // The environment's requirement covers its web clients too (RFC 9126 §6; docs/protocol.md#pushed-requests).
            client.requiresPushedRequests = try row.bool("require_pushed_authorization_requests")
            return StartClient(client: client, sessionMaxAgeDays: try row.int("session_max_age_days"))
        }
    }
}
