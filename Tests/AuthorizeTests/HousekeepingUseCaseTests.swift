import Authorize
import Foundation
import Synchronization
import Testing

/// The housekeeping pass keeps expired rows for a day (docs/operations.md), through its narrow port.
@Suite struct HousekeepingUseCaseTests {
    final class RecordingStore: HousekeepingStore {
        let cutoffs = Mutex<[Date]>([])
        func deleteExpired(before: Date) throws -> PrunedRows {
            cutoffs.withLock { $0.append(before) }
            return PrunedRows(authorizationRequests: 1, authorizationCodes: 2, mfaChallenges: 3, rateLimitCounters: 4, browserBindings: 5)
        }
    }

    @Test func aPassDeletesWhatExpiredMoreThanADayAgo() throws {
        let store = RecordingStore()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let pruned = try Housekeeping(store: store)(now: now)
        #expect(pruned.authorizationCodes == 2 && pruned.browserBindings == 5)
        #expect(store.cutoffs.withLock { $0 } == [now.addingTimeInterval(-86_400)])
    }
}
