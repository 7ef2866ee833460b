import Authorize
import Foundation
import Postgres
import PostgresStore
import Testing

/// The store's edge hands the server domain errors only (docs/architecture.md, "PostgresStore").
@Suite struct PostgresEdgeTests {
    @Test func aStatementTheServerGotWrongIsAStoreFaultNamingItsSQLState() throws {
        let pool = PostgresPool(url: try testDatabaseURL(), size: 1)
        #expect(throws: StoreFault(kind: "query", sqlState: "42P01", constraint: nil)) {
            try PostgresEdge.run { try pool.query("SELECT 1 FROM no_such_table_here") }
        }
        #expect(throws: StoreError.unstorableInput) {
            try PostgresEdge.run { try pool.query("SELECT convert_from('\\x00'::bytea, 'UTF8')") }
        }
    }

    @Test func anUnreachableDatabaseIsUnavailableWithLibpqsFirstLine() throws {
        let store = PostgresStore.connect(url: "postgresql://nobody:s3cret-pass@127.0.0.1:1/none?connect_timeout=2", size: 1)
        let migrator = Migrator(migrations: [])
        do {
            _ = try store.pendingMigrations(migrator)
            Issue.record("a closed port answered")
        } catch let error as StoreUnavailable {
            #expect(error.reason == "connection")
            let detail = try #require(error.detail)
            #expect(detail.contains("127.0.0.1"))
            #expect(!detail.contains("s3cret-pass"))
            #expect(!detail.contains("\n"))
        }
    }
}
