// Fuzz target: the Digital Asset Links judge (Association, `AssetLinksJudge.judge`), whatever a domain
// serves. Seeds: Tests/AssociationTests/RealFiles/assetlinks.
import Association

let app = AndroidApp(
    packageName: try! PackageName.parse("com.example.app").get(),
    fingerprints: try! Fingerprints.parse([
        "E0:E1:E2:E3:E4:E5:E6:E7:E8:E9:EA:EB:EC:ED:EE:EF:F0:F1:F2:F3:F4:F5:F6:F7:F8:F9:FA:FB:FC:FD:FE:FF"
    ]).get())

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = AssetLinksJudge.judge(body: bytes, contentType: "application/json", app: app)
    _ = AssetLinksJudge.judge(body: bytes, contentType: "text/html", app: app)
    return 0
}
