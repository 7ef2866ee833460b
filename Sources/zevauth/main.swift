// zevauth: `serve`, `migrate` and `dev` (docs/operations.md, section 1), and the admin commands.
import AdminCLI
import Foundation
import ZevAuthServer

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: zevauth <command> [--flag value …]      (zevauth <command> --help for its flags)
      serve     run the server from ZEVAUTH_* variables or the flags that mirror them
      migrate   apply the sql/ migrations to ZEVAUTH_DATABASE_URL (idempotent)
      dev       run the demo: a private PostgreSQL under .zevauth/, migrated and seeded, on 127.0.0.1:8080
      statements  print the hot path's SQL statements as JSON (for bench/pipeline)
      --version print the release

    """ + AdminCLI.usage

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("zevauth: \(message)\n".utf8))
    exit(2)
}

switch arguments.first {
case "serve":
    do { try Commands.serve(arguments: Array(arguments.dropFirst())) } catch { fail("\(error)") }
case "migrate":
    do { try Commands.migrate(arguments: Array(arguments.dropFirst())) } catch { fail("\(error)") }
case "dev":
    do { try DevCommand.run(arguments: Array(arguments.dropFirst())) } catch { fail("\(error)") }
case let command where AdminCLI.handles(command):
    let cli = AdminCLI(
        environment: ProcessInfo.processInfo.environment,
        write: { print($0) },
        writeError: { FileHandle.standardError.write(Data(($0.hasSuffix("\n") ? $0 : $0 + "\n").utf8)) })
    exit(cli.run(arguments))
case "statements":
    Commands.statements()
case "--version", "version":
    print("zevauth \(Commands.version)")
case "help", "--help", "-h":
    print(usage, terminator: "")
case let command?:
    FileHandle.standardError.write(Data("zevauth: there is no command \"\(command)\".\n".utf8) + Data(usage.utf8))
    exit(2)
case nil:
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
