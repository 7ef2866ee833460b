import Foundation
import Postgres
import Testing
import ZevAuthServer
import ZevAuthTesting

/// Problems the adversarial review found, each pinned by the behaviour a person or operator sees.
@Suite struct AdversarialFixTests {
    @Test func outboundSlotsAllowOnePerEnvironmentAndABoundPerInstance() {
        let slots = OutboundSlots(total: 2)
        let nested = slots.withSlot(environmentID: "a") { () -> [Bool] in
            let sameEnvironment = slots.withSlot(environmentID: "a") { true } ?? false
            let other = slots.withSlot(environmentID: "b") { () -> Bool in
                // Two running: a third environment finds the instance at its bound.
                slots.withSlot(environmentID: "c") { true } == nil
            }
            return [sameEnvironment, other ?? false]
        }
        #expect(nested == [false, true])
        // Released afterwards.
        #expect(slots.withSlot(environmentID: "a") { true } == true)
    }

    @Test func aSignInWhoseBrowserSessionWentAwayAsksForThePasswordInsteadOfLooping() throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let driver = SignInDriver(server: server, browser: browser)
        _ = try driver.run(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "one", pkce: PKCEPair(),
            email: fixture.email, password: fixture.password)
        // The next start is recognised and goes to consent …
        let start = try browser.get(
            startTarget([
                ("client_id", fixture.developmentKey), ("redirect_uri", "http://127.0.0.1:5000/cb"), ("state", "two"),
                ("code_challenge", PKCEPair().challenge), ("code_challenge_method", "S256"),
            ]))
        let consentPath = try #require(start.header("location"))
        #expect(consentPath.hasPrefix("/v1/auth/zevid/consent"))
        // … but the ZevID session is gone before the click (cleared cookies, sign-out elsewhere).
        browser.removeCookie("zevid_session")
        let consent = try browser.get(consentPath)
        #expect(consent.status == 303)
        let signInPath = try #require(consent.header("location"))
        let signIn = try browser.get(signInPath)
        #expect(signIn.status == 200)
        #expect(signIn.text.contains("name=\"password\""))
    }

    /// Continue and Cancel clicked at once must give one outcome per sign-in. Deterministic: the pending
    /// sign-in's row is locked until both decisions have passed their checks and wait on it.
    @Test(.serialized, arguments: ["allow", "deny"])
    func concurrentDecisionsOnOneSignInGiveExactlyOneRedirect(first: String) throws {
        let server = try TestServer()
        let fixture = try Fixture.make(store: server.store)
        let browser = server.browser()
        let consent = try SignInDriver(server: server, browser: browser).reachConsent(
            clientID: fixture.developmentKey, redirectURI: "http://127.0.0.1:5000/cb", state: "s", email: fixture.email,
            password: fixture.password)
        let fields = consent.fields
        let requestID = fields[0].1
        let cookie = browser.cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")
        // Two instances on one database, one decision each (a blocked handler would hold up the other
        // connections of its libmicrohttpd worker, so one instance could serialise the two by accident).
        let second = try TestServer()
        let clients = [server.client, second.client]

        let holder = try PostgresConnection(url: TestDatabase.url)
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM authorization_requests WHERE id = $1 FOR UPDATE", [requestID])
        let results = ConcurrentResults()
        let group = DispatchGroup()
        for (client, decision) in zip(clients, [first, first == "allow" ? "deny" : "allow"]) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let form = (fields + [("decision", decision)])
                    .map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
                results.append(
                    try? client.send(
                        "POST", "/v1/auth/zevid/consent",
                        headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", cookie)], body: Array(form.utf8)))
            }
        }
        let bothWaited = try TestDatabase.waitForWaiters(blockedBy: holder, count: 2)
        try holder.query("COMMIT")
        #expect(group.wait(timeout: .now() + 10) == .success)
        let answers = results.all.map { response in
            response.map { "\($0.status) \($0.header("location") ?? String(decoding: $0.body.prefix(300), as: UTF8.self))" }
                ?? "no answer"
        }
        #expect(bothWaited, "both decisions should wait on the pending sign-in's row; they answered \(answers)")
        #expect(results.all.filter { $0?.status == 303 }.count == 1, "answers: \(answers)")
        #expect(results.all.count == 2)
        withExtendedLifetime(second) {}
    }
}
