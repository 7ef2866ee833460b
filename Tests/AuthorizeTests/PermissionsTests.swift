import Authorize
import Foundation
import Testing

/// The one permission rule (docs/console.md, "Roles"): every role, an operator and a non-member against
/// every project and deployment-wide action, and the keep-one-owner rule.
@Suite struct PermissionsTests {
    /// Who may do what, written out as the table in docs/console.md.
    static let table: [(name: String, caller: ConsoleCaller, allowed: Set<ProjectAction>)] = [
        ("owner", ConsoleCaller(isOperator: false, role: .owner), [.read, .configure, .manageSecretKeys, .manageMembers]),
        ("admin", ConsoleCaller(isOperator: false, role: .admin), [.read, .configure]),
        ("viewer", ConsoleCaller(isOperator: false, role: .viewer), [.read]),
        ("non-member", ConsoleCaller(isOperator: false, role: nil), []),
        ("operator", ConsoleCaller(isOperator: true, role: nil), Set(ProjectAction.allCases)),
        ("operator and viewer", ConsoleCaller(isOperator: true, role: .viewer), Set(ProjectAction.allCases)),
    ]

    @Test func everyCallerAgainstEveryProjectAction() {
        #expect(Set(Self.table.compactMap(\.caller.role)) == Set(ProjectRole.allCases))
        for row in Self.table {
            for action in ProjectAction.allCases {
                #expect(
                    Permissions.allows(row.caller, action) == row.allowed.contains(action),
                    "\(row.name) \(action.rawValue) should be \(row.allowed.contains(action) ? "allowed" : "refused")")
            }
        }
    }

    @Test func onlyOperatorsTakeDeploymentWideActions() {
        for row in Self.table {
            for action in OperatorAction.allCases {
                #expect(Permissions.allows(row.caller, action) == row.caller.isOperator, "\(row.name) \(action.rawValue)")
            }
        }
    }

    @Test func aProjectKeepsAnOwner() {
        #expect(Permissions.keepsAnOwner(rolesAfterChange: [.owner]))
        #expect(Permissions.keepsAnOwner(rolesAfterChange: [.viewer, .owner, .admin]))
        #expect(!Permissions.keepsAnOwner(rolesAfterChange: []))
        #expect(!Permissions.keepsAnOwner(rolesAfterChange: [.admin, .viewer]))
    }

    /// The use case hands the store `Permissions.keepsAnOwner` and the audit entry of each change.
    @Test func theUseCaseAsksTheOneRuleAndNamesTheAction() throws {
        final class Recorder: ProjectMemberStore, @unchecked Sendable {
            var entries: [AuditEntry] = []
            var ruleAnswers: [Bool] = []
            let member = ProjectMember(userID: "u1", email: "a@example.com", name: "A", role: .admin, addedAt: Date())
            func projectExists(projectID: String) throws -> Bool { projectID == "p1" }
            func openAccountID(emailKey: String) throws -> String? { emailKey == "a@example.com" ? "u1" : nil }
            func members(projectID: String, after: String?, limit: Int) throws -> [ProjectMember] { [member] }
            func addMember(projectID: String, userID: String, role: ProjectRole, audit: AuditEntry) throws -> ProjectMember {
                entries.append(audit)
                return member
            }
            func changeMember(projectID: String, userID: String, role: ProjectRole?, rule: OwnerRule, audit: AuditEntry) throws
                -> ProjectMember?
            {
                entries.append(audit)
                ruleAnswers = [rule([.admin]), rule([.owner])]
                return role == nil ? nil : member
            }
            func markOperator(userID: String, audit: AuditEntry) throws -> OperatorRecord {
                entries.append(audit)
                return OperatorRecord(userID: userID, email: "a@example.com", name: "A", markedAt: Date())
            }
            func unmarkOperator(userID: String, audit: AuditEntry) throws { entries.append(audit) }
        }
        let store = Recorder()
        let members = ProjectMembers(store: store)
        let origin = ChangeOrigin(actor: .secretKey(id: "k1"), clientAddress: "192.0.2.1", at: Date())
        let email = try EmailAddress.parse("a@example.com", domainToASCII: { $0 }).get()
        let nobody = try EmailAddress.parse("b@example.com", domainToASCII: { $0 }).get()
        _ = try members.add(projectID: "p1", email: email, role: .admin, by: origin)
        #expect(throws: MemberRefusal.noAccount) { try members.add(projectID: "p1", email: nobody, role: .admin, by: origin) }
        #expect(throws: MemberRefusal.noProject) { try members.add(projectID: "p2", email: email, role: .admin, by: origin) }
        _ = try members.changeRole(projectID: "p1", userID: "u1", to: .viewer, by: origin)
        #expect(store.ruleAnswers == [false, true])
        try members.remove(projectID: "p1", userID: "u1", by: origin)
        _ = try members.markOperator(email: email, by: origin)
        try members.unmarkOperator(userID: "u1", by: origin)
        #expect(store.entries.map(\.action) == ["member.add", "member.update", "member.remove", "operator.mark", "operator.unmark"])
        #expect(store.entries.allSatisfy { $0.target == "u1" && $0.actor == .secretKey(id: "k1") && $0.clientAddress == "192.0.2.1" })
        #expect(store.entries.map(\.projectID) == ["p1", "p1", "p1", nil, nil])
    }
}
