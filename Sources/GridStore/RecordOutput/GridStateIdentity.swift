// Sources/GridStore/RecordOutput/GridStateIdentity.swift - numbering shared instances for output

/// Numbers the distinct instances of an array of grid states 1, 2, 3, … in order of first
/// appearance, so output can show which slots share one record.
///
/// The numbers are the `id`s that `gridstore load --json` prints, and the numbering is
/// canonical: importing that output and printing it again gives the same ids.
public struct GridStateIdentity {
    private var numbers: [ObjectIdentifier: Int] = [:]

    public init() {}

    /// The number of `state`, giving it the next one if it is new. Keep the states alive while
    /// numbering (an `ObjectIdentifier` is unique only while its object lives).
    public mutating func number(of state: GridState) -> Int {
        let next = numbers.count + 1
        let key = ObjectIdentifier(state)
        if let number = numbers[key] { return number }
        numbers[key] = next
        return next
    }
}
