import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthTesting

@Suite struct LocalPostgresClusterTests {
    @Test func startsQueriesStopsAndRestartsInATempDirectory() throws {
        // Mode 0700: when the tests run as root, the postgres user cannot enter it, so the cluster must live
        // elsewhere and be found again through the pointer file.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zc-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer {
            if let elsewhere = try? String(contentsOfFile: directory + "/cluster-location", encoding: .utf8) {
                try? FileManager.default.removeItem(atPath: elsewhere.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
        let port = Int.random(in: 20_000..<50_000)
        let cluster = LocalPostgresCluster(directory: directory, port: port)
        let url = try cluster.start()
        TestProcesses.recordPostmaster(clusterDirectory: directory)
        defer { try? cluster.stop() }
        #expect(url.hasPrefix("postgresql:///zevauth?host="))
        #expect(url.hasSuffix("&port=\(port)&user=postgres"))
        if geteuid() == 0 {
            #expect(FileManager.default.fileExists(atPath: directory + "/cluster-location"))
        }

        let pool = PostgresPool(url: url, size: 1)
        let settings = try #require(
            try pool.query("SELECT current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen").first)
        #expect(settings["fsync"] == "off")
        #expect(settings["listen"] == "")
        try pool.query("CREATE TABLE kept (n int)")
        try pool.query("INSERT INTO kept VALUES (7)")

        try cluster.stop()
        #expect(!pool.ping())
        #expect(try cluster.start() == url)  // reuses the cluster; start on a running one is a no-op
        TestProcesses.recordPostmaster(clusterDirectory: directory)
        #expect(try cluster.start() == url)
        #expect(try pool.query("SELECT n FROM kept").first?.int("n") == 7)
        try cluster.stop()
        try cluster.stop()
    }
}
