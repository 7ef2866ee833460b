import Foundation

/// The `zevauth-conformance` command: parses the options, runs the ``Suite``, prints one line per check
/// (or JSON), writes JUnit when asked, and answers the exit status.
public enum ConformanceCommand {
    /// Runs the command.
    /// - Parameters:
    ///   - arguments: the arguments without the program name.
    ///   - write: where output lines go (stdout in the executable).
    /// - Returns: 0 when nothing failed, 1 when a check failed, 2 for a bad command line.
    public static func run(arguments: [String], write: @escaping (String) -> Void = { print($0) }) -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            write(Options.usage)
            return 0
        }
        let options: Options
        do {
            options = try Options.parse(arguments)
        } catch {
            write("zevauth-conformance: \(error)\n\(Options.usage)")
            return 2
        }
        let redactor = Redactor()
        let agent = Agent(options: options, redactor: redactor)
        let formatter = ReportFormatter(redactor: redactor)
        let suite = Suite(options: options, agent: agent)
        let results = suite.run { result in
            if !options.json { write(formatter.line(result)) }
        }
        if options.json {
            write(formatter.json(results))
        } else {
            write(ReportFormatter.closingLine(results))
        }
        if let path = options.junitPath {
            do {
                try Data(formatter.junit(results).utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                write("zevauth-conformance: cannot write \(path)")
                return 2
            }
        }
        return ReportFormatter.counts(results).failed == 0 ? 0 : 1
    }
}
