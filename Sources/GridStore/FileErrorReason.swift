// Sources/GridStore/FileErrorReason.swift - the system's words inside Foundation's file errors

import Foundation

/// Digs the POSIX error out of a Foundation file error, whose own text on Linux is often just
/// "The operation could not be completed".
public enum FileErrorReason {
    /// The `errno` behind `error`, if it carries one.
    public static func posixCode(of error: any Error) -> Int32? {
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain { return Int32(nsError.code) }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return Int32(underlying.code)
        }
        // Some Linux Foundation errors carry only a Cocoa code; map the common ones back.
        guard nsError.domain == NSCocoaErrorDomain else { return nil }
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileReadNoSuchFile, .fileNoSuchFile: return ENOENT
        case .fileReadNoPermission, .fileWriteNoPermission: return EACCES
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileWriteVolumeReadOnly: return EROFS
        case .fileReadTooLarge: return EFBIG
        default: return nil
        }
    }

    /// The system's reason ("No such file or directory"), else Foundation's description.
    public static func reason(of error: any Error) -> String {
        if let code = posixCode(of: error) { return String(cString: strerror(code)) }
        return (error as NSError).localizedDescription
    }
}
