import Foundation
import Postgres
import PostgresStore
import Testing
import ZevAuthServer

/// Keeps `docs/openapi.yaml` true: the operations it documents are exactly the routes the server registers
/// (`ZevAuthApp.routes`), in both directions (docs/decisions.md#documentation).
///
/// No YAML library is available, so the file keeps a regular shape that `OpenAPIPaths.read` checks while
/// reading it (the constraint is written at the top of the file): `paths:` at column 0; each path key at
/// two spaces, unquoted, starting with `/` and ending with `:`; each operation key at four spaces, one of
/// the HTTP methods in lower case; nothing else at four spaces but `parameters:`, `summary:` and
/// `description:`; no tab anywhere.
@Suite struct OpenAPIRouteTests {
    /// The app's routes; building them touches no database (the pool connects on first use).
    static func registeredOperations() -> [String] {
        var configuration = ServerConfiguration(
            databaseURL: "postgresql://unused.invalid/zevauth", issuer: "https://auth.example.com",
            operatorToken: "zop_openapi_route_test_operator_token_0123")
        configuration.listenPort = 0
        let context = ServerContext(
            configuration: configuration, store: PostgresStore(pool: PostgresPool(url: configuration.databaseURL, size: 1)))
        return ZevAuthApp(context: context).routes.map { "\($0.method) \($0.pattern)" }
    }

    static let documentURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml")

    static func documentedOperations() throws -> [String] {
        try OpenAPIPaths.read(String(contentsOf: documentURL, encoding: .utf8))
    }

    @Test func everyRegisteredRouteIsDocumented() throws {
        let documented = Set(try Self.documentedOperations())
        let missing = Self.registeredOperations().filter { !documented.contains($0) }
        #expect(missing.isEmpty, "registered but not in docs/openapi.yaml: \(missing)")
    }

    @Test func everyDocumentedOperationIsRegistered() throws {
        let registered = Set(Self.registeredOperations())
        let extra = try Self.documentedOperations().filter { !registered.contains($0) }
        #expect(extra.isEmpty, "in docs/openapi.yaml but not registered: \(extra)")
    }

    @Test func noOperationIsDocumentedOrRegisteredTwice() throws {
        let documented = try Self.documentedOperations()
        #expect(documented.count == Set(documented).count, "an operation appears twice in docs/openapi.yaml")
        let registered = Self.registeredOperations()
        #expect(registered.count == Set(registered).count, "a route is registered twice")
    }

    @Test func theDocumentIsOpenAPI31() throws {
        let text = try String(contentsOf: Self.documentURL, encoding: .utf8)
        #expect(text.split(separator: "\n").contains { $0.hasPrefix("openapi: 3.1") })
    }

    // The reader itself: a file that breaks the layout is refused, not half read.

    @Test func theReaderFindsPathsAndMethods() throws {
        let yaml = """
            openapi: 3.1.0
            paths:
              /a/{id}:
                parameters:
                  - name: id
                get:
                  responses: {}
                delete:
                  responses: {}
              /b:
                post:
                  summary: x
            components:
              schemas: {}
            """
        #expect(try OpenAPIPaths.read(yaml) == ["GET /a/{id}", "DELETE /a/{id}", "POST /b"])
    }

    @Test(arguments: [
        "paths:\n  \"/quoted\":\n    get: {}\n",
        "paths:\n  /x:\n    fetch: {}\n",
        "paths:\n  /x:\n\tget: {}\n",
        "paths:\n   /odd-indent:\n    get: {}\n",
        "paths:\n  not-a-path:\n    get: {}\n",
        "openapi: 3.1.0\n",
    ])
    func theReaderRefusesAnIrregularLayout(yaml: String) {
        #expect(throws: OpenAPIPaths.LayoutError.self) { try OpenAPIPaths.read(yaml) }
    }
}

/// A line-based reader of an OpenAPI document's `paths:` section, for documents written in the regular
/// layout described on `OpenAPIRouteTests`.
enum OpenAPIPaths {
    struct LayoutError: Error, CustomStringConvertible {
        let line: Int
        let problem: String
        var description: String { "docs/openapi.yaml line \(line): \(problem)" }
    }

    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    static let pathItemFields: Set<String> = ["parameters", "summary", "description"]

    /// The operations of the `paths:` section as `"METHOD /path"`, in document order.
    /// - Throws: `LayoutError` for a tab, a missing `paths:` section, or a line at two or four spaces that
    ///   is not a path key, an operation key or an allowed path-item field.
    static func read(_ text: String) throws -> [String] {
        var operations: [String] = []
        var inPaths = false
        var sawPaths = false
        var currentPath: String?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            if line.contains("\t") { throw LayoutError(line: number, problem: "a tab (indent with spaces)") }
            let trimmed = line.drop(while: { $0 == " " })
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let indent = line.count - trimmed.count
            if indent == 0 {
                inPaths = trimmed == "paths:"
                sawPaths = sawPaths || inPaths
                currentPath = nil
                continue
            }
            guard inPaths else { continue }
            switch indent {
            case 2:
                guard trimmed.hasPrefix("/"), trimmed.hasSuffix(":"), !trimmed.contains(" ") else {
                    throw LayoutError(line: number, problem: "a key under paths: must be an unquoted /path followed by ':'")
                }
                currentPath = String(trimmed.dropLast())
            case 4:
                guard let path = currentPath else { throw LayoutError(line: number, problem: "an operation outside a path") }
                let key = String(trimmed.prefix { $0 != ":" })
                if methods.contains(key) {
                    operations.append("\(key.uppercased()) \(path)")
                } else if !pathItemFields.contains(key) {
                    throw LayoutError(line: number, problem: "'\(key)' is not an HTTP method or an allowed path-item field")
                }
            case 1, 3:
                throw LayoutError(line: number, problem: "indentation of \(indent) spaces (use steps of two)")
            default:
                continue
            }
        }
        guard sawPaths else { throw LayoutError(line: 0, problem: "no 'paths:' section at column 0") }
        return operations
    }
}
