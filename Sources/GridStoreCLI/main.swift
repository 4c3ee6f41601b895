// Sources/GridStoreCLI/main.swift - entry point of the `gridstore` command

import Foundation

exit(GridStoreTool.main(Array(CommandLine.arguments.dropFirst())))
