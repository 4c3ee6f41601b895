// Sources/GraphArchive/Unarchiving/AvailableMemory.swift - how much memory this process can still commit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory this process can still commit, as the machine and its limits say: what a decode's
/// default memory budget (``GraphUnarchiver/Options/maximumMemoryBytes``) is derived from.
///
/// Each figure is nil where its limit does not apply or cannot be read:
/// - ``physicalBytes``: the machine's physical memory;
/// - ``addressSpaceBytes``: under an address-space limit (`ulimit -v`, `RLIMIT_AS`), the limit
///   less the address space the process already maps; under a data limit (`ulimit -d`,
///   `RLIMIT_DATA`), likewise for its data;
/// - ``controlGroupBytes``: under a control group's memory limit (cgroup v2 `memory.max`, v1
///   `memory.limit_in_bytes`, of the process's group or any group above it), the limit less
///   the anonymous memory the group already uses.
///
/// Linux reads them from `/proc` and `/sys/fs/cgroup`; elsewhere only the physical memory and the
/// resource limits apply.
public struct AvailableMemory: Sendable, Hashable {
    public var physicalBytes: Int?
    public var addressSpaceBytes: Int?
    public var controlGroupBytes: Int?

    /// The least of the figures that apply: what the process can commit before an allocation
    /// fails or the system stops it (`Int.max` if none applies).
    public var bytes: Int {
        [physicalBytes, addressSpaceBytes, controlGroupBytes].compactMap { $0 }.min() ?? Int.max
    }

    /// Which figure ``bytes`` is, for messages: "physical memory", "the address space left under
    /// RLIMIT_AS", "the control group's memory limit".
    public var limitingFactor: String {
        let least = bytes
        if addressSpaceBytes == least { return "the address space left under its resource limit (ulimit -v or -d)" }
        if controlGroupBytes == least { return "what its control group's memory limit leaves" }
        return "physical memory"
    }

    /// The memory budget a decode gets from this, or from `chosen` when given (see
    /// ``GraphUnarchiver/Options/maximumMemoryBytes``): ``bytes`` less a reserve for the rest of
    /// the program (an eighth, at least 96 MiB: a new thread's malloc arena alone reserves 64
    /// MiB of address space); a chosen value is still held to the address space left under
    /// `RLIMIT_AS`, less that reserve, past which every allocation fails.
    public func budget(choosing chosen: Int? = nil) -> Int {
        let hard = addressSpaceBytes.map(Self.afterReserve)
        guard let chosen else { return Self.afterReserve(bytes) }
        return min(chosen, hard ?? Int.max)
    }

    /// `bytes` for people: "1.5 GiB", "12.0 MiB", "800 bytes".
    public static func describe(_ bytes: Int) -> String {
        MemoryBudget.describe(bytes)
    }

    static func afterReserve(_ available: Int) -> Int {
        guard available < Int.max / 2 else { return available }
        return max(0, available - max(available / 8, 96 << 20))
    }

    /// The figures for this process now.
    public static func current() -> AvailableMemory {
        AvailableMemory(
            physicalBytes: physicalMemory(),
            addressSpaceBytes: addressSpaceLeft(),
            controlGroupBytes: ControlGroupMemory.left()
        )
    }

    public init(physicalBytes: Int?, addressSpaceBytes: Int?, controlGroupBytes: Int?) {
        self.physicalBytes = physicalBytes
        self.addressSpaceBytes = addressSpaceBytes
        self.controlGroupBytes = controlGroupBytes
    }

    static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    private static func physicalMemory() -> Int? {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        guard pages > 0 else { return nil }
        return pages.multipliedReportingOverflow(by: pageSize).overflow ? nil : pages * pageSize
    }

    /// `RLIMIT_AS` less the mapped address space (`VmSize`), `RLIMIT_DATA` less the data
    /// (`VmData`): the smaller, or nil when neither limit is set.
    private static func addressSpaceLeft() -> Int? {
        #if os(Linux)
        let status = LinuxFile.read("/proc/self/status") ?? ""
        func kilobytes(_ field: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else {
                return nil
            }
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
        }
        let addressLimit = softLimit(Int32(RLIMIT_AS.rawValue))
        let dataLimit = softLimit(Int32(RLIMIT_DATA.rawValue))
        // Most processes set neither: no need to read their status.
        guard addressLimit != nil || dataLimit != nil else { return nil }
        var left: [Int] = []
        if let limit = addressLimit { left.append(limit - (kilobytes("VmSize") ?? 0)) }
        if let limit = dataLimit { left.append(limit - (kilobytes("VmData") ?? 0)) }
        return left.min().map { max($0, 0) }
        #else
        return nil
        #endif
    }

    private static func softLimit(_ resource: Int32) -> Int? {
        var limit = rlimit()
        #if os(Linux)
        guard getrlimit(__rlimit_resource_t(UInt32(resource)), &limit) == 0 else { return nil }
        #else
        guard getrlimit(resource, &limit) == 0 else { return nil }
        #endif
        // RLIM_INFINITY is all ones, past Int.max.
        guard limit.rlim_cur < rlim_t(Int.max) else { return nil }
        return Int(limit.rlim_cur)
    }
}

/// The memory limits of the control groups this process is in (Linux).
enum ControlGroupMemory {
    /// Limits at or above this are "no limit" (cgroup v1 writes a page-rounded 2^63 − 1).
    private static let unlimited = 1 << 60

    /// The least room left under the memory limit of the process's group and the groups above
    /// it, or nil if none has a limit.
    static func left() -> Int? {
        var least: Int?
        for group in memoryGroups {
            if let room = roomInGroupAndAncestors(group.path, mount: group.mount, version2: group.version2) {
                least = min(least ?? room, room)
            }
        }
        return least
    }

    /// The folders of the process's memory control groups, found once per process: finding
    /// them parses `/proc/self/mountinfo`, which is long on a busy host, while their limits
    /// and use are read again at every call. A process moved to another group after its first
    /// large decode keeps the first group's folders.
    private static let memoryGroups: [(path: String, mount: String, version2: Bool)] = {
        #if os(Linux)
        guard let membership = LinuxFile.read("/proc/self/cgroup"),
            let mounts = LinuxFile.read("/proc/self/mountinfo")
        else { return [] }
        var groups: [(path: String, mount: String, version2: Bool)] = []
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let isVersion2 = fields[0] == "0" && fields[1].isEmpty
            let isMemoryV1 = fields[1].split(separator: ",").contains("memory")
            guard isVersion2 || isMemoryV1 else { continue }
            guard let folder = groupFolder(String(fields[2]), version2: isVersion2, mounts: mounts) else { continue }
            groups.append((folder.path, folder.mount, isVersion2))
        }
        return groups
        #else
        return []
        #endif
    }()

    /// The folder of group `path` under its hierarchy's mount point, and the mount point.
    private static func groupFolder(_ path: String, version2: Bool, mounts: String) -> (path: String, mount: String)? {
        for line in mounts.split(separator: "\n") {
            // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
            let words = line.split(separator: " ")
            guard let dash = words.firstIndex(of: "-") else { continue }
            let left = words[..<dash].map { $0 }
            let right = words[(dash + 1)...].map { $0 }
            guard left.count >= 5, right.count >= 3 else { continue }
            let type = right[0]
            guard version2 ? type == "cgroup2" : (type == "cgroup" && right[2].split(separator: ",").contains("memory"))
            else { continue }
            let root = String(left[3])
            let mount = String(left[4])
            // A namespaced mount's root is the group itself ("/"), or an ancestor of it.
            var relative = path
            if root != "/" {
                guard path.hasPrefix(root) else { continue }
                relative = String(path.dropFirst(root.count))
            }
            let folder = mount + (relative.hasPrefix("/") || relative.isEmpty ? relative : "/" + relative)
            if LinuxFile.exists(folder) { return (folder, mount) }
            // The group's path is not visible here (a container's own view): its limit is the root's.
            return (mount, mount)
        }
        return nil
    }

    /// The least of limit − anonymous use over `folder` and its ancestors up to `mount`.
    private static func roomInGroupAndAncestors(_ folder: String, mount: String, version2: Bool) -> Int? {
        var least: Int?
        var current = folder
        while true {
            if let room = room(in: current, version2: version2) { least = min(least ?? room, room) }
            guard current.count > mount.count, let slash = current.lastIndex(of: "/") else { break }
            current = String(current[..<slash])
        }
        return least
    }

    private static func room(in folder: String, version2: Bool) -> Int? {
        let limitFile = version2 ? "memory.max" : "memory.limit_in_bytes"
        guard let text = LinuxFile.read(folder + "/" + limitFile),
            let limit = Int(text.trimmingCharacters(in: [" ", "\n"])), limit < unlimited
        else { return nil }
        // Anonymous memory, not the page cache the kernel reclaims before it refuses memory.
        let stat = LinuxFile.read(folder + "/memory.stat") ?? ""
        let field = version2 ? "anon" : "total_rss"
        let used =
            stat.split(separator: "\n").lazy.compactMap { line -> Int? in
                let parts = line.split(separator: " ")
                return parts.count == 2 && parts[0] == field ? Int(parts[1]) : nil
            }.first ?? 0
        return max(limit - used, 0)
    }
}

/// Small text files of `/proc` and `/sys`, read whole.
enum LinuxFile {
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return String(decoding: FileDescriptorIO.readToEnd(from: descriptor, limit: 1 << 20), as: UTF8.self)
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Set<Character>) -> Substring {
        var start = startIndex
        var end = endIndex
        while start < end, set.contains(self[start]) { start = index(after: start) }
        while end > start, set.contains(self[index(before: end)]) { end = index(before: end) }
        return self[start..<end]
    }
}
