import Association
import Fetch
import Foundation

/// The link check as the server runs it: `LinkCheck` (Association) over the tenancy ports, with "now"
/// from the server's clock and the outbound fetch of `HTTPSFetcher` (or the port's fake in tests).
struct AssociationChecker: Sendable {
    let linkCheck: LinkCheck
    let fetcher: any AssociationFetcher
    let clock: any Clock
    let metrics: Metrics

    init(context: ServerContext) {
        let fetcher =
            context.tenancy.fetcher
            ?? HTTPSAssociationFetcher(
                fetcher: HTTPSFetcher(configuration: context.configuration.outbound), port: context.configuration.outboundPort)
        self.fetcher = fetcher
        self.clock = context.clock
        self.metrics = context.metrics
        self.linkCheck = LinkCheck(store: context.tenancy.linkChecks, fetcher: fetcher)
    }

    /// Checks one domain now and stores the result (see `LinkCheck.check`).
    /// - Parameter leaseOwner: the scheduler instance holding the domain's lease, or nil (on demand).
    /// - Throws: `StoreUnavailable`.
    @discardableResult
    func check(domain: String, leaseOwner: String?) throws -> [LinkStateRecord] {
        counted(try linkCheck.judge(domain: domain, leaseOwner: leaseOwner, now: clock.now()))
    }

    /// Checks every link domain of an environment now (see `LinkCheck.checkEnvironment`).
    /// - Throws: `StoreUnavailable`.
    func checkEnvironment(_ environmentID: String) throws {
        counted(try linkCheck.checkEnvironment(environmentID, now: clock.now()))
    }

    /// Counts each judged state in `zevauth_link_checks_total` and returns the states.
    @discardableResult
    private func counted(_ judged: [(platform: Platform, state: LinkStateRecord)]) -> [LinkStateRecord] {
        for (platform, state) in judged {
            metrics.linkCheck(platform: platform.rawValue, result: state.status.rawValue)
        }
        return judged.map(\.state)
    }
}

/// `HTTPSFetcher` as the association checks' fetch port, on a fixed port (443, except in tests).
struct HTTPSAssociationFetcher: AssociationFetcher {
    let fetcher: HTTPSFetcher
    let port: Int

    func get(host: String, path: String, maxBytes: Int) -> Result<FetchedFile, FileFetchFailure> {
        switch fetcher.get(host: host, port: port, path: path, maxBytes: maxBytes) {
        case .success(let response):
            return .success(
                FetchedFile(
                    status: response.status, contentType: response.contentType, body: response.body,
                    redirectLocation: response.redirectLocation))
        case .failure(let failure):
            switch failure {
            case .timeout(let message): return .failure(.timeout(message))
            case .dnsError(let message): return .failure(.dnsError(message))
            case .addressRefused(let message): return .failure(.addressRefused(message))
            case .tlsError(let message): return .failure(.tlsError(message))
            case .tooLarge(let limit): return .failure(.tooLarge(limit: limit))
            case .connectionFailed(let message): return .failure(.connectionFailed(message))
            }
        }
    }
}
