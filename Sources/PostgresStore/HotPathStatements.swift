/// The SQL text of the statements on the hot path, exactly as the server prepares them, for the pipeline
/// benchmark (docs/performance.md, "Pipeline benchmark"): `bench/pipeline/statements.py` replays each under
/// pgbench as the ceiling the server's own rate is compared with, so the ceiling follows the statement the
/// server really sends, interpolated parts included.
public enum HotPathStatements {
    /// Each statement by its name in the benchmark: `exchange` (the code exchange,
    /// `PostgresAuthorizations.exchangeSQL`), `refresh` (`PostgresSessions.refreshSQL`) and `start` (the start's
    /// write, `PostgresAuthorizations.pendingSignInSQL`). The text has `$n` placeholders and no values.
    public static var all: [(name: String, sql: String)] {
        [
            ("exchange", PostgresAuthorizations.exchangeSQL),
            ("refresh", PostgresSessions.refreshSQL),
            ("start", PostgresAuthorizations.pendingSignInSQL),
        ]
    }
}
