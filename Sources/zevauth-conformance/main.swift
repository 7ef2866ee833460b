// zevauth-conformance: a scripted PKCE client that checks a ZevAuth deployment from outside.
import Conformance
import Foundation

let status = ConformanceCommand.run(arguments: Array(CommandLine.arguments.dropFirst())) { line in
    print(line)
    fflush(nil)
}
exit(status)
