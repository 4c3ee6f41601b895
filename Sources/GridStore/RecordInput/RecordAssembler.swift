// Sources/GridStore/RecordInput/RecordAssembler.swift - turns input records into shared GridState instances

/// Builds records, sharing one instance among all records with the same `id`.
///
/// The first record with an id (and every record without one) must give name, color and date;
/// a later record with a known id may leave them out, and any field it does give must match
/// the first, so a typo cannot silently fork or rewrite a shared record.
struct RecordAssembler {
    private var byID: [String: (state: GridState, line: Int)] = [:]

    /// Appends the instance `fields` stand for to `states`.
    mutating func add(_ fields: RecordFields, to states: inout [GridState]) throws(RecordProblem) {
        if let id = fields.id, let (state, firstLine) = byID[id] {
            try check(fields.name, state.name, "name", id: id, firstLine: firstLine, line: fields.line)
            try check(fields.color, state.color, "color", id: id, firstLine: firstLine, line: fields.line)
            try check(fields.date, state.date, "date", id: id, firstLine: firstLine, line: fields.line)
            states.append(state)
            return
        }
        guard let name = fields.name, let color = fields.color, let date = fields.date else {
            let missing = [("name", fields.name == nil), ("color", fields.color == nil), ("date", fields.date == nil)]
                .filter(\.1).map { "\"\($0.0)\"" }.joined(separator: ", ")
            let rule =
                fields.id == nil
                ? "every record needs name, color and date"
                : "the first record with id \"\(fields.id!)\" needs name, color and date"
            throw RecordProblem(line: fields.line, message: "record has no \(missing) (\(rule))")
        }
        let state = GridState(name: name, color: color, date: date)
        if let id = fields.id {
            byID[id] = (state, fields.line)
        }
        states.append(state)
    }

    private func check<Value: Equatable>(
        _ given: Value?,
        _ existing: Value,
        _ field: String,
        id: String,
        firstLine: Int,
        line: Int
    ) throws(RecordProblem) {
        guard let given, given != existing else { return }
        throw RecordProblem(
            line: line,
            message:
                "record with id \"\(id)\" gives \(field) \(quoted(given)), but line \(firstLine) gave \(quoted(existing))"
        )
    }

    private func quoted<Value>(_ value: Value) -> String {
        value is String ? "\"\(value)\"" : "\(value)"
    }
}
