// Sources/GridStore/ArchiveLocation.swift - where the grid-state archive lives by default

import Foundation
import GraphArchive

/// Finds the default archive file and makes room for it.
public enum ArchiveLocation {
    /// The file name inside the data folder.
    public static let fileName = "grids.gridstore"

    /// The archive file used when none is given.
    ///
    /// `$GRIDSTORE_FILE` if set; else `$XDG_DATA_HOME/gridstore/grids.gridstore`; else
    /// `$HOME/.local/share/gridstore/grids.gridstore`. Empty variables count as unset, and a relative
    /// `XDG_DATA_HOME` is ignored, as the XDG Base Directory specification asks.
    ///
    /// - Parameters:
    ///   - environment: The variables to consult. Default: this process's environment.
    ///   - homeDirectory: The user's home folder when `environment` has no `HOME`.
    ///     Default: the password database's (Foundation's `NSHomeDirectory()`).
    public static func defaultArchivePath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        homeDirectory: @autoclosure () -> String = NSHomeDirectory()
    ) -> String {
        if let file = environment["GRIDSTORE_FILE"], !file.isEmpty {
            return file
        }
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return join(dataHome, "gridstore", fileName)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeDirectory()
        return join(home, ".local/share/gridstore", fileName)
    }

    /// Creates the folders above `path` that do not exist yet (`mkdir -p` of its folder).
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` `.ioError` naming the folder and the system's reason.
    public static func createParentFolders(of path: String) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let folder = String(path[..<slash])
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue {
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw GraphArchiveError(
                .ioError,
                "cannot create the folder \(folder): \(FileErrorReason.reason(of: error))"
            )
        }
    }

    private static func join(_ parts: String...) -> String {
        var path = parts[0]
        for part in parts.dropFirst() {
            if !path.hasSuffix("/") { path += "/" }
            path += part
        }
        return path
    }
}
