// Benchmarks/main.swift - entry point of `swift run -c release Benchmarks`

import Foundation

#if DEBUG
Output.progress(Output.debugWarning)
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = Harness.command(arguments) else { exit(Harness.usageError) }

// NSKeyedArchiver codes references by recursion, one stack frame chain per level of the graph,
// so the suite runs on a thread with a 1 GiB stack (reserved, touched only as deep as needed).
let thread = Thread { [command, arguments] in
    exit(Harness.main(command, arguments: arguments))
}
thread.stackSize = 1 << 30
thread.start()
while true { sleep(3600) }
