internal import CCurl
import Foundation

/// Where outbound mail goes (`ZEVAUTH_SMTP_URL`, `ZEVAUTH_SMTP_FROM`, `ZEVAUTH_SMTP_TIMEOUT_MS`;
/// docs/operations.md, "Outbound email"). The URL may carry credentials (`smtp://user:password@host:port`):
/// only ``redacted`` is ever printed.
public struct SMTPConfiguration: Sendable, Equatable {
    /// `smtp://[user:password@]host[:port]` (STARTTLS when the relay offers it) or `smtps://…` (TLS from the
    /// first byte).
    public let url: String
    /// The `From:` header and, its bare address, the envelope sender.
    public let from: MailFrom
    /// The whole SMTP transaction's limit, in milliseconds (default 10000).
    public var timeoutMilliseconds: Int = 10_000
    /// An extra trusted CA bundle (PEM) besides the system store, for a relay with a private CA.
    public var caFile: String?

    /// Checks the URL's scheme and host and parses the From address (``MailFrom``).
    /// - Throws: `SMTPConfigurationError` naming the variable and what is wrong (never the URL itself).
    public init(url: String, from: String, timeoutMilliseconds: Int = 10_000, caFile: String? = nil) throws(SMTPConfigurationError) {
        try self.init(url: url, from: MailFrom(parsing: from), timeoutMilliseconds: timeoutMilliseconds, caFile: caFile)
    }

    /// Checks the URL's scheme and host.
    /// - Throws: `SMTPConfigurationError` for `ZEVAUTH_SMTP_URL` (never the URL itself).
    public init(url: String, from: MailFrom, timeoutMilliseconds: Int = 10_000, caFile: String? = nil) throws(SMTPConfigurationError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "smtp" || scheme == "smtps", let host = components.host, !host.isEmpty
        else {
            throw SMTPConfigurationError(key: "ZEVAUTH_SMTP_URL", message: "must be smtp://host:port or smtps://host:port")
        }
        self.url = url
        self.from = from
        self.timeoutMilliseconds = timeoutMilliseconds
        self.caFile = caFile
    }

    /// The URL without user or password, for log lines: `smtp://host:port`.
    public var redacted: String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else {
            return "smtp"
        }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }

    /// Whether the URL is `smtps://` (implicit TLS).
    var implicitTLS: Bool { url.lowercased().hasPrefix("smtps:") }
}

/// A mail setting that cannot be used.
public struct SMTPConfigurationError: Error, Sendable, Equatable {
    /// The environment variable.
    public let key: String
    /// What follows the key's name, a sentence fragment without the value.
    public let message: String
}

/// Why a message was not handed to the relay. The categories are what a log line names; libcurl's own
/// text is kept out of them, because an SMTP reply may quote an address.
public enum SMTPFailure: Error, Sendable, Equatable {
    /// The connect or the whole transaction passed its time limit.
    case timeout
    /// The relay could not be reached (refused, reset, unknown host).
    case unreachable
    /// TLS failed (certificate, handshake).
    case tlsError
    /// The relay refused the login, the sender, the recipient or the message.
    case rejected

    /// The label of log lines and metrics.
    public var label: String {
        switch self {
        case .timeout: "timeout"
        case .unreachable: "unreachable"
        case .tlsError: "tls"
        case .rejected: "rejected"
        }
    }
}

/// Sends one message through the configured relay with libcurl's SMTP (RFC 5321): STARTTLS when the relay
/// offers it on `smtp://` (CURLUSESSL_TRY), implicit TLS on `smtps://`, certificates always verified, the
/// credentials of the URL used for AUTH. Blocking; one handle per call.
public struct SMTPSender: Sendable {
    /// The relay and the From address.
    public let configuration: SMTPConfiguration

    /// - Parameter configuration: the relay and the From address.
    public init(configuration: SMTPConfiguration) {
        self.configuration = configuration
    }

    /// Hands `message` (a complete RFC 5322 message, CRLF line endings) to the relay for `recipient`.
    /// - Returns: success, or the category of the failure.
    public func send(to recipient: String, message: [UInt8]) -> Result<Void, SMTPFailure> {
        guard CurlGlobal.initialized, let easy = CurlEasy(maxBytes: 65_536) else { return .failure(.unreachable) }
        do throws(CurlFailure) {
            let timeout = max(1, configuration.timeoutMilliseconds)
            try easy.configure(
                url: configuration.url, protocols: "smtp,smtps", caFile: configuration.caFile,
                connectTimeoutMilliseconds: min(timeout, 5_000), timeoutMilliseconds: timeout, userAgent: "ZevAuth")
            if !configuration.implicitTLS {
                try easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue), "CURLOPT_USE_SSL")
            }
            // The envelope sender is the bare address; the display name belongs to the `From:` header only.
            try easy.set(CURLOPT_MAIL_FROM, "<\(configuration.from.address)>", "CURLOPT_MAIL_FROM")
            try easy.set(CURLOPT_MAIL_RCPT, lines: ["<\(recipient)>"], "CURLOPT_MAIL_RCPT")
            try easy.setUpload(message)
            try easy.perform()
            return .success(())
        } catch {
            switch error {
            case .timeout: return .failure(.timeout)
            case .tlsError: return .failure(.tlsError)
            case .dnsError: return .failure(.unreachable)
            case .tooLarge: return .failure(.rejected)
            case .connectionFailed(let detail):
                // Refused or reset connections never reached a reply; anything else is the relay's answer.
                let lowered = detail.lowercased()
                let unreachable = ["connect", "reset", "recv failure", "send failure", "resolve"].contains { lowered.contains($0) }
                return .failure(unreachable ? .unreachable : .rejected)
            }
        }
    }
}
