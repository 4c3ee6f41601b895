// Sources/GridStoreCLI/RecordTable.swift - records as an aligned table for people

import GridStore

/// Prints grid states as columns SLOT, ID, NAME, COLOR, DATE: slots that share one record show
/// the same ID. Colors in 0..<2^24 show as `#RRGGBB`. Control characters in names and dates are
/// shown escaped, so an archive cannot drive the terminal. Columns are aligned by display width
/// (see ``DisplayWidth``), so names in CJK or with emoji line up too.
enum RecordTable {
    /// Names wider than this many terminal columns are cut with "…" (the JSON output keeps them
    /// whole).
    static let maximumNameWidth = 48

    static func write(_ states: ArraySlice<GridState>, to output: inout OutputBuffer) throws {
        var identity = GridStateIdentity()
        var ids: [Int] = []
        ids.reserveCapacity(states.count)
        var nameWidth = 4
        for state in states {
            ids.append(identity.number(of: state))
            nameWidth = max(nameWidth, min(maximumNameWidth, DisplayWidth.of(printable(state.name))))
        }
        let slotWidth = max(4, String(max(0, states.count - 1)).count)
        let idWidth = max(2, String(ids.max() ?? 0).count)
        let colorWidth = max(7, states.map { color($0.color).count }.max() ?? 0)

        // (width, right-aligned) per column; DATE comes last and needs no padding.
        let columns = [(slotWidth, true), (idWidth, true), (nameWidth, false), (colorWidth, false), (0, false)]
        func appendRow(_ cells: [String]) {
            for (index, cell) in cells.enumerated() {
                let (width, alignsRight) = columns[index]
                let separator = index == cells.count - 1 ? "\n" : "  "
                output.append(cell, paddedTo: width, alignRight: alignsRight, separator: separator)
            }
        }
        appendRow(["SLOT", "ID", "NAME", "COLOR", "DATE"])
        for (offset, state) in states.enumerated() {
            let name = DisplayWidth.truncate(printable(state.name), toWidth: maximumNameWidth)
            appendRow([String(offset), String(ids[offset]), name, color(state.color), printable(state.date)])
            try output.flushIfFull()
        }
    }

    /// `#RRGGBB` for 24-bit colors, the number otherwise.
    static func color(_ value: Int) -> String {
        guard (0..<(1 << 24)).contains(value) else { return String(value) }
        let hex = String(value, radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: 6 - hex.count) + hex
    }

    /// `text` with control characters written as escapes (`\n`, `\u{1B}`).
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            result += isControl(scalar) ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value)
    }
}
