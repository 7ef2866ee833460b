import HTTPServer

extension Routes {
    /// Mobile apps, association files (generated, served, checked) and domain verification (issue 3).
    mutating func registerAssociation() {
    }
}
