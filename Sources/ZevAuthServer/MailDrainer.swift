import Authorize
import Fetch
import Foundation
import Synchronization

/// Where a drained message goes.
public enum MailDelivery: Sendable {
    /// The relay of `ZEVAUTH_SMTP_URL`.
    case smtp(SMTPSender)
    /// `.eml` files in a folder (`zevauth dev` without a relay, tests), each starting with an
    /// `X-Envelope-To:` line; `printCodes` also prints each code on the console (dev).
    case directory(String, printCodes: Bool)
    /// Nowhere: messages wait in the queue (`serve` without a relay).
    case none
}

/// Drains the email outbox (`email_outbox`, docs/operations.md, "Outbound email"): claims due messages
/// with a lease naming this instance (`FOR UPDATE SKIP LOCKED`), renders each from its kind, account and
/// sealed code, sends it, and records the result. A failed send is retried with backoff (`EmailRetry`) for
/// an hour. Pages never wait for it: they queue and `kick()` it, and it works on its own thread (started
/// by the first kick, or by `serve`). Log lines name the message id and the result, never the address or
/// the code.
public final class MailDrainer: Sendable {
    let store: any EmailOutboxStore
    let delivery: MailDelivery
    let from: MailFrom
    let sealer: any SecretSealing
    let clock: any Clock
    let log: any LogSink
    let metrics: Metrics
    let scope: String?
    let capPerHour: Int
    /// This instance's lease owner id (random per process).
    public let owner: String
    /// How long a claim holds a message: longer than one SMTP transaction.
    let leaseSeconds: Double

    private let started = Mutex(false)
    private let stopped = Mutex(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let fileCounter = Atomic<Int>(0)

    /// - Parameters:
    ///   - store: the outbox.
    ///   - delivery: the relay, a folder, or none.
    ///   - settings: the From address, the hourly cap, the scope.
    ///   - sealer: opens the sealed codes.
    public init(
        store: any EmailOutboxStore, delivery: MailDelivery, settings: MailSettings, sealer: any SecretSealing, clock: any Clock,
        log: any LogSink, metrics: Metrics
    ) {
        self.store = store
        self.delivery = delivery
        self.from = settings.from
        self.sealer = sealer
        self.clock = clock
        self.log = log
        self.metrics = metrics
        self.scope = settings.scope
        self.capPerHour = settings.emailsPerHour
        self.owner = "zevauth-mail-\(UUID().uuidString.lowercased())"
        self.leaseSeconds = Double(settings.smtp?.timeoutMilliseconds ?? 10_000) / 1000 * 2 + 30
    }

    /// Asks the drainer to run now (starting its thread on first use). Never blocks.
    public func kick() {
        if case .none = delivery { return }
        start()
        wake.signal()
    }

    /// Starts the background loop (a round at each kick, and every `intervalSeconds`) unless it runs.
    public func start(intervalSeconds: Double = 15) {
        if case .none = delivery { return }
        let first = started.withLock { running -> Bool in
            defer { running = true }
            return !running
        }
        guard first else { return }
        let thread = Thread { [self] in
            while !stopped.withLock({ $0 }) {
                do { try drain() } catch { log.write("email drain failed error=\(String(describing: type(of: error)))") }
                _ = wake.wait(timeout: .now() + intervalSeconds)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops the background loop after its current round (if it was started).
    public func stop() {
        guard started.withLock({ $0 }) else { return }
        stopped.withLock { $0 = true }
        wake.signal()
        finished.wait()
    }

    /// Claims and handles due messages in batches until none is due.
    /// - Returns: how many messages were handed to the relay (or written).
    /// - Throws: `StoreUnavailable` from claiming.
    @discardableResult
    public func drain(limit: Int = 8, maxRounds: Int = 50) throws -> Int {
        var sent = 0
        for _ in 0..<maxRounds {
            let batch = try store.claimDueEmails(owner: owner, scope: scope, now: clock.now(), leaseSeconds: leaseSeconds, limit: limit)
            if batch.isEmpty { break }
            for message in batch where try handle(message) { sent += 1 }
        }
        return sent
    }

    /// Sends one claimed message and records the result. - Returns: whether it was sent.
    private func handle(_ message: OutboxMessage) throws -> Bool {
        let now = clock.now()
        guard let recipient = message.recipient else { return try drop(message, "no_recipient") }
        var code: String?
        if let sealed = message.codeSealed, let flowID = message.codeFlowID {
            guard let bytes = Data(base64Encoded: sealed),
                let opened = try? sealer.open(Array(bytes), associatedData: EmailCodeRules.sealingContext(flowID: flowID))
            else { return try drop(message, "unreadable") }
            code = String(decoding: opened, as: UTF8.self)
        }
        guard
            let rendered = EmailMessages.render(
                kind: message.kind, to: recipient, name: message.name, code: code, fromHeader: from.headerValue, fromAddress: from.address,
                messageID: message.id, date: now)
        else { return try drop(message, "unknown_kind") }
        if message.attempts == 0 {
            let hour = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 3_600).rounded(.down) * 3_600)
            if try store.countDeploymentEmail(hourStart: hour) > capPerHour {
                metrics.email(.capped)
                log.write("email capped id=\(message.id) kind=\(message.kind) limit=\(capPerHour)")
                try store.markEmailRetry(id: message.id, owner: owner, nextAttemptAt: nil, now: now)
                return false
            }
        }
        let result: Result<Void, SMTPFailure>
        switch delivery {
        case .smtp(let sender): result = sender.send(to: recipient, message: rendered)
        case .directory(let folder, let printCodes): result = write(rendered, to: recipient, folder: folder, code: printCodes ? code : nil)
        case .none: return false
        }
        switch result {
        case .success:
            try store.markEmailSent(id: message.id, owner: owner, now: clock.now())
            metrics.email(.sent)
            log.write("email sent id=\(message.id) kind=\(message.kind) attempt=\(message.attempts + 1)")
            return true
        case .failure(let failure):
            let next = EmailRetry.nextAttempt(afterAttempts: message.attempts + 1, now: clock.now(), giveUpAt: message.giveUpAt)
            try store.markEmailRetry(id: message.id, owner: owner, nextAttemptAt: next, now: clock.now())
            metrics.email(next == nil ? .failed : .retry)
            log.write(
                "email \(next == nil ? "failed" : "not sent, will retry") id=\(message.id) kind=\(message.kind) "
                    + "attempt=\(message.attempts + 1) error=\(failure.label)")
            return false
        }
    }

    private func drop(_ message: OutboxMessage, _ reason: String) throws -> Bool {
        try store.markEmailRetry(id: message.id, owner: owner, nextAttemptAt: nil, now: clock.now())
        metrics.email(.dropped)
        log.write("email dropped id=\(message.id) kind=\(message.kind) reason=\(reason)")
        return false
    }

    /// Writes one message as `<folder>/<time>-<n>.eml` (atomically, via a temporary name).
    private func write(_ message: [UInt8], to recipient: String, folder: String, code: String?) -> Result<Void, SMTPFailure> {
        let number = fileCounter.add(1, ordering: .relaxed).newValue
        let name = String(format: "%.0f-%@-%04d.eml", clock.now().timeIntervalSince1970 * 1000, String(owner.suffix(8)), number)
        let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data(Array("X-Envelope-To: \(recipient)\r\n".utf8) + message).write(to: url, options: [.atomic])
        } catch {
            return .failure(.unreachable)
        }
        if let code {
            // The console of `zevauth dev` (standard output, not the log): the code, never the address.
            FileHandle.standardOutput.write(Data("zevauth dev: email code \(code) (the message is \(url.path))\n".utf8))
        }
        return .success(())
    }
}

/// `SecurityNotices` that also wake the drainer, so a notice goes out at once.
struct KickingNotices: SecurityNotices {
    let inner: any SecurityNotices
    let drainer: MailDrainer

    func queue(_ notice: SecurityNotice, userID: String, now: Date) throws {
        try inner.queue(notice, userID: userID, now: now)
        drainer.kick()
    }
}
