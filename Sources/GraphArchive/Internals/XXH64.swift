// Sources/GraphArchive/Internals/XXH64.swift - streaming XXH64, the archive checksum
//
// XXH64 (Yann Collet's xxHash, 64-bit variant, seed 0) as specified in the xxHash spec,
// written in Swift so the checksum needs no C library and builds everywhere the engine does.
// It consumes 32 bytes per round with four independent lanes, several GB/s in release builds.
// Tests pin it against vectors from the reference implementation.

struct XXH64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var lane1: UInt64
    private var lane2: UInt64
    private var lane3: UInt64
    private var lane4: UInt64
    private let seed: UInt64
    private var totalLength: UInt64 = 0
    /// Bytes not yet forming a whole 32-byte stripe.
    private var pending: [UInt8] = []

    init(seed: UInt64 = 0) {
        self.seed = seed
        lane1 = seed &+ Self.prime1 &+ Self.prime2
        lane2 = seed &+ Self.prime2
        lane3 = seed
        lane4 = seed &- Self.prime1
        pending.reserveCapacity(32)
    }

    /// The digest of `bytes` in one call.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        var state = XXH64(seed: seed)
        state.update(bytes)
        return state.finalize()
    }

    static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        (accumulator &+ input &* prime2).rotatedLeft(31) &* prime1
    }

    @inline(__always)
    private static func mergeRound(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        (accumulator ^ round(0, lane)) &* prime1 &+ prime4
    }

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    mutating func update(_ writer: borrowing ByteWriter) {
        writer.withUnsafeBytes { update($0) }
    }

    mutating func update(_ input: UnsafeRawBufferPointer) {
        guard let start = input.baseAddress, !input.isEmpty else { return }
        totalLength &+= UInt64(input.count)
        var position = 0
        if !pending.isEmpty {
            let take = min(32 - pending.count, input.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: start, count: take))
            position = take
            guard pending.count == 32 else { return }
            pending.withUnsafeBytes { consumeStripe($0.baseAddress!) }
            pending.removeAll(keepingCapacity: true)
        }
        var v1 = lane1
        var v2 = lane2
        var v3 = lane3
        var v4 = lane4
        // Wrapping arithmetic against the last stripe's start: the checked `count - position`
        // and `position + 32` took 6 of the loop's 29 instructions a stripe (callgrind).
        let lastStripeStart = input.count &- 32
        while position <= lastStripeStart {
            let stripe = start + position
            v1 = Self.round(v1, Self.load64(stripe, 0))
            v2 = Self.round(v2, Self.load64(stripe, 8))
            v3 = Self.round(v3, Self.load64(stripe, 16))
            v4 = Self.round(v4, Self.load64(stripe, 24))
            position &+= 32
        }
        lane1 = v1
        lane2 = v2
        lane3 = v3
        lane4 = v4
        if position < input.count {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: start + position, count: input.count - position))
        }
    }

    @inline(__always)
    private static func load64(_ pointer: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private mutating func consumeStripe(_ stripe: UnsafeRawPointer) {
        lane1 = Self.round(lane1, Self.load64(stripe, 0))
        lane2 = Self.round(lane2, Self.load64(stripe, 8))
        lane3 = Self.round(lane3, Self.load64(stripe, 16))
        lane4 = Self.round(lane4, Self.load64(stripe, 24))
    }

    func finalize() -> UInt64 {
        var hash: UInt64
        if totalLength >= 32 {
            hash = lane1.rotatedLeft(1) &+ lane2.rotatedLeft(7) &+ lane3.rotatedLeft(12) &+ lane4.rotatedLeft(18)
            hash = Self.mergeRound(hash, lane1)
            hash = Self.mergeRound(hash, lane2)
            hash = Self.mergeRound(hash, lane3)
            hash = Self.mergeRound(hash, lane4)
        } else {
            hash = seed &+ Self.prime5
        }
        hash &+= totalLength
        pending.withUnsafeBytes { tail in
            var position = 0
            while tail.count - position >= 8 {
                hash ^= Self.round(0, Self.load64(tail.baseAddress!, position))
                hash = hash.rotatedLeft(27) &* Self.prime1 &+ Self.prime4
                position += 8
            }
            if tail.count - position >= 4 {
                let word = UInt64(UInt32(littleEndian: tail.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
                hash ^= word &* Self.prime1
                hash = hash.rotatedLeft(23) &* Self.prime2 &+ Self.prime3
                position += 4
            }
            while position < tail.count {
                hash ^= UInt64(tail[position]) &* Self.prime5
                hash = hash.rotatedLeft(11) &* Self.prime1
                position += 1
            }
        }
        hash ^= hash >> 33
        hash &*= Self.prime2
        hash ^= hash >> 29
        hash &*= Self.prime3
        hash ^= hash >> 32
        return hash
    }
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 {
        (self << count) | (self >> (64 - count))
    }
}

extension ArchiveBytes {
    /// The XXH64 checksum of the bytes in `range`.
    func checksum(_ range: Range<Int>) -> UInt64 {
        withUnsafeBytes(range) { XXH64.hash($0) }
    }
}
