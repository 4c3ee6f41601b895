// Sources/GridStoreCLI/main.swift - entry point of the `gridstore` command (built out in issue #4)

import GridStore

print("gridstore: the command-line interface is under construction")
