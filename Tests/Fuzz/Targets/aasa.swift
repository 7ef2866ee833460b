// Fuzz target: the apple-app-site-association judge (Association, `AASAJudge.judge`), whatever a domain
// serves. Seeds: Tests/AssociationTests/RealFiles/aasa.
import Association

let app = IOSApp(
    teamID: try! TeamID.parse("ABCDE12345").get(), bundleID: try! BundleID.parse("com.example.app").get())

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = AASAJudge.judge(body: bytes, contentType: "application/json", app: app, callbackPath: "/oauth/callback")
    _ = AASAJudge.judge(body: bytes, contentType: nil, app: app, callbackPath: "/")
    return 0
}
