// Sources/GridStore/GridStateGenerator.swift - deterministic test and benchmark data

/// Makes arrays of grid states for `gridstore save --generate` and the benchmarks.
///
/// `count` slots; the first `count - ⌊count·sharedFraction⌋` hold distinct new records, every
/// later slot refers to a pseudo-randomly chosen one of them. The same seed gives the same
/// records. Names are 5–40 characters of words and numbers, colors span 0..<2^24, dates are
/// ISO-8601 UTC timestamps between 2020 and 2026.
public struct GridStateGenerator: Sendable {
    public var count: Int
    public var sharedFraction: Double
    public var seed: UInt64

    public init(count: Int, sharedFraction: Double = 0, seed: UInt64 = 1) {
        precondition(count >= 0, "count must not be negative")
        precondition(sharedFraction >= 0 && sharedFraction < 1, "sharedFraction must be in [0, 1)")
        self.count = count
        self.sharedFraction = sharedFraction
        self.seed = seed
    }

    /// Number of distinct records among the `count` slots.
    public var distinctCount: Int {
        count - Int((Double(count) * sharedFraction).rounded(.down))
    }

    /// The records.
    ///
    /// - Parameter progress: Called now and then with the number of slots filled so far.
    public func generate(progress: ((Int) -> Void)? = nil) -> [GridState] {
        var random = SplitMix64(seed: seed)
        let distinct = distinctCount
        var states: [GridState] = []
        states.reserveCapacity(count)
        for index in 0..<distinct {
            states.append(
                GridState(name: Self.name(&random), color: Int(random.next() & 0xFF_FFFF), date: Self.date(&random))
            )
            if let progress, index % Self.progressInterval == 0 { progress(index) }
        }
        for index in distinct..<count {
            states.append(states[Int(random.next() % UInt64(distinct))])
            if let progress, index % Self.progressInterval == 0 { progress(index) }
        }
        return states
    }

    /// Slots between progress reports: rare enough to cost nothing, often enough to move.
    private static let progressInterval = 16_384

    private static let words = [
        "amber", "arctic", "azure", "basalt", "birch", "blue", "bright", "canyon", "cedar", "cobalt",
        "coral", "crimson", "delta", "dune", "ember", "fern", "field", "forest", "frost", "garden",
        "glacier", "granite", "grid", "harbor", "hazel", "indigo", "iris", "island", "ivory", "jade",
        "lagoon", "lemon", "linen", "lotus", "maple", "meadow", "mist", "moss", "north", "ocean",
        "olive", "onyx", "orchid", "pebble", "pine", "plum", "prairie", "quartz", "rain", "river",
        "rose", "ruby", "sage", "sand", "shadow", "sierra", "slate", "snow", "south", "spruce",
        "stone", "storm", "summit", "sun", "tide", "timber", "topaz", "valley", "violet", "willow",
    ]

    /// 5–40 characters: words and a number, cut to a length drawn uniformly.
    static func name(_ random: inout SplitMix64) -> String {
        let length = 5 + Int(random.next() % 36)
        var name = ""
        name.reserveCapacity(length + 12)
        while name.utf8.count < length {
            if !name.isEmpty { name += " " }
            if random.next() % 4 == 0 {
                name += String(random.next() % 1000)
            } else {
                name += words[Int(random.next() % UInt64(words.count))]
            }
        }
        return String(name.utf8.prefix(length))!
    }

    /// An ISO-8601 UTC timestamp in 2020-01-01 ..< 2027-01-01, e.g. "2024-03-15T12:34:56Z".
    static func date(_ random: inout SplitMix64) -> String {
        let start: Int64 = 1_577_836_800  // 2020-01-01T00:00:00Z
        let span: Int64 = 220_924_800  // seven years, with two leap days
        return iso8601(secondsSince1970: start + Int64(random.next() % UInt64(span)))
    }

    /// Formats UTC seconds as `YYYY-MM-DDTHH:MM:SSZ` (days-to-civil from Howard Hinnant).
    public static func iso8601(secondsSince1970 seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))Z"
    }
}

/// SplitMix64 (Steele, Lea, Flood): a small, fast, seedable generator; the same seed gives the
/// same sequence on every platform, which `SystemRandomNumberGenerator` cannot.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
