// Benchmarks/main.swift - entry point of `swift run -c release Benchmarks` (built out in issue #5)

import GridStore

print("Benchmarks: the harness is under construction")
