// swift-tools-version:6.0
// ZevAuth server: an OAuth 2.0 authorization server for native apps (RFC 8252, RFC 7636, RFC 9700).
// Layers: C system-library targets → one Swift wrapper per C library → pure domain modules → the server
// library → the `zevauth` executable. Pure modules (Encoding, PKCE, Authorize, Association, WebAuthn) import no C
// module.
import PackageDescription

let package = Package(
    name: "ZevAuth",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "zevauth", targets: ["zevauth"]),
        .executable(name: "zevauth-conformance", targets: ["zevauth-conformance"]),
    ],
    targets: [
        // MARK: C bridges (system libraries from Debian)
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev"])]),
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),

        // MARK: One Swift wrapper per C library
        .target(name: "Crypto", dependencies: ["COpenSSL", "Encoding"]),
        .target(name: "PasswordHashing", dependencies: ["CArgon2", "Crypto"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "Postgres", dependencies: ["CLibPQ"]),
        .target(name: "Fetch", dependencies: ["CCurl"]),
        .target(name: "IDNA", dependencies: ["CIDN2"]),
        .target(name: "QRCode", dependencies: ["CQRencode", "Encoding"]),
        .target(name: "CBOR", dependencies: ["CCBOR", "Encoding"]),

        // MARK: Pure domain modules
        .target(name: "Encoding"),
        .target(name: "PKCE", dependencies: ["Encoding"]),
        .target(name: "Authorize", dependencies: ["PKCE", "Encoding", "WebAuthn"]),
        .target(name: "Association", dependencies: ["Encoding", "Authorize"]),
        .target(name: "WebAuthn", dependencies: ["Encoding"]),

        // MARK: Storage, server, executable
        .target(name: "PostgresStore", dependencies: ["Postgres", "Authorize", "Association", "Encoding"], resources: []),
        .target(
            name: "ZevAuthServer",
            dependencies: [
                "Authorize", "PKCE", "Encoding", "Crypto", "PasswordHashing", "HTTPServer", "PostgresStore",
                "Association", "Fetch", "IDNA", "QRCode", "CBOR", "WebAuthn",
            ]),
        .executableTarget(name: "zevauth", dependencies: ["ZevAuthServer", "Crypto", "AdminCLI"]),

        // MARK: Clients of a running deployment (HTTP only, through Fetch's HTTPClient)
        .target(name: "Conformance", dependencies: ["Fetch", "Crypto", "Encoding"]),
        .executableTarget(name: "zevauth-conformance", dependencies: ["Conformance"]),
        .target(name: "AdminCLI", dependencies: ["Fetch", "Encoding"]),

        // MARK: Tests
        .target(
            name: "ZevAuthTesting", dependencies: ["ZevAuthServer", "Postgres", "Authorize", "Association", "Crypto", "Fetch"],
            path: "Tests/ZevAuthTesting"),
        .testTarget(name: "EncodingTests", dependencies: ["Encoding"]),
        .testTarget(name: "PKCETests", dependencies: ["PKCE", "Crypto"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "PasswordHashing", "CArgon2", "Encoding"]),
        .testTarget(name: "AuthorizeTests", dependencies: ["Authorize", "PKCE"]),
        .testTarget(name: "AssociationTests", dependencies: ["Association", "Encoding"], exclude: ["Golden", "RealFiles"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR", "Encoding"]),
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn", "CBOR", "Crypto", "Encoding"], exclude: ["make_vectors.py"]),
        .testTarget(name: "FetchTests", dependencies: ["Fetch", "ZevAuthTesting"], exclude: ["https_server.py"]),
        .testTarget(name: "ConformanceTests", dependencies: ["Conformance", "Fetch", "HTTPServer", "ZevAuthTesting", "ZevAuthServer"]),
        .testTarget(name: "AdminCLITests", dependencies: ["AdminCLI", "Fetch", "HTTPServer", "ZevAuthTesting", "ZevAuthServer"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "PostgresStore", "ZevAuthTesting"]),
        .testTarget(
            name: "ZevAuthServerTests",
            dependencies: [
                "ZevAuthServer", "ZevAuthTesting", "Authorize", "PKCE", "Crypto", "Postgres", "PostgresStore", "Encoding",
                "Association", "Fetch", "HTTPServer", "CBOR", "WebAuthn",
            ]),
    ]
)
