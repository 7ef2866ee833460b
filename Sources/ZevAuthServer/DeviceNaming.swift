import HTTPServer

/// Names the device on the consent page ("Acme on iPhone", "Acme on Android";
/// docs/protocol.md#device-naming) from the browser's `User-Agent`, only when the environment has a verified app for that
/// platform.
enum DeviceNaming {
    /// The platform (`ios` or `android`) and the device word a `User-Agent` names, or nil.
    static func device(userAgent: String?) -> (platform: String, word: String)? {
        guard let userAgent else { return nil }
        if userAgent.contains("iPhone") || userAgent.contains("iPod") { return ("ios", "iPhone") }
        if userAgent.contains("iPad") { return ("ios", "iPad") }
        if userAgent.contains("Android") { return ("android", "Android") }
        return nil
    }

    /// `"<project> on <device>"` when the browser's platform has a verified app, else the project name.
    static func appName(project: String, request: HTTPRequest, verifiedPlatforms: Set<String>) -> String {
        guard let device = device(userAgent: request.headers["User-Agent"]), verifiedPlatforms.contains(device.platform) else {
            return project
        }
        return "\(project) on \(device.word)"
    }
}
